package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent/modeltest"
)

// A one-shot `agentd run` starts the repository map only for a new session
// (its first request needs it) and leaves no ctags behind: not when the map
// is given up, not when agentd is killed.

// hangingCtags puts a ctags on PATH that records its pid and hangs; it
// returns PATH and the pid file.
func hangingCtags(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "ctags.pid")
	script := "#!/bin/sh\necho $$ > " + pidFile + ".tmp && mv " + pidFile + ".tmp " + pidFile + "\nexec sleep 60\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ctags"), []byte(script), 0o755))
	return dir + string(os.PathListSeparator) + os.Getenv("PATH"), pidFile
}

func ctagsPid(t *testing.T, pidFile string) int {
	t.Helper()
	data, err := os.ReadFile(pidFile)
	require.NoError(t, err, "ctags was never started")
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	require.NoError(t, err)
	return pid
}

// awaitExit waits until pid no longer exists.
func awaitExit(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("ctags (pid %d) outlived agentd", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func oneShot(t *testing.T, path, model, state, root string, args ...string) *exec.Cmd {
	cmd := exec.Command(agentdBinary(t), append([]string{"run", "--dir", root}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+path, "OPENAI_BASE_URL="+model, "OPENAI_API_KEY=k", "AGENTD_MODEL=fake",
		"AGENTD_STATE_DIR="+state, "HOME="+state, "XDG_CONFIG_HOME="+filepath.Join(state, "config"), "AGENTD_RETRY_BASE=10ms")
	return cmd
}

func TestOneShotLeavesNoCtags(t *testing.T) {
	path, pidFile := hangingCtags(t)
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
	awaitExit(t, ctagsPid(t, pidFile))
	session := regexp.MustCompile(`session (s_\w+)`).FindStringSubmatch(string(out))
	require.Len(t, session, 2, "%s", out)

	// The session goes on: its prompt's prefix is stored, no map is made.
	require.NoError(t, os.Remove(pidFile))
	out, err = oneShot(t, path, srv.URL, state, root, "--session", session[1], "second").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "Again.")
	assert.NoFileExists(t, pidFile, "a continued session starts no ctags")
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, reqs[0].Messages[0].Content, reqs[1].Messages[0].Content, "the same system message in the next process")
}

func TestKilledOneShotLeavesNoCtags(t *testing.T) {
	path, pidFile := hangingCtags(t)
	srv := modeltest.StartT(t, &modeltest.Script{Turns: []modeltest.Turn{{Reply: modeltest.Reply{Text: "Hello."}}}})
	root, state := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "a.go"), []byte("package a\n\nfunc A() {}\n"), 0o644))
	cmd := oneShot(t, path, srv.URL, state, root, "hello")
	require.NoError(t, cmd.Start())
	deadline := time.Now().Add(20 * time.Second)
	for _, err := os.Stat(pidFile); err != nil; _, err = os.Stat(pidFile) {
		require.True(t, time.Now().Before(deadline), "ctags never started")
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, cmd.Process.Kill()) // kill -9 while the map is being made
	_ = cmd.Wait()
	awaitExit(t, ctagsPid(t, pidFile))
}
