// Package proctest holds what tests that watch the processes agentd starts
// share: finding them by command line, and awaiting a process's start (a
// file it writes) or its end, with a deadline. The sandbox runs commands
// in their own PID namespace; the test's /proc still shows them.
package proctest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/await"
)

// Running lists the processes whose command line names script.
func Running(script string) []int {
	var pids []int
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range cmdlines {
		data, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(data), script) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// AwaitFile waits until path exists; after within (scaled for the
// machine: internal/await) it fails t saying what never happened.
func AwaitFile(t testing.TB, path string, within time.Duration, never string) {
	t.Helper()
	dl := await.NewDeadline(within)
	for _, err := os.Stat(path); err != nil; _, err = os.Stat(path) {
		if dl.Passed() {
			t.Fatalf("%s (waited %s)", never, dl)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// AwaitGone waits until no process runs script; after within (scaled) it
// kills what is left and fails t with "<name> (pids […]) <still>".
func AwaitGone(t testing.TB, script string, within time.Duration, name, still string) {
	t.Helper()
	dl := await.NewDeadline(within)
	for {
		pids := Running(script)
		if len(pids) == 0 {
			return
		}
		if dl.Passed() {
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("%s (pids %v) %s", name, pids, still)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
