package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The streams work as with os/exec: a reader in, separate writers out,
// a file passed as it is, and every byte of a large output.
func TestStreams(t *testing.T) {
	requireSandbox(t)
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			f := newFixture(t)
			c, err := Command(context.Background(), f.spec(Read, `tr a-z A-Z; echo to-stderr >&2; head -c 1048576 /dev/zero | tr '\0' x`))
			if err != nil {
				t.Fatal(err)
			}
			st := m.status()
			c.status = &st
			var out, errOut bytes.Buffer
			c.Stdin, c.Stdout, c.Stderr = strings.NewReader("from stdin\n"), &out, &errOut
			if err := c.Run(); err != nil || c.ExitCode() != 0 {
				t.Fatalf("%v, exit %d: %s", err, c.ExitCode(), errOut.String())
			}
			if !strings.HasPrefix(out.String(), "FROM STDIN\n") || out.Len() != len("FROM STDIN\n")+1<<20 {
				t.Errorf("stdout: %d bytes, starts %q", out.Len(), out.String()[:min(20, out.Len())])
			}
			if errOut.String() != "to-stderr\n" {
				t.Errorf("stderr: %q", errOut.String())
			}

			file, err := os.Create(filepath.Join(t.TempDir(), "out"))
			if err != nil {
				t.Fatal(err)
			}
			c, _ = Command(context.Background(), f.spec(Read, "echo into-a-file"))
			c.status = &st
			c.Stdout = file
			if err := c.Run(); err != nil {
				t.Fatal(err)
			}
			file.Close()
			if data, _ := os.ReadFile(file.Name()); string(data) != "into-a-file\n" {
				t.Errorf("file: %q", data)
			}
		})
	}
}

// A leftover process that keeps the output open: with namespaces it dies
// with the command; with Landlock alone (a setsid process escapes the
// group) Wait gives up after WaitDelay.
func TestWaitDelay(t *testing.T) {
	requireSandbox(t)
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			f := newFixture(t)
			left := marker()
			defer func() {
				for _, pid := range sleeping(left) {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}()
			// The file says the detached process has left the group, before
			// the command ends and Wait kills the group.
			c, _ := Command(context.Background(), f.spec(Read, `setsid sh -c 'touch "$TMPDIR/ready"; exec sleep `+left+`' &
				while [ ! -e "$TMPDIR/ready" ]; do sleep 0.01; done; echo started`))
			st := m.status()
			c.status = &st
			var out bytes.Buffer
			c.Stdout, c.WaitDelay = &out, 500*time.Millisecond
			start := time.Now()
			err := c.Run()
			took := time.Since(start)
			if m.name == "namespaces" {
				if err != nil || took > 5*time.Second {
					t.Errorf("%v after %v", err, took)
				}
				return
			}
			if !errors.Is(err, exec.ErrWaitDelay) || took > 5*time.Second {
				t.Errorf("%v after %v, want ErrWaitDelay after 500ms", err, took)
			}
			if !strings.Contains(out.String(), "started") {
				t.Errorf("output lost: %q", out.String())
			}
		})
	}
}

// Cancelling the context kills the command and everything it started.
func TestCancel(t *testing.T) {
	requireSandbox(t)
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			f := newFixture(t)
			bg, fg := marker(), marker()
			ctx, cancel := context.WithCancel(context.Background())
			c, _ := Command(ctx, f.spec(Read, fmt.Sprintf("sleep %s & exec sleep %s", bg, fg)))
			st := m.status()
			c.status = &st
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			await(t, "the command to run", 5*time.Second, func() bool { return len(sleeping(fg)) == 1 && len(sleeping(bg)) == 1 })
			cancel()
			done := make(chan error, 1)
			go func() { done <- c.Wait() }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("Wait did not return after cancel")
			}
			if code := c.ExitCode(); code != 128+int(syscall.SIGKILL) {
				t.Errorf("exit code %d, want 137", code)
			}
			await(t, "nothing left", 5*time.Second, func() bool { return len(sleeping(fg))+len(sleeping(bg)) == 0 })
		})
	}
}

// Commands run side by side, and an entry point killed while it waits is
// replaced.
func TestConcurrentCommandsAndLostEntryPoints(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	var wg sync.WaitGroup
	errs := make(chan string, 32)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 3 {
				r := run(t, modes[0], f.spec(WorkspaceWrite, fmt.Sprintf("echo %d-%d > f%d-%d && cat f%d-%d", i, j, i, j, i, j)))
				if want := fmt.Sprintf("%d-%d\n", i, j); r.err != nil || r.out != want {
					errs <- fmt.Sprintf("%d-%d: %v %q", i, j, r.err, r.out)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	key := nsKey{ns: true}
	warm.mu.Lock()
	e := warm.ready[key]
	warm.mu.Unlock()
	if e != nil {
		_ = e.proc.Kill()
		await(t, "the entry point to die", 5*time.Second, func() bool { return exited(e.proc.Pid) })
	}
	if r := run(t, modes[0], f.spec(Read, "echo after")); r.err != nil || r.out != "after\n" {
		t.Errorf("after losing the waiting entry point: %v %q", r.err, r.out)
	}
	CloseIdle()
	if r := run(t, modes[0], f.spec(Read, "echo after-close")); r.err != nil || r.out != "after-close\n" {
		t.Errorf("after CloseIdle: %v %q", r.err, r.out)
	}
}
