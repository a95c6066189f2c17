package tools

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bgEnv returns an Env with background processes and how many changes
// the editor was told of so far.
func bgEnv(t *testing.T) (*Env, func() int) {
	t.Helper()
	env := newEnv(t)
	var mu sync.Mutex
	var seen []ProcessInfo
	env.Background = NewBackground(func(in ProcessInfo) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, in)
	})
	t.Cleanup(env.Background.Close)
	return env, func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(seen)
	}
}

func startBg(t *testing.T, env *Env, line string) Result {
	t.Helper()
	c, refusal := Prepare(context.Background(), runCmdTool{}, env, json.RawMessage(`{"command": `+quoteJSON(line)+`, "background": true}`))
	require.Nil(t, refusal)
	c.Command.Confine = Confine{Profile: ProfileWorkspaceWrite}
	res, err := c.Run(context.Background())
	require.NoError(t, err)
	return res
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func process(t *testing.T, env *Env, args string) Result {
	t.Helper()
	c, refusal := Prepare(context.Background(), processTool{}, env, json.RawMessage(args))
	require.Nil(t, refusal, "%v", refusal)
	res, err := c.Run(context.Background())
	require.NoError(t, err)
	return res
}

func TestBackgroundProcess(t *testing.T) {
	env, told := bgEnv(t)
	res := startBg(t, env, "echo starting; sleep 2; echo ready now; sleep 300")
	assert.Contains(t, res.Output, "[p1: running for")
	assert.NotContains(t, res.Full, "[p1:", "the editor is shown what it printed, not the line for the model")
	assert.True(t, strings.HasSuffix(res.Output, res.Full) || res.Full == "(no output yet)", "%q", res.Full)
	assert.False(t, res.IsError)
	first := res.Output

	// "starting" came within run_cmd's first second or, on a loaded
	// machine, after it: either way the model reads it once.
	awaitStarting := process(t, env, `{"action": "wait", "id": "p1", "pattern": "starting", "timeout": 60}`)
	res = process(t, env, `{"action": "read", "id": "p1"}`)
	assert.Contains(t, res.Output, "(no new output)", "what was shown is not shown again")
	shown := 0
	for _, line := range strings.Split(first+"\n"+awaitStarting.Output, "\n") {
		if line == "starting" {
			shown++
		}
	}
	assert.Equal(t, 1, shown, "%s\n%s", first, awaitStarting.Output)

	res = process(t, env, `{"action": "wait", "id": "p1", "pattern": "ready", "timeout": 60}`)
	assert.Contains(t, res.Output, `a line matched "ready"`)
	assert.Contains(t, res.Output, "ready now")

	res = process(t, env, `{"action": "wait", "id": "p1", "pattern": "never", "timeout": 1}`)
	assert.Contains(t, res.Output, `no line matched "never" within 1s`)

	res = process(t, env, `{"action": "list"}`)
	assert.Regexp(t, "^p1: `echo starting; sleep 2; echo ready now; sleep 300` \\(in \\.\\) running for", res.Output)

	res = process(t, env, `{"action": "stop", "id": "p1"}`)
	assert.Contains(t, res.Output, "p1: stopped,")
	info := env.Background.List("s1")[0]
	assert.Equal(t, ProcStopped, info.State)
	assert.Equal(t, ByModel, info.StoppedBy)
	assert.GreaterOrEqual(t, told(), 2, "the editor heard of the start and the stop")

	// A command that fails at once says so in run_cmd's own result.
	res = startBg(t, env, "echo no such thing >&2; exit 3")
	assert.True(t, res.IsError)
	assert.Contains(t, res.Output, "exited with code 3")
	assert.Contains(t, res.Output, "no such thing")

	// A wait without a pattern waits for the end.
	startBg(t, env, "sleep 1; echo bye")
	res = process(t, env, `{"action": "wait", "id": "p3", "timeout": 60}`)
	assert.Contains(t, res.Output, "exited with code 0")
	assert.Contains(t, res.Output, "it ended")

	_, refusal := Prepare(context.Background(), processTool{}, env, json.RawMessage(`{"action": "read"}`))
	require.NotNil(t, refusal)
	assert.Contains(t, refusal.Output, "read needs the id")
	res = process(t, env, `{"action": "read", "id": "p42"}`)
	assert.True(t, res.IsError)
	_, refusal = Prepare(context.Background(), processTool{}, env, json.RawMessage(`{"action": "wait", "id": "p1", "pattern": "("}`))
	require.NotNil(t, refusal)
	_, refusal = Prepare(context.Background(), runCmdTool{}, env, json.RawMessage(`{"command": "vim", "background": true, "interactive": true}`))
	require.NotNil(t, refusal)
}

// A chatty process keeps its latest output; a read shows the newest part
// that fits and says how much was left out.
func TestBackgroundOutputBounded(t *testing.T) {
	env, _ := bgEnv(t)
	// It prints only after run_cmd's first second, which would show what
	// came then (a fast machine prints it all within that second).
	startBg(t, env, "sleep 2; for i in $(seq 1 200000); do echo line $i; done; sleep 300")
	res := process(t, env, `{"action": "wait", "id": "p1", "pattern": "line 200000$", "timeout": 120}`)
	assert.Contains(t, res.Output, "line 200000")
	assert.Regexp(t, regexp.MustCompile(`\[\d+ earlier bytes of new output not shown`), res.Output)
	assert.Less(t, len(res.Output), 20_000)
	lines := strings.Split(res.Output, "\n")
	require.Greater(t, len(lines), 2, res.Output)
	assert.True(t, strings.HasPrefix(lines[2], "line "), "the shown part starts at a line: %q", lines[2])
	assert.Less(t, len(env.Background.procs["s1/p1"].out.buf), 2*backgroundKeep+1)
}

func TestBackgroundRestoredAsLost(t *testing.T) {
	b := NewBackground(nil)
	defer b.Close()
	start := time.Now().Add(-time.Minute)
	lost := b.Restore([]ProcessInfo{{ID: "p2", SessionID: "s1", Command: "npm run dev", Cwd: "web", State: ProcRunning, StartedAt: start},
		{ID: "p1", SessionID: "s1", Command: "make", Cwd: ".", State: ProcExited, ExitCode: new(int), StartedAt: start.Add(-time.Second)}})
	require.Len(t, lost, 1)
	assert.Equal(t, ProcLost, b.List("s1")[1].State)
	env := &Env{SessionID: "s1", Background: b}
	assert.Contains(t, runProcessAction(context.Background(), env, ProcessParams{Action: "list"}, nil).Output, "p2: `npm run dev` (in web) ended when agentd restarted")
	// Numbering goes on after the restored ones.
	b.mu.Lock()
	assert.Equal(t, 2, b.next["s1"])
	b.mu.Unlock()
}
