package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/internal/await"
	"github.com/agentd/agentd/internal/proctest"
)

const undoCLIScript = `{"turns": [
  {"name": "one", "match": {"lastUser": "first"}, "reply": {"toolCalls": [
    {"id": "c1", "name": "run_cmd", "arguments": {"command": "echo one > f.txt && rm gone.txt && mv old.txt new.txt"}}]}},
  {"name": "one-done", "match": {"lastUser": "first", "afterTool": "run_cmd"}, "reply": {"text": "First done."}},
  {"name": "two", "match": {"lastUser": "second"}, "reply": {"toolCalls": [
    {"id": "c2", "name": "run_cmd", "arguments": {"command": "echo two >> f.txt && echo x > x.txt"}}]}},
  {"name": "two-done", "match": {"lastUser": "second", "afterTool": "run_cmd"}, "reply": {"text": "Second done."}}
]}`

type undoWorld struct {
	t     *testing.T
	root  string
	env   []string
	model *modeltest.Server
}

func newUndoWorld(t *testing.T) *undoWorld {
	s, err := modeltest.ParseScript([]byte(undoCLIScript))
	require.NoError(t, err)
	model := modeltest.StartT(t, s)
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for name, content := range map[string]string{"gone.txt": "bye\n", "old.txt": "moving\n"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(content), 0o644))
	}
	env := append(os.Environ(), "OPENAI_BASE_URL="+model.URL, "OPENAI_API_KEY=k", "AGENTD_MODEL=fake",
		"AGENTD_STATE_DIR="+t.TempDir(), "HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir(), "AGENTD_RETRY_BASE=10ms")
	return &undoWorld{t: t, root: root, env: env, model: model}
}

// agentd runs the binary without a terminal and returns its output and
// exit code.
func (w *undoWorld) agentd(args ...string) (string, int) {
	w.t.Helper()
	cmd := exec.Command(proctest.Agentd(w.t), args...)
	cmd.Env, cmd.Dir = w.env, w.root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(w.t, err)
	}
	return out.String(), code
}

func (w *undoWorld) read(name string) string {
	b, err := os.ReadFile(filepath.Join(w.root, name))
	if err != nil {
		return "(absent)"
	}
	return string(b)
}

func TestUndoCommandLine(t *testing.T) {
	w := newUndoWorld(t)
	out, code := w.agentd("run", "--policy", "full-auto", "first")
	require.Equal(t, 0, code, out)
	out, code = w.agentd("run", "--policy", "full-auto", "--session", sessionOf(t, out), "second")
	require.Equal(t, 0, code, out)
	assert.Equal(t, "one\ntwo\n", w.read("f.txt"))

	out, code = w.agentd("undo", "--list")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "c1 ")
	assert.Contains(t, out, "deleted   gone.txt")
	assert.Contains(t, out, "renamed   new.txt (from old.txt)")
	assert.Contains(t, out, "c2 ")

	out, code = w.agentd("undo", "--dry-run")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "would undo c2")
	assert.Equal(t, "one\ntwo\n", w.read("f.txt"))

	// The last turn, without a terminal: a conflict stops it and says how
	// to decide.
	require.NoError(t, os.WriteFile(filepath.Join(w.root, "x.txt"), []byte("mine\n"), 0o644))
	out, code = w.agentd("undo")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "x.txt: it was changed after the checkpoint")
	assert.Contains(t, out, "-mine")
	assert.Contains(t, out, "--skip")
	assert.Equal(t, "one\ntwo\n", w.read("f.txt"), "nothing was changed")

	out, code = w.agentd("undo", "--skip")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "undid c2 (this is checkpoint c3")
	assert.Equal(t, "one\n", w.read("f.txt"))
	assert.Equal(t, "mine\n", w.read("x.txt"))

	// Rewind both turns: the files of the first come back too.
	out, code = w.agentd("undo", "--rewind", "2", "--skip")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "rewound 2 run(s)")
	assert.Equal(t, "(absent)", w.read("f.txt"))
	assert.Equal(t, "bye\n", w.read("gone.txt"))
	assert.Equal(t, "moving\n", w.read("old.txt"))
	assert.Equal(t, "(absent)", w.read("new.txt"))
}

// On a terminal a conflict is asked: s skips it.
func TestUndoCommandLineAsksOnATerminal(t *testing.T) {
	w := newUndoWorld(t)
	out, code := w.agentd("run", "--policy", "full-auto", "first")
	require.Equal(t, 0, code, out)
	require.NoError(t, os.WriteFile(filepath.Join(w.root, "f.txt"), []byte("mine\n"), 0o644))

	cmd := exec.Command(proctest.Agentd(t), "undo")
	cmd.Env, cmd.Dir = w.env, w.root
	tty, err := pty.Start(cmd)
	require.NoError(t, err)
	defer tty.Close()
	var screen bytes.Buffer
	buf := make([]byte, 4096)
	deadline := time.Now().Add(await.Timeout(20 * time.Second))
	for !strings.Contains(screen.String(), "[c]ancel? ") {
		require.True(t, time.Now().Before(deadline), "no question on the terminal: %q", screen.String())
		n, err := tty.Read(buf)
		screen.Write(buf[:n])
		require.NoError(t, err, screen.String())
	}
	_, err = tty.Write([]byte("s\n"))
	require.NoError(t, err)
	for err == nil {
		var n int
		n, err = tty.Read(buf)
		screen.Write(buf[:n])
	}
	require.NoError(t, cmd.Wait(), screen.String())
	assert.Contains(t, screen.String(), "undid c1")
	assert.Equal(t, "mine\n", w.read("f.txt"), "skipped")
	assert.Equal(t, "bye\n", w.read("gone.txt"))
	assert.Equal(t, "moving\n", w.read("old.txt"))
}

// sessionOf finds the session id agentd run printed.
func sessionOf(t *testing.T, out string) string {
	t.Helper()
	i := strings.Index(out, "session s_")
	require.GreaterOrEqual(t, i, 0, out)
	return strings.TrimSuffix(strings.Fields(out[i+len("session "):])[0], ",")
}
