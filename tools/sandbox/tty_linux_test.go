package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	scaled "github.com/agentd/agentd/internal/await"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// ttyCase is one attempt on the daemon's controlling terminal.
type ttyCase struct {
	Name    string  `json:"name"`
	Profile Profile `json:"profile"` // 0: run by the daemon itself, unconfined (the control)
	// LandlockOnly runs it as on a machine without user namespaces.
	LandlockOnly bool   `json:"landlockOnly,omitempty"`
	Script       string `json:"script"`
	Marker       string `json:"marker"`
}

// ttyResult is what the helper daemon saw after a case.
type ttyResult struct {
	Name  string `json:"name"`
	Queue int    `json:"queue"` // bytes waiting in the terminal's input
	Exit  int    `json:"exit"`
	Out   string `json:"out"`
	Err   string `json:"err"`
}

// injector types a line into the terminal it opens, one TIOCSTI per
// character, then writes an OSC 52 (clipboard) and a title sequence to it.
func injector(path, marker string) string {
	return fmt.Sprintf(`T=%s perl -e 'open(T, "+<", $ENV{T}) or die "open: $!\n"; for (split //, "echo %s\n") { ioctl(T, 0x5412, $_) or die "TIOCSTI: $!\n" } print "injected\n"'; `+
		`printf '\033]52;c;%s\a\033]0;%s\a' > %s && echo wrote-osc`, path, marker, marker, marker, path)
}

// When the daemon has a controlling terminal (the Neovim client spawns it
// so), a command can neither type into it with TIOCSTI (what the terminal's
// reader would run, unconfined) nor write escape sequences to it (OSC 52
// fills the clipboard): it runs in a session of its own, without a
// controlling terminal, and seccomp refuses TIOCSTI and TIOCLINUX on any
// terminal it reaches. The control — the same script run by the daemon
// itself — shows that the test sees an injection when there is one.
func TestNoTypingIntoTheDaemonsTerminal(t *testing.T) {
	requireSandbox(t)
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("perl is needed to call ioctl")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	master, tty := openPTY(t)
	defer master.Close()
	var cases []ttyCase
	cases = append(cases, ttyCase{Name: "control", Script: injector("/dev/tty", "ctl1x"), Marker: "ctl1x"})
	for _, p := range []Profile{Read, WorkspaceWrite, Full} {
		m := fmt.Sprintf("dt%dx", int(p))
		cases = append(cases, ttyCase{Name: p.String() + "/dev/tty", Profile: p, Script: injector("/dev/tty", m), Marker: m})
	}
	// The terminal by its own name: without the capability a session
	// leader needs (dropped) it is not the command's controlling
	// terminal, and seccomp refuses the request whatever the rights.
	for _, p := range []Profile{Read, WorkspaceWrite} {
		m := fmt.Sprintf("pt%dx", int(p))
		cases = append(cases, ttyCase{Name: p.String() + "/pts", Profile: p, Script: injector("$DAEMON_TTY", m), Marker: m})
	}
	// Landlock alone: no private devpts, only the command's own terminal
	// is granted.
	for i, path := range []string{"/dev/tty", "$DAEMON_TTY"} {
		m := fmt.Sprintf("ll%dx", i)
		cases = append(cases, ttyCase{Name: "landlock-only/" + path, Profile: Read, LandlockOnly: true, Script: injector(path, m), Marker: m})
	}
	raw, _ := json.Marshal(cases)
	cmd := exec.Command(exe, "-test.run=^TestHelperTTYDaemon$", "-test.v")
	cmd.Env = append(os.Environ(), "AGENTD_SANDBOX_TTY_CASES="+string(raw))
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var screen bytes.Buffer
	read := make(chan struct{})
	go func() {
		defer close(read)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			screen.Write(buf[:n])
			if err != nil {
				return // EIO once the helper and its commands closed the terminal
			}
		}
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(scaled.Timeout(2 * time.Minute)):
		_ = cmd.Process.Kill()
		t.Fatalf("the helper daemon hung:\n%s\n%s", stdout.String(), stderr.String())
	}
	if err != nil {
		t.Fatalf("helper daemon: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	results := map[string]ttyResult{}
	for _, line := range strings.Split(stdout.String(), "\n") {
		if raw, ok := strings.CutPrefix(line, "TTYRESULT "); ok {
			var r ttyResult
			if err := json.Unmarshal([]byte(raw), &r); err != nil {
				t.Fatal(err)
			}
			results[r.Name] = r
		}
	}
	select {
	case <-read:
	case <-time.After(scaled.Timeout(10 * time.Second)):
		t.Fatal("the terminal stayed open after the helper daemon ended")
	}
	seen := screen.String()
	for _, c := range cases {
		r, ok := results[c.Name]
		if !ok {
			t.Errorf("%s: no result:\n%s", c.Name, stdout.String())
			continue
		}
		t.Logf("%s: queue %d, exit %d: %s %s", c.Name, r.Queue, r.Exit, strings.TrimSpace(r.Out), r.Err)
		injected := r.Queue > 0 || strings.Contains(r.Out, "injected")
		wrote := strings.Contains(seen, "52;c;"+c.Marker) || strings.Contains(r.Out, "wrote-osc")
		if c.Profile == 0 {
			if !injected || !wrote {
				t.Fatalf("the control did not reach the terminal (injected %v, wrote %v): the test sees nothing", injected, wrote)
			}
			continue
		}
		if injected {
			t.Errorf("%s: typed into the daemon's terminal (%d bytes queued):\n%s", c.Name, r.Queue, r.Out)
		}
		if wrote {
			t.Errorf("%s: wrote an OSC 52 sequence to the daemon's terminal:\n%s", c.Name, r.Out)
		}
	}
}

// TestHelperTTYDaemon is not a test: TestNoTypingIntoTheDaemonsTerminal
// runs the test binary as a daemon whose controlling terminal is a pty,
// which runs each case and reports what reached the terminal's input.
func TestHelperTTYDaemon(t *testing.T) {
	raw := os.Getenv("AGENTD_SANDBOX_TTY_CASES")
	if raw == "" {
		t.Skip("a helper process for TestNoTypingIntoTheDaemonsTerminal")
	}
	var cases []ttyCase
	if err := json.Unmarshal([]byte(raw), &cases); err != nil {
		t.Fatal(err)
	}
	name, err := os.Readlink("/proc/self/fd/0")
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	for _, c := range cases {
		r := ttyResult{Name: c.Name, Exit: -1}
		var out bytes.Buffer
		env := append(f.env, "DAEMON_TTY="+name)
		if c.Profile == 0 {
			cmd := exec.Command("bash", "-c", c.Script)
			cmd.Env, cmd.Stdout, cmd.Stderr = env, &out, &out
			_ = cmd.Run()
			r.Exit = cmd.ProcessState.ExitCode()
		} else {
			spec := f.spec(c.Profile, c.Script)
			spec.Env = env
			cmdc, err := Command(t.Context(), spec)
			if err != nil {
				t.Fatal(err)
			}
			if c.LandlockOnly {
				st := landlockOnly()
				cmdc.status = &st
			}
			cmdc.Stdout, cmdc.Stderr, cmdc.Stdin = &out, &out, io.Reader(nil)
			if err := cmdc.Run(); err != nil {
				r.Err = err.Error()
			}
			r.Exit = cmdc.ExitCode()
		}
		// Injected characters wait in the terminal's input queue.
		var n int32
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, 0, syscall.TIOCINQ, uintptr(unsafe.Pointer(&n))); e != 0 {
			t.Fatal(e)
		}
		r.Queue = int(n)
		_, _, _ = syscall.Syscall(syscall.SYS_IOCTL, 0, 0x540B, 0 /* TCFLSH, TCIFLUSH */)
		r.Out = out.String()
		line, _ := json.Marshal(r)
		fmt.Printf("TTYRESULT %s\n", line)
	}
}

