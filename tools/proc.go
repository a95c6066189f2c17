package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/agentd/agentd/tools/sandbox"
)

// runPlain runs cmd without a terminal, in the kernel sandbox's profile
// cmd.Confine names: stdin is /dev/null so a prompt fails fast; a timeout or
// a cancel kills everything the command started, and so does its end
// (background jobs do not outlive it). The sandbox's init dies with the
// daemon and takes the command's namespace or group with it; the process
// is named to env.Started before it can do anything, for reaping.
func runPlain(ctx context.Context, env *Env, cmd *Command, dir string, timeout time.Duration) Result {
	capt := newCapture(env, cmd)
	start := time.Now()
	p, err := env.sandbox().Command(ctx, commandSpec(env, cmd, dir, capt, capt, nil))
	if err != nil {
		return startFailed(ctx, env, cmd, err, capt.String(), start)
	}
	done := make(chan error, 1)
	go func() { done <- p.Wait() }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var o cmdOutcome
	select {
	case <-done:
	case <-timer.C:
		o.stopped = "timed out after " + timeout.String()
		_ = p.Kill()
		<-done
	case <-ctx.Done():
		o.stopped = "cancelled"
		_ = p.Kill()
		<-done
	}
	o.elapsed = time.Since(start)
	if o.stopped == "" {
		code := p.ExitCode()
		o.exitCode = &code
	}
	return finishConfined(env, capt.String(), o, cmd.Confine, p)
}

// commandSpec is the process spec of a command the model runs: the one
// shell argv (shellArgv) of the line as it must run (Command.Run: git's
// safe settings for a read-only line) in dir, confined as cmd.Confine says,
// with only the secrets the line names.
func commandSpec(env *Env, cmd *Command, dir string, stdout, stderr io.Writer, tty *os.File) ProcSpec {
	secrets := map[string]string{}
	for _, name := range cmd.Secrets {
		if v, ok := env.Secrets[name]; ok {
			secrets[name] = v
		}
	}
	return ProcSpec{Args: shellArgv(cmd.Run()), Workspace: env.Root, Dir: dir, Confine: cmd.Confine,
		Session: env.SessionID, Secrets: secrets, Stdout: stdout, Stderr: stderr, TTY: tty, WaitDelay: time.Second, Started: env.Started}
}

// startFailed is the result of a command whose start failed: cancelled
// while the sandbox started it, it may have begun (the entry point runs
// it, then reports), and whatever it began was killed: the model reads
// that it was cancelled, not that nothing ran. Otherwise, notStarted.
func startFailed(ctx context.Context, env *Env, cmd *Command, err error, out string, start time.Time) Result {
	if ctx.Err() != nil {
		return finish(env, out, cmdOutcome{stopped: "cancelled", elapsed: time.Since(start)})
	}
	return notStarted(cmd, err)
}

// notStarted is the result of a command the sandbox did not start: the
// model reads why, and that nothing ran.
func notStarted(cmd *Command, err error) Result {
	var se *sandbox.SetupError
	switch {
	case errors.As(err, &se) && se.Step == "exec":
		return *Errorf("not run: %s", se.Msg)
	case errors.Is(err, ErrNotConfined):
		return *Errorf("not run: %v. Nothing ran; ask the user to run it, or to approve it without the sandbox.", err)
	}
	return *Errorf("not run: the command could not be started in the %s sandbox: %v", profileName(cmd.Confine.Profile), err)
}

// finishConfined is finish, with a word for the model when a confined
// command failed the way the sandbox makes commands fail, so that a
// refused socket or path is understood (and the network asked for the
// right way) rather than worked around.
func finishConfined(env *Env, out string, o cmdOutcome, c Confine, p *Proc) Result {
	res := finish(env, out, o)
	if !res.IsError || o.stopped != "" || c.Profile == ProfileFull {
		return res
	}
	if note := refusalNote(out, c, p != nil && p.sessionNetwork()); note != "" {
		res.Output += "\n" + note
		if res.Full != "" {
			res.Full += "\n" + note
		}
	}
	return res
}

// netRefusals are what programs print when the network they want is not
// there: in a session's namespace only the loopback exists (so other
// addresses are unreachable, names do not resolve, this machine's own
// services refuse), and without one the kernel refuses the socket itself.
// They are matched without regard to case: Go prints "connect: network is
// unreachable" and "socket: permission denied", bash and libc capitalise.
var netRefusals = []string{"network is unreachable", "socket: permission denied", "connect: permission denied",
	"could not resolve", "temporary failure in name resolution", "name or service not known", "no such host",
	"address family not supported", "name resolution", "getaddrinfo", "enotfound", "eai_again", "enetunreach",
	"connection refused", "econnrefused", "failed to establish a new connection", "module lookup disabled by goproxy=off",
	"dial tcp", "dial udp"}

