package tools

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
)

// runPlain runs line without a terminal: stdin is /dev/null so a prompt
// fails fast, the command gets its own process group so a timeout or a
// cancel kills everything it started.
func runPlain(ctx context.Context, env *Env, line, dir string, timeout time.Duration) Result {
	cmd := shellCommand(line)
	cmd.Dir = dir
	cmd.Env = ChildEnv(os.Environ(), env.Secrets, nil)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithDaemon(cmd)
	cmd.WaitDelay = time.Second // a daemonised grandchild holding stdout must not hang us
	capt := newCapture(env.Output)
	cmd.Stdout, cmd.Stderr = capt, capt
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return *Errorf("starting the command: %v", err)
	}
	env.started(cmd.Process.Pid)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var o cmdOutcome
	select {
	case <-done:
	case <-timer.C:
		o.stopped = "timed out after " + timeout.String()
		killGroup(cmd.Process.Pid)
		<-done
	case <-ctx.Done():
		o.stopped = "cancelled"
		killGroup(cmd.Process.Pid)
		<-done
	}
	// Background jobs the command left behind would outlive the call with
	// no one to stop them.
	killGroup(cmd.Process.Pid)
	o.elapsed = time.Since(start)
	if o.stopped == "" {
		o.exitCode = exitCode(cmd.ProcessState)
	}
	return finish(env, capt.String(), o)
}

func killGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

func exitCode(ps *os.ProcessState) *int {
	if ps == nil {
		return nil
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		c := 128 + int(ws.Signal())
		return &c
	}
	c := ps.ExitCode()
	return &c
}

// capture keeps a command's output: the first maxFullBytes and a rolling
// tail, so a runaway command cannot exhaust memory yet the model still sees
// how it ended. Each chunk is also streamed to the editor.
type capture struct {
	mu      sync.Mutex // guards the fields below
	head    []byte
	tail    []byte
	dropped int
	secrets []string // typed secrets, redacted in case the terminal echoed them
	live    func(string)
}

const captureTail = 64 << 10

func newCapture(live func(string)) *capture { return &capture{live: live} }

func (c *capture) Write(p []byte) (int, error) {
	n0 := len(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.live != nil {
		c.live(c.redact(string(p)))
	}
	if room := maxFullBytes - len(c.head); room > 0 {
		n := min(room, len(p))
		c.head = append(c.head, p[:n]...)
		p = p[n:]
	}
	if len(p) > 0 {
		c.tail = append(c.tail, p...)
		if over := len(c.tail) - captureTail; over > 0 {
			c.dropped += over
			c.tail = append([]byte(nil), c.tail[over:]...)
		}
	}
	return n0, nil
}

func (c *capture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := string(c.head)
	if c.dropped > 0 {
		s += fmt.Sprintf("\n[… %d bytes dropped …]\n", c.dropped)
	}
	return c.redact(s + string(c.tail))
}

func (c *capture) addSecret(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(s) >= 3 {
		c.secrets = append(c.secrets, s)
	}
}

func (c *capture) redact(s string) string {
	for _, sec := range c.secrets {
		s = strings.ReplaceAll(s, sec, "********")
	}
	return s
}
