package tools

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/internal/await"
	"github.com/agentd/agentd/tools/sandbox"
)

func needSandbox(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" || !sandbox.Check().Supports(sandbox.Read) {
		t.Skip("the kernel sandbox cannot confine commands here: " + strings.Join(sandbox.Check().Problems, "; "))
	}
}

func TestRunHook(t *testing.T) {
	needSandbox(t)
	ws, out := t.TempDir(), t.TempDir()
	spec := func(line string) HookSpec {
		return HookSpec{Args: []string{"/bin/sh", "-c", line}, Workspace: ws, Stdin: []byte(`{"event":"x"}`),
			Timeout: await.Timeout(20 * time.Second), Env: []string{"AGENTD_HOOK_EVENT=x"}}
	}
	ctx := context.Background()
	sb := NewSandbox(SandboxConfig{CacheDir: t.TempDir()})

	res := sb.RunHook(ctx, spec(`cat; echo " $AGENTD_HOOK_EVENT"; echo oops >&2; exit 3`))
	require.NoError(t, res.Err)
	assert.Equal(t, 3, res.ExitCode)
	assert.Equal(t, "{\"event\":\"x\"} x\n", res.Stdout, "the hook reads the event on stdin and has its variables")
	assert.Equal(t, "oops\n", res.Stderr)

	big := spec(`true`)
	big.Stdin = []byte(strings.Repeat("x", 4<<20))
	res = sb.RunHook(ctx, big)
	assert.Equal(t, 0, res.ExitCode, "a hook that never reads its stdin, however large, is fine")
	require.NoError(t, res.Err)

	// read (the default) writes nothing of the workspace; Write grants a
	// directory.
	res = sb.RunHook(ctx, spec(`echo x > `+filepath.Join(ws, "f")+`; cat > `+filepath.Join(out, "event.json")))
	assert.NotEqual(t, 0, res.ExitCode)
	assert.NoFileExists(t, filepath.Join(ws, "f"))
	assert.NoFileExists(t, filepath.Join(out, "event.json"))
	s := spec(`cat > ` + filepath.Join(out, "event.json"))
	s.Write = []string{out}
	res = sb.RunHook(ctx, s)
	assert.Equal(t, 0, res.ExitCode, res.Stderr)
	data, err := os.ReadFile(filepath.Join(out, "event.json"))
	require.NoError(t, err)
	assert.JSONEq(t, `{"event":"x"}`, string(data))

	// A hook that hangs is killed at its timeout, with what it started.
	s = spec(`sleep 60 & echo started; wait`)
	s.Timeout = 500 * time.Millisecond
	start := time.Now()
	res = sb.RunHook(ctx, s)
	assert.True(t, res.TimedOut)
	assert.Equal(t, -1, res.ExitCode)
	assert.Less(t, time.Since(start), await.Timeout(10*time.Second))

	res = sb.RunHook(ctx, HookSpec{Args: []string{"/no/such/hook"}, Workspace: ws, Timeout: await.Timeout(5 * time.Second)})
	assert.Equal(t, -1, res.ExitCode)
	assert.Error(t, res.Err)

	res = sb.RunHook(ctx, HookSpec{Args: []string{"true"}, Workspace: ws, Profile: "wide-open", Timeout: time.Second})
	assert.ErrorContains(t, res.Err, "unknown sandbox profile")
}

// TestRunHookThroughTheOneDoor: a hook starts as every process does
// (Sandbox.Command): it inherits the variables the user's commandEnv names
// and no others, gets the caches of its workspace's read commands, and where
// the sandbox cannot confine its profile (here switched off) it is refused,
// never run unconfined, unless its profile is full.
func TestRunHookThroughTheOneDoor(t *testing.T) {
	needSandbox(t)
	t.Setenv("AGENTD_TEST_ALLOWED", "yes")
	t.Setenv("AGENTD_TEST_PRIVATE", "hunter2")
	ws, cache := t.TempDir(), t.TempDir()
	ctx := context.Background()
	sh := func(line string) HookSpec {
		return HookSpec{Args: []string{"/bin/sh", "-c", line}, Workspace: ws, Timeout: await.Timeout(20 * time.Second)}
	}
	sb := NewSandbox(SandboxConfig{EnvAllow: []string{"AGENTD_TEST_ALLOWED"}, CacheDir: cache})
	res := sb.RunHook(ctx, sh(`echo "$AGENTD_TEST_ALLOWED|$AGENTD_TEST_PRIVATE|$GOCACHE"`))
	require.NoError(t, res.Err)
	assert.Equal(t, "yes||"+filepath.Join(sb.WorkspaceCacheDir(ws), "read", "go-build")+"\n", res.Stdout)

	off := NewSandbox(SandboxConfig{Off: true, CacheDir: cache})
	marker := filepath.Join(ws, "ran")
	res = off.RunHook(ctx, sh("touch "+marker))
	assert.ErrorIs(t, res.Err, ErrNotConfined)
	assert.ErrorContains(t, res.Err, `"sandbox": "full"`)
	assert.NoFileExists(t, marker, "a hook the sandbox cannot confine does not run")
	full := sh("touch " + marker)
	full.Profile = string(ProfileFull)
	res = off.RunHook(ctx, full)
	require.NoError(t, res.Err)
	assert.FileExists(t, marker, "a hook the user made full runs with the user's rights")
}

// BenchmarkRunHook is what a hook costs a run: a `true` hook with a small
// event on stdin, confined (read) and unconfined (full).
func BenchmarkRunHook(b *testing.B) {
	if runtime.GOOS != "linux" || !sandbox.Check().Supports(sandbox.Read) {
		b.Skip("no kernel sandbox here")
	}
	ws := b.TempDir()
	sb := NewSandbox(SandboxConfig{CacheDir: b.TempDir()})
	for _, profile := range []string{"read", "full"} {
		b.Run(profile, func(b *testing.B) {
			spec := HookSpec{Args: []string{"/bin/true"}, Workspace: ws, Profile: profile, Stdin: []byte(`{"event":"before_tool"}`), Timeout: time.Minute}
			sb.RunHook(context.Background(), spec) // an entry point warms up
			b.ResetTimer()
			for b.Loop() {
				if res := sb.RunHook(context.Background(), spec); res.ExitCode != 0 {
					b.Fatalf("%+v", res)
				}
			}
		})
	}
}
