package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
)

// entryArg, as the first argument, makes the binary the sandbox's entry
// point instead of itself.
const entryArg = "__agentd_sandbox_entry__"

// The entry point takes over from a package initializer, not from main: any
// binary that links this package (agentd, and every test binary of a
// package that spawns commands) can serve as the entry point with no wiring
// to forget, and it runs before the heavy initializers of the packages
// sorted after this one, which keeps the cost per command down.
func init() {
	if len(os.Args) < 2 {
		return
	}
	switch os.Args[1] {
	case entryArg:
		os.Exit(entry())
	case holderArg:
		os.Exit(holderMain())
	case goCacheArg:
		os.Exit(goCacheProg(os.Args[2:]))
	}
}

// report is the entry point's one answer to the daemon, on descriptor 4.
type report struct {
	OK    bool
	Conf  Confinement
	Step  string
	Error string
	// Exit is the command's status, sent when it has ended.
	Exit *int
}

// entry waits for a command (the daemon starts it ahead of time, so that
// the cost of starting a process is not on the command's path), confines
// itself as the plan says, then forks the command from the confined thread
// and stays as its init: the command's PID namespace ends when it returns,
// taking every leftover process with it.
func entry() int {
	// Every restriction below applies to this OS thread only; the command
	// is forked from it, so it inherits them all.
	runtime.LockOSThread()
	// Neither the command nor anything it starts may attach to this
	// process or read its memory (its other threads are not confined).
	_ = prctl(prSetDumpable, 0, 0, 0, 0)
	// Signals the terminal sends to the whole group reach the command
	// directly; the init must neither die of them (ending the namespace)
	// nor pass on SIG_IGN, which exec would keep.
	var orphaned atomic.Pointer[func()]
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGUSR1,
		syscall.SIGUSR2, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU, syscall.SIGWINCH, syscall.SIGPIPE)
	go func() {
		for sig := range sigs {
			if f := orphaned.Load(); f != nil && sig == syscall.SIGHUP {
				(*f)()
			}
		}
	}()
	syscall.CloseOnExec(ctlFD)
	ctl := os.NewFile(ctlFD, "control")
	answer := func(r report) { _ = writeMsg(ctl, r) }
	fail := func(err error) int {
		var se *SetupError
		if !errors.As(err, &se) {
			se = &SetupError{Step: "entry", Msg: err.Error()}
		}
		answer(report{Step: se.Step, Error: se.Msg})
		return 125
	}
	// Say it is ready: the daemon hands out only entry points that have
	// started and wait, so none of this start-up is on a command's path.
	if _, err := ctl.Write([]byte{'r'}); err != nil {
		return 125
	}
	fds, err := recvStreams(ctlFD)
	if err != nil {
		return fail(&SetupError{Step: "streams", Msg: err.Error()})
	}
	var p plan
	if err := readMsg(ctl, &p); err != nil {
		return fail(&SetupError{Step: "plan", Msg: err.Error()})
	}
	if err := p.takeStreams(fds); err != nil {
		return fail(&SetupError{Step: "streams", Msg: err.Error()})
	}
	conf, err := p.confine()
	if err != nil {
		return fail(err)
	}
	if p.Probe {
		answer(report{OK: true, Conf: conf})
		return 0
	}
	if !p.Namespaces {
		// No PID namespace to end: when the daemon dies, the init must
		// kill the group itself, so it asks for a signal it can catch.
		f := p.orphaned
		orphaned.Store(&f)
		_ = prctl(syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGHUP), 0, 0, 0)
		p.orphaned()
	}
	pid, err := syscall.ForkExec(p.Path, p.Argv, &syscall.ProcAttr{
		Dir: p.Dir, Env: p.Env, Files: []uintptr{0, 1, 2},
		Sys: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		return fail(&SetupError{Step: "exec", Msg: fmt.Sprintf("%s: %v", p.Path, err)})
	}
	answer(report{OK: true, Conf: conf})
	// The init needs its streams no more; once the command's processes
	// are gone, the daemon reads the end of their output.
	for fd := range 3 {
		syscall.Close(fd)
	}
	code := reap(pid)
	if p.Namespaces {
		// What the command left running dies now, before the daemon
		// hears of the end: when Wait returns, nothing of the command
		// can still write (the checks after a git command rely on it).
		reapAll()
	}
	// The exit status goes to the daemon before the init exits: tearing
	// down the namespaces takes a while, and nobody needs to wait for it.
	answer(report{Exit: &code})
	return code
}

// takeStreams makes the received descriptors the standard streams and, on
// a terminal, that terminal the session's controlling terminal. The entry
// point was started in a session of its own (startEntry): without a
// terminal of its own, the command has no controlling terminal at all, so
// /dev/tty opens nothing (ENXIO) and the daemon's terminal (an editor's)
// is out of its reach.
func (p *plan) takeStreams(fds []int) error {
	for i, fd := range fds {
		if err := syscall.Dup3(fd, i, 0); err != nil {
			return err
		}
		syscall.Close(fd)
	}
	if !p.Terminal {
		return nil
	}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, 0, syscall.TIOCSCTTY, 0); e != 0 {
		return fmt.Errorf("controlling terminal: %w", e)
	}
	return nil
}

