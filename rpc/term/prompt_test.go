package term

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent/modeltest"
)

// The prompts of issue 18: typed-ahead keys never answer, single keys in
// either case, a typo asks again, "never" asks to be sure, Ctrl-C cancels
// at once, Ctrl-D says no and the run goes on.

// writeTurns: the model writes note.txt, then says what happened.
func writeTurns() []modeltest.Turn {
	return []modeltest.Turn{
		{Name: "write", Match: modeltest.Match{LastUser: "note"}, Reply: call("w1", "write_file", map[string]string{"path": "note.txt", "content": "hello\n"})},
		{Name: "done", Match: modeltest.Match{AfterTool: "write_file"}, Reply: text("Finished with the note.")},
	}
}

func noteWritten(term *terminal) bool {
	_, err := os.Stat(filepath.Join(term.root, "note.txt"))
	return err == nil
}

// grants reads the rules the run stored (allow_always, reject_always).
func grants(t *testing.T, state string) string {
	var out strings.Builder
	_ = filepath.WalkDir(state, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "rules.json" {
			b, _ := os.ReadFile(path)
			out.Write(b)
		}
		return nil
	})
	return out.String()
}

// A "y" typed while the model is still thinking, before the write it will
// ask about is on the screen, does not approve it: keys typed while the
// agent works go to the steer line, and Enter sends them to the model as
// the user's words, never as an answer.
func TestRunKeysTypedWhileThinkingNeverApprove(t *testing.T) {
	turns := writeTurns()
	turns[0].Reply.DelayMs = 2000
	turns = append(turns, modeltest.Turn{Name: "steered", Match: modeltest.Match{LastUser: "yyes"}, Reply: text("Finished with the note.")})
	srv := scripted(t, turns...)
	term := startTerminal(t, srv.URL, "write a note")
	term.waitForScreen("thinking")
	term.await("the model's first request", func() bool { return len(srv.Requests()) > 0 })
	start := time.Now()
	term.press("y")
	term.press("yes\r")
	if time.Since(start) > time.Second {
		t.Skip("the machine is too slow to type while the model thinks")
	}
	term.waitForScreen("Yes, once")
	term.press("n")
	term.waitFor("Finished with the note.")
	assert.Equal(t, ExitCompleted, term.exitCode())
	assert.False(t, noteWritten(term), "a key typed before the prompt approved the write")
	assert.Contains(t, term.text(), "→ No")
	assert.Contains(t, term.text(), "› yyes", "what was typed was a steer")
}

// A "y" typed during a silent command (as during a long go vet) does not
// approve the write that follows it, nor does Enter.
func TestRunKeysTypedDuringCommandNeverApprove(t *testing.T) {
	srv := scripted(t,
		modeltest.Turn{Name: "wait", Match: modeltest.Match{LastUser: "note"},
			Reply: call("c1", "run_cmd", map[string]string{"command": "while [ ! -e go ]; do sleep 0.02; done"})},
		modeltest.Turn{Name: "write", Match: modeltest.Match{LastUser: "ok then"},
			Reply: call("w1", "write_file", map[string]string{"path": "note.txt", "content": "hello\n"})},
		modeltest.Turn{Name: "done", Match: modeltest.Match{AfterTool: "write_file"}, Reply: text("Finished with the note.")})
	term := startTerminal(t, srv.URL, "write a note")
	// The loop runs unasked (the policy reads it as read-only) or asks:
	// approve it if it asks.
	term.await("the command to run or ask", func() bool {
		s := term.screen()
		return strings.Contains(s, "running while") || strings.Contains(s, "Allow this command?")
	})
	if strings.Contains(term.screen(), "Allow this command?") {
		term.press("y")
		term.waitForScreen("running while")
	}
	term.press("y")
	term.press("\x7fok then\r") // a steer: the model reads it after the command
	term.waitFor("› ok then")
	require.NoError(t, os.WriteFile(filepath.Join(term.root, "go"), nil, 0o600))
	term.waitForScreen("Allow this change: create note.txt?")
	term.waitForScreen("Yes, once")
	assert.False(t, noteWritten(term))
	term.press("n")
	term.waitFor("Finished with the note.")
	assert.Equal(t, ExitCompleted, term.exitCode())
	assert.False(t, noteWritten(term), "a key typed during the command approved the write")
}

