package agent

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/internal/await"
	"github.com/agentd/agentd/tools"
)

var soakLong = flag.Bool("soak", false, "run TestModelSoak long: 20 runs × 200 steps (default 20 × 12)")

// TestModelSoak runs 20 runs at once against a model that fails at random
// (500, 429 with Retry-After, cut streams, stalls) with short timeouts.
// Every run ends completed, or failed with a reason; each run's seq has no
// gap; and once the agent is shut down, the goroutines and file descriptors
// are back to where they were. It runs in process, where both can be
// counted honestly; -soak makes it long.
func TestModelSoak(t *testing.T) {
	const runs = 20
	steps := 12
	if *soakLong {
		steps = 200
	}
	baseGoroutines, baseFDs := runtime.NumGoroutine(), openFDs(t)

	srv := modeltest.Start(soakScript(runs, steps))
	serverGoroutines, serverFDs := runtime.NumGoroutine(), openFDs(t)
	srv.SetChaos(modeltest.Chaos{Status500: 0.05, Status429: 0.05, RetryAfter: "1", Cut: 0.05, Stall: 0.03})
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte(strings.Repeat("a line\n", 20)), 0o644))

	var (
		mu     sync.Mutex
		models []*openaiModel
		seqs   = map[string][]int64{}
		ends   = map[string]RunState{}
		done   = make(chan struct{}, runs)
	)
	a, err := New(Config{Root: root, StateDir: t.TempDir(), Policy: tools.ModeFullAuto, MaxSteps: steps + 10,
		ModelAttempts: 4, RetryBase: 5 * time.Millisecond,
		// The short timeouts scale with the machine's load: 150 ms unscaled
		// failed every run under -race at load 250, before the model's
		// server could answer at all.
		Model: ModelConfig{BaseURL: srv.URL, Name: "soak", StreamIdleTimeout: await.Timeout(150 * time.Millisecond), CallTimeout: await.Timeout(5 * time.Second),
			MaxRetryWait: 20 * time.Millisecond},
		NewModel: func(c ModelConfig) Model {
			m := newOpenAIModel(c)
			mu.Lock()
			models = append(models, m)
			mu.Unlock()
			return m
		},
		Listener: seqListener{onSeq: func(runID string, seq int64) {
			mu.Lock()
			defer mu.Unlock()
			seqs[runID] = append(seqs[runID], seq)
		}, onEnd: func(st RunState) {
			mu.Lock()
			ends[st.RunID] = st
			mu.Unlock()
			done <- struct{}{}
		}}})
	require.NoError(t, err)

	start := time.Now()
	var ids []string
	for i := range runs {
		res, err := a.Run(context.Background(), RunParams{Prompt: fmt.Sprintf("soak %d", i)})
		require.NoError(t, err)
		ids = append(ids, res.RunID)
	}
	deadline := time.After(await.Timeout(time.Duration(steps) * 2 * time.Second))
	for range runs {
		select {
		case <-done:
		case <-deadline:
			mu.Lock()
			t.Fatalf("only %d of %d runs ended", len(ends), runs)
		}
	}
	elapsed := time.Since(start)

	completed, failed := 0, 0
	mu.Lock()
	for _, id := range ids {
		st := ends[id]
		switch st.State {
		case StateCompleted:
			completed++
			assert.Equal(t, StopEndTurn, st.StopReason, id)
		case StateFailed:
			failed++
			assert.Regexp(t, `^model: (\d attempts failed: )?\S`, st.Error, "%s fails with a reason", id)
		default:
			t.Errorf("%s ended %s", id, st.State)
		}
		for i, s := range seqs[id] {
			if s != int64(i+1) {
				t.Errorf("%s: seq %d at position %d: a gap or a reorder", id, s, i+1)
				break
			}
		}
	}
	mu.Unlock()
	faults := map[string]int{}
	for _, r := range srv.Requests() {
		if strings.HasPrefix(r.Turn, "chaos:") {
			faults[r.Turn]++
		}
	}
	t.Logf("%d runs × %d steps in %s: %d completed, %d failed; %d requests, faults %v",
		runs, steps, elapsed.Round(time.Millisecond), completed, failed, len(srv.Requests()), faults)
	assert.Positive(t, completed, "some runs get through")
	assert.Positive(t, len(faults), "the model did fail")

	// The agent and its client first, with the server still up: a response
	// left open would hold its connection, which no server close hides.
	a.Shutdown()
	mu.Lock()
	for _, m := range models {
		m.CloseIdleConnections()
	}
	mu.Unlock()
	awaitBaseline(t, "with the server up", serverGoroutines, serverFDs)
	srv.Close()
	awaitBaseline(t, "after the server", baseGoroutines, baseFDs)
}

// soakScript: every run calls a tool steps times (the plan with a new step,
// or a read of a few lines, so no call repeats), then answers.
func soakScript(runs, steps int) *modeltest.Script {
	s := &modeltest.Script{Turns: []modeltest.Turn{
		{Name: "done", Repeat: true, Match: modeltest.Match{MinToolResults: steps}, Reply: modeltest.Reply{Text: "Soaked."}},
	}}
	for i := range runs * steps {
		call := modeltest.ToolCall{Name: planToolName, Arguments: modeltest.Args(map[string]any{
			"plan": []map[string]string{{"step": fmt.Sprintf("step %d", i), "status": "in_progress"}}})}
		if i%2 == 1 {
			call = modeltest.ToolCall{Name: "read_file", Arguments: modeltest.Args(map[string]any{"path": "a.txt", "limit": 1 + i%7})}
		}
		s.Turns = append(s.Turns, modeltest.Turn{Name: fmt.Sprint("step", i), Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{call}}})
	}
	return s
}

func openFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot count file descriptors: %v", err)
	}
	return len(entries)
}

// awaitBaseline waits, with a deadline, for the goroutines and file
// descriptors to come back down: closed connections take a moment to wind
// down their goroutines.
func awaitBaseline(t *testing.T, when string, goroutines, fds int) {
	t.Helper()
	dl := await.NewDeadline(10 * time.Second)
	for {
		g, f := runtime.NumGoroutine(), openFDs(t)
		if g <= goroutines && f <= fds {
			return
		}
		if dl.Passed() {
			buf := make([]byte, 1<<20)
			t.Fatalf("%s: goroutines %d (baseline %d), file descriptors %d (baseline %d)\n%s", when, g, goroutines, f, fds, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}
