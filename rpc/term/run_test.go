package term

import (
	"bytes"
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
	"github.com/agentd/agentd/internal/await"
	"github.com/agentd/agentd/internal/proctest"
	"github.com/agentd/agentd/rpc/rpctest"
)

// Screen size of the tests' terminals.
const (
	termCols = 100
	termRows = 40
)

// terminal is agentd run on a pseudo-terminal, read through a small VT
// emulator as a user sees it. On failure the test prints the screen.
type terminal struct {
	t      *testing.T
	cmd    *exec.Cmd
	tty    *os.File
	root   string
	state  string
	mu     sync.Mutex
	vt     *vt
	raw    bytes.Buffer
	done   chan struct{} // the output is read to its end
	exited chan struct{} // the process exited
}

// runEnv is the environment of agentd run against the scripted model.
func runEnv(t *testing.T, model, state string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); name != "NO_COLOR" && !strings.HasPrefix(name, "AGENTD_") && !strings.HasPrefix(name, "OPENAI_") {
			env = append(env, kv)
		}
	}
	return append(env, "OPENAI_BASE_URL="+model, "OPENAI_API_KEY=k", "AGENTD_MODEL=fake", "TERM=xterm-256color",
		"AGENTD_STATE_DIR="+state, "HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir(), "AGENTD_RETRY_BASE=10ms")
}

// startTerminal starts agentd run in a fresh workspace on a terminal.
func startTerminal(t *testing.T, model string, args ...string) *terminal {
	t.Helper()
	return startTerminalIn(t, t.TempDir(), model, args...)
}

func startTerminalIn(t *testing.T, root, model string, args ...string) *terminal {
	t.Helper()
	return startTerminalWith(t, root, "", model, nil, args...)
}

// startTerminalWith is startTerminalIn with the state directory state (a
// new one if "") and more environment variables.
func startTerminalWith(t *testing.T, root, state, model string, env []string, args ...string) *terminal {
	t.Helper()
	if state == "" {
		state = t.TempDir()
	}
	cmd := exec.Command(proctest.Agentd(t), append([]string{"run", "--dir", root}, args...)...)
	cmd.Env = append(runEnv(t, model, state), env...)
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: termCols, Rows: termRows})
	require.NoError(t, err)
	term := &terminal{t: t, cmd: cmd, tty: tty, root: root, state: state, vt: newVT(termCols, termRows),
		done: make(chan struct{}), exited: make(chan struct{})}
	go func() {
		defer close(term.done)
		buf := make([]byte, 4096)
		for {
			n, err := tty.Read(buf)
			term.mu.Lock()
			term.vt.write(buf[:n])
			term.raw.Write(buf[:n])
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() {
		_ = cmd.Wait()
		close(term.exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-term.exited
		tty.Close()
		if t.Failed() {
			t.Logf("screen (%dx%d), the whole session:\n%s\n%s\n%s", termCols, termRows,
				strings.Repeat("─", termCols), term.text(), strings.Repeat("─", termCols))
		}
	})
	return term
}

// text is everything the terminal showed, as it reads now.
func (term *terminal) text() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.vt.text()
}

// screen is what the terminal shows now (its last rows).
func (term *terminal) screen() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.vt.screen()
}

func (term *terminal) rawOutput() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.raw.String()
}

// waitFor awaits s on the terminal.
func (term *terminal) waitFor(s string) {
	term.t.Helper()
	term.await("the terminal to show "+quote(s), func() bool { return strings.Contains(term.text(), s) })
}

// waitForScreen awaits s among the lines the terminal shows now.
func (term *terminal) waitForScreen(s string) {
	term.t.Helper()
	term.await("the screen to show "+quote(s), func() bool { return strings.Contains(term.screen(), s) })
}

