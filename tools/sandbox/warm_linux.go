package sandbox

import (
	"context"
	"encoding/json"
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
	cmd     *exec.Cmd
	ctl     *os.File
	reports *json.Decoder
	born    time.Time
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
	if err := e.reports.Decode(&r); err != nil || r.Exit == nil {
		return 0, false
	}
	return *r.Exit, true
}

// nsKey is how an entry point was started: the namespaces are chosen when
// the process is created, so entry points wait in one slot per kind.
type nsKey struct{ ns, netns bool }

// warm keeps one entry point started ahead of time per kind. Starting a Go
// process, and the full fork that CLONE_NEWUSER forces on the daemon, cost
// several milliseconds; waiting for the command costs nothing, so a
// command's path is only the confinement and its own fork and exec.
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
	if e != nil && (exited(e.cmd.Process.Pid) || time.Since(e.born) > maxWaiting) {
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
	if err == nil {
		warm.ready[k] = e
	}
}

// CloseIdle ends the entry points waiting for commands, for a clean
// shutdown or a test that counts processes and descriptors. The next
// command starts one again.
func CloseIdle() {
	warm.mu.Lock()
	idle := warm.ready
	warm.ready = map[nsKey]*entryProc{}
	warm.mu.Unlock()
	for _, e := range idle {
		e.discard()
	}
}

func (e *entryProc) discard() {
	_ = e.cmd.Process.Kill()
	_ = e.cmd.Wait()
	e.ctl.Close()
}

// startEntry starts an entry point — in new user, mount and PID namespaces
// when k.ns, and a network namespace when k.netns — which waits for its
// command on a socket.
func startEntry(k nsKey) (*entryProc, error) {
	pair, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: socketpair: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(pair[0]), "control"), os.NewFile(uintptr(pair[1]), "control")
	defer theirs.Close()
	cmd := exec.Command("/proc/self/exe", entryArg)
	cmd.Args[0] = "agentd-sandbox"
	cmd.Env = []string{} // the daemon's environment stays with the daemon
	cmd.ExtraFiles = []*os.File{theirs}
	// A session of its own from the start: the command never has the
	// daemon's controlling terminal (whose reader would take what it
	// injects as typed), nor its process group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setsid: true}
	if k.ns {
		sys := cmd.SysProcAttr
		sys.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID
		if k.netns {
			sys.Cloneflags |= syscall.CLONE_NEWNET
		}
		// The same ids inside as outside, so files keep their owners and
		// the command sees the user it runs as.
		sys.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
		sys.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
		// A user other than root keeps, across the exec of the entry
		// point, only ambient capabilities: the two that the mounts and
		// the capability drop need. They hold inside the new namespaces
		// only, and are dropped before the command starts.
		sys.AmbientCaps = []uintptr{capSysAdmin, capSetpcap}
	}
	if err := cmd.Start(); err != nil {
		ours.Close()
		return nil, fmt.Errorf("sandbox: starting the entry point: %w", err)
	}
	e := &entryProc{cmd: cmd, ctl: ours, born: time.Now()}
	if _, err := io.ReadFull(ours, make([]byte, 1)); err != nil {
		e.discard()
		return nil, &SetupError{Step: "entry", Msg: fmt.Sprintf(
			"the entry point did not start (%v): does this binary link tools/sandbox?", err)}
	}
	return e, nil
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
	if err := json.NewEncoder(e.ctl).Encode(p); err != nil {
		return fail(fmt.Errorf("sandbox: sending the plan: %w", err))
	}
	stop := context.AfterFunc(ctx, func() { _ = e.ctl.Close() })
	e.reports = json.NewDecoder(e.ctl)
	var r report
	derr := e.reports.Decode(&r)
	stop()
	if derr == nil && r.OK {
		return r.Conf, nil // e.ctl stays open for the exit status
	}
	e.ctl.Close()
	_ = killGroup(e.cmd.Process.Pid)
	_ = e.cmd.Process.Kill()
	waitErr := e.cmd.Wait()
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
