package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// marker is a sleep argument no other process on the machine uses.
func marker() string { return fmt.Sprintf("%d.%06d", 4000+rand.IntN(1000), rand.IntN(1000000)) }

// sleeping lists the processes running `sleep m`.
func sleeping(m string) []int {
	var out []int
	for _, pid := range processesWith("sleep " + m) {
		if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && strings.HasPrefix(string(data), "sleep\x00"+m) {
			out = append(out, pid)
		}
	}
	return out
}

// A command's background jobs, even those that left its process group
// with setsid, end with it.
func TestLeftoversEndWithTheCommand(t *testing.T) {
	requireSandbox(t)
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			f := newFixture(t)
			bg, detached := marker(), marker()
			script := fmt.Sprintf("sleep %s & echo started", bg)
			if m.name == "namespaces" {
				script = fmt.Sprintf("sleep %s & setsid sleep %s & echo started", bg, detached)
			}
			r := run(t, m, f.spec(Read, script))
			if r.err != nil || !strings.Contains(r.out, "started") {
				t.Fatalf("%v: %s", r.err, r.out)
			}
			await(t, "the leftovers to die", 5*time.Second, func() bool {
				return len(sleeping(bg)) == 0 && len(sleeping(detached)) == 0
			})
		})
	}
}

// helperSpec is what TestHelperDaemon runs, as a daemon the test kills.
type helperSpec struct {
	Spec         Spec `json:"spec"`
	LandlockOnly bool `json:"landlockOnly"`
}

// TestHelperDaemon is not a test: TestChildrenDieWithTheDaemon runs the
// test binary as a daemon that starts a command and then is killed.
func TestHelperDaemon(t *testing.T) {
	raw := os.Getenv("AGENTD_SANDBOX_HELPER")
	if raw == "" {
		t.Skip("a helper process for TestChildrenDieWithTheDaemon")
	}
	var h helperSpec
	if err := json.Unmarshal([]byte(raw), &h); err != nil {
		t.Fatal(err)
	}
	c, err := Command(context.Background(), h.Spec)
	if err != nil {
		t.Fatal(err)
	}
	if h.LandlockOnly {
		st := landlockOnly()
		c.status = &st
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	id, _ := json.Marshal(c.ID())
	fmt.Printf("ready %s\n", id)
	time.Sleep(time.Hour) // until the test kills this process
}

// Killing the daemon with SIGKILL takes its commands with it: the
// sandbox's init gets the parent-death signal and its PID namespace ends
// with every process in it. In Full, only the direct child has the signal;
// what it left in its process group is what Reap is for.
func TestChildrenDieWithTheDaemon(t *testing.T) {
	requireSandbox(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name         string
		profile      Profile
		landlockOnly bool
	}{{"namespaces", Read, false}, {"landlock-only", Read, true}, {"full", Full, false}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			bg, detached, main := marker(), marker(), marker()
			script := fmt.Sprintf("sleep %s & exec sleep %s", bg, main)
			if tc.name == "namespaces" {
				script = fmt.Sprintf("sleep %s & setsid sleep %s & exec sleep %s", bg, detached, main)
			}
			raw, _ := json.Marshal(helperSpec{Spec: f.spec(tc.profile, script), LandlockOnly: tc.landlockOnly})
			daemon := exec.Command(exe, "-test.run=^TestHelperDaemon$")
			daemon.Env = append(os.Environ(), "AGENTD_SANDBOX_HELPER="+string(raw))
			daemon.Stderr = os.Stderr
			out, err := daemon.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := daemon.Start(); err != nil {
				t.Fatal(err)
			}
			id := readReady(t, out)
			all := []string{bg, main}
			if tc.name == "namespaces" {
				all = append(all, detached)
			}
			await(t, "the command's processes", 5*time.Second, func() bool {
				for _, m := range all {
					if len(sleeping(m)) == 0 {
						return false
					}
				}
				return true
			})
			_ = daemon.Process.Kill()
			_ = daemon.Wait()
			if tc.profile != Full {
				await(t, "every process of the command to die with the daemon", 5*time.Second, func() bool {
					for _, m := range all {
						if len(sleeping(m)) > 0 {
							return false
						}
					}
					return true
				})
				return
			}
			await(t, "the direct child to die with the daemon", 5*time.Second, func() bool { return len(sleeping(main)) == 0 })
			if len(sleeping(bg)) == 0 {
				t.Fatal("the background job died too: Reap is not exercised")
			}
			killed, err := Reap(id)
			if err != nil || !killed {
				t.Fatalf("Reap(%+v) = %v, %v", id, killed, err)
			}
			await(t, "Reap to kill the leftover", 5*time.Second, func() bool { return len(sleeping(bg)) == 0 })
		})
	}
}

