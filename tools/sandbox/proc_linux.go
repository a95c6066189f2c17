package sandbox

import (
	"os"
	"path/filepath"
	"sync"
)

// With a PID namespace a command gets a /proc of its own, where nothing
// outside it exists. With Landlock alone /proc is the machine's, and
// Landlock's ptrace scoping keeps other processes' memory and environment
// out, but not what any user may read there: every process's command line
// (`ps -eo args` shows the daemon's and the editor's arguments, tokens
// passed as flags included), status, mounts. So only /proc's system-wide
// entries (cpuinfo, meminfo, stat, sys …) are granted, none of the
// process directories — not even the command's own, which do not exist
// when the rules are made: `ps`, `pgrep` and reading /proc/self fail.

// procShared are /proc's entries that are no process's: not a pid, not
// self or thread-self; found once.
var procShared = sync.OnceValue(func() []string {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if name == "self" || name == "thread-self" || isPid(name) || e.Type()&os.ModeSymlink != 0 {
			continue
		}
		out = append(out, filepath.Join("/proc", name))
	}
	return out
})

func isPid(name string) bool {
	for _, c := range name {
		if c < '0' || c > '9' {
			return false
		}
	}
	return name != ""
}
