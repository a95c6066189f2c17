package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/await"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunCmdBasics(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env, "sub/x.txt", "x")
	var mu sync.Mutex
	var streamed strings.Builder
	env.Output = func(s string) { mu.Lock(); streamed.WriteString(s); mu.Unlock() }

	r := call(t, env, RunCmdToolName, RunCmdParams{Command: "ls; echo err >&2; exit 3", Cwd: "sub"})
	require.True(t, r.IsError)
	require.NotNil(t, r.ExitCode)
	assert.Equal(t, 3, *r.ExitCode)
	assert.Contains(t, r.Output, "x.txt\nerr\n[exit code 3, ")
	mu.Lock()
	assert.Contains(t, streamed.String(), "x.txt")
	mu.Unlock()

	r = mustOK(t, call(t, env, RunCmdToolName, RunCmdParams{Command: "read x; echo got=$x"}))
	assert.Contains(t, r.Output, "got=\n", "stdin is empty")
}

func TestRunCmdEnvIsClean(t *testing.T) {
	env := newEnv(t)
	t.Setenv("OPENAI_API_KEY", "sk-leak")
	t.Setenv("MY_SERVICE_TOKEN", "tok-leak")
	t.Setenv("AGENTD_TEST_PLAIN", "visible")
	env.Secrets = map[string]string{"DEPLOY_KEY": "given-d3ploy"}
	r := mustOK(t, call(t, env, RunCmdToolName, RunCmdParams{Command: "env"}))
	assert.NotContains(t, r.Output, "sk-leak")
	assert.NotContains(t, r.Output, "tok-leak")
	assert.NotContains(t, r.Output, "DEPLOY_KEY", "a secret reaches only a command that names it")
	for _, kv := range []string{"CI=1", "PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0", "GIT_EDITOR=true"} {
		assert.Contains(t, r.Output, kv+"\n")
	}
	c, res := prepare(t, env, RunCmdToolName, RunCmdParams{Command: "printenv DEPLOY_KEY | rev; env | grep -c DEPLOY_KEY"})
	require.Nil(t, res)
	assert.Equal(t, []string{"DEPLOY_KEY"}, c.Command.Secrets)
	r, err := c.Run(t.Context())
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(r.Output, "[secret $DEPLOY_KEY]\n1\n[exit code 0"),
		"the command got the value; the output hides it, reversed too: %q", r.Output)
}

func TestRunCmdCapsOutputKeepsFull(t *testing.T) {
	env := newEnv(t)
	r := mustOK(t, call(t, env, RunCmdToolName, RunCmdParams{Command: "seq 1 5000"}))
	assert.True(t, r.Truncated)
	assert.LessOrEqual(t, len(r.Output), 11<<10)
	assert.Contains(t, r.Output, "\n1\n2\n"[1:])
	assert.Contains(t, r.Output, "5000\n[exit code 0")
	assert.Regexp(t, `\n\[… lines 65-4872 of 5000 omitted \(22\.5 KB\); none of them looks like an error or a failure\. To see them, run the command again with 2>&1 \| sed -n '65,164p' appended`, r.Output)
	assert.Contains(t, r.Full, "\n2500\n")
	assert.NotContains(t, r.Output, "\n2500\n")
}

// startedPID waits for a command to write its background child's pid.
func startedPID(t *testing.T, path string) int {
	t.Helper()
	var pid int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	}, await.Timeout(5*time.Second), 20*time.Millisecond)
	return pid
}

// alive reports whether pid runs; a zombie waiting for a reaper that the
// container may not have counts as dead.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// runConfined prepares a command and runs it with confine, as the agent
// does once the policy or the user decided.
func runConfined(t *testing.T, ctx context.Context, env *Env, confine Confine, p RunCmdParams) Result {
	t.Helper()
	c, r := prepare(t, env, RunCmdToolName, p)
	require.Nil(t, r)
	c.Command.Confine = confine
	res, err := c.Run(ctx)
	require.NoError(t, err)
	return res
}

