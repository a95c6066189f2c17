package term

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/tools"
)

// events builds a run's log from its notifications, numbering them.
func events(t *testing.T, notes ...any) []agent.Event {
	var out []agent.Event
	for i, n := range notes {
		kind := map[string]agent.EventKind{"update": agent.EventUpdate, "request": agent.EventInputRequest,
			"resolved": agent.EventInputResolved, "state": agent.EventRunState}
		var k agent.EventKind
		switch n.(type) {
		case agent.Update:
			n, k = agent.UpdateParams{RunID: "r_1", SessionID: "s_1", Seq: int64(i + 1), Update: n.(agent.Update)}, kind["update"]
		case agent.InputRequest:
			k = kind["request"]
		case agent.InputResolved:
			k = kind["resolved"]
		case agent.RunState:
			k = kind["state"]
		}
		b, err := json.Marshal(n)
		require.NoError(t, err)
		out = append(out, agent.Event{Seq: int64(i + 1), Kind: k, Params: b})
	}
	return out
}

func TestPrintEventsOfAPastRun(t *testing.T) {
	exit0, exit1 := 0, 1
	log := events(t,
		agent.RunState{RunID: "r_1", SessionID: "s_1", State: agent.StateRunning},
		agent.Update{Kind: agent.UpdateThoughtChunk, Text: "Let me check the tests first."},
		agent.Update{Kind: agent.UpdateToolCall, ToolCallID: "c1", Title: "go test ./...", ToolKind: tools.KindExecute, Input: json.RawMessage(`{"command":"go test ./..."}`)},
		agent.Update{Kind: agent.UpdateToolCallUpdate, ToolCallID: "c1", Status: agent.StatusInProgress, OutputDelta: "FAIL x\n"},
		agent.Update{Kind: agent.UpdateToolCallUpdate, ToolCallID: "c1", Status: agent.StatusFailed, Output: "FAIL x\n[exit code 1, 1.2s]", ExitCode: &exit1, DurationMs: 1200},
		agent.InputRequest{RunID: "r_1", RequestID: "q_1", Kind: agent.KindConfirmCommand, Command: "rm -rf build", Title: "Run rm -rf build"},
		agent.InputResolved{RunID: "r_1", RequestID: "q_1", Outcome: agent.Outcome(tools.RejectOnce), By: agent.ByUser},
		agent.Update{Kind: agent.UpdateToolCall, ToolCallID: "c2", Title: "read main.go", ToolKind: tools.KindRead},
		agent.Update{Kind: agent.UpdateToolCallUpdate, ToolCallID: "c2", Status: agent.StatusCompleted, Output: "package main\n\nfunc main() {}\n"},
		agent.Update{Kind: agent.UpdateToolCall, ToolCallID: "c3", Title: "true", ToolKind: tools.KindExecute, Input: json.RawMessage(`{"command":"true"}`)},
		agent.Update{Kind: agent.UpdateToolCallUpdate, ToolCallID: "c3", Status: agent.StatusCompleted, Output: "[exit code 0, 10ms]", ExitCode: &exit0},
		agent.Update{Kind: agent.UpdateMessageChunk, Text: "The tests **fail**:"},
		agent.Update{Kind: agent.UpdateMessageChunk, Text: " see `x`.\n"},
		agent.Update{Kind: agent.UpdateResult, StopReason: agent.StopEndTurn, Text: "The tests **fail**: see `x`.\n"},
		agent.RunState{RunID: "r_1", SessionID: "s_1", State: agent.StateCompleted},
	)
	var out bytes.Buffer
	require.NoError(t, printEvents(&out, log, false))
	assert.Equal(t, strings.Join([]string{
		"  thought (6 words)",
		"• $ go test ./...",
		"  ✗ exit 1 · 1.2s",
		"? Allow this command?",
		"    $ rm -rf build",
		"  → reject once",
		"• read main.go",
		"  ✓ 3 lines",
		"• $ true",
		"  ✓ exit 0 · no output",
		"The tests **fail**: see `x`.",
		"",
	}, "\n"), out.String())

	out.Reset()
	require.NoError(t, printEvents(&out, log, true))
	assert.Contains(t, out.String(), "The tests \x1b[1mfail\x1b[0m: see \x1b[36mx\x1b[0m.")
}

func TestCompleteBlocks(t *testing.T) {
	for _, c := range []struct{ in, done, rest string }{
		{"one para", "", "one para"},
		{"one\n\ntwo", "one\n\n", "two"},
		{"a\n\n```go\nx\n\ny\n", "a\n\n", "```go\nx\n\ny\n"},
		{"```go\nx\n\ny\n```\n\nz", "```go\nx\n\ny\n```\n\n", "z"},
		{"- a\n- b\n", "", "- a\n- b\n"},
	} {
		done, rest := completeBlocks(c.in)
		assert.Equal(t, c.done, done, "%q", c.in)
		assert.Equal(t, c.rest, rest, "%q", c.in)
	}
}

