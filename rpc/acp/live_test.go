package acp

import (
	"strings"
	"sync"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/tools"
)

const streamScript = `{"turns": [
  {"name": "build", "match": {"lastUser": "build"}, "reply": {"toolCalls": [
    {"id": "call_b", "name": "run_cmd", "arguments": {"command": "echo compiling; sleep 0.4; echo done"}}]}},
  {"name": "built", "match": {"afterTool": "run_cmd"}, "reply": {"text": "Built."}}
]}`

// TestCommandOutputStreams: the client sees a running command's output on
// its tool call while it runs, before the final update.
func TestCommandOutputStreams(t *testing.T) {
	h := start(t, config{stateDir: t.TempDir(), modelURL: script(t, streamScript), policy: tools.ModeFullAuto})
	id := h.newSession(t.TempDir())
	if stop := h.prompt(id, "build it"); stop != acpsdk.StopReasonEndTurn {
		t.Fatalf("stop reason %q", stop)
	}
	live, final := -1, -1
	for i, u := range h.client.of(id) {
		c := u.ToolCallUpdate
		if c == nil || c.ToolCallId != "call_b" || c.Status == nil {
			continue
		}
		text := contentText(c.Content)
		switch *c.Status {
		case acpsdk.ToolCallStatusInProgress:
			if final >= 0 && text != "" {
				t.Fatalf("running output after the final update: %q", text)
			}
			if live < 0 && strings.Contains(text, "compiling") {
				live = i
				if strings.Contains(text, "done") {
					t.Fatalf("the output came only when the command was done: %q", text)
				}
			}
		case acpsdk.ToolCallStatusCompleted:
			final = i
			if !strings.Contains(text, "compiling") || !strings.Contains(text, "done") {
				t.Fatalf("final output %q", text)
			}
		}
	}
	if live < 0 || final < 0 || live > final {
		t.Fatalf("running output at %d, final update at %d: %+v", live, final, h.client.of(id))
	}
	if !strings.Contains(h.client.text(id), "Built.") {
		t.Fatalf("answer %q", h.client.text(id))
	}
}

func contentText(cs []acpsdk.ToolCallContent) string {
	var b strings.Builder
	for _, c := range cs {
		if c.Content != nil && c.Content.Content.Text != nil {
			b.WriteString(c.Content.Content.Text.Text)
		}
	}
	return b.String()
}

// laterRecorder is a laterFunc that the test fires by hand.
type laterRecorder struct {
	mu      sync.Mutex
	flushes []func() []acpsdk.SessionUpdate
}

func (r *laterRecorder) later(d time.Duration, flush func() []acpsdk.SessionUpdate) *time.Timer {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flushes = append(r.flushes, flush)
	return time.NewTimer(time.Hour)
}

func delta(id, s string) agent.Update {
	return agent.Update{Kind: agent.UpdateToolCallUpdate, ToolCallID: id, Status: agent.StatusInProgress, OutputDelta: s}
}

func liveText(t *testing.T, us []acpsdk.SessionUpdate) string {
	t.Helper()
	if len(us) != 1 || us[0].ToolCallUpdate == nil || *us[0].ToolCallUpdate.Status != acpsdk.ToolCallStatusInProgress {
		t.Fatalf("want one in_progress update, got %+v", us)
	}
	return contentText(us[0].ToolCallUpdate.Content)
}

func TestLiveOutputCoalesced(t *testing.T) {
	r := &laterRecorder{}
	tr := newTranslator("/ws", 0, r.later)
	if got := liveText(t, tr.translate(delta("c", "a\n"))); got != fenced("a\n") {
		t.Fatalf("first piece: %q", got)
	}
	// Within liveEvery: held, one deferred send for both pieces.
	if us := tr.translate(delta("c", "b\n")); len(us) != 0 {
		t.Fatalf("sent at once: %+v", us)
	}
	if us := tr.translate(delta("c", "c\n")); len(us) != 0 {
		t.Fatalf("sent at once: %+v", us)
	}
	if len(r.flushes) != 1 {
		t.Fatalf("%d deferred sends", len(r.flushes))
	}
	if got := liveText(t, r.flushes[0]()); got != fenced("a\nb\nc\n") {
		t.Fatalf("accumulated: %q", got)
	}
	// The final update ends it: a deferred send after it sends nothing.
	tr.translate(delta("c", "d\n"))
	tr.translate(agent.Update{Kind: agent.UpdateToolCallUpdate, ToolCallID: "c", Status: agent.StatusCompleted, Output: "a\nb\nc\nd\n"})
	if us := r.flushes[len(r.flushes)-1](); len(us) != 0 {
		t.Fatalf("sent after the final update: %+v", us)
	}
}

func TestLiveOutputBounded(t *testing.T) {
	tr := newTranslator("/ws", 0, nil) // replaying: nothing until pending
	line := strings.Repeat("x", 99) + "\n"
	for i := 0; i < 700; i++ {
		if us := tr.translate(delta("c", line)); len(us) != 0 {
			t.Fatalf("sent while replaying: %+v", us)
		}
	}
	tr.translate(delta("c", "last é\n"))
	got := liveText(t, tr.pending())
	if len(got) > liveMax+100 || !strings.HasSuffix(got, "last é\n\n```") || !strings.Contains(got, "earlier output not shown]\nxxx") {
		t.Fatalf("bounded output: %d bytes, %q…%q", len(got), got[:60], got[len(got)-20:])
	}
	if us := tr.pending(); len(us) != 0 {
		t.Fatalf("sent twice: %+v", us)
	}
}
