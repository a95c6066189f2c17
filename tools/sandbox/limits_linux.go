package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// A command's processes are bounded: a fork bomb (or a test suite gone
// wild) must not take every pid of the machine, nor starve the daemon of
// the CPU. Each confined command gets a control group of its own, under
// one group per daemon, made once:
//
//   - pids.max: at most maxProcs processes (threads count) per command,
//     4 × that for all the daemon's commands together;
//   - CPU: the daemon's commands weigh together as NumCPU ordinary
//     processes (cpu.weight, cpu.shares), so that thousands of them get no
//     more of the CPU than a build using every core would, and the daemon,
//     outside the group, keeps its share.
//
// cgroup v2 is used where it is mounted with the pids controller (the
// group is made next to the daemon's own), else v1's pids and cpu
// hierarchies. Where neither can be written (a user without a delegated
// cgroup), RLIMIT_NPROC stands in (entry point): it counts the processes of
// the user in the sandbox's user namespace, every command's together, and
// does not bind root. The private /tmp's size is bounded too (newTmpfs).

// defaultMaxProcs is the process limit of one command.
const defaultMaxProcs = 4096

// maxProcs is the limit per command: defaultMaxProcs, or an eighth of the
// machine's pid_max where that is smaller.
var maxProcs = sync.OnceValue(func() int {
	n := defaultMaxProcs
	if b, err := os.ReadFile("/proc/sys/kernel/pid_max"); err == nil {
		if m, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && m/8 < n {
			n = max(m/8, 64)
		}
	}
	return n
})

// cgroups are the daemon's groups for its commands, one per hierarchy
// used; nil when none could be made.
type cgroups struct {
	v2   bool
	dirs []string // the daemon's group in each hierarchy
	next atomic.Int64

	mu    sync.Mutex // guards spare
	spare [][]string // sets of groups no command uses, ready for the next
}

var (
	limitsOnce sync.Once
	limitsOf   *cgroups
	limitsWhy  string
)

// daemonCgroups makes the daemon's groups once and says why not.
func daemonCgroups() (*cgroups, string) {
	limitsOnce.Do(func() {
		limitsOf, limitsWhy = makeCgroups()
		if limitsOf != nil {
			go limitsOf.warmSpare()
		}
	})
	return limitsOf, limitsWhy
}

func makeCgroups() (*cgroups, string) {
	mounts, own, err := cgroupLayout()
	if err != nil {
		return nil, err.Error()
	}
	name := fmt.Sprintf("agentd-%d", os.Getpid())
	procs := strconv.Itoa(maxProcs() * 4)
	weight := runtime.NumCPU()
	var whyV2 string
	if m, ok := mounts["cgroup2"]; ok {
		dir := filepath.Join(m, own[""])
		if !strings.Contains(readTrim(filepath.Join(dir, "cgroup.controllers")), "pids") && own[""] != "/" {
			whyV2 = "cgroup v2: the pids controller is not enabled for the daemon's group"
		} else {
			parent := dir
			if own[""] != "/" {
				parent = filepath.Dir(dir) // no processes may live beside a group's children
			}
			g := filepath.Join(parent, name)
			sweepCgroups(parent)
			if err := mkGroup(g, map[string]string{"pids.max": procs}); err != nil {
				whyV2 = "cgroup v2: " + err.Error()
			} else {
				ctl := "+pids"
				if strings.Contains(readTrim(filepath.Join(g, "cgroup.controllers")), "cpu") {
					ctl += " +cpu"
					_ = os.WriteFile(filepath.Join(g, "cpu.weight"), []byte(strconv.Itoa(min(100*weight, 10000))), 0)
				}
				if err := os.WriteFile(filepath.Join(g, "cgroup.subtree_control"), []byte(ctl), 0); err != nil {
					_ = os.Remove(g)
					whyV2 = "cgroup v2: " + err.Error()
				} else {
					return &cgroups{v2: true, dirs: []string{g}}, ""
				}
			}
		}
	}
	m, ok := mounts["pids"]
	if !ok {
		if whyV2 != "" {
			return nil, whyV2
		}
		return nil, "no cgroup hierarchy with the pids controller is mounted"
	}
	parent := filepath.Join(m, own["pids"])
	sweepCgroups(parent)
	g := filepath.Join(parent, name)
	if err := mkGroup(g, map[string]string{"pids.max": procs}); err != nil {
		return nil, "cgroup v1 pids: " + err.Error()
	}
	c := &cgroups{dirs: []string{g}}
	if m, ok := mounts["cpu"]; ok {
		cg := filepath.Join(m, own["cpu"], name)
		sweepCgroups(filepath.Dir(cg))
		if mkGroup(cg, map[string]string{"cpu.shares": strconv.Itoa(1024 * weight)}) == nil {
			c.dirs = append(c.dirs, cg)
		}
	}
	return c, ""
}

