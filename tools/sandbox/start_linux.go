package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"
)

func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func (c *Cmd) startConfined() error {
	st := Check()
	if c.status != nil {
		st = *c.status
	}
	if !st.Supports(c.spec.Profile) {
		why := strings.Join(st.Problems, "; ")
		if why == "" {
			why = "user namespaces are needed to keep .git/config and .git/hooks read-only"
		}
		return fmt.Errorf("%w for %s commands: %s", ErrUnavailable, c.spec.Profile, why)
	}
	if needsTmpDir(st) {
		dir, err := os.MkdirTemp("", "agentd-cmd-")
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
	cmd, conf, err := launch(c.context(), p, c.wire)
	if err != nil {
		return err
	}
	c.cmd, c.conf = cmd, conf
	return nil
}

// launch starts the entry point for p — in new user, mount and PID
// namespaces when p.Namespaces, and a network namespace when p.NetNS —
// sends it the plan and waits for its answer: the command is running, or
// the sandbox could not be built and nothing ran.
func launch(ctx context.Context, p *plan, wire func(*exec.Cmd)) (*exec.Cmd, Confinement, error) {
	planR, planW, err := os.Pipe()
	if err != nil {
		return nil, Confinement{}, err
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		planR.Close()
		planW.Close()
		return nil, Confinement{}, err
	}
	defer statusR.Close()
	cmd := exec.CommandContext(ctx, "/proc/self/exe", entryArg)
	cmd.Args[0] = "agentd-sandbox"
	cmd.Env = []string{} // the daemon's environment stays with the daemon
	cmd.ExtraFiles = []*os.File{planR, statusW}
	cmd.SysProcAttr = groupAttr()
	if p.Namespaces {
		sys := cmd.SysProcAttr
		sys.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID
		if p.NetNS {
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
	if wire != nil {
		wire(cmd)
	}
	err = cmd.Start()
	planR.Close()
	statusW.Close()
	if err != nil {
		planW.Close()
		return nil, Confinement{}, fmt.Errorf("sandbox: starting the entry point: %w", err)
	}
	werr := json.NewEncoder(planW).Encode(p)
	planW.Close()
	var r report
	derr := json.NewDecoder(statusR).Decode(&r)
	if derr == nil && r.OK {
		return cmd, r.Conf, nil
	}
	_ = killGroup(cmd.Process.Pid)
	waitErr := cmd.Wait()
	if derr != nil {
		msg := fmt.Sprintf("the entry point did not answer (%v; %v; plan: %v): does this binary link tools/sandbox?", derr, waitErr, werr)
		return nil, Confinement{}, &SetupError{Step: "entry", Msg: msg}
	}
	return nil, Confinement{}, &SetupError{Step: r.Step, Msg: r.Error}
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

func probe() Status {
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
	cmd, conf, err := launch(context.Background(), p, nil)
	if err != nil {
		return conf, err
	}
	_ = cmd.Wait()
	return conf, nil
}
