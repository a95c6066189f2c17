package await

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// fakeT records a failure instead of ending the test.
type fakeT struct {
	testing.TB
	failed string
}

func (f *fakeT) Helper() {}

func (f *fakeT) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	panic(f)
}

func run(f func(t testing.TB)) (failed bool, took time.Duration) {
	t := &fakeT{}
	start := time.Now()
	defer func() { took = time.Since(start) }()
	defer func() {
		if r := recover(); r != nil {
			if r != t {
				panic(r)
			}
			failed = true
		}
	}()
	f(t)
	return false, 0
}

func TestScaleFromTheEnvironment(t *testing.T) {
	t.Setenv(ScaleEnv, "3")
	if got := Timeout(2 * time.Second); got != 6*time.Second {
		t.Fatalf("Timeout(2s) with scale 3 = %s", got)
	}
	if s := NewDeadline(time.Second).String(); !strings.Contains(s, ScaleEnv+"=3") {
		t.Fatalf("the deadline does not say where its scale comes from: %q", s)
	}
	t.Setenv(ScaleEnv, "nonsense")
	if Scale() < 1 {
		t.Fatal("a scale below 1 from the load")
	}
}

func TestCheckFailsAtOnceWhenImpossible(t *testing.T) {
	t.Setenv(ScaleEnv, "1")
	failed, took := run(func(t testing.TB) {
		Check(t, "never", time.Minute, func() (bool, error) { return false, errors.New("the run ended") })
	})
	if !failed || took > 5*time.Second {
		t.Fatalf("failed %v after %s; want a failure at once", failed, took)
	}
}

func TestUntilTimesOutScaled(t *testing.T) {
	t.Setenv(ScaleEnv, "2")
	failed, took := run(func(t testing.TB) { Until(t, "never", 50*time.Millisecond, func() bool { return false }) })
	if !failed || took < 100*time.Millisecond {
		t.Fatalf("failed %v after %s; want a failure after 2 × 50ms", failed, took)
	}
	n := 0
	failed, _ = run(func(t testing.TB) { Until(t, "the third look", time.Second, func() bool { n++; return n == 3 }) })
	if failed {
		t.Fatal("Until failed although the condition came true")
	}
}

func TestRecv(t *testing.T) {
	t.Setenv(ScaleEnv, "1")
	ch := make(chan int, 1)
	ch <- 7
	if v := Recv(t, "seven", time.Second, ch); v != 7 {
		t.Fatalf("Recv = %d", v)
	}
	close(ch)
	if failed, took := run(func(t testing.TB) { Recv(t, "a value", time.Minute, ch) }); !failed || took > 5*time.Second {
		t.Fatalf("a closed channel: failed %v after %s", failed, took)
	}
}
