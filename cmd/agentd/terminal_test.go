package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/rpc/rpctest"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

func agentdBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "agentd-run-test")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "agentd")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = errors.New(string(out))
		}
	})
	require.NoError(t, binErr)
	return binPath
}

// terminal is agentd run on a pseudo-terminal, read as a user sees it.
type terminal struct {
	t    *testing.T
	cmd  *exec.Cmd
	tty  *os.File
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
}

func startTerminal(t *testing.T, model string, args ...string) (*terminal, string) {
	t.Helper()
	return startTerminalIn(t, model, t.TempDir(), t.TempDir(), args...)
}

// startTerminalIn is startTerminal with the state directory state, in the
// workspace root.
func startTerminalIn(t *testing.T, model, state, root string, args ...string) (*terminal, string) {
	t.Helper()
	cmd := exec.Command(agentdBinary(t), append([]string{"run", "--dir", root}, args...)...)
	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+model, "OPENAI_API_KEY=k", "AGENTD_MODEL=fake",
		"AGENTD_STATE_DIR="+state, "HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir(), "AGENTD_RETRY_BASE=10ms")
	tty, err := pty.Start(cmd)
	require.NoError(t, err)
	term := &terminal{t: t, cmd: cmd, tty: tty, done: make(chan struct{})}
	go func() {
		defer close(term.done)
		buf := make([]byte, 4096)
		for {
			n, err := tty.Read(buf)
			term.mu.Lock()
			term.out.Write(buf[:n])
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		tty.Close()
		if t.Failed() {
			t.Logf("terminal:\n%s", term.screen())
		}
	})
	return term, root
}

func (term *terminal) screen() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.out.String()
}

func (term *terminal) waitFor(s string) {
	term.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(term.screen(), s) {
		if time.Now().After(deadline) {
			term.t.Fatalf("timed out waiting for %q on the terminal", s)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (term *terminal) typeLine(s string) {
	term.t.Helper()
	_, err := io.WriteString(term.tty, s+"\r")
	require.NoError(term.t, err)
}

func (term *terminal) exitCode() int {
	term.t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- term.cmd.Wait() }()
	select {
	case <-errc:
	case <-time.After(15 * time.Second):
		term.t.Fatal("agentd run did not exit")
	}
	<-term.done
	return term.cmd.ProcessState.ExitCode()
}

func startModel(t *testing.T) *modeltest.Server {
	s, err := modeltest.LoadScript(filepath.Join("..", "..", "testdata", "models", "terminal.json"))
	require.NoError(t, err)
	srv := modeltest.Start(s)
	t.Cleanup(srv.Close)
	return srv
}

func TestRunQuestionTypedAndWriteApproved(t *testing.T) {
	srv := startModel(t)
	term, root := startTerminal(t, srv.URL, "write a greeting")
	term.waitFor("Whom should I greet?")
	term.waitFor("> ")
	term.typeLine("Ada")
	term.waitFor("+Hello, Ada")
	term.waitFor("Allow?")
	term.typeLine("y")
	term.waitFor("Wrote the greeting.")
	assert.Equal(t, exitCompleted, term.exitCode())
	got, err := os.ReadFile(filepath.Join(root, "greeting.txt"))
	require.NoError(t, err)
	assert.Equal(t, "Hello, Ada\n", string(got))
}

func TestRunCtrlCCancels(t *testing.T) {
	srv := startModel(t)
	term, _ := startTerminal(t, srv.URL, "talk forever")
	term.waitFor("keep talking")
	_, err := term.tty.Write([]byte{3}) // Ctrl-C: the terminal sends SIGINT
	require.NoError(t, err)
	term.waitFor("cancelled")
	assert.Equal(t, exitCancelled, term.exitCode())
}

// TestRunAnswerNotSavedIsAskedAgain: the state directory stops taking
// writes while a question waits; the answer is refused, the terminal says
// why and asks again, and once the directory is writable the run goes on.
func TestRunAnswerNotSavedIsAskedAgain(t *testing.T) {
	srv := startModel(t)
	state := t.TempDir()
	term, _ := startTerminalIn(t, srv.URL, state, t.TempDir(), "write a greeting")
	term.waitFor("Whom should I greet?")
	term.waitFor("> ")
	thaw := rpctest.FreezeTree(t, state)
	term.typeLine("Ada")
	term.waitFor("state not saved")
	thaw()
	for deadline := time.Now().Add(15 * time.Second); strings.Count(term.screen(), "Whom should I greet?") < 2; {
		if time.Now().After(deadline) {
			t.Fatal("the question was not asked again")
		}
		time.Sleep(10 * time.Millisecond)
	}
	term.typeLine("Ada")
	term.waitFor("Allow?")
	term.typeLine("y")
	term.waitFor("Wrote the greeting.")
	assert.Equal(t, exitCompleted, term.exitCode())
}

// TestRunAfterAKilledRun: a run killed in the middle of a step comes back
// paused when the next agent run starts in the workspace; the new run is
// not mistaken for it and goes on to its own end.
func TestRunAfterAKilledRun(t *testing.T) {
	srv := startModel(t)
	state, root := t.TempDir(), t.TempDir()
	first, _ := startTerminalIn(t, srv.URL, state, root, "talk forever")
	first.waitFor("keep talking")
	require.NoError(t, first.cmd.Process.Kill())
	first.exitCode()

	term, _ := startTerminalIn(t, srv.URL, state, root, "write a greeting")
	term.waitFor("Whom should I greet?")
	term.waitFor("> ")
	term.typeLine("Ada")
	term.waitFor("Allow?")
	term.typeLine("y")
	term.waitFor("Wrote the greeting.")
	assert.Equal(t, exitCompleted, term.exitCode())
}

func TestRunWithoutModelSaysHowToConfigure(t *testing.T) {
	cmd := exec.Command(agentdBinary(t), "run", "hello")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "XDG_CONFIG_HOME=" + t.TempDir()}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, exitUsage, exit.ExitCode())
	assert.Contains(t, stderr.String(), "OPENAI_BASE_URL")
	assert.Contains(t, stderr.String(), "agentd search")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}
