package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// HookSpec is the process of a user's hook (agent/hooks.go): a command from
// the user's configuration, run on an event of a run with the event as
// JSON on its standard input, in the kernel sandbox.
type HookSpec struct {
	// Args is the program and its arguments; a name without a slash is
	// looked up in the child environment's PATH.
	Args []string
	// Workspace is the workspace root (absolute), the hook's working
	// directory.
	Workspace string
	// Profile is "read" (the default), "workspace-write" or "full".
	Profile string
	// Network lets a confined hook open sockets.
	Network bool
	// Read and Write are more absolute paths the hook may read, or write.
	Read, Write []string
	// Env adds variables (NAME=value) over the child environment.
	Env []string
	// Stdin is what the hook reads: the event.
	Stdin []byte
	// Timeout bounds the hook; the process and everything it started are
	// killed then.
	Timeout time.Duration
}

// HookResult is how a hook ended.
type HookResult struct {
	// ExitCode is the hook's status as a shell shows it (128 + signal when
	// killed); -1 when it did not run to its end.
	ExitCode int
	// Stdout and Stderr are what it printed, the first maxHookOutput bytes
	// of each.
	Stdout, Stderr string
	// TimedOut: it ran past its timeout and was killed.
	TimedOut bool
	// Err says why it did not run or could not be waited for.
	Err      error
	Duration time.Duration
	// Refused is what the kernel sandbox refused it, when it failed and
	// said why (Proc.Refused).
	Refused []Refusal
}

// maxHookOutput caps what is kept of a hook's output.
const maxHookOutput = 64 << 10

// desktopEnv are the variables a desktop notification needs; a hook that
// runs with the user's own rights (full) gets them, a confined one could
// not reach the session bus anyway.
var desktopEnv = []string{"DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "XDG_SESSION_TYPE"}

// RunHook runs a hook through Command, the one door every process takes
// (the child environment with the user's extra names, the caches only
// confined processes share, the profile's semantics: one the machine cannot
// confine is refused, never run unconfined), and waits for it, at most its
// timeout. It never panics on a hook's behaviour: whatever went wrong is in
// the result.
func (s *Sandbox) RunHook(ctx context.Context, spec HookSpec) HookResult {
	start := time.Now()
	res := s.runHook(ctx, spec)
	res.Duration = time.Since(start)
	return res
}

func (s *Sandbox) runHook(ctx context.Context, spec HookSpec) HookResult {
	profile, err := ParseProfile(spec.Profile)
	if err != nil {
		return HookResult{ExitCode: -1, Err: err}
	}
	var env []string
	if profile == ProfileFull {
		for _, k := range desktopEnv {
			if v, ok := os.LookupEnv(k); ok {
				env = append(env, k+"="+v)
			}
		}
	}
	env = append(env, spec.Env...)
	tctx, cancel := context.WithTimeout(ctx, spec.Timeout)
	defer cancel()
	var stdout, stderr capped
	p, err := s.Command(tctx, ProcSpec{Args: spec.Args, Workspace: spec.Workspace, Dir: spec.Workspace,
		Confine: Confine{Profile: profile, Network: spec.Network}, Env: env, Read: spec.Read, Write: spec.Write,
		Stdin: bytes.NewReader(spec.Stdin), Stdout: &stdout, Stderr: &stderr,
		WaitDelay: time.Second}) // a background process holding the output must not hold the run
	if err != nil {
		if errors.Is(err, ErrNotConfined) {
			err = fmt.Errorf("%w; a hook with \"sandbox\": \"full\" runs unconfined", err)
		}
		return HookResult{ExitCode: -1, Err: err}
	}
	werr := p.Wait()
	res := HookResult{ExitCode: p.ExitCode(), Stdout: stdout.String(), Stderr: stderr.String()}
	if res.ExitCode != 0 {
		res.Refused = p.Refused(res.Stderr + "\n" + res.Stdout)
	}
	switch {
	case ctx.Err() != nil:
		res.ExitCode, res.Err = -1, context.Cause(ctx)
	case tctx.Err() != nil:
		res.ExitCode, res.TimedOut = -1, true
	case werr != nil && res.ExitCode < 0:
		res.Err = werr
	}
	return res
}

// capped keeps the first maxHookOutput bytes written to it and drops the
// rest, so a hook cannot fill the daemon's memory.
type capped struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := maxHookOutput - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}
