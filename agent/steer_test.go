package agent

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent/modeltest"
)

// TestSteerSurvivesARestart: a steer is saved before it is acknowledged.
// Given to a run waiting on the user, it survives a restart, and reaches
// the model once, with the answer; a torn last line of the steers file (a
// crash in the middle of a write) loses nothing before it.
func TestSteerSurvivesARestart(t *testing.T) {
	srv := modeltest.StartT(t, &modeltest.Script{Turns: []modeltest.Turn{
		{Match: modeltest.Match{LastUser: "ask me"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
			{ID: "call_q", Name: "ask_user", Arguments: modeltest.Args(map[string]string{"question": "Which port?"})}}}},
		{Match: modeltest.Match{LastUser: "bind to localhost"}, Reply: modeltest.Reply{Text: "Noted, localhost."}},
	}})
	w := sessionWorld{root: t.TempDir(), state: t.TempDir(), url: srv.URL}
	a, l := w.open(t)
	ctx := context.Background()
	run, err := a.Run(ctx, RunParams{Prompt: "ask me"})
	require.NoError(t, err)
	l.await(t, run.RunID, StateRequiresAction)
	require.NoError(t, a.Steer(ctx, SteerParams{RunID: run.RunID, Text: "bind to localhost"}))
	q := a.Pending(run.RunID)[0]
	a.Shutdown()
	f, err := os.OpenFile(w.path("runs", run.RunID+".steers.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"text":"torn`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	b, l2 := w.open(t)
	require.NoError(t, b.Reply(ctx, ReplyParams{RequestID: q.RequestID, Text: ptrTo("8080")}))
	l2.await(t, run.RunID, StateCompleted)
	reqs := srv.Requests()
	last := reqs[len(reqs)-1].Messages
	var users []string
	for _, m := range last {
		if m.Role == RoleUser {
			users = append(users, strings.SplitN(m.Content, "\n", 2)[0])
		}
	}
	assert.Equal(t, []string{"ask me", "bind to localhost"}, users, "the steer reached the model once, after the answer")
	assert.Equal(t, RoleTool, last[len(last)-2].Role)
	assert.ErrorIs(t, b.Steer(ctx, SteerParams{RunID: run.RunID, Text: "more"}), ErrRunFinished)

	// A steer after the torn line goes on a line of its own.
	require.NoError(t, b.store.appendSteer(run.RunID, steer{Text: "one"}))
	assert.Equal(t, []string{"bind to localhost", "one"}, steerTexts(b.store.loadSteers(run.RunID)))
}

func steerTexts(ss []steer) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Text)
	}
	return out
}

// TestQueuedRunStartsAtStartUp: the daemon stopped after the run before a
// queued one ended and before the queued one started: the next start
// starts it.
func TestQueuedRunStartsAtStartUp(t *testing.T) {
	srv := modeltest.StartT(t, &modeltest.Script{Turns: []modeltest.Turn{
		{Match: modeltest.Match{LastUser: "ask me"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
			{ID: "call_q", Name: "ask_user", Arguments: modeltest.Args(map[string]string{"question": "Which port?"})}}}},
		{Match: modeltest.Match{LastUser: "second"}, Reply: modeltest.Reply{Text: "Second done."}},
	}})
	w := sessionWorld{root: t.TempDir(), state: t.TempDir(), url: srv.URL}
	a, l := w.open(t)
	ctx := context.Background()
	first, err := a.Run(ctx, RunParams{Prompt: "ask me"})
	require.NoError(t, err)
	l.await(t, first.RunID, StateRequiresAction)
	second, err := a.Run(ctx, RunParams{Prompt: "second", SessionID: first.SessionID})
	require.NoError(t, err)
	require.True(t, second.Queued)
	l.await(t, second.RunID, StateQueued)
	a.Shutdown()
	// What a crash right after the first run's end leaves: no open marker.
	require.NoError(t, os.Remove(w.path("runs", "open", first.RunID)))

	_, l2 := w.open(t)
	l2.await(t, second.RunID, StateCompleted)
}