// fileRefusals are what a refused path looks like (Landlock answers
// EACCES, a read-only bind EROFS, a mount point being moved EBUSY).
var fileRefusals = []string{"permission denied", "read-only file system", "operation not permitted", "eacces", "erofs"}

// refusalNote says, when the output looks like the sandbox refused
// something, what the command could not do and how to ask for it: one
// line about the network when it had none, one about paths.
func refusalNote(out string, c Confine, sessionNet bool) string {
	network, files, goproxy := false, false, false
	for _, line := range strings.Split(strings.ToLower(out), "\n") {
		switch {
		case containsAny(line, netRefusals):
			network = true
			goproxy = goproxy || strings.Contains(line, "goproxy=off")
		case containsAny(line, fileRefusals):
			files = true
		}
	}
	var notes []string
	if network && !c.Network {
		n := "[sandbox: this command ran without the network"
		if sessionNet {
			n += ", in this session's private network: 127.0.0.1 reaches only servers this session's commands run, nothing else (not the internet, not this machine's services)"
		} else {
			n += ": it could open no socket but local ones"
		}
		if goproxy {
			n += "; Go modules came from the user's module cache only (GOPROXY=off)"
		}
		notes = append(notes, n+". If it needs the network (a download, a fetch, an API), run it again with network: true: the user is asked.]")
	}
	if files {
		notes = append(notes, fileNote(c))
	}
	return strings.Join(notes, "\n")
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// fileNote says what a confined command could write.
func fileNote(c Confine) string {
	switch {
	case c.Profile == ProfileWorkspaceWrite && c.Git:
		return "[sandbox: this command ran in the workspace-write profile as git alone: it could write the workspace, the repository's objects, refs and index (not its configuration or hooks; git ran without hooks), and a private temporary directory, nothing else. Do not work around a refused path: if the command must write there, ask the user (they can allow it without the sandbox).]"
	case c.Profile == ProfileWorkspaceWrite:
		return "[sandbox: this command ran in the workspace-write profile: it could write the workspace (not the repository's .git directory, nested repositories or .agentd/) and a private temporary directory, nothing else. To commit, stage or switch branches, run git alone (git add -A && git commit -m ..., nothing else in the line): git alone may write the repository. Do not work around a refused path: if the command must write there, ask the user (they can allow it without the sandbox).]"
	}
	return "[sandbox: this command ran in the read profile, because it looked read-only: it could write only a private temporary directory. A command that changes files must say so plainly (the user is asked; approved, it runs in workspace-write).]"
}

// capture keeps a command's output: the first maxFullBytes and a rolling
// tail, so a runaway command cannot exhaust memory yet the model still sees
// how it ended. Each chunk is also streamed to the editor, through the
// redactor's stream, so a secret split across two chunks is still hidden.
type capture struct {
	mu      sync.Mutex // guards the fields below
	head    []byte
	tail    []byte
	dropped int
	red     *Redactor
	live    *RedactStream // nil without a listener
}

const captureTail = 64 << 10

// newCapture captures the output of cmd, whose secrets it hides (the
// run's redactor, when there is one, already knows them).
func newCapture(env *Env, cmd *Command) *capture {
	c := &capture{red: env.Redactor}
	if c.red == nil {
		c.red = NewRedactor()
	}
	for _, name := range cmd.Secrets {
		c.red.AddNamed(name, env.Secrets[name])
	}
	if env.Output != nil {
		c.live = c.red.Stream(env.Output)
	}
	return c
}

func (c *capture) Write(p []byte) (int, error) {
	n0 := len(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.live != nil {
		_, _ = c.live.Write(p)
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

// String is the whole output kept, redacted; it passes on what the live
// stream held back.
func (c *capture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.live != nil {
		c.live.Flush()
	}
	s := string(c.head)
	if c.dropped > 0 {
		s += fmt.Sprintf("\n[… %d bytes dropped …]\n", c.dropped)
	}
	return c.red.Redact(s + string(c.tail))
}

// addSecret hides a value typed at a prompt, in case the terminal echoed it.
func (c *capture) addSecret(s string) { c.red.Add(s) }

func (c *capture) redact(s string) string { return c.red.Redact(s) }
