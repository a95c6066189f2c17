package term

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent/modeltest"
)

// Typed while the agent works, a line under the status line steers it:
// Enter adds it to the run, the transcript shows it where it was given, and
// the model reads it after the command under way ends.
func TestRunSteerWhileWorking(t *testing.T) {
	srv := scripted(t,
		modeltest.Turn{Name: "wait", Match: modeltest.Match{LastUser: "build it"},
			Reply: call("c1", "run_cmd", map[string]string{"command": "while [ ! -e go ]; do sleep 0.02; done; echo built"})},
		modeltest.Turn{Name: "steered", Match: modeltest.Match{LastUser: "use the debug flags"}, Reply: text("Built with the debug flags.")})
	term := startTerminal(t, srv.URL, "--policy", "full-auto", "build it")
	term.waitForScreen("running while")
	term.waitForScreen(steerHint)
	term.press("use the debg")
	term.press("\x7fug flags")
	term.waitForScreen("› use the debug flags")
	term.press("\r")
	term.waitFor("› use the debug flags\n")
	require.NoError(t, os.WriteFile(filepath.Join(term.root, "go"), nil, 0o600))
	term.waitFor("Built with the debug flags.")
	assert.Equal(t, ExitCompleted, term.exitCode())
	reqs := srv.Requests()
	last := reqs[len(reqs)-1].Messages
	assert.Equal(t, "use the debug flags", last[len(last)-1].Content, "the model read the steer last")
	assert.Equal(t, "tool", last[len(last)-2].Role, "after the command's result")
}

// What is typed in the steer line and not sent is never an answer: a
// question that comes puts it away, and it is there again after.
func TestRunSteerLineIsNeverAnAnswer(t *testing.T) {
	srv := scripted(t,
		modeltest.Turn{Name: "wait", Match: modeltest.Match{LastUser: "paint it"},
			Reply: call("c1", "run_cmd", map[string]string{"command": "while [ ! -e go ]; do sleep 0.02; done"})},
		modeltest.Turn{Name: "ask", Match: modeltest.Match{AfterTool: "run_cmd"},
			Reply: call("q1", "ask_user", map[string]string{"question": "Which colour?"})},
		modeltest.Turn{Name: "answered", Match: modeltest.Match{AfterTool: "ask_user"}, Reply: text("Painted it.")})
	term := startTerminal(t, srv.URL, "--policy", "full-auto", "paint it")
	term.waitForScreen(steerHint)
	term.press("half a thought")
	term.waitForScreen("› half a thought")
	require.NoError(t, os.WriteFile(filepath.Join(term.root, "go"), nil, 0o600))
	term.waitForScreen("Which colour?")
	term.typeLine("blue")
	term.waitFor("→ blue")
	term.waitFor("Painted it.")
	assert.Equal(t, ExitCompleted, term.exitCode())
	results := toolResultsOf(srv)
	assert.Equal(t, "The user answered: blue", results["q1"], "the question got only what was typed for it")
	assert.False(t, strings.Contains(term.text(), "› half a thought\n"), "the unsent line was never sent")
}

// toolResultsOf is the last request's tool results by call id.
func toolResultsOf(srv *modeltest.Server) map[string]string {
	out := map[string]string{}
	reqs := srv.Requests()
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == "tool" {
			out[m.ToolCallID] = m.Content
		}
	}
	return out
}

// Plan mode in the terminal: a write is refused unasked, the plan comes as
// a prompt that shows it and offers the modes to approve it into; approved
// into auto-edit, the run goes on and writes unasked.
func TestRunPlanMode(t *testing.T) {
	srv := scripted(t,
		modeltest.Turn{Name: "write first", Match: modeltest.Match{LastUser: "add a greeting"},
			Reply: call("w1", "write_file", map[string]string{"path": "greeting.txt", "content": "hello\n"})},
		modeltest.Turn{Name: "propose", Match: modeltest.Match{LastTool: "plan mode"},
			Reply: call("p1", "propose_plan", map[string]string{"plan": "1. Write **greeting.txt**.\n2. Read it back."})},
		modeltest.Turn{Name: "carry out", Match: modeltest.Match{LastTool: "approved the plan"},
			Reply: call("w2", "write_file", map[string]string{"path": "greeting.txt", "content": "hello\n"})},
		modeltest.Turn{Name: "done", Match: modeltest.Match{AfterTool: "write_file", LastTool: "greeting.txt"}, Reply: text("Wrote greeting.txt.")})
	term := startTerminal(t, srv.URL, "--policy", "plan", "add a greeting")
	term.waitForScreen("Approve, and edit files without asking")
	assert.Contains(t, term.text(), "Approve the plan?")
	assert.Contains(t, term.text(), "Write greeting.txt.", "the plan is shown, its Markdown laid out")
	assert.NoFileExists(t, filepath.Join(term.root, "greeting.txt"), "the write was refused unasked")
	term.press("1")
	term.waitForScreen("What should change, or anything to add")
	term.press("\r")
	term.waitFor("Wrote greeting.txt.")
	assert.Equal(t, ExitCompleted, term.exitCode())
	assert.FileExists(t, filepath.Join(term.root, "greeting.txt"))
	assert.Contains(t, term.text(), "mode is now auto-edit")
}
