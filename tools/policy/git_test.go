package policy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gitIn runs git for a test's setup, with a fixed identity.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// evilScript writes a script that records that it ran, and returns the
// path and the marker file it appends to.
func evilScript(t *testing.T) (script, marker string) {
	t.Helper()
	dir := t.TempDir()
	marker = filepath.Join(dir, "ran")
	script = filepath.Join(dir, "evil")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\necho \"$0 $*\" >> "+marker+"\n"), 0o755))
	return script, marker
}

// hostileRepo makes a repository whose configuration runs script from
// every place a read-only git command may reach: fsmonitor, hooks, an
// external diff, a diff driver and a textconv filter named by
// .gitattributes, and a signature check.
func hostileRepo(t *testing.T, dir, script string) {
	t.Helper()
	gitIn(t, dir, "init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.bin"), []byte("one\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".gitattributes"), []byte("b.bin diff=evil\n"), 0o644))
	gitIn(t, dir, "add", ".")
	gitIn(t, dir, "commit", "-qm", "one")
	// A commit with a signature, so that log.showSignature runs gpg.program.
	tree := gitIn(t, dir, "rev-parse", "HEAD^{tree}")
	parent := gitIn(t, dir, "rev-parse", "HEAD")
	obj := fmt.Sprintf("tree %s\nparent %s\nauthor t <t@t> 1700000000 +0000\ncommitter t <t@t> 1700000000 +0000\n"+
		"gpgsig -----BEGIN PGP SIGNATURE-----\n \n -----END PGP SIGNATURE-----\n\nsigned\n", tree, parent)
	f := filepath.Join(t.TempDir(), "commit")
	require.NoError(t, os.WriteFile(f, []byte(obj), 0o644))
	signed := gitIn(t, dir, "hash-object", "-t", "commit", "-w", f)
	gitIn(t, dir, "update-ref", "HEAD", signed)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("two\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.bin"), []byte("two\n"), 0o644))
	for _, kv := range [][2]string{
		{"core.fsmonitor", script}, {"diff.external", script}, {"diff.evil.command", script},
		{"diff.evil.textconv", script}, {"log.showSignature", "true"}, {"gpg.program", script},
		{"core.pager", script},
	} {
		gitIn(t, dir, "config", kv[0], kv[1])
	}
	for _, h := range []string{"post-index-change", "post-checkout", "reference-transaction"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, ".git", "hooks", h), []byte("#!/bin/sh\n"+script+" hook\n"), 0o755))
	}
}

// TestGitRunsWithSafeSettings runs auto-allowed git commands for real in
// a repository configured to run a program: as written they run it; as
// the policy runs them (Command.Exec), they do not, and still work.
func TestGitRunsWithSafeSettings(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	env := newEnv(t)
	script, marker := evilScript(t)
	hostileRepo(t, env.Root, script)
	p, _ := newPolicy(t, env, tools.ModeReadOnly)

	lines := []string{"git status", "git diff", "git diff --stat", "git log -p -2", "git show", "git log -1",
		"git --no-pager log -1 --format=%G?", "git blame b.bin", "git diff -- b.bin | cat", "git stash list"}
	attacks := 0
	for _, line := range lines {
		os.Remove(marker)
		c, refusal := prepare(t, env, tools.RunCmdToolName, tools.RunCmdParams{Command: line})
		require.Nil(t, refusal)
		// As written, without the policy's settings. Unconfined here and
		// below: the safe settings alone must stop it (the kernel sandbox
		// would also keep the marker from being written).
		c.Command.Confine = tools.Confine{Profile: tools.ProfileFull}
		res, err := c.Run(t.Context())
		require.NoError(t, err)
		if _, err := os.Stat(marker); err == nil {
			attacks++
		}
		os.Remove(marker)

		d := p.Decide("s", tools.ModeReadOnly, c)
		require.Equal(t, Allow, d.Action, "%s: %+v", line, d)
		require.NotEmpty(t, c.Command.Exec, line)
		assert.Equal(t, tools.ProfileRead, d.Confine.Profile, line)
		res, err = c.Run(t.Context())
		require.NoError(t, err)
		assert.False(t, res.IsError, "%s fails with the safe settings: %s", line, res.Output)
		_, err = os.Stat(marker)
		ran, _ := os.ReadFile(marker)
		assert.True(t, os.IsNotExist(err), "%s ran the repository's program: %s", line, ran)
	}
	assert.GreaterOrEqual(t, attacks, 5, "the repository's configuration runs the program when git runs as written")

	// The diff still shows the change (textual, not the external driver's).
	c, _ := prepare(t, env, tools.RunCmdToolName, tools.RunCmdParams{Command: "git diff"})
	require.Equal(t, Allow, p.Decide("s", tools.ModeReadOnly, c).Action)
	res, err := c.Run(t.Context())
	require.NoError(t, err)
	assert.Contains(t, res.Output, "-one\n+two")
}

