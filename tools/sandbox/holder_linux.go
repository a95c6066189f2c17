package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// holderArg, as the first argument, makes the binary a namespace holder
// instead of itself; "net" after it gives the holder a network namespace.
const holderArg = "__agentd_sandbox_holder__"

// A holder is a small process, the daemon's child, in a user namespace of
// its own, that starts entry points when the daemon asks. Two reasons:
//
//   - The daemon never forks itself into a new user namespace. CLONE_NEWUSER
//     rules out vfork, so each such fork copied the page tables of the whole
//     daemon (its index, its sessions) and made every page it then wrote
//     fault once more: the larger the daemon, the dearer each command. A
//     holder is small, and forks without a new user namespace (vfork).
//   - A session's commands share one network namespace: a holder for a
//     session is started in a network namespace of its own, brings its
//     loopback up and starts every entry point of the session in it. Only
//     a process with the capabilities of the namespace's owner could join
//     it later, and a Go process cannot enter a user namespace (setns needs
//     one thread), so the namespaces are inherited, from the holder.
//
// The holder forks each entry point with CLONE_PARENT: the entry point is
// the daemon's child, as if the daemon had started it (it waits for it,
// kills it, and the entry point's parent-death signal follows the daemon).
// The holder dies with the daemon too, and a namespace ends with the last
// process in it: nothing outlives a daemon killed with SIGKILL.
type holder struct {
	proc  *os.Process
	ctl   *os.File // SOCK_SEQPACKET: one request, one answer
	netns bool

	mu   sync.Mutex // one request at a time
	dead bool
}

// startHolder starts a holder, in a network namespace of its own with the
// loopback up when netns.
func startHolder(netns bool) (*holder, error) {
	pair, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: socketpair: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(pair[0]), "holder"), os.NewFile(uintptr(pair[1]), "holder")
	defer theirs.Close()
	cmd := exec.Command("/proc/self/exe", holderArg)
	cmd.Args[0] = "agentd-sandbox"
	if netns {
		cmd.Args = append(cmd.Args, "net")
	}
	cmd.Env = entryEnv // the daemon's environment stays with the daemon
	cmd.ExtraFiles = []*os.File{theirs}
	flags := uintptr(syscall.CLONE_NEWUSER)
	caps := []uintptr{capSysAdmin, capSetpcap}
	if netns {
		flags |= syscall.CLONE_NEWNET
		caps = append(caps, capNetAdmin) // to bring the loopback up
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: flags,
		// A session of its own: a ^C to the daemon's group is not for it.
		Setsid:    true,
		Pdeathsig: syscall.SIGKILL,
		// The same ids inside as outside, so files keep their owners and
		// the command sees the user it runs as.
		UidMappings: []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}},
		// A user other than root keeps, across the exec, only ambient
		// capabilities: those the entry points need for their mounts and
		// the capability drop (and the loopback). They hold inside the
		// new namespaces only.
		AmbientCaps: caps,
	}
	if err := cmd.Start(); err != nil {
		ours.Close()
		return nil, fmt.Errorf("sandbox: starting a namespace holder: %w", err)
	}
	h := &holder{proc: cmd.Process, ctl: ours, netns: netns}
	answer, err := h.read()
	if err == nil && answer != "r" {
		err = errors.New(answer)
	}
	if err != nil {
		h.close()
		return nil, &SetupError{Step: "holder", Msg: err.Error()}
	}
	return h, nil
}

// read reads one answer of the holder.
func (h *holder) read() (string, error) {
	buf := make([]byte, 512)
	for {
		n, err := syscall.Read(int(h.ctl.Fd()), buf)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return "", err
		}
		if n == 0 {
			return "", errors.New("the namespace holder is gone")
		}
		return string(buf[:n]), nil
	}
}

// errHolderClosed: the holder was closed (CloseIdle, EndSession) between
// the moment it was chosen and the request; the caller chooses again.
var errHolderClosed = errors.New("sandbox: the namespace holder was closed")

// spawn asks the holder for an entry point, in a network namespace of its
// own when newNet (where seccomp and Landlock cannot keep the network off),
// and waits until it is ready.
func (h *holder) spawn(newNet bool) (*entryProc, error) {
	pair, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: socketpair: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(pair[0]), "control"), os.NewFile(uintptr(pair[1]), "control")
	defer theirs.Close()
	req := byte('e')
	if newNet {
		req = 'n'
	}
	h.mu.Lock()
	if h.dead {
		h.mu.Unlock()
		ours.Close()
		return nil, errHolderClosed
	}
	err = syscall.Sendmsg(int(h.ctl.Fd()), []byte{req}, syscall.UnixRights(int(theirs.Fd())), nil, 0)
	var answer string
	if err == nil {
		answer, err = h.read()
	}
	h.mu.Unlock()
	if err != nil {
		ours.Close()
		return nil, fmt.Errorf("sandbox: asking the namespace holder for an entry point: %w", err)
	}
	rest, ok := strings.CutPrefix(answer, "p")
	pid, perr := strconv.Atoi(rest)
	if !ok || perr != nil || pid <= 1 {
		ours.Close()
		return nil, &SetupError{Step: "entry", Msg: "the namespace holder could not start an entry point: " + answer}
	}
	// The entry point is the daemon's child (CLONE_PARENT): it is ours to
	// wait for, even if it has already died.
	proc, err := os.FindProcess(pid)
	if err != nil {
		ours.Close()
		return nil, err
	}
	e := &entryProc{proc: proc, ctl: ours, born: time.Now()}
	if err := e.awaitReady(); err != nil {
		return nil, err
	}
	return e, nil
}

