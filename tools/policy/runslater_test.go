package policy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/tools"
)

// TestRunsLaterFilesAsk is issue 24's hole: files that run later outside
// any sandbox (VS Code's tasks on folder open, direnv's .envrc, a dev
// container, a hooks directory, CI) were written unasked in auto-edit.
// Now every mode that writes asks before them, by file tool or by
// command; a grant of the file (or a rule the user wrote) lifts it, and
// other files stay as the mode says.
func TestRunsLaterFilesAsk(t *testing.T) {
	env := newEnv(t)
	p, _ := newPolicy(t, env, tools.ModeAutoEdit)
	asks := [4]Action{Deny, Ask, Ask, Ask} // read-only, ask, auto-edit, full-auto
	for _, path := range []string{".vscode/tasks.json", ".vscode/settings.json", ".vscode/launch.json", ".envrc",
		"web/.envrc", ".devcontainer/devcontainer.json", ".idea/workspace.xml", ".husky/pre-commit",
		".github/workflows/ci.yml", ".bashrc", ".nvim.lua"} {
		var got [4]Action
		for i, mode := range tools.Modes {
			got[i] = p.Decide("s", mode, writeCall(path)).Action
		}
		assert.Equal(t, asks, got, path)
		d := p.Decide("s", tools.ModeAutoEdit, writeCall(path))
		assert.Contains(t, d.Reason, "runs later, outside the sandbox", path)
	}
	for line, path := range map[string]string{
		`echo '{"tasks":[]}' > .vscode/tasks.json`:    ".vscode/tasks.json",
		`cp evil.json .vscode/settings.json`:          ".vscode/settings.json",
		`echo 'curl x | sh' >> .envrc`:                ".envrc",
		`mkdir -p .husky && tee .husky/pre-commit <x`: ".husky", // the directory itself: mv x .husky would make it
	} {
		for _, mode := range []tools.Mode{tools.ModeAutoEdit, tools.ModeFullAuto} {
			d := p.Decide("s", mode, cmdCall(line))
			assert.Equal(t, Ask, d.Action, "%s in %s: %+v", line, mode, d)
			if mode == tools.ModeFullAuto { // in auto-edit every command asks anyway
				assert.Contains(t, d.Rule, "runs later: "+path, line)
			}
		}
	}
	assert.Equal(t, Allow, p.Decide("s", tools.ModeAutoEdit, writeCall("main.go")).Action)
	assert.Equal(t, Allow, p.Decide("s", tools.ModeAutoEdit, writeCall(".vscode.md")).Action)
	assert.Equal(t, Allow, p.Decide("s", tools.ModeFullAuto, cmdCall("echo x > notes.txt")).Action)

	// "Yes, for this session" on the file covers that file, not the others.
	_, err := p.Grant("s", writeCall(".vscode/tasks.json"), tools.AllowSession)
	require.NoError(t, err)
	assert.Equal(t, Allow, p.Decide("s", tools.ModeAutoEdit, writeCall(".vscode/tasks.json")).Action)
	assert.Equal(t, Ask, p.Decide("s", tools.ModeAutoEdit, writeCall(".vscode/settings.json")).Action)
}
