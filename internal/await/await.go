package await

import (
	"context"
	"testing"
	"time"
)

// poll is how often Until and Check look again.
const poll = 10 * time.Millisecond

// Until waits until cond holds; after Timeout(d) it fails t with "timed out
// after … waiting for what".
func Until(t testing.TB, what string, d time.Duration, cond func() bool) {
	t.Helper()
	Check(t, what, d, func() (bool, error) { return cond(), nil })
}

// Check waits until cond returns true. An error from cond says that what
// it waits for can no longer happen (the run ended, the process exited): t
// fails at once with it. After Timeout(d) t fails too.
func Check(t testing.TB, what string, d time.Duration, cond func() (bool, error)) {
	t.Helper()
	dl := NewDeadline(d)
	for {
		ok, err := cond()
		switch {
		case ok:
			return
		case err != nil:
			t.Fatalf("waiting for %s: it can no longer happen: %v", what, err)
		case dl.Passed():
			t.Fatalf("timed out after %s waiting for %s", dl, what)
		}
		time.Sleep(poll)
	}
}

// Recv waits for a value on ch; a closed channel fails t at once.
func Recv[T any](t testing.TB, what string, d time.Duration, ch <-chan T) T {
	t.Helper()
	dl := NewDeadline(d)
	for {
		timer := time.NewTimer(max(dl.Left(), poll))
		select {
		case v, ok := <-ch:
			timer.Stop()
			if !ok {
				t.Fatalf("waiting for %s: the channel closed", what)
			}
			return v
		case <-timer.C:
			if dl.Passed() {
				t.Fatalf("timed out after %s waiting for %s", dl, what)
			}
		}
	}
}

// Context is a context that ends Timeout(d) from now (scaled once, now) or
// when the test ends.
func Context(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout(d))
	t.Cleanup(cancel)
	return ctx
}
