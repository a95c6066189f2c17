package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent/modeltest"
)

// TestCompactionIsSticky: once the conversation no longer fits, it is cut
// with room to grow, and the following requests extend the cut one (a
// prompt cache keeps serving them) until it overflows again. The summary
// heads the first kept user message, never the system message.
func TestCompactionIsSticky(t *testing.T) {
	r := &run{rec: &runRecord{}}
	add := func(turn, step int) {
		id := fmt.Sprintf("c%d_%d", turn, step)
		r.rec.Messages = append(r.rec.Messages,
			Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: id, Name: "read_file", Args: json.RawMessage(`{"path":"a.go"}`)}}},
			Message{Role: RoleTool, ToolCallID: id, Content: strings.Repeat("x", 2000)})
	}
	for turn := 0; turn < 4; turn++ {
		r.rec.Messages = append(r.rec.Messages, Message{Role: RoleUser, Content: fmt.Sprintf("question %d", turn)})
		for step := 0; step < 3; step++ {
			add(turn, step)
		}
		r.rec.Messages = append(r.rec.Messages, Message{Role: RoleAssistant, Content: fmt.Sprintf("answer %d", turn)})
	}
	r.rec.Messages = append(r.rec.Messages, Message{Role: RoleUser, Content: "question 4"})
	const window, fixed = 12000, 8000 // the system message and tools take their share
	budget := budgetFor(window, fixed)

	var prev []Message
	recuts := 0
	for step := 0; step < 12; step++ {
		got := r.compactedLocked(window, fixed)
		require.NotEmpty(t, got)
		assert.LessOrEqual(t, sumTokens(got), budget+summaryCap/4, "step %d fits", step)
		assert.Equal(t, RoleUser, got[0].Role)
		assert.Contains(t, got[0].Content, "[agentd: earlier turns of this conversation were dropped")
		if prev != nil {
			extends := len(got) > len(prev)
			for k := range prev {
				if extends && (k >= len(got) || got[k].Content != prev[k].Content || got[k].Role != prev[k].Role) {
					extends = false
				}
			}
			if !extends {
				recuts++
			}
		}
		prev = got
		add(4, step)
	}
	assert.LessOrEqual(t, recuts, 4, "a cut is kept while it fits: %d recuts in 12 steps", recuts)
	last := r.compactedLocked(window, fixed)
	assert.Equal(t, "c4_11", last[len(last)-1].ToolCallID, "the newest step is kept")
}

// TestSmallWindowNotice: a small or unknown window on the model's server is
// told to the user once (a notice update) and logged.
func TestSmallWindowNotice(t *testing.T) {
	for name, ep := range map[string]*modeltest.Endpoint{
		"llama.cpp with 8192": {PropsNCtx: 8192},
		"ollama's default":    {OllamaContextLength: 32768},
		"a large window":      {PropsNCtx: 65536},
	} {
		t.Run(name, func(t *testing.T) {
			srv := modeltest.StartT(t, &modeltest.Script{Endpoint: ep, Turns: []modeltest.Turn{{Repeat: true, Reply: modeltest.Reply{Text: "Hi."}}}})
			l := &updates{kinds: []UpdateKind{UpdateNotice}, done: make(chan RunState, 2)}
			a, err := New(Config{Root: t.TempDir(), StateDir: t.TempDir(), Model: ModelConfig{BaseURL: srv.URL, Name: "fake"}, Listener: l})
			require.NoError(t, err)
			defer a.Shutdown()
			for _, p := range []string{"hello", "hello again"} {
				_, err = a.Run(context.Background(), RunParams{Prompt: p})
				require.NoError(t, err)
				require.Equal(t, StateCompleted, waitRun(t, l.done).State)
			}
			got := l.all()
			if name == "a large window" {
				assert.Empty(t, got)
				return
			}
			require.Len(t, got, 1, "once per agent")
			if name == "ollama's default" {
				assert.Contains(t, got[0].Text, "does not say the context window it runs the model with (the model allows 32768 tokens)")
			} else {
				assert.Contains(t, got[0].Text, "The model's context window is 8192 tokens; agentd's instructions and tools alone take about")
			}
		})
	}
}