// close ends the holder. Entry points it started and the commands in them
// run on: a namespace ends with the last process in it.
func (h *holder) close() {
	h.mu.Lock()
	if h.dead {
		h.mu.Unlock()
		return
	}
	h.dead = true
	h.mu.Unlock()
	h.ctl.Close() // the holder exits when its socket closes
	_ = h.proc.Kill()
	_, _ = h.proc.Wait()
}

// alive reports whether the holder still runs.
func (h *holder) alive() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.dead && !exited(h.proc.Pid)
}

// holderMain is the holder's life: bring the loopback up if it has a
// network namespace, say it is ready, then start an entry point for each
// request until the daemon closes the socket (or dies).
func holderMain() int {
	// Nothing the holder starts may attach to it.
	_ = prctl(prSetDumpable, 0, 0, 0, 0)
	syscall.CloseOnExec(ctlFD)
	if len(os.Args) > 2 && os.Args[2] == "net" {
		if err := loopbackUp(); err != nil {
			_, _ = syscall.Write(ctlFD, []byte("loopback: "+err.Error()))
			return 125
		}
	}
	if _, err := syscall.Write(ctlFD, []byte{'r'}); err != nil {
		return 125
	}
	buf := make([]byte, 1)
	oob := make([]byte, syscall.CmsgSpace(int(unsafe.Sizeof(int32(0)))))
	for {
		n, oobn, _, _, err := syscall.Recvmsg(ctlFD, buf, oob, syscall.MSG_CMSG_CLOEXEC)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || n == 0 {
			return 0 // the daemon closed the socket, or is gone
		}
		fd := -1
		if msgs, err := syscall.ParseSocketControlMessage(oob[:oobn]); err == nil && len(msgs) == 1 {
			if fds, err := syscall.ParseUnixRights(&msgs[0]); err == nil && len(fds) == 1 {
				fd = fds[0]
			}
		}
		if fd < 0 {
			_, _ = syscall.Write(ctlFD, []byte("no control socket"))
			continue
		}
		pid, err := forkEntry(fd, buf[0] == 'n')
		syscall.Close(fd)
		answer := "p" + strconv.Itoa(pid)
		if err != nil {
			answer = err.Error()
		}
		if _, err := syscall.Write(ctlFD, []byte(answer)); err != nil {
			return 0
		}
	}
}

// forkEntry starts an entry point with ctl as its control socket: in new
// mount and PID namespaces (and a network namespace when newNet), in a
// session of its own (no controlling terminal, not the daemon's process
// group), as the daemon's child.
func forkEntry(ctl int, newNet bool) (int, error) {
	flags := uintptr(syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_PARENT)
	if newNet {
		flags |= syscall.CLONE_NEWNET
	}
	// The parent-death signal follows the daemon: with CLONE_PARENT the
	// entry point's parent is the daemon's thread that started the holder.
	// (The child's own check of its parent reads 0 in its new PID
	// namespace, and the signal it then sends itself, the init of that
	// namespace, is ignored by the kernel.)
	return syscall.ForkExec("/proc/self/exe", []string{"agentd-sandbox", entryArg}, &syscall.ProcAttr{
		Env:   entryEnv,
		Files: []uintptr{0, 1, 2, uintptr(ctl)},
		Sys: &syscall.SysProcAttr{Cloneflags: flags, Setsid: true, Pdeathsig: syscall.SIGKILL,
			AmbientCaps: []uintptr{capSysAdmin, capSetpcap}},
	})
}

// loopbackUp brings up the loopback interface of the holder's network
// namespace: 127.0.0.1 and ::1 then work, and nothing else is routed.
func loopbackUp() error {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	var ifr [40]byte // struct ifreq: the name, then the flags (a short)
	copy(ifr[:], "lo")
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCGIFFLAGS, uintptr(unsafe.Pointer(&ifr[0]))); e != 0 {
		return e
	}
	*(*uint16)(unsafe.Pointer(&ifr[16])) |= syscall.IFF_UP
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCSIFFLAGS, uintptr(unsafe.Pointer(&ifr[0]))); e != 0 {
		return e
	}
	return nil
}