// Ctrl-C at a question cancels the run and exits at once.
func TestRunCtrlCAtQuestionExitsAtOnce(t *testing.T) {
	srv := scripted(t, modeltest.Turn{Match: modeltest.Match{LastUser: "ask"},
		Reply: call("q1", "ask_user", map[string]string{"question": "Which colour?"})})
	term := startTerminal(t, srv.URL, "ask me")
	term.waitForScreen("Enter: send")
	term.press("re") // half an answer
	term.press("\x03")
	assert.Equal(t, ExitCancelled, term.exitWithin(3*time.Second))
	assert.Contains(t, term.text(), "cancelled")
}

// Ctrl-C at a permission prompt cancels the run and exits at once; nothing
// is written.
func TestRunCtrlCAtPermissionExitsAtOnce(t *testing.T) {
	srv := scripted(t, writeTurns()...)
	term := startTerminal(t, srv.URL, "write a note")
	term.waitForScreen("Yes, once")
	term.press("\x03")
	assert.Equal(t, ExitCancelled, term.exitWithin(3*time.Second))
	assert.False(t, noteWritten(term))
}

// Ctrl-D at a permission prompt says no, and the run goes on.
func TestRunCtrlDRejectsAndGoesOn(t *testing.T) {
	srv := scripted(t, writeTurns()...)
	term := startTerminal(t, srv.URL, "write a note")
	term.waitForScreen("Yes, once")
	term.press("\x04")
	term.waitFor("Finished with the note.")
	assert.Equal(t, ExitCompleted, term.exitCode())
	assert.False(t, noteWritten(term))
	assert.Contains(t, term.text(), "→ No")
}

// Ctrl-D at a question skips it, and the run goes on.
func TestRunCtrlDSkipsAQuestion(t *testing.T) {
	srv := scripted(t,
		modeltest.Turn{Match: modeltest.Match{LastUser: "ask"}, Reply: call("q1", "ask_user", map[string]string{"question": "Which colour?"})},
		modeltest.Turn{Match: modeltest.Match{AfterTool: "ask_user", LastTool: "no answer"}, Reply: text("Then I pick blue.")})
	term := startTerminal(t, srv.URL, "ask me")
	term.waitForScreen("Enter: send")
	term.press("\x04")
	term.waitFor("Then I pick blue.")
	assert.Equal(t, ExitCompleted, term.exitCode())
}

// Capital N is "no" once: it stores no rule, and the same write asks again.
func TestRunCapitalNRejectsOnce(t *testing.T) {
	write := call("w1", "write_file", map[string]string{"path": "note.txt", "content": "hello\n"})
	again := call("w2", "write_file", map[string]string{"path": "note.txt", "content": "hello\n"})
	srv := scripted(t,
		modeltest.Turn{Name: "write", Match: modeltest.Match{LastUser: "note"}, Reply: write},
		modeltest.Turn{Name: "again", Match: modeltest.Match{AfterTool: "write_file"}, Reply: again},
		modeltest.Turn{Name: "done", Match: modeltest.Match{AfterTool: "write_file"}, Reply: text("Finished with the note.")})
	term := startTerminal(t, srv.URL, "write a note")
	term.waitForScreen("Yes, once")
	term.press("N")
	term.await("the same write to ask again", func() bool { return strings.Count(term.text(), "Allow this change") == 2 })
	term.waitForScreen("Yes, once")
	term.press("n")
	term.waitFor("Finished with the note.")
	assert.Equal(t, ExitCompleted, term.exitCode())
	assert.False(t, noteWritten(term))
	assert.Empty(t, grants(t, term.state), "N stored a rule")
}

