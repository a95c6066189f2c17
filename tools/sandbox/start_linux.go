package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"
)

// groupAttr starts a Full command in a session of its own (so in a group
// of its own too): without the daemon's controlling terminal.
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}

func (c *Cmd) startConfined() error {
	st := Check()
	if c.status != nil {
		st = *c.status
	}
	if c.spec.LandlockOnly {
		st = st.WithoutNamespaces()
	}
	if !st.Supports(c.spec.Profile) {
		why := strings.Join(st.Problems, "; ")
		if why == "" {
			why = "user namespaces are needed to keep .git/config and .git/hooks read-only"
		}
		return fmt.Errorf("%w for %s commands: %s", ErrUnavailable, c.spec.Profile, why)
	}
	if needsTmpDir(st) {
		dir, err := os.MkdirTemp("", tmpPrefix+strconv.Itoa(os.Getpid())+"-")
		if err != nil {
			return fmt.Errorf("sandbox: private temporary directory: %w", err)
		}
		c.tmp = dir
	}
	p, err := buildPlan(c.spec, st, c.tmp)
	if err != nil {
		return err
	}
	if c.tweak != nil {
		c.tweak(p)
	}
	p.Terminal = c.tty != nil
	io, err := newStreams(c.Stdin, c.Stdout, c.Stderr, c.tty)
	if err != nil {
		return fmt.Errorf("sandbox: streams: %w", err)
	}
	key := nsKey{ns: p.Namespaces, netns: p.NetNS, session: p.Session}
	e, err := takeEntry(key)
	if err != nil {
		io.abort()
		return err
	}
	c.refill = func() { go refill(key) }
	if c.spec.MaxProcs > 0 && e.group != "" {
		if cg, _ := daemonCgroups(); cg != nil {
			if err := cg.setMaxProcs(e.group, c.spec.MaxProcs); err != nil {
				io.abort()
				e.discard()
				c.refill()
				return &SetupError{Step: "cgroup", Msg: err.Error()}
			}
		}
	}
	conf, err := launch(c.context(), e, p, io.child)
	io.sent()
	if err != nil {
		io.abort()
		c.refill()
		return err
	}
	if p.Session != "" {
		done, next := sessionStarted(p.Session), c.refill
		c.refill = func() { done(); next() }
	}
	c.proc, c.conf, c.io = e.proc, conf, io
	c.exitStatus = e.exitStatus
	c.absent = p.Absent
	c.entry = e
	c.plan = p
	c.conf.Limits = e.release != nil
	pid := e.proc.Pid
	c.stopCtx = context.AfterFunc(c.context(), func() {
		_ = killGroup(pid)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	})
	return nil
}

// waitExited blocks until pid has exited, without reaping it, so that its
// process group can be killed while the id cannot be reused.
func waitExited(pid int) {
	var info [128]byte // siginfo_t
	for {
		_, _, e := syscall.Syscall6(syscall.SYS_WAITID, pidWaitable, uintptr(pid), uintptr(unsafe.Pointer(&info[0])),
			wExited|wNowait, 0, 0)
		if e != syscall.EINTR {
			return
		}
	}
}

// procStart is field 22 of /proc/<pid>/stat: the start time in ticks.
func procStart(pid int) (uint64, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, err
	}
	// The command name, field 2, is in parentheses and may hold spaces.
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return 0, errors.New("malformed stat")
	}
	fields := strings.Fields(string(data[i+1:]))
	if len(fields) < 20 {
		return 0, errors.New("malformed stat")
	}
	return strconv.ParseUint(fields[19], 10, 64)
}

var (
	checkOnce sync.Once
	checked   Status
)

// Check finds out, once per process, what this machine offers: the Landlock
// ABI, then a probe through the real entry point with every namespace, then
// with fewer, recording why each step failed.
func Check() Status {
	checkOnce.Do(func() { checked = probe() })
	return checked
}