// orphaned kills the command's process group, the init with it, when the
// daemon is gone; the PID namespace does that by itself when there is one.
func (p *plan) orphaned() {
	if !p.Namespaces && os.Getppid() != p.Daemon {
		_ = syscall.Kill(0, syscall.SIGKILL)
	}
}

// confine applies the plan to the calling thread: mounts first (they need
// the namespace's capabilities), the Landlock rules (opening the paths),
// then the capabilities go, then no_new_privs, seccomp and Landlock.
func (p *plan) confine() (Confinement, error) {
	conf := Confinement{Profile: p.Profile, Landlock: p.ABI, Network: p.Network, Namespaces: p.Namespaces,
		NetNamespace: p.NetNS || p.Session != "", SessionNetwork: p.Session != ""}
	if p.ABI < 1 {
		return conf, &SetupError{Step: "landlock", Msg: "Landlock is not available"}
	}
	if p.Namespaces {
		if err := p.mount(&conf); err != nil {
			return conf, err
		}
		// Without a fresh /proc (a container may forbid it) the host's
		// stays, and Landlock still refuses access to processes outside
		// the domain.
		conf.PrivateProc = mountProc() == nil
	} else {
		_ = prctl(prSetChildSubreaper, 1, 0, 0, 0)
	}
	// In a session's namespace only the loopback exists: TCP there is
	// the session's own, so Landlock leaves it alone.
	rs, err := newRuleset(p.ABI, !p.Network && p.Session == "")
	if err != nil {
		return conf, &SetupError{Step: "landlock", Msg: err.Error()}
	}
	defer rs.close()
	for _, r := range p.Rules {
		if err := rs.allowPath(r.Path, r.Access); err != nil {
			return conf, &SetupError{Step: "landlock", Msg: err.Error()}
		}
	}
	if p.Terminal && !p.Namespaces {
		// Its own terminal by name, and no other one (tty_linux.go).
		if own := ownTerminal(); own != "" {
			if err := rs.allowPath(own, accDev); err != nil {
				return conf, &SetupError{Step: "landlock", Msg: err.Error()}
			}
		}
	}
	if p.NProc > 0 && p.Namespaces {
		// Where no control group bounds the command (limits_linux.go):
		// the user's processes in the sandbox's user namespace (outside
		// one, it would count every process of the user on the machine).
		lim := syscall.Rlimit{Cur: uint64(p.NProc), Max: uint64(p.NProc)}
		_ = syscall.Setrlimit(rlimitNproc, &lim)
	}
	if err := dropCapabilities(); err != nil {
		return conf, &SetupError{Step: "capabilities", Msg: err.Error()}
	}
	if err := prctl(prSetNoNewPrivs, 1, 0, 0, 0); err != nil {
		return conf, &SetupError{Step: "no_new_privs", Msg: err.Error()}
	}
	if seccompSupported {
		if err := installFilter(filter(p.Families)); err != nil {
			return conf, &SetupError{Step: "seccomp", Msg: err.Error()}
		}
		conf.Filter = true
		conf.Seccomp = p.Families != nil
	}
	if err := rs.restrictThread(); err != nil {
		return conf, &SetupError{Step: "landlock", Msg: err.Error()}
	}
	return conf, nil
}

// allowPath adds a rule for path; a path that does not exist (an optional
// system directory, a cache never created) is skipped.
func (r *ruleset) allowPath(path string, access uint64) error {
	fd, err := syscall.Open(path, oPath|syscall.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ELOOP) ||
			errors.Is(err, syscall.EACCES) {
			return nil
		}
		return fmt.Errorf("opening %s: %w", path, err)
	}
	defer syscall.Close(fd)
	st, err := fstatFD(fd)
	if err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	if err := r.allow(fd, isDirMode(st.Mode), access); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// reap waits for the command, reaping the orphans that the PID namespace
// (or the subreaper flag) hands to the init meanwhile, and returns the
// command's status as a shell would: its exit code, or 128 + the signal.
func reap(pid int) int {
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return 125
		}
		if wpid != pid {
			continue
		}
		if ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ws.ExitStatus()
	}
}

// reapAll kills every other process of the init's PID namespace and reaps
// them, for two seconds at most (a process stuck in the kernel dies with
// the namespace anyway). Only ever called in a PID namespace of its own:
// elsewhere kill(-1) would reach every process of the user.
func reapAll() {
	if os.Getpid() != 1 {
		return // not the init of a PID namespace: never kill(-1)
	}
	if err := syscall.Kill(-1, syscall.SIGKILL); errors.Is(err, syscall.ESRCH) {
		return
	}
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
		case err != nil:
			return // ECHILD: none left
		case wpid == 0:
			time.Sleep(time.Millisecond)
		}
	}
}