func (term *terminal) await(what string, cond func() bool) {
	term.t.Helper()
	dl := await.NewDeadline(20 * time.Second)
	for !cond() {
		if dl.Passed() {
			term.t.Fatalf("timed out after %s waiting for %s", dl, what)
		}
		select {
		case <-term.exited:
			if !cond() {
				<-term.done
				if !cond() {
					term.t.Fatalf("agentd run exited while waiting for %s", what)
				}
			}
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// press types keys as they are (no Enter added).
func (term *terminal) press(keys string) {
	term.t.Helper()
	_, err := io.WriteString(term.tty, keys)
	require.NoError(term.t, err)
}

func (term *terminal) typeLine(s string) { term.t.Helper(); term.press(s + "\r") }

// exitCode waits for agentd run to exit.
func (term *terminal) exitCode() int {
	term.t.Helper()
	return term.exitWithin(20 * time.Second)
}

// exitWithin fails unless agentd run exits within d (scaled for the
// machine).
func (term *terminal) exitWithin(d time.Duration) int {
	term.t.Helper()
	select {
	case <-term.exited:
	case <-time.After(await.Timeout(d)):
		term.t.Fatalf("agentd run did not exit within %v", await.NewDeadline(d))
	}
	<-term.done
	return term.cmd.ProcessState.ExitCode()
}

func quote(s string) string { return "\"" + s + "\"" }

// scripted starts the scripted model with these turns.
func scripted(t *testing.T, turns ...modeltest.Turn) *modeltest.Server {
	srv := modeltest.Start(&modeltest.Script{Turns: turns})
	t.Cleanup(srv.Close)
	return srv
}

func startModel(t *testing.T) *modeltest.Server {
	s, err := modeltest.LoadScript(filepath.Join("..", "..", "testdata", "models", "terminal.json"))
	require.NoError(t, err)
	srv := modeltest.Start(s)
	t.Cleanup(srv.Close)
	return srv
}

func call(id, name string, args any) modeltest.Reply {
	return modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: id, Name: name, Arguments: modeltest.Args(args)}}}
}

func text(s string) modeltest.Reply { return modeltest.Reply{Text: s} }

// firstPrompt is the last user message of the model's first request.
func firstPrompt(t *testing.T, srv *modeltest.Server) string {
	t.Helper()
	reqs := srv.Requests()
	require.NotEmpty(t, reqs)
	msgs := reqs[0].Messages
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return msgs[i].Content
		}
	}
	return ""
}

func TestRunQuestionTypedAndWriteApproved(t *testing.T) {
	srv := startModel(t)
	term := startTerminal(t, srv.URL, "write a greeting")
	term.waitFor("Whom should I greet?")
	term.waitForScreen("Enter: send")
	term.typeLine("Ada")
	term.waitFor("+Hello, Ada")
	term.waitForScreen("Yes, once")
	term.press("y")
	term.waitFor("Wrote the greeting.")
	assert.Equal(t, ExitCompleted, term.exitCode())
	got, err := os.ReadFile(filepath.Join(term.root, "greeting.txt"))
	require.NoError(t, err)
	assert.Equal(t, "Hello, Ada\n", string(got))
}

func TestRunCtrlCCancels(t *testing.T) {
	srv := startModel(t)
	term := startTerminal(t, srv.URL, "talk forever")
	term.waitFor("keep talking")
	term.press("\x03") // Ctrl-C: the terminal sends SIGINT
	assert.Equal(t, ExitCancelled, term.exitWithin(5*time.Second))
	assert.Contains(t, term.text(), "cancelled")
}

