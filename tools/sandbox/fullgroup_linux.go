package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A command in Full runs with the user's rights, yet the daemon still
// ends it: when it is stopped (a background process's stop button), when
// it ends (what it left running), when it is cancelled. Its process group
// is not enough for that: a process that calls setsid leaves the group,
// and outlived the stop (issue 24's red team: a background dev server
// "allowed without the sandbox" kept writing after the stop). So it runs
// in a control group of its own (one of the daemon's commands' groups,
// limits_linux.go), joined before it runs anything: its first process is
// a shell that waits on a pipe until the daemon has placed it, then execs
// the command. Whatever it starts stays in the group (leaving needs a
// write the daemon's groups do not give), and ending the command kills
// the group. Where no group can be made, the process group is all there
// is, as before.

// fullGate is what the waiting shell runs: $1 is the program, the rest
// its arguments.
const fullGate = `read -r _ <&3; exec 3<&-; exec "$@"`

// fullGroup is a Full command's control group. Its methods may be called
// from the kill on cancel, Kill and Wait at once; once done, the group may
// be another command's, so kill does nothing any more.
type fullGroup struct {
	r, w *os.File // the gate's pipe, until open

	mu       sync.Mutex
	dir      string // the group in the pids hierarchy; "" when none
	release  func()
	finished bool
}

// gateFull makes cmd start behind the gate when the daemon has groups.
func gateFull(cmd *exec.Cmd) *fullGroup {
	if cg, _ := daemonCgroups(); cg == nil {
		return nil
	}
	sh, err := exec.LookPath("/bin/sh")
	if err != nil {
		return nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil
	}
	cmd.Args = append([]string{"sh", "-c", fullGate, "sh", cmd.Path}, cmd.Args[1:]...)
	cmd.Path = sh
	cmd.ExtraFiles = []*os.File{r}
	g := &fullGroup{r: r, w: w}
	if cancel := cmd.Cancel; cancel != nil {
		cmd.Cancel = func() error { g.kill(); return cancel() }
	}
	return g
}

// open places the started shell into a group and lets it exec the
// command. Where it cannot be placed, the command runs all the same, in
// its process group only.
func (g *fullGroup) open(pid int) {
	if g == nil {
		return
	}
	_ = g.r.Close()
	defer g.w.Close()
	if cg, _ := daemonCgroups(); cg != nil {
		if release, dir, err := cg.place(pid); err == nil {
			g.mu.Lock()
			g.dir, g.release = dir, release
			g.mu.Unlock()
		}
	}
	_, _ = g.w.Write([]byte("\n"))
}

// abort closes the gate of a command that did not start.
func (g *fullGroup) abort() {
	if g != nil {
		_, _ = g.r.Close(), g.w.Close()
	}
}

// kill kills every process in the group, until none is left (a process
// may fork while the list is read; the group's process limit bounds it).
func (g *fullGroup) kill() {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.killLocked()
}

func (g *fullGroup) killLocked() {
	if g.finished || g.dir == "" {
		return
	}
	_ = os.WriteFile(filepath.Join(g.dir, "cgroup.kill"), []byte("1"), 0) // cgroup v2 since Linux 5.14
	for range 100 {
		b, err := os.ReadFile(filepath.Join(g.dir, "cgroup.procs"))
		if err != nil || len(strings.TrimSpace(string(b))) == 0 {
			return
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// done kills what is left and gives the group back.
func (g *fullGroup) done() {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.killLocked()
	if !g.finished && g.release != nil {
		g.release()
	}
	g.finished = true
}