// TestGitRefusesBareRepositoryInWorkspace: a bare repository among the
// workspace's files (its config a plain file the model may write) is not
// used by auto-allowed git.
func TestGitRefusesBareRepositoryInWorkspace(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	env := newEnv(t)
	script, marker := evilScript(t)
	bare := filepath.Join(env.Root, "fixtures", "repo")
	require.NoError(t, os.MkdirAll(bare, 0o755))
	gitIn(t, bare, "init", "-q", "--bare")
	gitIn(t, bare, "config", "core.pager", script)
	gitIn(t, bare, "config", "alias.st", "!"+script)
	p, _ := newPolicy(t, env, tools.ModeAsk)
	c, refusal := prepare(t, env, tools.RunCmdToolName, tools.RunCmdParams{Command: "git log -1; git config --list", Cwd: "fixtures/repo"})
	require.Nil(t, refusal)
	require.Equal(t, Allow, p.Decide("s", "", c).Action)
	c.Command.Confine = tools.Confine{Profile: tools.ProfileFull} // the safe settings alone
	res, err := c.Run(t.Context())
	require.NoError(t, err)
	assert.Contains(t, res.Output, "cannot use bare repository")
	assert.NotContains(t, res.Output, script, "the bare repository's configuration is not read")
	_, err = os.Stat(marker)
	assert.True(t, os.IsNotExist(err))
}

// TestGitInRepositoryMadeDuringSession: git in a nested repository (or a
// .git link) whose configuration changed since the policy loaded is not
// auto-allowed: filters and drivers named there would run.
func TestGitInRepositoryMadeDuringSession(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	env := newEnv(t)
	gitIn(t, env.Root, "init", "-q")
	old := filepath.Join(env.Root, "old")
	require.NoError(t, os.MkdirAll(old, 0o755))
	gitIn(t, old, "init", "-q")
	mod := filepath.Join(env.Root, "vendor", "mod")
	require.NoError(t, os.MkdirAll(mod, 0o755))
	gitIn(t, mod, "init", "-q")
	time.Sleep(10 * time.Millisecond) // ctime granularity: the policy loads strictly after
	p, _ := newPolicy(t, env, tools.ModeAsk)

	fresh := filepath.Join(env.Root, "fresh")
	require.NoError(t, os.MkdirAll(fresh, 0o755))
	gitIn(t, fresh, "init", "-q")
	gitIn(t, mod, "config", "filter.x.clean", "touch /tmp/pwn") // an old repository reconfigured
	linked := filepath.Join(env.Root, "linked")
	require.NoError(t, os.MkdirAll(filepath.Join(env.Root, "plain"), 0o755))
	require.NoError(t, os.MkdirAll(linked, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(linked, ".git"), []byte("gitdir: ../old/.git\n"), 0o644))

	cases := map[string]Action{
		"git status":                          Allow,
		"cd old && git status":                Allow,
		"git -C old log --oneline":            Allow,
		"cd plain && git status":              Allow, // the workspace's repository
		"cd fresh && git status":              Ask,
		"git -C fresh status":                 Ask,
		"cd fresh/sub 2>/dev/null; git diff":  Ask,
		"cd vendor/mod && git diff":           Ask,
		"cd linked && git status":             Ask, // the .git file is new
		"(cd fresh && git status); git log":   Ask,
		"cd old && cd ../fresh && git status": Ask,
	}
	for line, want := range cases {
		d := p.Decide("s", tools.ModeAsk, cmdCall(line))
		assert.Equal(t, want, d.Action, "%s: %+v", line, d)
		if want == Ask {
			assert.Contains(t, strings.Join(p.Classify(&tools.Command{Line: line, Cwd: "."}).Why, "; "), "changed during this session", line)
		}
	}
}

