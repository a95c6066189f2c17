package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Cmd is one command prepared to run in a profile. Set the standard
// streams (or SetTerminal), then Start and Wait, as with exec.Cmd.
type Cmd struct {
	Stdin     io.Reader
	Stdout    io.Writer
	Stderr    io.Writer
	WaitDelay time.Duration // as exec.Cmd.WaitDelay

	ctx      context.Context
	spec     Spec
	tty      *os.File
	cmd      *exec.Cmd   // in Full
	group    *fullGroup  // in Full: its control group, when it has one
	proc     *os.Process // the process started: the command in Full, the sandbox's init otherwise
	tmp      string      // the daemon-made private temporary directory, if any
	conf     Confinement
	id       ProcID
	io       *streams    // the confined command's streams
	stopCtx  func() bool // stops the kill on cancel
	refill   func()      // starts the next entry point
	waited   bool
	exit     int
	fromInit bool // the status came from the sandbox's init
	// exitStatus reads the status the sandbox's init sends; nil in Full.
	exitStatus func() (int, bool)
	status     *Status     // tests override Check's answer
	tweak      func(*plan) // tests change the plan to try one mechanism alone
	entry      *entryProc  // nil in Full
	plan       *plan       // what the sandbox granted, for Refused
	// absent are git's guarded names that did not exist (Spec.Git);
	// removed, what Wait removed because they appeared.
	absent, removed []string
}

// Command prepares spec. Cancelling ctx kills the command and everything
// it started (SIGKILL to its process group).
func Command(ctx context.Context, spec Spec) (*Cmd, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	spec.Args = append([]string(nil), spec.Args...)
	spec.Env = append([]string(nil), spec.Env...)
	return &Cmd{ctx: ctx, spec: spec}, nil
}

// SetTerminal runs the command on tty (the follower end of a
// pseudo-terminal) as its controlling terminal, in a new session.
func (c *Cmd) SetTerminal(tty *os.File) { c.tty = tty }

// Start starts the command. For Read and WorkspaceWrite it returns an error
// wrapping ErrUnavailable when this machine cannot confine it, and a
// *SetupError when the sandbox could not be built; in both cases nothing
// ran. When Start returns nil the command runs confined.
func (c *Cmd) Start() error {
	if c.proc != nil {
		return errors.New("sandbox: already started")
	}
	var err error
	if c.spec.Profile == Full {
		err = c.startFull()
	} else {
		err = c.startConfined()
	}
	if err != nil {
		c.cleanup()
		return err
	}
	c.id = ProcID{Pid: c.proc.Pid}
	c.id.Start, _ = procStart(c.id.Pid)
	return nil
}

func (c *Cmd) startFull() error {
	path, err := lookPath(c.spec.Args[0], envGet(c.spec.Env, "PATH"), isExecutable)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(c.context(), path, c.spec.Args[1:]...)
	cmd.Args[0] = c.spec.Args[0]
	cmd.Env, cmd.Dir = c.spec.Env, c.spec.Dir
	cmd.SysProcAttr = groupAttr()
	c.wire(cmd)
	c.group = gateFull(cmd) // fullgroup_linux.go
	if err := cmd.Start(); err != nil {
		c.group.abort()
		c.group = nil
		return err
	}
	c.group.open(cmd.Process.Pid)
	c.cmd, c.proc = cmd, cmd.Process
	c.conf = Confinement{Profile: Full, Network: true}
	return nil
}

// wire gives cmd the streams, the terminal and the group kill on cancel.
func (c *Cmd) wire(cmd *exec.Cmd) {
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.Stdin, c.Stdout, c.Stderr
	cmd.WaitDelay = c.WaitDelay
	if c.tty != nil {
		cmd.Stdin, cmd.Stdout, cmd.Stderr = c.tty, c.tty, c.tty
		cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Ctty = true, 0
	}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
}

func (c *Cmd) context() context.Context {
	if c.ctx == nil {
		return context.Background()
	}
	return c.ctx
}