// TestRunAnswerNotSavedIsAskedAgain: the state directory stops taking
// writes while a question waits; the answer is refused, the terminal says
// why and asks again, and once the directory is writable the run goes on.
func TestRunAnswerNotSavedIsAskedAgain(t *testing.T) {
	srv := startModel(t)
	state := t.TempDir()
	term := startTerminalWith(t, t.TempDir(), state, srv.URL, nil, "write a greeting")
	term.waitFor("Whom should I greet?")
	term.waitForScreen("Enter: send")
	thaw := rpctest.FreezeTree(t, state)
	term.typeLine("Ada")
	term.waitFor("state not saved")
	thaw()
	term.await("the question asked again", func() bool {
		return strings.Count(term.text(), "Whom should I greet?") >= 2 && strings.Contains(term.screen(), "Enter: send")
	})
	term.typeLine("Ada")
	term.waitFor("+Hello, Ada")
	term.waitForScreen("Yes, once")
	term.press("y")
	term.waitFor("Wrote the greeting.")
	assert.Equal(t, ExitCompleted, term.exitCode())
}

// TestRunAfterAKilledRun: a run killed in the middle of a step comes back
// paused when the next agent run starts in the workspace; the new run is
// not mistaken for it and goes on to its own end.
func TestRunAfterAKilledRun(t *testing.T) {
	srv := startModel(t)
	state, root := t.TempDir(), t.TempDir()
	first := startTerminalWith(t, root, state, srv.URL, nil, "talk forever")
	first.waitFor("keep talking")
	require.NoError(t, first.cmd.Process.Kill())
	first.exitCode()

	term := startTerminalWith(t, root, state, srv.URL, nil, "write a greeting")
	term.waitFor("Whom should I greet?")
	term.waitForScreen("Enter: send")
	term.typeLine("Ada")
	term.waitForScreen("Yes, once")
	term.press("y")
	term.waitFor("Wrote the greeting.")
	assert.Equal(t, ExitCompleted, term.exitCode())
}

// TestRunPausedWhenItsStateCannotBeSaved: the state directory stops taking
// writes while the model thinks; the run's next step cannot be saved, so
// the run pauses where it stands. Nothing in agentd run can resume it: the
// command says so and exits 1, without claiming an end.
func TestRunPausedWhenItsStateCannotBeSaved(t *testing.T) {
	root, state := t.TempDir(), t.TempDir()
	for _, name := range []string{"a.txt", "b.txt"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte("<"+name+">\n"), 0o600))
	}
	slow := call("r2", "read_file", map[string]string{"path": "b.txt"})
	slow.DelayMs = 1500
	srv := scripted(t,
		modeltest.Turn{Match: modeltest.Match{LastUser: "read both"}, Reply: call("r1", "read_file", map[string]string{"path": "a.txt"})},
		modeltest.Turn{Match: modeltest.Match{LastTool: "<a.txt>"}, Reply: slow},
		modeltest.Turn{Match: modeltest.Match{LastTool: "<b.txt>"}, Reply: text("Read both.")})
	term := startTerminalWith(t, root, state, srv.URL, nil, "read both", "--policy", "full-auto")
	term.await("the second model request", func() bool { return len(srv.Requests()) >= 2 })
	rpctest.FreezeTree(t, state)
	term.waitFor("run paused")
	assert.Equal(t, ExitFailed, term.exitCode())
	out := term.rawOutput() // the lines as printed, before the terminal wraps them
	assert.Contains(t, out, "state not saved")
	assert.Contains(t, out, "agentd run cannot resume it")
	assert.Contains(t, out, ": paused")
	assert.NotContains(t, out, "Read both.")
	for _, line := range strings.Split(term.text(), "\n") {
		if strings.Contains(line, "level=") {
			assert.True(t, strings.HasPrefix(line, "time="), "a log line starts its own line: %q", line)
		}
	}
}

func TestRunWithoutModelSaysHowToConfigure(t *testing.T) {
	cmd := exec.Command(proctest.Agentd(t), "run", "hello")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "XDG_CONFIG_HOME=" + t.TempDir()}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, ExitUsage, exit.ExitCode())
	assert.Contains(t, stderr.String(), "OPENAI_BASE_URL")
	assert.Contains(t, stderr.String(), "agentd search")
}

func TestMain(m *testing.M) {
	code := m.Run()
	proctest.Cleanup()
	os.Exit(code)
}