// Capital Y is yes.
func TestRunCapitalYApproves(t *testing.T) {
	srv := scripted(t, writeTurns()...)
	term := startTerminal(t, srv.URL, "write a note")
	term.waitForScreen("Yes, once")
	term.press("Y")
	term.waitFor("Finished with the note.")
	assert.Equal(t, ExitCompleted, term.exitCode())
	assert.True(t, noteWritten(term))
}

// A key that is no answer says so and asks again; it rejects nothing.
func TestRunTypoAsksAgain(t *testing.T) {
	srv := scripted(t, writeTurns()...)
	term := startTerminal(t, srv.URL, "write a note")
	term.waitForScreen("Yes, once")
	term.press("u")
	term.waitForScreen(`"u" is not an answer here: press y, s, a, n, t or x`)
	term.press("\r") // Enter takes the highlighted answer: the first, yes once
	term.waitFor("Finished with the note.")
	assert.Equal(t, ExitCompleted, term.exitCode())
	assert.True(t, noteWritten(term))
}

// "Never" asks to be sure; anything but y goes back to the answers.
func TestRunNeverAsksToBeSure(t *testing.T) {
	srv := scripted(t, writeTurns()...)
	term := startTerminal(t, srv.URL, "write a note")
	term.waitForScreen("Yes, once")
	term.press("x")
	term.waitForScreen("Never allow this?")
	term.press("n")
	term.waitForScreen("Yes, once")
	assert.Empty(t, grants(t, term.state))
	term.press("X")
	term.waitForScreen("Never allow this?")
	term.press("y")
	term.waitFor("Finished with the note.")
	assert.Equal(t, ExitCompleted, term.exitCode())
	assert.False(t, noteWritten(term))
	assert.Contains(t, grants(t, term.state), "deny")
}

// "t" rejects with what the agent should do instead, which the model reads.
func TestRunRejectWithReason(t *testing.T) {
	srv := scripted(t,
		modeltest.Turn{Name: "write", Match: modeltest.Match{LastUser: "note"}, Reply: call("w1", "write_file", map[string]string{"path": "note.txt", "content": "hello\n"})},
		modeltest.Turn{Name: "done", Match: modeltest.Match{AfterTool: "write_file", LastTool: "call it memo.txt"}, Reply: text("I will call it memo.txt.")})
	term := startTerminal(t, srv.URL, "write a note")
	term.waitForScreen("Yes, once")
	term.press("t")
	term.waitForScreen("Tell the agent what to do instead")
	term.typeLine("call it memo.txt")
	term.waitFor("I will call it memo.txt.")
	assert.Equal(t, ExitCompleted, term.exitCode())
	assert.False(t, noteWritten(term))
}

// A choice is a picker: the arrows and Enter, or the option's number.
func TestRunChoicePicker(t *testing.T) {
	srv := scripted(t,
		modeltest.Turn{Match: modeltest.Match{LastUser: "pick"}, Reply: call("q1", "ask_user",
			map[string]any{"question": "Which colour?", "options": []string{"red", "green", "blue"}})},
		modeltest.Turn{Match: modeltest.Match{AfterTool: "ask_user", LastTool: "green"}, Reply: text("Green it is.")})
	term := startTerminal(t, srv.URL, "pick a colour")
	term.waitForScreen("› 1  red")
	term.press("\x1b[B") // down
	term.waitForScreen("› 2  green")
	term.press("\r")
	term.waitFor("Green it is.")
	assert.Equal(t, ExitCompleted, term.exitCode())
}

