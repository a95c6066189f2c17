package policy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentd/agentd/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFileToolsNeverWriteGitDirectories: write_file, edit_file and
// apply_patch are refused, in every mode, for a path with a .git or
// .agentd component anywhere (a nested repository's config can make git
// run a program), whatever its case, and through a symlink to one.
func TestFileToolsNeverWriteGitDirectories(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env, "sub/.git/config", "[core]\n")
	writeFile(t, env, "sub/.git/HEAD", "ref: refs/heads/main\n")
	writeFile(t, env, ".agentd/rules.json", `{"rules":[]}`)
	writeFile(t, env, "deep/er/.agentd/rules.json", `{"rules":[]}`)
	writeFile(t, env, "a/b/.git", "gitdir: ../../x\n")
	p, _ := newPolicy(t, env, tools.ModeAsk)

	var calls []*tools.Call
	for _, path := range []string{"sub/.git/config", "sub/.git/hooks/pre-commit", ".git/config", "x/.git/config",
		"a/b/.git", ".agentd/rules.json", "deep/er/.agentd/rules.json", "v/.GIT/config", "v/.Agentd/rules.json"} {
		if _, err := os.Stat(filepath.Join(env.Root, path)); err == nil {
			mustOK(t, call(t, env, tools.ReadFileToolName, tools.ReadFileParams{Path: path})) // overwriting needs a read first
		}
		c, refusal := prepare(t, env, tools.WriteFileToolName, tools.WriteFileParams{Path: path, Content: "[core]\n\tfsmonitor = touch /tmp/pwn\n"})
		require.Nil(t, refusal, "%s: %+v", path, refusal)
		calls = append(calls, c)
	}
	mustOK(t, call(t, env, tools.ReadFileToolName, tools.ReadFileParams{Path: "sub/.git/config"}))
	c, refusal := prepare(t, env, tools.EditFileToolName, tools.EditFileParams{Path: "sub/.git/config", OldString: "[core]", NewString: "[core]\n\tfsmonitor = x"})
	require.Nil(t, refusal, "%+v", refusal)
	calls = append(calls, c)
	for _, patch := range []string{
		"*** Begin Patch\n*** Add File: lib/.git/config\n+[core]\n*** End Patch",
		"*** Begin Patch\n*** Update File: sub/.git/HEAD\n@@\n-ref: refs/heads/main\n+ref: refs/heads/x\n*** End Patch",
		"*** Begin Patch\n*** Add File: ok.txt\n+x\n*** Add File: .agentd/x\n+x\n*** End Patch",
	} {
		c, refusal := prepare(t, env, tools.ApplyPatchToolName, tools.ApplyPatchParams{Patch: patch})
		require.Nil(t, refusal, "%s: %+v", patch, refusal)
		calls = append(calls, c)
	}
	require.Len(t, calls, 13)
	for _, c := range calls {
		for _, mode := range tools.Modes {
			d := p.Decide("s", mode, c)
			assert.Equal(t, Deny, d.Action, "%s %v in %s: %+v", c.Tool, c.Writes, mode, d)
		}
		assert.Contains(t, p.Decide("s", tools.ModeFullAuto, c).Rule, "built-in", "%s %v", c.Tool, c.Writes)
		_, _ = p.Grant("s", c, tools.AllowAlways)
		assert.Equal(t, Deny, p.Decide("s", tools.ModeFullAuto, c).Action, "a grant never lifts it: %v", c.Writes)
	}
	// A file merely named like them is fine.
	c, refusal = prepare(t, env, tools.WriteFileToolName, tools.WriteFileParams{Path: "docs/.gitignore", Content: "x\n"})
	require.Nil(t, refusal)
	assert.Equal(t, Allow, p.Decide("s", tools.ModeAutoEdit, c).Action)
}
