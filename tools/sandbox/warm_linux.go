package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// ctlFD is the entry point's end of its control socket: the command's
// streams and plan come in, the report goes out.
const ctlFD = 3

// entryProc is an entry point started and waiting for its command.
type entryProc struct {
	proc *os.Process // the daemon's child, whoever forked it
	ctl  *os.File
	born time.Time
	// release removes its control groups once it is reaped; nil when it
	// has none (limits_linux.go); group is its pids group.
	release func()
	group   string
}

// maxWaiting bounds how long an entry point waits: its mount namespace is
// a copy of the daemon's from when it started, and on a system whose mounts
// do not propagate, a file system mounted since would be missing.
const maxWaiting = 5 * time.Minute

// exitStatus waits for the command's exit status, which the init sends
// before it exits; false if it died first (killed).
func (e *entryProc) exitStatus() (int, bool) {
	defer e.ctl.Close()
	var r report
	if err := readMsg(e.ctl, &r); err != nil || r.Exit == nil {
		return 0, false
	}
	return *r.Exit, true
}

// nsKey is how an entry point was started: the namespaces are chosen when
// the process is created, so entry points wait in one slot per kind.
// session names the network namespace of a session's commands ("" for
// none: the host's, or an empty one of the command's own when netns).
type nsKey struct {
	ns, netns bool
	session   string
}

// warm keeps one entry point started ahead of time per kind. Starting a Go
// process costs several milliseconds; waiting for the command costs
// nothing, so a command's path is only the confinement and its own fork
// and exec.
var warm struct {
	mu       sync.Mutex
	ready    map[nsKey]*entryProc
	starting map[nsKey]bool
}

// takeEntry hands out the waiting entry point of that kind, or starts one.
// The caller starts the next one (refill) once its command is over, not to
// compete with it for the CPU.
func takeEntry(k nsKey) (*entryProc, error) {
	warm.mu.Lock()
	e := warm.ready[k]
	delete(warm.ready, k)
	warm.mu.Unlock()
	if e != nil && (exited(e.proc.Pid) || time.Since(e.born) > maxWaiting) {
		e.discard() // killed meanwhile (an OOM kill, a ^C to the daemon's group), or stale
		e = nil
	}
	if e != nil {
		return e, nil
	}
	return startEntry(k)
}

func refill(k nsKey) {
	warm.mu.Lock()
	if warm.ready[k] != nil || warm.starting[k] {
		warm.mu.Unlock()
		return
	}
	if warm.starting == nil {
		warm.starting, warm.ready = map[nsKey]bool{}, map[nsKey]*entryProc{}
	}
	warm.starting[k] = true
	warm.mu.Unlock()
	e, err := startEntry(k)
	warm.mu.Lock()
	defer warm.mu.Unlock()
	warm.starting[k] = false
	switch {
	case err != nil:
	case k.session != "" && !sessionOpen(k.session):
		go e.discard() // the session ended meanwhile
	default:
		warm.ready[k] = e
	}
}

// discardWarm ends the waiting entry points that match.
func discardWarm(match func(nsKey) bool) {
	warm.mu.Lock()
	var idle []*entryProc
	for k, e := range warm.ready {
		if match(k) {
			idle = append(idle, e)
			delete(warm.ready, k)
		}
	}
	warm.mu.Unlock()
	for _, e := range idle {
		e.discard()
	}
}

// CloseIdle ends the entry points waiting for commands and the namespace
// holders no command uses, for a clean shutdown or a test that counts
// processes and descriptors. The next command starts them again.
func CloseIdle() {
	discardWarm(func(nsKey) bool { return true })
	closeIdleHolders()
}

func (e *entryProc) discard() {
	_ = e.proc.Kill()
	_, _ = e.proc.Wait()
	e.ctl.Close()
	e.released()
}

// released removes the entry point's control groups (it has been reaped).
func (e *entryProc) released() {
	if e != nil && e.release != nil {
		e.release()
		e.release = nil
	}
}

// startEntry starts an entry point of kind k, which waits for its command
// on a socket: in new user, mount and PID namespaces (forked by a holder)
// when k.ns, with a network namespace of its own when k.netns, or the
// session's when k.session is set.
func startEntry(k nsKey) (*entryProc, error) {
	e, err := startEntryProc(k)
	if err != nil {
		return nil, err
	}
	// Its control groups, before it gets a command (limits_linux.go).
	if cg, _ := daemonCgroups(); cg != nil {
		if e.release, e.group, err = cg.place(e.proc.Pid); err != nil {
			e.discard()
			return nil, &SetupError{Step: "cgroup", Msg: err.Error()}
		}
	}
	return e, nil
}

