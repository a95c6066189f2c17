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

	ctx    context.Context
	spec   Spec
	tty    *os.File
	cmd    *exec.Cmd
	tmp    string // the daemon-made private temporary directory, if any
	conf   Confinement
	id     ProcID
	status *Status     // tests override Check's answer
	tweak  func(*plan) // tests change the plan to try one mechanism alone
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
	if c.cmd != nil {
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
	c.id = ProcID{Pid: c.cmd.Process.Pid}
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
	if err := cmd.Start(); err != nil {
		return err
	}
	c.cmd = cmd
	c.conf = Confinement{Profile: Full, Network: true}
	return nil
}

// wire gives cmd the streams, the terminal and the group kill on cancel.
func (c *Cmd) wire(cmd *exec.Cmd) {
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.Stdin, c.Stdout, c.Stderr
	cmd.WaitDelay = c.WaitDelay
	if c.tty != nil {
		cmd.Stdin, cmd.Stdout, cmd.Stderr = c.tty, c.tty, c.tty
		cmd.SysProcAttr.Setpgid = false // setsid makes it a group leader already
		cmd.SysProcAttr.Setsid, cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Ctty = true, true, 0
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
// process group, and removes its private temporary directory.
func (c *Cmd) Wait() error {
	if c.cmd == nil {
		return errors.New("sandbox: not started")
	}
	waitExited(c.cmd.Process.Pid)
	_ = killGroup(c.cmd.Process.Pid)
	err := c.cmd.Wait()
	c.cleanup()
	return err
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

// ProcessState is available after Wait. A sandboxed command killed by a
// signal shows as exit code 128 + the signal, as in a shell.
func (c *Cmd) ProcessState() *os.ProcessState {
	if c.cmd == nil {
		return nil
	}
	return c.cmd.ProcessState
}

// Kill kills the command and everything in its process group.
func (c *Cmd) Kill() error {
	if c.cmd == nil || c.cmd.Process == nil {
		return errors.New("sandbox: not started")
	}
	return killGroup(c.cmd.Process.Pid)
}

// Signal sends sig to the command's whole process group. The sandbox's init
// ignores it, so the command receives it once.
func (c *Cmd) Signal(sig syscall.Signal) error {
	if c.cmd == nil || c.cmd.Process == nil {
		return errors.New("sandbox: not started")
	}
	return syscall.Kill(-c.cmd.Process.Pid, sig)
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
