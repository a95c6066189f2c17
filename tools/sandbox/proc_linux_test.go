package sandbox

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// Other processes' command lines (the daemon's, the editor's, whatever the
// user runs with a token as a flag) are out of a command's sight: with
// namespaces /proc is the command's own; with Landlock alone its process
// directories are not granted. The system-wide entries and process
// substitution still work.
func TestOtherProcessesUnseen(t *testing.T) {
	requireSandbox(t)
	mark := marker()
	other := exec.Command("sleep", mark)
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Process.Kill(); _ = other.Wait() }()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			f := newFixture(t)
			r := run(t, m, f.spec(Read, fmt.Sprintf(`ps -eo args; cat /proc/%d/cmdline; grep -l %s /proc/[0-9]*/cmdline; echo; `+
				`head -1 /proc/cpuinfo | cut -c1-9; grep -c . /proc/meminfo >/dev/null && echo meminfo; cat <(echo procsub)`, other.Process.Pid, mark)))
			if r.err != nil {
				t.Fatal(r.err)
			}
			t.Logf("exit %d:\n%s", r.code, r.out)
			if strings.Contains(r.out, mark) && !strings.Contains(r.out, "grep -l "+mark) {
				t.Errorf("another process's arguments are visible:\n%s", r.out)
			}
			if strings.Contains(strings.ReplaceAll(r.out, "grep -l "+mark, ""), mark) {
				t.Errorf("another process's arguments are visible:\n%s", r.out)
			}
			for _, want := range []string{"processor", "meminfo", "procsub"} {
				if !strings.Contains(r.out, want) {
					t.Errorf("%s missing: /proc's system-wide entries or process substitution broke:\n%s", want, r.out)
				}
			}
		})
	}
}