func startEntryProc(k nsKey) (*entryProc, error) {
	if k.ns {
		for range 3 {
			h, e, err := holderFor(k.session)
			if err != nil || e != nil {
				return e, err
			}
			e, err = h.spawn(k.netns && k.session == "")
			if !errors.Is(err, errHolderClosed) {
				return e, err
			}
		}
		return nil, errHolderClosed
	}
	pair, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: socketpair: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(pair[0]), "control"), os.NewFile(uintptr(pair[1]), "control")
	defer theirs.Close()
	cmd := exec.Command("/proc/self/exe", entryArg)
	cmd.Args[0] = "agentd-sandbox"
	cmd.Env = entryEnv // the daemon's environment stays with the daemon
	cmd.ExtraFiles = []*os.File{theirs}
	// Without namespaces the daemon forks it itself: no new user
	// namespace, so a vfork, cheap at any size. A session of its own
	// from the start: the command never has the daemon's controlling
	// terminal (whose reader would take what it injects as typed), nor
	// its process group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setsid: true}
	if err := cmd.Start(); err != nil {
		ours.Close()
		return nil, fmt.Errorf("sandbox: starting the entry point: %w", err)
	}
	e := &entryProc{proc: cmd.Process, ctl: ours, born: time.Now()}
	if err := e.awaitReady(); err != nil {
		return nil, err
	}
	return e, nil
}

// entryEnv is the environment of the entry points and the holders (never
// the command's, which the plan carries): one processor is all they need,
// and a Go program that plans for more starts more threads.
var entryEnv = []string{"GOMAXPROCS=1"}

// awaitReady waits for the entry point to say it is ready.
func (e *entryProc) awaitReady() error {
	if _, err := io.ReadFull(e.ctl, make([]byte, 1)); err != nil {
		e.discard()
		return &SetupError{Step: "entry", Msg: fmt.Sprintf(
			"the entry point did not start (%v): does this binary link tools/sandbox?", err)}
	}
	return nil
}

// launch gives the entry point its streams and plan and waits for its
// answer: the command is running, or the sandbox could not be built and
// nothing ran. The entry point is then a process group (or session)
// leader.
func launch(ctx context.Context, e *entryProc, p *plan, streams [3]*os.File) (Confinement, error) {
	fail := func(err error) (Confinement, error) {
		e.discard()
		return Confinement{}, err
	}
	if err := sendStreams(e.ctl, streams); err != nil {
		return fail(fmt.Errorf("sandbox: sending the streams: %w", err))
	}
	if err := writeMsg(e.ctl, p); err != nil {
		return fail(fmt.Errorf("sandbox: sending the plan: %w", err))
	}
	stop := context.AfterFunc(ctx, func() { _ = e.ctl.Close() })
	var r report
	derr := readMsg(e.ctl, &r)
	stop()
	if derr == nil && r.OK {
		return r.Conf, nil // e.ctl stays open for the exit status
	}
	e.ctl.Close()
	_ = killGroup(e.proc.Pid)
	_ = e.proc.Kill()
	_, waitErr := e.proc.Wait()
	if ctx.Err() != nil {
		return Confinement{}, ctx.Err()
	}
	if derr != nil {
		return Confinement{}, &SetupError{Step: "entry", Msg: fmt.Sprintf(
			"the entry point did not answer (%v; %v): does this binary link tools/sandbox?", derr, waitErr)}
	}
	return Confinement{}, &SetupError{Step: r.Step, Msg: r.Error}
}

// sendStreams passes three descriptors with one byte (SCM_RIGHTS).
func sendStreams(ctl *os.File, streams [3]*os.File) error {
	fds := make([]int, 3)
	for i, f := range streams {
		fds[i] = int(f.Fd())
	}
	raw, err := ctl.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = raw.Write(func(fd uintptr) bool {
		serr = syscall.Sendmsg(int(fd), []byte{'s'}, syscall.UnixRights(fds...), nil, 0)
		return serr != syscall.EAGAIN
	})
	if err != nil {
		return err
	}
	return serr
}

// recvStreams receives the three descriptors sendStreams passed.
func recvStreams(fd int) ([]int, error) {
	buf := make([]byte, 1)
	oob := make([]byte, syscall.CmsgSpace(3*int(unsafe.Sizeof(int32(0)))))
	for {
		n, oobn, _, _, err := syscall.Recvmsg(fd, buf, oob, syscall.MSG_CMSG_CLOEXEC)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, errors.New("the daemon closed the control socket")
		}
		msgs, err := syscall.ParseSocketControlMessage(oob[:oobn])
		if err != nil || len(msgs) != 1 {
			return nil, fmt.Errorf("no streams (%v)", err)
		}
		fds, err := syscall.ParseUnixRights(&msgs[0])
		if err != nil || len(fds) != 3 {
			return nil, fmt.Errorf("want 3 streams, got %d (%v)", len(fds), err)
		}
		return fds, nil
	}
}

// exited reports whether pid has exited, without reaping it.
func exited(pid int) bool {
	var info [128]byte // siginfo_t; si_pid stays 0 while the child runs
	_, _, e := syscall.Syscall6(syscall.SYS_WAITID, pidWaitable, uintptr(pid), uintptr(unsafe.Pointer(&info[0])),
		wExited|wNowait|syscall.WNOHANG, 0, 0)
	if e != 0 {
		return true
	}
	return *(*int32)(unsafe.Pointer(&info[16])) != 0 // si_pid, after signo, errno, code
}