// Several answers: Space marks, Enter sends the marked ones.
func TestRunMultipleChoice(t *testing.T) {
	srv := scripted(t,
		modeltest.Turn{Match: modeltest.Match{LastUser: "pick"}, Reply: call("q1", "ask_user",
			map[string]any{"question": "Which fruits?", "options": []string{"apple", "pear", "plum"}, "multiple": true})},
		modeltest.Turn{Match: modeltest.Match{AfterTool: "ask_user", LastTool: "apple, plum"}, Reply: text("Apple and plum.")})
	term := startTerminal(t, srv.URL, "pick fruits")
	term.waitForScreen("[ ] apple")
	term.press("\r")
	term.waitForScreen("mark at least one with Space")
	term.press(" ")
	term.waitForScreen("[x] apple")
	term.press("3")
	term.waitForScreen("[x] plum")
	term.press("\r")
	term.waitFor("Apple and plum.")
	assert.Equal(t, ExitCompleted, term.exitCode())
}

// A secret is typed without showing it; the model never reads it.
func TestRunSecretIsHidden(t *testing.T) {
	srv := scripted(t,
		modeltest.Turn{Match: modeltest.Match{LastUser: "deploy"}, Reply: call("q1", "ask_user",
			map[string]any{"question": "Your deploy token?", "secret": true, "env_var": "DEPLOY_TOKEN"})},
		modeltest.Turn{Match: modeltest.Match{AfterTool: "ask_user", LastTool: "DEPLOY_TOKEN"}, Reply: text("Token received.")})
	term := startTerminal(t, srv.URL, "deploy it")
	term.waitForScreen("hidden; Enter to send")
	term.press("hunter2")
	term.waitForScreen("> •••••••")
	term.press("\r")
	term.waitFor("Token received.")
	assert.Equal(t, ExitCompleted, term.exitCode())
	assert.NotContains(t, term.rawOutput(), "hunter2")
	for _, r := range srv.Requests() {
		for _, m := range r.Messages {
			assert.NotContains(t, m.Content, "hunter2")
		}
	}
}

// A command line cannot hide a part of itself from the prompt with escape
// sequences: they show as what they are.
func TestRunPromptShowsEscapesInACommand(t *testing.T) {
	line := "rm -rf ./build \x1b[2K\r\x1b[1Als"
	srv := scripted(t,
		modeltest.Turn{Match: modeltest.Match{LastUser: "clean"}, Reply: call("c1", "run_cmd", map[string]string{"command": line})},
		modeltest.Turn{Match: modeltest.Match{AfterTool: "run_cmd"}, Reply: text("Left as it is.")})
	term := startTerminal(t, srv.URL, "clean up")
	term.waitForScreen("Yes, once")
	assert.Contains(t, term.screen(), "\n    $ rm -rf ./build \\x1b[2K\\x0d\\x1b[1Als\n", "the prompt shows the whole command")
	// Where it would run, wrapped at spaces to the terminal's width: no
	// word is broken at the edge.
	words := strings.Join(strings.Fields(term.screen()), " ")
	assert.Contains(t, words, "it runs in the workspace-write sandbox (it can change the workspace, not the repository's .git, nested repositories or .agentd/), without the network.")
	assert.Contains(t, words, "always allow stores `rm -rf ./build")
	term.press("n")
	term.waitFor("Left as it is.")
	assert.Equal(t, ExitCompleted, term.exitCode())
}

// A confirmation that expires says so, and closes into a rejection while
// its prompt is open; the run goes on.
func TestRunConfirmationExpires(t *testing.T) {
	srv := scripted(t, writeTurns()...)
	term := startTerminalWith(t, t.TempDir(), "", srv.URL, []string{"AGENTD_CONFIRM_TIMEOUT=1s"}, "write a note")
	term.waitForScreen("Yes, once")
	assert.Regexp(t, `\(without an answer within [01]s, it is rejected\)`, term.screen())
	term.waitFor("→ no answer in time")
	term.waitFor("Finished with the note.")
	assert.Equal(t, ExitCompleted, term.exitCode())
	assert.False(t, noteWritten(term))
	assert.NotContains(t, term.screen(), "Yes, once", "the closed prompt stays on the screen")
}