func TestParseKeys(t *testing.T) {
	at := time.Now()
	keys, rest := parseKeys([]byte("yN\r\x1b[A\x1b[B\x04\x03\x7fé\x1b\xe6\x97"), at)
	var kinds []keyKind
	var runes []rune
	for _, k := range keys {
		kinds = append(kinds, k.kind)
		if k.kind == keyRune {
			runes = append(runes, k.r)
		}
	}
	assert.Equal(t, []keyKind{keyRune, keyRune, keyEnter, keyUp, keyDown, keyCtrlD, keyCtrlC, keyBackspace, keyRune, keyEsc}, kinds)
	assert.Equal(t, []rune{'y', 'N', 'é'}, runes)
	assert.Equal(t, []byte("\xe6\x97"), rest, "half a character waits for the next read")
}

func TestCallLine(t *testing.T) {
	for _, c := range []struct {
		up   agent.Update
		want string
	}{
		{agent.Update{Title: "go vet ./...", ToolKind: tools.KindExecute, Input: json.RawMessage(`{"command":"go vet ./..."}`)}, "$ go vet ./..."},
		{agent.Update{Title: "ls", ToolKind: tools.KindExecute, Input: json.RawMessage(`{"command":"ls"}`)}, "$ ls"},
		{agent.Update{Title: "run_cmd", ToolKind: tools.KindExecute, Input: json.RawMessage(`{"command":"a && b","timeout":5}`)}, `run_cmd command="a && b" timeout=5`},
		{agent.Update{Title: "read main.go", ToolKind: tools.KindRead, Input: json.RawMessage(`{"path":"main.go"}`)}, "read main.go"},
		{agent.Update{Title: "mcp_tool", Input: json.RawMessage(`{"q":"<a&b>","opts":{"x":[1,2]}}`)}, `mcp_tool opts={"x":[1,2]} q=<a&b>`},
	} {
		assert.Equal(t, c.want, callLine(c.up))
	}
}

// Plain output: answer text that does not end its line is ended before the
// next block, a tool call or the files changed, and at the end of the run.
func TestPlainAnswerEndsItsLine(t *testing.T) {
	log := events(t,
		agent.RunState{RunID: "r_1", SessionID: "s_1", State: agent.StateRunning},
		agent.Update{Kind: agent.UpdateMessageChunk, Text: "Let me look."},
		agent.Update{Kind: agent.UpdateToolCall, ToolCallID: "c1", Title: "read main.go", ToolKind: tools.KindRead},
		agent.Update{Kind: agent.UpdateToolCallUpdate, ToolCallID: "c1", Status: agent.StatusCompleted, Output: "package main\n"},
		agent.Update{Kind: agent.UpdateMessageChunk, Text: "Done."},
		agent.Update{Kind: agent.UpdateFilesChanged, Files: []tools.FileDiff{{Path: "main.go", Status: "modified", Diff: "@@ -1 +1,2 @@\n x\n+y\n"}}},
		agent.Update{Kind: agent.UpdateMessageChunk, Text: "Bye"},
		agent.RunState{RunID: "r_1", SessionID: "s_1", State: agent.StateCompleted},
	)
	var out bytes.Buffer
	require.NoError(t, printEvents(&out, log, false))
	got := out.String()
	assert.True(t, strings.HasPrefix(got, "Let me look.\n• read main.go\n"), got)
	assert.Contains(t, got, "Done.\nChanged\n")
	assert.True(t, strings.HasSuffix(got, "Bye\n"), got)
}

// TestDiagnosticsUnderTheEdit: the language servers' diagnostics after a
// reply's last edit print under it, what the model was told; a past run
// shows their summary.
func TestDiagnosticsUnderTheEdit(t *testing.T) {
	text := "Diagnostics after your edits (gopls): 1 problem in the files you changed, 1 of them new.\nmain.go:4:9: error: undefined: Totl [compiler UndeclaredName] (new)"
	log := events(t,
		agent.RunState{RunID: "r_1", SessionID: "s_1", State: agent.StateRunning},
		agent.Update{Kind: agent.UpdateToolCall, ToolCallID: "c1", Title: "edit main.go", ToolKind: tools.KindEdit},
		agent.Update{Kind: agent.UpdateToolCallUpdate, ToolCallID: "c1", Status: agent.StatusCompleted, Output: "modified main.go",
			Files: []tools.FileDiff{{Path: "main.go", Status: "modified", Diff: "@@ -4 +4 @@\n-\treturn Total(items)\n+\treturn Totl(items)\n"}}},
		agent.Update{Kind: agent.UpdateToolCallUpdate, ToolCallID: "c1", Diagnostics: &tools.DiagnosticsReport{Files: []string{"main.go"}, New: 1, Text: text,
			Items: []tools.DiagnosticItem{{Path: "main.go", Line: 4, Column: 9, Severity: "error", Message: "undefined: Totl", New: true}}}},
		agent.RunState{RunID: "r_1", SessionID: "s_1", State: agent.StateCompleted},
	)
	var out bytes.Buffer
	require.NoError(t, printEvents(&out, log, false))
	assert.Contains(t, out.String(), "    Diagnostics after your edits (gopls): 1 problem in the files you changed, 1 of them new.\n")
	assert.NotContains(t, out.String(), "undefined: Totl", "a past run: the summary only")
}
