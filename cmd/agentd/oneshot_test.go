package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/internal/proctest"
)

// A one-shot `agentd run` starts the repository map only for a new session
// (its first request needs it) and leaves no ctags behind: not when the map
// is given up, not when agentd is killed.

// hangingCtags puts a ctags on PATH that hangs; it returns PATH and the
// script's path (in the command line of the process running it). ctags
// runs in the kernel sandbox's read profile, where the only place outside
// it a command can write is the cache confined commands share (GOCACHE's
// parent, under the state directory here): each start appends to
// ctags.started there (startedFile).
func hangingCtags(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "ctags")
	body := "#!/bin/sh\necho started >> \"$(dirname \"$GOCACHE\")/ctags.started\"\nsleep 60\n"
	require.NoError(t, os.WriteFile(script, []byte(body), 0o755))
	return dir + string(os.PathListSeparator) + os.Getenv("PATH"), script
}

// startedFile is where the hanging ctags of a daemon with this state
// directory records its starts.
func startedFile(state string) string {
	return filepath.Join(state, "cache", "agentd", "sandbox", "ctags.started")
}

func oneShot(t *testing.T, path, model, state, root string, args ...string) *exec.Cmd {
	cmd := exec.Command(proctest.Agentd(t), append([]string{"run", "--dir", root}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+path, "OPENAI_BASE_URL="+model, "OPENAI_API_KEY=k", "AGENTD_MODEL=fake",
		"AGENTD_STATE_DIR="+state, "HOME="+state, "XDG_CONFIG_HOME="+filepath.Join(state, "config"), "XDG_CACHE_HOME="+filepath.Join(state, "cache"), "AGENTD_RETRY_BASE=10ms")
	return cmd
}

func TestOneShotLeavesNoCtags(t *testing.T) {
	path, script := hangingCtags(t)
	srv := modeltest.StartT(t, &modeltest.Script{Turns: []modeltest.Turn{
		{Match: modeltest.Match{LastUser: "first"}, Reply: modeltest.Reply{Text: "Hello."}},
		{Match: modeltest.Match{LastUser: "second"}, Reply: modeltest.Reply{Text: "Again."}},
	}})
	root, state := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "a.go"), []byte("package a\n\nfunc A() {}\n"), 0o644))

	// A new session: the first request waits for the map a bounded time,
	// then goes without it; the hanging ctags is killed.
	out, err := oneShot(t, path, srv.URL, state, root, "first").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "Hello.")
	proctest.AwaitFile(t, startedFile(state), 20*time.Second, "ctags never started")
	proctest.AwaitGone(t, script, 10*time.Second, "ctags", "outlived agentd")
	session := regexp.MustCompile(`session (s_\w+)`).FindStringSubmatch(string(out))
	require.Len(t, session, 2, "%s", out)

	// The session goes on: its prompt's prefix is stored, no map is made.
	require.NoError(t, os.Remove(startedFile(state)))
	out, err = oneShot(t, path, srv.URL, state, root, "--session", session[1], "second").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "Again.")
	assert.NoFileExists(t, startedFile(state), "a continued session starts no ctags")
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, reqs[0].Messages[0].Content, reqs[1].Messages[0].Content, "the same system message in the next process")
}

func TestKilledOneShotLeavesNoCtags(t *testing.T) {
	path, script := hangingCtags(t)
	srv := modeltest.StartT(t, &modeltest.Script{Turns: []modeltest.Turn{{Reply: modeltest.Reply{Text: "Hello."}}}})
	root, state := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "a.go"), []byte("package a\n\nfunc A() {}\n"), 0o644))
	cmd := oneShot(t, path, srv.URL, state, root, "hello")
	require.NoError(t, cmd.Start())
	proctest.AwaitFile(t, startedFile(state), 20*time.Second, "ctags never started")
	require.NotEmpty(t, proctest.Running(script), "ctags runs")
	require.NoError(t, cmd.Process.Kill()) // kill -9 while the map is being made
	_ = cmd.Wait()
	proctest.AwaitGone(t, script, 10*time.Second, "ctags", "outlived agentd")
}
