package tools

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/internal/await"
	"github.com/agentd/agentd/tools/sandbox"
)

// unavailable is a sandbox on a machine that cannot confine anything.
func unavailable() *Sandbox {
	return NewSandbox(SandboxConfig{status: &sandbox.Status{OS: "linux", Problems: []string{"Landlock is not available (test)"}}})
}

// landlockAlone confines read but not workspace-write (no namespaces).
func landlockAlone() *Sandbox {
	return NewSandbox(SandboxConfig{status: &sandbox.Status{OS: "linux", Landlock: 7, EntryPoint: true}})
}

// TestSandboxStatus: the status says what is offered and why not.
func TestSandboxStatus(t *testing.T) {
	st := unavailable().Status()
	assert.False(t, st.Active)
	assert.Equal(t, []Profile{ProfileFull}, st.Profiles)
	assert.Contains(t, st.Summary, "not available")
	assert.Equal(t, []string{"Landlock is not available (test)"}, st.Problems)

	st = NewSandbox(SandboxConfig{Off: true}).Status()
	assert.False(t, st.Active)
	assert.True(t, st.Off)
	assert.Contains(t, st.Summary, "switched off")

	st = landlockAlone().Status()
	assert.True(t, st.Active)
	assert.Equal(t, []Profile{ProfileRead, ProfileFull}, st.Profiles)
	assert.True(t, strings.HasPrefix(st.Summary, "read-only commands run in the kernel sandbox"))
}

// TestUnconfinedIsNeverSilent: a process in a profile the machine cannot
// confine does not start, and the model reads why.
func TestUnconfinedIsNeverSilent(t *testing.T) {
	env := newEnv(t)
	env.Sandbox = unavailable()
	marker := filepath.Join(env.Root, "ran")
	for _, profile := range []Profile{ProfileRead, ProfileWorkspaceWrite, ""} {
		r := runConfined(t, t.Context(), env, Confine{Profile: profile}, RunCmdParams{Command: "touch " + marker})
		mustErr(t, r)
		assert.Contains(t, r.Output, "not run: the kernel sandbox cannot confine this command here")
		assert.NoFileExists(t, marker)
	}
	r := mustOK(t, runConfined(t, t.Context(), env, Confine{Profile: ProfileFull}, RunCmdParams{Command: "touch " + marker}))
	assert.Contains(t, r.Output, "[exit code 0")
	assert.FileExists(t, marker, "full runs, by the user's explicit choice")
}

// TestCommandEnvFromSettings: a name the user adds (commandEnv) reaches
// commands; without it, the allow-list keeps it with the daemon.
func TestCommandEnvFromSettings(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://u:pw@db/app")
	env := newEnv(t)
	r := mustOK(t, call(t, env, RunCmdToolName, RunCmdParams{Command: "env"}))
	assert.NotContains(t, r.Output, "DATABASE_URL")
	env.Sandbox = NewSandbox(SandboxConfig{EnvAllow: []string{"DATABASE_URL"}})
	r = mustOK(t, call(t, env, RunCmdToolName, RunCmdParams{Command: "env"}))
	assert.Contains(t, r.Output, "DATABASE_URL=postgres://u:pw@db/app")
}

// TestSandboxStatusIsKept: the machine's answer is kept in the user's
// cache, outside what confined commands write; a daemon starts with the
// kept answer and replaces it with the machine's shortly after.
func TestSandboxStatusIsKept(t *testing.T) {
	if !sandbox.Check().Supports(sandbox.Read) {
		t.Skip("no kernel sandbox here")
	}
	dir := filepath.Join(t.TempDir(), "sandbox")
	assert.True(t, NewSandbox(SandboxConfig{CacheDir: dir}).Status().Active)
	sb0 := NewSandbox(SandboxConfig{CacheDir: dir})
	file := sb0.statusFile(statusKey())
	require.FileExists(t, file)

	// A stale answer (here: nothing available) serves at once, then the
	// machine's replaces it.
	stale, err := json.Marshal(cachedStatus{Key: statusKey(), Status: sandbox.Status{OS: "linux", Problems: []string{"stale"}}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, stale, 0o600))
	sb := NewSandbox(SandboxConfig{CacheDir: dir})
	assert.False(t, sb.Status().Active, "the kept answer, at once")
	require.Eventually(t, func() bool { return sb.Status().Active }, await.Timeout(10*time.Second), 20*time.Millisecond, "then the machine's")

	// Another kernel or binary: the kept answer does not apply, and its
	// own is kept beside this one's, not instead of it (binaries of several
	// builds on one machine each start with theirs). The oldest go beyond
	// keptStatuses.
	other, err := json.Marshal(cachedStatus{Key: "other", Status: sandbox.Status{OS: "linux", Problems: []string{"other"}}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, other, 0o600))
	assert.True(t, NewSandbox(SandboxConfig{CacheDir: dir}).Status().Active)
	require.NotEqual(t, file, sb0.statusFile("other"))
	for i := range keptStatuses + 3 {
		old := sb0.statusFile(fmt.Sprint("old ", i))
		require.NoError(t, os.WriteFile(old, other, 0o600))
		require.NoError(t, os.Chtimes(old, time.Now().Add(-time.Hour), time.Now().Add(-time.Hour)))
	}
	sb0.keep(file, statusKey(), sandbox.Check())
	kept, _ := filepath.Glob(dir + "-status-*.json")
	assert.Len(t, kept, keptStatuses)
	assert.FileExists(t, file, "the newest stays")
}
