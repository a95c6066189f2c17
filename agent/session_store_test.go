package agent

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/internal/await"
)

// states records the state each run reaches, for tests to wait on.
type states struct {
	nobody
	mu   sync.Mutex
	cond *sync.Cond
	seen map[string]State
}

func newStates() *states {
	s := &states{seen: map[string]State{}}
	s.cond = sync.NewCond(&s.mu)
	return s
}

func (s *states) RunState(st RunState) {
	s.mu.Lock()
	s.seen[st.RunID] = st.State
	s.mu.Unlock()
	s.cond.Broadcast()
}

// await waits until the run reaches state, failing after a deadline
// (scaled for the machine), or at once when the run ended in another state.
func (s *states) await(t *testing.T, runID string, state State) {
	t.Helper()
	dl := await.NewDeadline(10 * time.Second)
	wake := time.AfterFunc(dl.Left(), s.cond.Broadcast)
	defer wake.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.seen[runID] != state {
		switch last := s.seen[runID]; {
		case last.Finished():
			t.Fatalf("run %s ended %s: it can no longer reach %s", runID, last, state)
		case dl.Passed():
			t.Fatalf("run %s never reached %s within %s (last %q)", runID, state, dl, last)
		}
		wake.Reset(dl.Left())
		s.cond.Wait()
	}
}

// sessionWorld is a workspace, its state and a scripted model.
type sessionWorld struct {
	root, state, url string
}

func newSessionWorld(t *testing.T) sessionWorld {
	srv := modeltest.StartT(t, &modeltest.Script{Turns: []modeltest.Turn{
		{Match: modeltest.Match{LastUser: "ask me"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
			{ID: "call_q", Name: "ask_user", Arguments: modeltest.Args(map[string]string{"question": "Which port?"})}}}},
		{Match: modeltest.Match{AfterTool: "ask_user"}, Repeat: true, Reply: modeltest.Reply{Text: "Noted."}},
		{Repeat: true, Reply: modeltest.Reply{Text: "Done."}},
	}})
	return sessionWorld{root: t.TempDir(), state: t.TempDir(), url: srv.URL}
}

func (w sessionWorld) open(t *testing.T) (*Agent, *states) {
	t.Helper()
	l := newStates()
	a, err := New(Config{Root: w.root, StateDir: w.state, Listener: l, RetryBase: time.Millisecond,
		Model: ModelConfig{BaseURL: w.url, Name: "fake"}})
	require.NoError(t, err)
	t.Cleanup(a.Shutdown)
	return a, l
}

func (w sessionWorld) path(parts ...string) string {
	return filepath.Join(append([]string{w.state}, parts...)...)
}

// TestStateBeforeTheIndexes: a state directory written before the session
// index and the open-run markers existed is indexed on first use: the
// waiting run waits again, and the sessions are listed whole.
func TestStateBeforeTheIndexes(t *testing.T) {
	w := newSessionWorld(t)
	a, l := w.open(t)
	ctx := context.Background()
	done, err := a.Run(ctx, RunParams{Prompt: "first task"})
	require.NoError(t, err)
	l.await(t, done.RunID, StateCompleted)
	again, err := a.Run(ctx, RunParams{Prompt: "second task", SessionID: done.SessionID})
	require.NoError(t, err)
	l.await(t, again.RunID, StateCompleted)
	asking, err := a.Run(ctx, RunParams{Prompt: "ask me"})
	require.NoError(t, err)
	l.await(t, asking.RunID, StateRequiresAction)
	a.Shutdown()
	require.NoError(t, os.RemoveAll(w.path("runs", "open")))
	require.NoError(t, os.Remove(w.path("sessions", "index.jsonl")))

	b, l2 := w.open(t)
	pending := b.Pending("")
	require.Len(t, pending, 1, "the waiting run was found without its marker")
	markers, err := os.ReadDir(w.path("runs", "open"))
	require.NoError(t, err)
	assert.Len(t, markers, 1)

	list := b.Sessions()
	require.Len(t, list, 2)
	byID := map[string]SessionInfo{}
	for _, s := range list {
		byID[s.SessionID] = s
	}
	assert.Equal(t, 2, byID[done.SessionID].RunCount)
	assert.Equal(t, "first task", byID[done.SessionID].Title)
	assert.Equal(t, StateCompleted, byID[done.SessionID].State)
	assert.Equal(t, StateRequiresAction, byID[asking.SessionID].State)
	assert.FileExists(t, w.path("sessions", "index.jsonl"))

	require.NoError(t, b.Reply(ctx, ReplyParams{RequestID: pending[0].RequestID, Text: ptrTo("8080")}))
	l2.await(t, asking.RunID, StateCompleted)
	markers, _ = os.ReadDir(w.path("runs", "open"))
	assert.Empty(t, markers, "a finished run leaves no marker")
}

func ptrTo(s string) *string { return &s }