// tmpPrefix names the private temporary directories the daemon makes when
// there is no mount namespace, with the daemon's pid after it.
const tmpPrefix = "agentd-cmd-"

// sweepTmp removes the private temporary directories of daemons that died
// before they could (a SIGKILL).
func sweepTmp() {
	matches, _ := filepath.Glob(filepath.Join(os.TempDir(), tmpPrefix+"*-*"))
	for _, m := range matches {
		pid, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(filepath.Base(m), tmpPrefix), "-", 2)[0])
		if err == nil && pid > 0 && syscall.Kill(pid, 0) == syscall.ESRCH {
			_ = os.RemoveAll(m)
		}
	}
}

func probe() Status {
	sweepTmp()
	s := Status{OS: runtime.GOOS, Landlock: landlockABI()}
	if s.Landlock == 0 {
		s.Problems = append(s.Problems, "Landlock is not available: it needs Linux 5.13 or newer with landlock in the lsm= boot list")
		return s
	}
	ws, err := os.MkdirTemp("", "agentd-probe-")
	if err != nil {
		s.Problems = append(s.Problems, "probe: "+err.Error())
		return s
	}
	defer os.RemoveAll(ws)
	for _, try := range []struct{ ns, netns bool }{{true, true}, {true, false}, {false, false}} {
		conf, err := probeOnce(s.Landlock, ws, try.ns, try.netns)
		if err != nil {
			what := "entry point"
			switch {
			case try.netns:
				what = "network namespace"
			case try.ns:
				what = "user namespaces"
			}
			s.Problems = append(s.Problems, what+": "+err.Error())
			continue
		}
		s.EntryPoint = true
		s.Namespaces = conf.Namespaces
		s.NetNamespace = conf.NetNamespace
		s.PrivateProc = conf.PrivateProc
		s.Seccomp = conf.Seccomp
		if cg, why := daemonCgroups(); cg != nil {
			s.Limits = true
		} else {
			s.Problems = append(s.Problems, "process limits: "+why+" (RLIMIT_NPROC stands in, except for root)")
		}
		// The first command should not wait for an entry point to start,
		// nor a session's first command for its network.
		go refill(nsKey{ns: s.Namespaces, netns: s.Namespaces && s.NetNamespace && (!seccompSupported || s.Landlock < 6)})
		if s.NetNamespace {
			go refillSpare()
		}
		break
	}
	return s
}

func probeOnce(abi int, ws string, ns, netns bool) (Confinement, error) {
	st := Status{Landlock: abi, EntryPoint: true, Namespaces: ns, NetNamespace: netns}
	spec := Spec{Profile: Read, Workspace: ws, Args: []string{"/proc/self/exe"}}
	if ns {
		spec.Profile = WorkspaceWrite
	}
	if err := spec.validate(); err != nil {
		return Confinement{}, err
	}
	tmp := ""
	if needsTmpDir(st) {
		tmp = filepath.Join(ws, "tmp")
		if err := os.Mkdir(tmp, 0o700); err != nil && !os.IsExist(err) {
			return Confinement{}, err
		}
	}
	p, err := buildPlan(spec, st, tmp)
	if err != nil {
		return Confinement{}, err
	}
	p.Probe = true
	p.NetNS = netns // probe what is available, whether or not commands need it
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return Confinement{}, err
	}
	defer null.Close()
	var e *entryProc
	if ns && netns {
		// What a session's network needs: a holder in a network
		// namespace of its own, with the loopback up.
		h, err := startHolder(true)
		if err != nil {
			return Confinement{}, err
		}
		defer h.close()
		e, err = h.spawn(false)
		if err != nil {
			return Confinement{}, err
		}
	} else if e, err = startEntry(nsKey{ns: ns}); err != nil {
		return Confinement{}, err
	}
	conf, err := launch(context.Background(), e, p, [3]*os.File{null, null, null})
	if err != nil {
		return conf, err
	}
	_, _ = e.proc.Wait()
	return conf, nil
}