// place puts pid (an entry point, before it runs its command) into a group
// of its own in each hierarchy, and returns what gives the groups back once
// its processes are gone. Making and removing a group costs several
// milliseconds (the kernel waits for RCU grace periods), so groups are kept
// and used again: a command's costs one write per hierarchy.
func (c *cgroups) place(pid int) (release func(), pidsGroup string, err error) {
	set, err := c.take()
	if err != nil {
		return nil, "", err
	}
	for _, g := range set {
		if err := os.WriteFile(filepath.Join(g, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			go c.drop(set)
			return nil, "", fmt.Errorf("moving the entry point into %s: %w", g, err)
		}
	}
	return func() { go c.give(set) }, set[0], nil
}

// maxSpare is how many unused sets of groups are kept.
const maxSpare = 8

// take hands out a set of groups (one per hierarchy, the pids one first)
// with the default limit: a spare one, or a new one.
func (c *cgroups) take() ([]string, error) {
	c.mu.Lock()
	if n := len(c.spare); n > 0 {
		set := c.spare[n-1]
		c.spare = c.spare[:n-1]
		c.mu.Unlock()
		if err := c.setMaxProcs(set[0], maxProcs()); err == nil {
			return set, nil
		}
		go c.drop(set)
		return c.take()
	}
	c.mu.Unlock()
	name := fmt.Sprintf("c%d", c.next.Add(1))
	var set []string
	for i, dir := range c.dirs {
		g := filepath.Join(dir, name)
		s := map[string]string{}
		if c.v2 || i == 0 {
			s["pids.max"] = strconv.Itoa(maxProcs())
		}
		if err := mkGroup(g, s); err != nil {
			go c.drop(set)
			return nil, err
		}
		set = append(set, g)
	}
	return set, nil
}

// give takes back a set whose processes are gone: kept for the next
// command when it is empty and there is room, else removed.
func (c *cgroups) give(set []string) {
	for i := 0; i < 100; i++ {
		if readTrim(filepath.Join(set[0], "pids.current")) == "0" {
			c.mu.Lock()
			if len(c.spare) < maxSpare {
				c.spare = append(c.spare, set)
				c.mu.Unlock()
				return
			}
			c.mu.Unlock()
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.drop(set)
}

// drop removes a set's groups.
func (c *cgroups) drop(set []string) {
	for _, g := range set {
		removeGroup(g)
	}
}

// warmSpare makes a spare set ahead of the first command.
func (c *cgroups) warmSpare() {
	set, err := c.take()
	if err == nil {
		c.give(set)
	}
}

// setMaxProcs lowers (or raises, within the daemon's) the process limit of
// the group an entry point was placed in.
func (c *cgroups) setMaxProcs(group string, n int) error {
	return os.WriteFile(filepath.Join(group, "pids.max"), []byte(strconv.Itoa(n)), 0)
}

// mkGroup makes the group dir and writes its settings.
func mkGroup(dir string, set map[string]string) error {
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	for k, v := range set {
		if err := os.WriteFile(filepath.Join(dir, k), []byte(v), 0); err != nil {
			_ = os.Remove(dir)
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	return nil
}

// removeGroup removes an emptied group; its last processes may take a
// moment to leave it.
func removeGroup(dir string) {
	for i := 0; i < 100; i++ {
		err := syscall.Rmdir(dir)
		if err == nil || errors.Is(err, syscall.ENOENT) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sweepCgroups removes the groups of daemons that died before they could
// (a SIGKILL): agentd-<pid> with no such process. What still runs in them
// is killed first: a confined command's processes die with their daemon
// (the init's parent-death signal), but what a command allowed without
// the sandbox started in a session of its own (setsid) outlives it, in
// its group (fullgroup_linux.go), until the next daemon starts.
func sweepCgroups(parent string) {
	matches, _ := filepath.Glob(filepath.Join(parent, "agentd-*"))
	for _, m := range matches {
		pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(m), "agentd-"))
		if err != nil || pid <= 0 || pid == os.Getpid() || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue
		}
		if subs, _ := filepath.Glob(filepath.Join(m, "c*")); len(subs) > 0 {
			for _, s := range subs {
				if fi, err := os.Stat(s); err == nil && fi.IsDir() {
					(&fullGroup{dir: s}).kill()
					for i := 0; i < 10 && syscall.Rmdir(s) == syscall.EBUSY; i++ {
						time.Sleep(20 * time.Millisecond) // the killed take a moment to leave
					}
				}
			}
		}
		_ = syscall.Rmdir(m)
	}
}

// cgroupLayout finds where the hierarchies are mounted (by controller,
// "cgroup2" for v2) and the daemon's group in each (by controller, "" for
// v2).
func cgroupLayout() (mounts map[string]string, own map[string]string, err error) {
	mounts, own = map[string]string{}, map[string]string{}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	roots := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options ... - fstype source super
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, x := range fields {
			if x == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+3 >= len(fields) || len(fields) < 5 {
			continue
		}
		fstype, super, root, point := fields[sep+1], fields[sep+3], fields[3], fields[4]
		switch fstype {
		case "cgroup2":
			if _, ok := mounts["cgroup2"]; !ok {
				mounts["cgroup2"], roots[""] = point, root
			}
		case "cgroup":
			for _, opt := range strings.Split(super, ",") {
				if opt == "pids" || opt == "cpu" {
					if _, ok := mounts[opt]; !ok {
						mounts[opt], roots[opt] = point, root
					}
				}
			}
		}
	}
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, nil, err
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		ctls := strings.Split(parts[1], ",")
		if parts[1] == "" {
			ctls = []string{""}
		}
		for _, ctl := range ctls {
			if ctl == "" || ctl == "pids" || ctl == "cpu" {
				// The path is relative to the cgroup namespace; the mount's
				// root says where that is inside the hierarchy.
				p := parts[2]
				if r := roots[ctl]; r != "" && r != "/" {
					p = strings.TrimPrefix(p, r)
				}
				if p == "" {
					p = "/"
				}
				own[ctl] = p
			}
		}
	}
	return mounts, own, nil
}

func readTrim(p string) string {
	b, _ := os.ReadFile(p)
	return strings.TrimSpace(string(b))
}

// tmpfsInodes bounds the files of the private tmpfs: each costs kernel
// memory the size does not count.
const tmpfsInodes = 512 << 10

// tmpfsSize is the private tmpfs's size: an eighth of the memory, between
// 512 MiB and 4 GiB (the kernel's default is half the memory, for each
// command).
var tmpfsSize = sync.OnceValue(func() int64 {
	const lo, hi = 512 << 20, 4 << 30
	var total int64
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				f := strings.Fields(rest)
				if len(f) > 0 {
					kb, _ := strconv.ParseInt(f[0], 10, 64)
					total = kb << 10
				}
			}
		}
	}
	return min(max(total/8, lo), hi)
})