func readReady(t *testing.T, r io.Reader) ProcID {
	t.Helper()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("the helper daemon ended before starting its command")
			}
			if rest, found := strings.CutPrefix(line, "ready "); found {
				var id ProcID
				if err := json.Unmarshal([]byte(rest), &id); err != nil {
					t.Fatal(err)
				}
				go func() {
					for range lines {
					}
				}()
				return id
			}
		case <-timeout:
			t.Fatal("the helper daemon never started its command")
		}
	}
}

// Reap leaves alone a process that merely reuses a recorded pid.
func TestReapChecksTheStartTime(t *testing.T) {
	c := exec.Command("sleep", marker())
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Process.Kill(); _ = c.Wait() }()
	start, err := procStart(c.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if killed, err := Reap(ProcID{Pid: c.Process.Pid, Start: start + 1}); killed || err != nil {
		t.Fatalf("Reap killed a process with another start time: %v, %v", killed, err)
	}
	if killed, err := Reap(ProcID{Pid: c.Process.Pid, Start: start}); !killed || err != nil {
		t.Fatalf("Reap did not kill its process: %v, %v", killed, err)
	}
	if err := c.Wait(); err == nil {
		t.Fatal("the process was not killed")
	}
}

func TestExitStatusAndSetupErrors(t *testing.T) {
	requireSandbox(t)
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			f := newFixture(t)
			if r := run(t, m, f.spec(Read, "exit 3")); r.err != nil || r.code != 3 {
				t.Errorf("exit 3: code %d, %v", r.code, r.err)
			}
			if r := run(t, m, f.spec(Read, "kill -TERM $$")); r.err != nil || r.code != 128+15 {
				t.Errorf("killed by SIGTERM: code %d, %v", r.code, r.err)
			}
			spec := f.spec(Read, "")
			spec.Args = []string{"no-such-program-agentd"}
			r := run(t, m, spec)
			var se *SetupError
			if !errors.As(r.err, &se) || se.Step != "exec" {
				t.Errorf("missing program: %v", r.err)
			}
			spec.Args = []string{"/bin/true"}
			spec.Dir = f.out + "/no-such-dir"
			if r := run(t, m, spec); !errors.As(r.err, &se) || se.Step != "exec" {
				t.Errorf("missing working directory: %v", r.err)
			}
		})
	}
}

// Without Landlock the confined profiles are refused, never run
// unconfined; Full still runs.
func TestUnavailableNeverRunsUnconfined(t *testing.T) {
	f := newFixture(t)
	none := mode{"none", func() Status { return Status{OS: "linux", Problems: []string{"no Landlock (test)"}} }}
	for _, p := range []Profile{Read, WorkspaceWrite} {
		r := run(t, none, f.spec(p, "echo ran > ran.txt; echo ran"))
		if !errors.Is(r.err, ErrUnavailable) || strings.Contains(r.out, "ran") {
			t.Errorf("%s: %v %q", p, r.err, r.out)
		}
		if _, err := os.Stat(f.ws + "/ran.txt"); err == nil {
			t.Errorf("%s: the command ran", p)
		}
	}
	if r := run(t, none, f.spec(Full, "echo ran")); r.err != nil || !strings.Contains(r.out, "ran") {
		t.Errorf("full: %v %q", r.err, r.out)
	}
}

