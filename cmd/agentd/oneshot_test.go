package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/internal/await"
	"github.com/agentd/agentd/internal/proctest"
)

// A one-shot `agentd run` starts the repository map only for a new session
// (its first request needs it) and leaves no ctags behind: not when the map
// is given up, not when agentd is killed.

// hangingCtags puts a ctags on PATH that hangs; it returns PATH and the
// script's path, which is in the command line of the process running it:
// ctags runs in the kernel sandbox's read profile, with nowhere outside it
// can write, so the test watches the processes.
func hangingCtags(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "ctags")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\nsleep 60\n"), 0o755))
	return dir + string(os.PathListSeparator) + os.Getenv("PATH"), script
}

// runWatching runs cmd to its end and reports whether a process running
// script was seen meanwhile.
func runWatching(t *testing.T, cmd *exec.Cmd, script string) (out []byte, err error, seen bool) {
	t.Helper()
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		seen = seen || len(proctest.Running(script)) > 0
		select {
		case err = <-done:
			return buf.Bytes(), err, seen
		case <-time.After(10 * time.Millisecond):
		}
	}
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
	out, err, seen := runWatching(t, oneShot(t, path, srv.URL, state, root, "first"), script)
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "Hello.")
	assert.True(t, seen, "ctags never started")
	proctest.AwaitGone(t, script, 10*time.Second, "ctags", "outlived agentd")
	session := regexp.MustCompile(`session (s_\w+)`).FindStringSubmatch(string(out))
	require.Len(t, session, 2, "%s", out)

	// The session goes on: its prompt's prefix is stored, no map is made.
	out, err, seen = runWatching(t, oneShot(t, path, srv.URL, state, root, "--session", session[1], "second"), script)
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "Again.")
	assert.False(t, seen, "a continued session starts no ctags")
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
	await.Until(t, "ctags to start", 20*time.Second, func() bool { return len(proctest.Running(script)) > 0 })
	require.NoError(t, cmd.Process.Kill()) // kill -9 while the map is being made
	_ = cmd.Wait()
	proctest.AwaitGone(t, script, 10*time.Second, "ctags", "outlived agentd")
}