// stopsBeating waits until the file a background loop rewrites every 50ms
// stops changing: the loop is dead. In the sandbox the loop's pid is in the
// command's own PID namespace, so the file is what the test can see.
func stopsBeating(t *testing.T, path string) {
	t.Helper()
	read := func() string { b, _ := os.ReadFile(path); return string(b) }
	require.Eventually(t, func() bool { return read() != "" }, await.Timeout(5*time.Second), 20*time.Millisecond, "the loop never beat")
	last := read()
	assert.Eventually(t, func() bool {
		now := read()
		if now == last {
			time.Sleep(await.Timeout(300 * time.Millisecond)) // six beats: still the same means dead
			return read() == now
		}
		last = now
		return false
	}, await.Timeout(3*time.Second), 10*time.Millisecond, "background child survived")
}

const heartbeat = "(while :; do date +%s%N > .b; mv .b beat; sleep 0.05; done) & "

func TestRunCmdTimeoutKillsGroup(t *testing.T) {
	t.Run("sandboxed", func(t *testing.T) {
		env := newEnv(t)
		start := time.Now()
		r := runConfined(t, t.Context(), env, Confine{Profile: ProfileWorkspaceWrite},
			RunCmdParams{Command: heartbeat + "echo started; wait", Timeout: 1})
		assert.Less(t, time.Since(start), await.Timeout(5*time.Second))
		mustErr(t, r)
		assert.Contains(t, r.Output, "started")
		assert.Regexp(t, `\[timed out after 1s \(ran [\d.]+m?s\); the process group was killed\. For a longer run set timeout \(at most 600 seconds\), or run less at once\]`, r.Output)
		assert.Nil(t, r.ExitCode)
		stopsBeating(t, filepath.Join(env.Root, "beat"))
	})
	t.Run("full", func(t *testing.T) {
		env := newEnv(t)
		pidFile := filepath.Join(t.TempDir(), "pid")
		r := runConfined(t, t.Context(), env, Confine{Profile: ProfileFull},
			RunCmdParams{Command: "sleep 30 & echo $! > " + pidFile + "; echo started; wait", Timeout: 1})
		mustErr(t, r)
		assert.Contains(t, r.Output, "timed out after 1s")
		pid := startedPID(t, pidFile)
		assert.Eventually(t, func() bool { return !alive(pid) }, await.Timeout(2*time.Second), 20*time.Millisecond, "background child survived")
	})
}

func TestRunCmdCancelStopsWithinASecond(t *testing.T) {
	env := newEnv(t)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan Result, 1)
	go func() {
		done <- runConfined(t, ctx, env, Confine{Profile: ProfileWorkspaceWrite}, RunCmdParams{Command: heartbeat + "wait"})
	}()
	require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(env.Root, "beat")); return err == nil },
		await.Timeout(5*time.Second), 20*time.Millisecond)
	cancel()
	start := time.Now()
	res := await.Recv(t, "run_cmd to stop after cancel", 3*time.Second, done)
	assert.Less(t, time.Since(start), await.Timeout(time.Second))
	mustErr(t, res)
	assert.Contains(t, res.Output, "cancelled")
	stopsBeating(t, filepath.Join(env.Root, "beat"))
}