// Wait waits for the command to end, kills whatever it left running in its
// process group, waits for the end of its output (at most WaitDelay, then
// it returns exec.ErrWaitDelay) and removes its private temporary
// directory. A command that ran and exited with a failure status is not
// an error: see ExitCode.
func (c *Cmd) Wait() error {
	if c.proc == nil {
		return errors.New("sandbox: not started")
	}
	if c.waited {
		return errors.New("sandbox: Wait was already called")
	}
	c.waited = true
	pid := c.proc.Pid
	var err error
	if code, ok := c.statusFromInit(); ok {
		// The init sent the status and is tearing its namespaces down:
		// reap it in the background, nobody needs to wait for that. No
		// kill on cancel may come after the reaping (the pid could be
		// someone else's by then).
		c.exit, c.fromInit = code, true
		c.stopCancel()
		_ = killGroup(pid)
		go func() {
			_, _ = c.proc.Wait()
			c.entry.released()
		}()
	} else {
		waitExited(pid)
		_ = killGroup(pid)
		c.group.done()
		c.stopCancel()
		var state *os.ProcessState
		if c.cmd != nil {
			err = c.cmd.Wait()
			state = c.cmd.ProcessState
		} else {
			state, err = c.proc.Wait()
		}
		c.exit = exitCode(state)
		c.entry.released()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = nil
		}
	}
	if c.io != nil {
		if ioErr := c.io.wait(c.WaitDelay); err == nil {
			err = ioErr
		}
	}
	if c.refill != nil {
		c.refill()
	}
	// Every process of the command is gone (the init reaps them all
	// before it reports): what appeared among git's guarded names stays
	// no longer than the command.
	c.removed = removeAppeared(c.absent)
	c.cleanup()
	return err
}

// Removed lists the paths of the repository's configuration, hooks or
// commondir that a git command (Spec.Git) created and Wait removed.
func (c *Cmd) Removed() []string { return c.removed }

func (c *Cmd) stopCancel() {
	if c.stopCtx != nil {
		c.stopCtx()
	}
}

func (c *Cmd) statusFromInit() (int, bool) {
	if c.exitStatus == nil {
		return 0, false
	}
	return c.exitStatus()
}

// exitCode is the status as a shell shows it: the exit code, or 128 + the
// signal that killed the process.
func exitCode(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// Run starts the command and waits for it.
func (c *Cmd) Run() error {
	if err := c.Start(); err != nil {
		return err
	}
	return c.Wait()
}

func (c *Cmd) cleanup() {
	if c.tmp != "" {
		_ = os.RemoveAll(c.tmp)
		c.tmp = ""
	}
}

// Pid is the process the daemon started: the sandbox's init, or the
// command itself in Full. It is also the process group's id.
func (c *Cmd) Pid() int { return c.id.Pid }

// ID identifies the started process across a daemon restart; record it
// before the command can do anything and pass it to Reap after a crash.
func (c *Cmd) ID() ProcID { return c.id }

// Confinement is what was applied; valid after Start.
func (c *Cmd) Confinement() Confinement { return c.conf }

// ExitCode is the command's status after Wait, as a shell shows it: its
// exit code, or 128 + the signal that killed it (a command killed on
// cancel or timeout shows 137). -1 before Wait.
func (c *Cmd) ExitCode() int {
	if !c.waited {
		return -1
	}
	return c.exit
}

// Kill kills the command and everything in its process group (in Full,
// everything in its control group too).
func (c *Cmd) Kill() error {
	if c.proc == nil {
		return errors.New("sandbox: not started")
	}
	c.group.kill()
	return killGroup(c.proc.Pid)
}

// Signal sends sig to the command's whole process group. The sandbox's init
// ignores it, so the command receives it once.
func (c *Cmd) Signal(sig syscall.Signal) error {
	if c.proc == nil {
		return errors.New("sandbox: not started")
	}
	return syscall.Kill(-c.proc.Pid, sig)
}

func killGroup(pid int) error {
	if pid <= 0 {
		return nil
	}
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// ProcID names a started process: its pid and its start time in clock
// ticks since boot, so that a recycled pid is never mistaken for it.
type ProcID struct {
	Pid   int    `json:"pid"`
	Start uint64 `json:"start"`
}

// Reap kills what is left of a command recorded before a crash: its whole
// process group, when the pid still names the same process or is gone
// while its group lives on. It reports whether anything was signalled.
func Reap(id ProcID) (bool, error) {
	if id.Pid <= 1 {
		return false, fmt.Errorf("sandbox: no process %d to reap", id.Pid)
	}
	start, statErr := procStart(id.Pid)
	if statErr == nil && start != id.Start {
		return false, nil // the pid now names another process
	}
	killed := statErr == nil && syscall.Kill(id.Pid, syscall.SIGKILL) == nil
	// While a group has members its id cannot name a new process, so the
	// group is still the command's.
	if err := syscall.Kill(-id.Pid, syscall.SIGKILL); err == nil {
		killed = true
	} else if !errors.Is(err, syscall.ESRCH) {
		return killed, err
	}
	return killed, nil
}
