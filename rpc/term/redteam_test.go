package term

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent/modeltest"
)

// osc52 would set the terminal's clipboard (here to "echo pwned"), ready
// for the next paste into a shell; a bidi override reorders what a
// terminal with bidi support shows of a line.
const (
	osc52   = "\x1b]52;c;ZWNobyBwd25lZA==\x07"
	rlo     = "\u202e"
	escaped = `\x1b]52;c;ZWNobyBwd25lZA==\x07`
)

// TestRedTeamTerminalHelpShowsWorkspaceTextAsText: `agentd run /help` in a
// cloned repository lists its .agentd/commands: their descriptions,
// argument hints and file names are the repository's text, and must reach
// the terminal with their control characters shown, not obeyed.
func TestRedTeamTerminalHelpShowsWorkspaceTextAsText(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, ".agentd", "commands")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "review.md"),
		[]byte("---\ndescription: Review "+osc52+" the diff"+rlo+"\nargument-hint: <file"+osc52+">\n---\nReview $ARGUMENTS.\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad"+osc52+".md"), []byte("x\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "broken.md"), []byte("---\nno colon "+osc52+"\n---\nx\n"), 0o644))
	srv := scripted(t)
	term := startTerminalIn(t, root, srv.URL, "/help")
	term.waitFor("Custom commands:")
	term.exitCode()
	raw := term.rawOutput()
	assert.NotContains(t, raw, "\x1b]52")
	assert.NotContains(t, raw, rlo)
	assert.Contains(t, raw, escaped, "shown as what it is")
}

// TestRedTeamTerminalRunErrorShowsModelTextAsText: the model's endpoint
// answers with an error whose message carries escape sequences; the
// terminal's "run failed" line shows them as text.
func TestRedTeamTerminalRunErrorShowsModelTextAsText(t *testing.T) {
	srv := scripted(t, modeltest.Turn{Reply: modeltest.Reply{Status: 400, Body: "bad request " + osc52 + rlo}})
	term := startTerminal(t, srv.URL, "hi")
	term.waitFor("run failed")
	term.exitCode()
	raw := term.rawOutput()
	assert.NotContains(t, raw, "\x1b]52")
	assert.NotContains(t, raw, rlo)
}

// TestRedTeamTerminalBidiInACommand: a command line with a right-to-left
// override asks for approval; the prompt shows the override as an escape,
// so a terminal that reorders text cannot show another command than the
// one that runs.
func TestRedTeamTerminalBidiInACommand(t *testing.T) {
	line := "touch ./notes.txt #" + rlo + " sgnittes tes"
	srv := scripted(t,
		modeltest.Turn{Match: modeltest.Match{LastUser: "clean"}, Reply: call("c1", "run_cmd", map[string]string{"command": line})},
		modeltest.Turn{Match: modeltest.Match{AfterTool: "run_cmd"}, Reply: text("Left as it is.")})
	term := startTerminal(t, srv.URL, "clean up")
	term.waitForScreen("Yes, once")
	assert.Contains(t, term.screen(), `\u202e`)
	term.press("n")
	term.waitFor("Left as it is.")
	term.exitCode()
	assert.NotContains(t, term.rawOutput(), rlo)
}