// TestIndexCatchesUpWithItsRecords: a crash between a session's record and
// its index line leaves the index behind; listing says the run's real
// state, and reading the session brings the index up to date.
func TestIndexCatchesUpWithItsRecords(t *testing.T) {
	w := newSessionWorld(t)
	a, l := w.open(t)
	run, err := a.Run(context.Background(), RunParams{Prompt: "a task"})
	require.NoError(t, err)
	l.await(t, run.RunID, StateCompleted)
	a.Shutdown()
	// Keep only the index line written when the run started.
	data, err := os.ReadFile(w.path("sessions", "index.jsonl"))
	require.NoError(t, err)
	lines := strings.SplitAfter(strings.TrimSpace(string(data)), "\n")
	require.GreaterOrEqual(t, len(lines), 2)
	require.NoError(t, os.WriteFile(w.path("sessions", "index.jsonl"), []byte(lines[0]+"\n"), 0o600))
	// And a marker whose run never got a record.
	require.NoError(t, os.WriteFile(w.path("runs", "open", "r_lost"), nil, 0o600))

	b, _ := w.open(t)
	assert.NoFileExists(t, w.path("runs", "open", "r_lost"))
	info, ok := b.SessionInfo(run.SessionID)
	require.True(t, ok)
	assert.Equal(t, StateCompleted, info.State, "the run's own record says it finished")
	_, err = b.History(context.Background(), HistoryParams{SessionID: run.SessionID})
	require.NoError(t, err)
	sum, _ := b.index.get(run.SessionID)
	assert.Equal(t, StateCompleted, sum.State, "reading the session fixed its index line")
}

// TestIndexCompacts: superseded lines are dropped when the index is next
// read.
func TestIndexCompacts(t *testing.T) {
	st, err := openStore(t.TempDir())
	require.NoError(t, err)
	x := newSessionIndex(st, slog.New(slog.DiscardHandler))
	for i := range 300 {
		x.put(sessionSummary{ID: "s_a", Title: "a", Runs: i})
	}
	x.put(sessionSummary{ID: "s_b", Title: "b"})
	x.close()

	y := newSessionIndex(st, slog.New(slog.DiscardHandler))
	got, ok := y.get("s_a")
	require.True(t, ok)
	assert.Equal(t, 299, got.Runs, "the last line wins")
	y.close()
	data, err := os.ReadFile(x.path)
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(data), "\n"), "one line per session")
}

func TestTitleOf(t *testing.T) {
	long := strings.Repeat("refactor the payment module ", 5)
	for prompt, want := range map[string]string{
		"Fix the bug":                       "Fix the bug",
		"\n\n  Fix   the\tbug  \nstack:\n…": "Fix the bug",
		long:                                "refactor the payment module refactor the payment module refactor the…",
		strings.Repeat("é", 100):            strings.Repeat("é", 72) + "…",
		"":                                  "",
	} {
		assert.Equal(t, want, titleOf(prompt), "%q", prompt)
	}
}

// TestHistoryPageHoldsWholePrompts: prompts that quote whole files end a
// page early rather than swell it; the next page starts where it ended.
func TestHistoryPageHoldsWholePrompts(t *testing.T) {
	w := newSessionWorld(t)
	a, l := w.open(t)
	ctx := context.Background()
	session := ""
	var ids []string
	for i := range 5 {
		prompt := fmt.Sprintf("review %d\n%s", i, strings.Repeat("x", 80<<10))
		run, err := a.Run(ctx, RunParams{Prompt: prompt, SessionID: session})
		require.NoError(t, err)
		l.await(t, run.RunID, StateCompleted)
		session, ids = run.SessionID, append(ids, run.RunID)
	}
	page, err := a.History(ctx, HistoryParams{SessionID: session})
	require.NoError(t, err)
	require.Len(t, page.Runs, 3, "three 80 KB prompts fit a page, four do not")
	assert.Equal(t, 2, page.EarlierRuns)
	for i, r := range page.Runs {
		assert.Equal(t, ids[2+i], r.RunID)
		assert.Len(t, r.Prompt, len(fmt.Sprintf("review %d\n", 2+i))+80<<10, "whole")
	}
	rest, err := a.History(ctx, HistoryParams{SessionID: session, BeforeRunID: page.Runs[0].RunID})
	require.NoError(t, err)
	assert.Len(t, rest.Runs, 2)
	assert.Equal(t, 0, rest.EarlierRuns)

	huge, err := a.Run(ctx, RunParams{Prompt: strings.Repeat("y", 300<<10), SessionID: session})
	require.NoError(t, err)
	l.await(t, huge.RunID, StateCompleted)
	page, err = a.History(ctx, HistoryParams{SessionID: session})
	require.NoError(t, err)
	require.Len(t, page.Runs, 1, "a page always holds one run")
	assert.True(t, page.Runs[0].MoreEvents)
}