// The command's environment is the spec's, with its private TMPDIR.
func TestEnvironmentIsTheSpecs(t *testing.T) {
	requireSandbox(t)
	for _, m := range modes {
		f := newFixture(t)
		spec := f.spec(Read, "env")
		spec.Env = append(spec.Env, "ONLY_THIS=1")
		r := run(t, m, spec)
		if r.err != nil {
			t.Fatal(r.err)
		}
		got := map[string]bool{}
		for _, kv := range strings.Split(strings.TrimSpace(r.out), "\n") {
			k, _, _ := strings.Cut(kv, "=")
			got[k] = true
		}
		for _, k := range []string{"PATH", "HOME", "LANG", "ONLY_THIS", "TMPDIR", "TMP", "TEMP"} {
			if !got[k] {
				t.Errorf("%s: %s missing from\n%s", m.name, k, r.out)
			}
		}
		for k := range got {
			switch k {
			case "PATH", "HOME", "LANG", "ONLY_THIS", "TMPDIR", "TMP", "TEMP", "PWD", "SHLVL", "_":
			default:
				t.Errorf("%s: unexpected variable %s", m.name, k)
			}
		}
	}
}

// A command on a terminal: it is a tty, and ^C interrupts the command (not
// the sandbox's init, which would take the namespace down).
func TestTerminal(t *testing.T) {
	requireSandbox(t)
	for _, p := range []Profile{Read, Full} {
		t.Run(p.String(), func(t *testing.T) {
			master, tty := openPTY(t)
			defer master.Close()
			f := newFixture(t)
			c, err := Command(context.Background(), f.spec(p, "test -t 0 && echo isatty; exec sleep "+marker()))
			if err != nil {
				t.Fatal(err)
			}
			c.SetTerminal(tty)
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			tty.Close()
			seen := make(chan string, 64)
			go func() {
				buf := make([]byte, 1024)
				for {
					n, err := master.Read(buf)
					if n > 0 {
						seen <- string(buf[:n])
					}
					if err != nil {
						close(seen)
						return
					}
				}
			}()
			var out strings.Builder
			timeout := time.After(10 * time.Second)
			for !strings.Contains(out.String(), "isatty") {
				select {
				case s := <-seen:
					out.WriteString(s)
				case <-timeout:
					t.Fatalf("no isatty: %q", out.String())
				}
			}
			if _, err := master.Write([]byte{3}); err != nil { // ^C
				t.Fatal(err)
			}
			_ = c.Wait()
			if code := c.ExitCode(); code != 128+int(syscall.SIGINT) {
				t.Errorf("exit code %d after ^C, want 130", code)
			}
			if p != Full && !c.fromInit {
				t.Error("the init did not report the status: ^C killed it, not (only) the command")
			}
		})
	}
}

func openPTY(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatal(e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatal(e)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return master, tty
}

// A command in Full runs with the user's rights, yet what it started ends
// with it, when it is killed (a background process's stop) and when it
// ends, even a process that left its process group with setsid (issue 24's
// red team: it outlived the stop). Where the daemon has no control group,
// only the process group is killed.
func TestFullLeftoversEndWithTheCommand(t *testing.T) {
	if cg, why := daemonCgroups(); cg == nil {
		t.Skipf("no control group for the daemon's commands here: %s", why)
	}
	f := newFixture(t)
	detached, killed := marker(), marker()
	r := run(t, modes[0], f.spec(Full, fmt.Sprintf("setsid sleep %s & echo started", detached)))
	if r.err != nil || !strings.Contains(r.out, "started") {
		t.Fatalf("%v: %s", r.err, r.out)
	}
	await(t, "the setsid process a Full command left to die", 5*time.Second, func() bool { return len(sleeping(detached)) == 0 })

	c, err := Command(context.Background(), f.spec(Full, fmt.Sprintf("setsid sleep %s & sleep 600", killed)))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	await(t, "the setsid process to start", 10*time.Second, func() bool { return len(sleeping(killed)) > 0 })
	if err := c.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = c.Wait()
	await(t, "the setsid process of a killed Full command to die", 5*time.Second, func() bool { return len(sleeping(killed)) == 0 })
}