// TestGitSafeExecShape pins how the safe settings reach git: exported
// before the line, and --no-ext-diff --no-textconv after the subcommands
// that show diffs, wherever they are in the line.
func TestGitSafeExecShape(t *testing.T) {
	env := newEnv(t)
	p, _ := newPolicy(t, env, tools.ModeAsk)
	cls := p.Classify(&tools.Command{Line: `git log -1 && echo "$(git show HEAD)" | grep x; git status`, Cwd: "."})
	require.True(t, cls.ReadOnly)
	prefix, line, ok := strings.Cut(cls.Exec, "; ")
	require.True(t, ok)
	assert.Equal(t, `git log --no-ext-diff --no-textconv -1 && echo "$(git show --no-ext-diff --no-textconv HEAD)" | grep x; git status`, line)
	for _, want := range []string{"GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0=false",
		"core.hooksPath GIT_CONFIG_VALUE_1=/dev/null", "GIT_OPTIONAL_LOCKS=0", "safe.bareRepository"} {
		assert.Contains(t, prefix, want)
	}
	assert.Empty(t, p.Classify(&tools.Command{Line: "git commit -m x && make", Cwd: "."}).Exec, "only read-only and git-only lines are rewritten")
	commit := p.Classify(&tools.Command{Line: "git commit -m x", Cwd: "."})
	assert.True(t, commit.Git)
	assert.Contains(t, commit.Exec, "core.hooksPath GIT_CONFIG_VALUE_1=/dev/null", "git alone runs without hooks")
	c := cmdCall("git status")
	p.Decide("s", "", c)
	assert.Equal(t, cls.Exec[:len(prefix)], c.Command.Exec[:len(prefix)], "Decide sets the call's Exec")
	assert.Equal(t, c.Command.Exec, c.Command.Run())
}

// TestGitInWorkspaceMadeARepositoryDuringSession: a workspace that was no
// repository when the policy loaded has no trusted git directory; one a
// command makes later is judged like any new repository.
func TestGitInWorkspaceMadeARepositoryDuringSession(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	env := newEnv(t)
	p, _ := newPolicy(t, env, tools.ModeAsk)
	assert.Equal(t, Allow, p.Decide("s", "", cmdCall("git status")).Action, "no repository: git only fails")
	gitIn(t, env.Root, "init", "-q")
	gitIn(t, env.Root, "config", "filter.x.clean", "touch /tmp/pwn")
	d := p.Decide("s", "", cmdCall("git status"))
	assert.Equal(t, Ask, d.Action, "%+v", d)

	p2, _ := newPolicy(t, env, tools.ModeAsk) // a new session: the repository predates it
	assert.Equal(t, Allow, p2.Decide("s", "", cmdCall("git status")).Action)
	gitIn(t, env.Root, "config", "user.name", "someone")
	assert.Equal(t, Allow, p2.Decide("s", "", cmdCall("git status")).Action,
		"the workspace's own repository stays trusted: commands cannot write its configuration")
}