// A cancel that comes while the sandbox starts the command (here: before)
// reads as a cancel: the entry point may have run the command before its
// report was read, so "not run" could be false (on a loaded machine the
// beats of TestRunCmdCancelStopsWithinASecond came before the report).
func TestRunCmdCancelledAsItStarts(t *testing.T) {
	env := newEnv(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	res := runConfined(t, ctx, env, Confine{Profile: ProfileWorkspaceWrite}, RunCmdParams{Command: "echo hi > hi.txt"})
	mustErr(t, res)
	assert.Contains(t, res.Output, "[cancelled (ran ")
	assert.NotContains(t, res.Output, "not run")
}

func TestChildEnv(t *testing.T) {
	base := []string{"PATH=/bin", "HOME=/h", "OPENAI_API_KEY=a", "GITHUB_TOKEN=b", "DB_PASSWORD=c", "AWS_SECRET_ACCESS_KEY=d",
		"AWS_REGION=e", "GOOGLE_APPLICATION_CREDENTIALS=f", "AZURE_CLIENT_SECRET=g", "NPM_TOKEN=h", "MY_SECRET=i",
		"SIGNING_KEY=j", "PAGER=less", "KEEP_TOKEN=k"}
	got := ChildEnv(base, map[string]string{"USER_SECRET": "s"}, []string{"KEEP_*"})
	m := map[string]string{}
	for _, kv := range got {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	for _, k := range []string{"OPENAI_API_KEY", "GITHUB_TOKEN", "DB_PASSWORD", "AWS_SECRET_ACCESS_KEY", "AWS_REGION",
		"GOOGLE_APPLICATION_CREDENTIALS", "AZURE_CLIENT_SECRET", "NPM_TOKEN", "MY_SECRET", "SIGNING_KEY"} {
		assert.NotContains(t, m, k)
	}
	assert.Equal(t, "/bin", m["PATH"])
	assert.Equal(t, "k", m["KEEP_TOKEN"])
	assert.Equal(t, "s", m["USER_SECRET"])
	assert.Equal(t, "cat", m["PAGER"])
	for _, k := range []string{"CI", "GIT_PAGER", "GIT_TERMINAL_PROMPT", "GIT_EDITOR", "EDITOR", "DEBIAN_FRONTEND", "npm_config_yes"} {
		assert.Contains(t, m, k)
	}
	assert.Len(t, got, len(m), "no duplicates")
}

func TestCapOutput(t *testing.T) {
	s, cut := capOutput("short\n")
	assert.False(t, cut)
	assert.Equal(t, "short\n", s)
	long := strings.Repeat("x\n", 1000)
	s, cut = capOutput(long)
	assert.True(t, cut)
	assert.Equal(t, 256+1, strings.Count(s, "\n"))
	assert.Contains(t, s, "\n[… lines 86-829 of 1000 omitted (1.5 KB). Narrow the search to see them.]\n")
}

// TestRunCmdPipefail: a failing stage fails the pipeline, so
// `go test ./... 2>&1 | tail` reports the tests' failure.
func TestRunCmdPipefail(t *testing.T) {
	env := newEnv(t)
	r := mustErr(t, call(t, env, RunCmdToolName, RunCmdParams{Command: "echo out; exit 3 | tail -1"}))
	require.NotNil(t, r.ExitCode)
	assert.Equal(t, 3, *r.ExitCode)
	r = mustErr(t, call(t, env, RunCmdToolName, RunCmdParams{Command: "(echo FAIL; exit 1) 2>&1 | tail -80"}))
	assert.Contains(t, r.Output, "FAIL\n[exit code 1, ")
	assert.Equal(t, []string{"-o", "pipefail", "-c", "x"}, shellArgv("x")[1:], "every command is spawned from shellArgv")
}

// TestRunCmdKeepsFailuresFromTheMiddle: long test output with the
// failures in the middle keeps them, numbered, in the note.
func TestRunCmdKeepsFailuresFromTheMiddle(t *testing.T) {
	env := newEnv(t)
	script := `for i in $(seq 1 2000); do echo "=== RUN   TestCase$i"; echo "--- PASS: TestCase$i (0.00s)";` +
		` if [ $i = 1000 ]; then echo "--- FAIL: TestBroken (0.00s)"; echo "    broken_test.go:12: got 1, want 2"; fi; done; echo FAIL; exit 1`
	r := mustErr(t, call(t, env, RunCmdToolName, RunCmdParams{Command: script}))
	assert.True(t, r.Truncated)
	assert.LessOrEqual(t, len(r.Output), 11<<10)
	assert.Regexp(t, `\n\[… lines \d+-\d+ of 4003 omitted \(\d+\.\d KB\)\. 2 lines in them look like errors or failures; here they are, numbered by output line:\]\n`+
		`  2001\t--- FAIL: TestBroken \(0\.00s\)\n  2002\t    broken_test\.go:12: got 1, want 2\n\[… end of the omitted lines\. To see the lines around the first, run the command again with 2>&1 \| sed -n '1981,2020p' appended`, r.Output)
	assert.True(t, strings.HasSuffix(r.Output[:strings.LastIndex(r.Output, "[exit")], "FAIL\n"), "the end is kept")
}

// TestFailureLinesNotLogs: a test's log lines (file:line: …) count as
// failures only near a failure line, or when there is none (compiler
// errors).
func TestFailureLinesNotLogs(t *testing.T) {
	var lines []string
	for i := 0; i < 300; i++ {
		lines = append(lines, fmt.Sprintf("=== RUN   TestCase%d", i), fmt.Sprintf("    case_test.go:%d: called: child", i+10), fmt.Sprintf("--- PASS: TestCase%d (0.00s)", i))
		if i == 150 {
			lines = append(lines, "=== RUN   TestTotal", "    cart_test.go:42: Total() = 9, want 10", "--- FAIL: TestTotal (0.00s)")
		}
	}
	var got []string
	for _, i := range failureLines(lines) {
		got = append(got, lines[i])
	}
	// The failure and its message, and at most the log line of the test
	// after it (within nearFailure lines): not the 300 other log lines.
	assert.LessOrEqual(t, len(got), 3, got)
	assert.Contains(t, got, "    cart_test.go:42: Total() = 9, want 10")
	assert.Contains(t, got, "--- FAIL: TestTotal (0.00s)")

	compiler := []string{"# shop/cart", "./cart.go:12:5: undefined: totl", "./cart.go:20:2: missing return"}
	assert.Equal(t, []int{1, 2}, failureLines(compiler))
}

// TestCutNoteWording: one failure line is spoken of in the singular, and
// when more failure lines are omitted than the note shows, it says how to
// list them all, stdout and stderr together as the line numbers count them.
func TestCutNoteWording(t *testing.T) {
	env := newEnv(t)
	var one strings.Builder
	for i := range 800 {
		fmt.Fprintf(&one, "line %d\n", i)
		if i == 400 {
			one.WriteString("main.go:12: undefined: foo\n")
		}
	}
	got, cut := capCommand(env, one.String())
	require.True(t, cut)
	assert.Contains(t, got, "1 line in them looks like an error or a failure; here it is, numbered by output line:]\n   402\tmain.go:12: undefined: foo\n")

	var many strings.Builder
	for i := range 900 {
		fmt.Fprintf(&many, "=== RUN   TestCase%d\n", i)
		if i%3 == 0 {
			fmt.Fprintf(&many, "    case_test.go:%d: got 0, want 1\n--- FAIL: TestCase%d (0.00s)\n", i+10, i)
		}
	}
	got, cut = capCommand(env, many.String())
	require.True(t, cut)
	assert.Regexp(t, `lines in them look like errors or failures; the first \d+, numbered by output line \(to list them all, run the command again with 2>&1 \| grep -nE 'FAIL\|panic\|\[Ee\]rror' appended\):\]\n`, got)
}

// TestRunCmdBinaryOutput: bytes that are not text are not shown to the
// model, which would read them as replacement characters; text in any
// script is.
func TestRunCmdBinaryOutput(t *testing.T) {
	env := newEnv(t)
	for _, cmd := range []string{`printf 'ELF\000\001\002 rest'`, `head -c 3000 /dev/zero | tr '\000' '\377'`} {
		r := mustOK(t, call(t, env, RunCmdToolName, RunCmdParams{Command: cmd}))
		assert.Regexp(t, `^\[binary output \([\d.]+ (bytes|KB)\) not shown: send it to a file, or look at it with file, xxd \| head or a tool that reads the format\]\n\[exit code 0, `, r.Output, cmd)
		assert.True(t, r.Truncated)
	}
	r := mustOK(t, call(t, env, RunCmdToolName, RunCmdParams{Command: `printf 'héllo wörld ✓ 日本語\n'`}))
	assert.Equal(t, "héllo wörld ✓ 日本語\n", r.Output[:strings.Index(r.Output, "[exit")])
}
