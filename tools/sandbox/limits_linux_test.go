package sandbox

import (
	"context"
	"fmt"
	scaled "github.com/agentd/agentd/internal/await"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// forker forks children that sleep until it has made n or fork fails, then
// says how many it made.
func forker(n int, sleep string) string {
	return fmt.Sprintf(`perl -e 'my $n = 0; while ($n < %d) { my $p = fork(); last unless defined $p; if ($p == 0) { exec("sleep", "%s"); exit 0 } $n++ } print "forked $n\n"'`, n, sleep)
}

// A command forks no more processes than its limit, with Landlock alone
// too; the processes it made end with it.
func TestProcessLimit(t *testing.T) {
	requireSandbox(t)
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			f := newFixture(t)
			left := marker()
			spec := f.spec(Read, forker(600, left))
			spec.MaxProcs = 64
			r := run(t, m, spec)
			if r.err != nil {
				t.Fatal(r.err)
			}
			got := regexp.MustCompile(`forked (\d+)`).FindStringSubmatch(r.out)
			if got == nil {
				t.Fatalf("exit %d: %s", r.code, r.out)
			}
			n, _ := strconv.Atoi(got[1])
			if n >= 64 || n < 10 {
				t.Errorf("forked %d processes under a limit of 64 (confinement %+v)", n, r.conf)
			}
			if !r.conf.Limits {
				t.Errorf("no control group: %+v", r.conf)
			}
			await(t, "the command's processes to end", 10*time.Second, func() bool { return len(sleeping(left)) == 0 })
		})
	}
}

// A fork bomb stays inside its command's limit, the machine keeps its pids
// and its CPU for others: a second command starts and answers at once
// while the bomb runs, and the test's own timer keeps time. Cancelling the
// bomb ends all of it.
func TestForkBombContained(t *testing.T) {
	st := requireSandbox(t)
	if !st.Limits {
		t.Fatalf("no process limits here: %v", st.Problems)
	}
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	spec := f.spec(WorkspaceWrite, `bomb() { bomb | bomb & }; bomb; sleep 60`)
	spec.MaxProcs = 256
	c, err := Command(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	group := c.entry.group
	done := make(chan struct{})
	var peak atomic.Int64
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if n, err := strconv.Atoi(readTrim(filepath.Join(group, "pids.current"))); err == nil && int64(n) > peak.Load() {
				peak.Store(int64(n))
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	await(t, "the bomb to fill its limit", 20*time.Second, func() bool { return peak.Load() >= 200 })
	// The daemon's side: its timers and a new command.
	var late time.Duration
	for range 20 {
		start := time.Now()
		time.Sleep(10 * time.Millisecond)
		late = max(late, time.Since(start)-10*time.Millisecond)
	}
	start := time.Now()
	r := run(t, modes[0], f.spec(Read, "echo alive"))
	took := time.Since(start)
	if r.err != nil || !strings.Contains(r.out, "alive") {
		t.Errorf("a command during the bomb: %v exit %d: %s", r.err, r.code, r.out)
	}
	t.Logf("during the bomb: a command took %v, the timer was %v late at most, peak %d processes", took, late, peak.Load())
	if took > scaled.Timeout(10*time.Second) || late > scaled.Timeout(2*time.Second) {
		t.Errorf("the bomb starved the daemon: a command took %v, the timer was %v late", took, late)
	}
	cancel()
	_ = c.Wait()
	<-done
	if p := peak.Load(); p > 256 {
		t.Errorf("the bomb reached %d processes over a limit of 256", p)
	}
	await(t, "the bomb's group to empty", 10*time.Second, func() bool {
		n, err := strconv.Atoi(readTrim(filepath.Join(group, "pids.current")))
		return err != nil || n == 0
	})
}

// The private /tmp holds an eighth of the memory at most (the kernel's
// tmpfs takes half by default); a command filling its /tmp is told the
// device is full.
func TestPrivateTmpIsBounded(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	df := func(spec Spec) int64 {
		r := run(t, modes[0], spec)
		if r.err != nil {
			t.Fatal(r.err)
		}
		fields := strings.Fields(r.out)
		if len(fields) == 0 {
			t.Fatalf("no df output: %s", r.out)
		}
		n, _ := strconv.ParseInt(fields[0], 10, 64)
		return n
	}
	if got := df(f.spec(Read, "df -B1 --output=size /tmp | tail -1")); got <= 0 || got > tmpfsSize() {
		t.Errorf("/tmp is %d bytes, want at most %d", got, tmpfsSize())
	}
	t.Logf("/tmp: %d bytes (memory/8, 512 MiB to 4 GiB)", tmpfsSize())
	spec := f.spec(WorkspaceWrite, `head -c 100000000 /dev/zero > "$TMPDIR/big"; echo "exit $?"`)
	spec.TmpSize = 32 << 20
	r := run(t, modes[0], spec)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !strings.Contains(r.out, "No space left on device") || strings.Contains(r.out, "exit 0") {
		t.Errorf("filling /tmp past its bound did not fail:\n%s", r.out)
	}
}