// On a terminal of its own (an interactive command), the command is the
// session leader and the terminal its controlling one, where TIOCSTI
// would work: seccomp refuses it (whatever the upper 32 bits of the
// request, which the kernel ignores) and TIOCLINUX, with Landlock alone
// too.
func TestNoTIOCSTIOnItsOwnTerminal(t *testing.T) {
	requireSandbox(t)
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("perl is needed to call ioctl")
	}
	script := `perl -e 'open(T, "+<", "/dev/tty") or die "open: $!\n";
		for my $r ([sti => 0x5412], ["sti-high" => 0x7fff00005412], [linux => 0x541c]) {
			my $a = $r->[0] eq "linux" ? "\x02" : "q";
			if (ioctl(T, $r->[1], $a)) { print "DONE-$r->[0]\n" } else { print "REFUSED-$r->[0]: $!\n" }
		}'`
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			master, tty := openPTY(t)
			defer master.Close()
			f := newFixture(t)
			c, err := Command(t.Context(), f.spec(Read, script))
			if err != nil {
				t.Fatal(err)
			}
			st := m.status()
			c.status = &st
			c.SetTerminal(tty)
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			tty.Close()
			out, _ := io.ReadAll(master) // EIO at the end
			_ = c.Wait()
			t.Logf("%s", out)
			for _, r := range []string{"sti", "sti-high", "linux"} {
				if !strings.Contains(string(out), "REFUSED-"+r+": Operation not permitted") {
					t.Errorf("ioctl %s not refused by seccomp:\n%s", r, out)
				}
			}
		})
	}
}
