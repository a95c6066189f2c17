package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/internal/await"
	"github.com/agentd/agentd/tools"
)

// askAndStop starts a run that asks a question, waits for it to ask, and
// stops the daemon: it returns the run and the requests as they were sent.
func askAndStop(t *testing.T, w sessionWorld) (RunResult, []InputRequest) {
	t.Helper()
	a, l := w.open(t)
	run, err := a.Run(context.Background(), RunParams{Prompt: "ask me"})
	require.NoError(t, err)
	l.await(t, run.RunID, StateRequiresAction)
	sent := a.Pending("")
	require.Len(t, sent, 1)
	require.NotZero(t, sent[0].Seq)
	a.Shutdown()
	return run, sent
}

// TestPendingAfterRestartIsAsSent: after a restart, agent/pending returns
// an open request exactly as it was sent, its seq included (the run's
// journal was last written before the request was sent; the event log has
// the seq).
func TestPendingAfterRestartIsAsSent(t *testing.T) {
	w := newSessionWorld(t)
	run, sent := askAndStop(t, w)

	b, l := w.open(t)
	assert.Equal(t, sent, b.Pending(""))
	assert.Equal(t, sent, b.Pending(run.RunID))
	assert.Empty(t, b.Pending("r_other"))
	require.NoError(t, b.Reply(context.Background(), ReplyParams{RequestID: sent[0].RequestID, Text: ptrTo("8080")}))
	l.await(t, run.RunID, StateCompleted)
	err := b.Reply(context.Background(), ReplyParams{RequestID: sent[0].RequestID, Text: ptrTo("9090")})
	assert.ErrorIs(t, err, ErrAlreadyResolved, "an answer is applied once")
}

// TestRequestSavedButNeverSent: the daemon died after a request was saved
// and before it was sent. The restart sends it to the event log with the
// run's next seq, so the run's history shows it, and agent/pending lists
// it as logged.
func TestRequestSavedButNeverSent(t *testing.T) {
	w := newSessionWorld(t)
	run, sent := askAndStop(t, w)
	// What a kill -9 at that moment leaves: the journal up to the line that
	// saved the question (the shutdown's checkpoint is later), the event
	// log up to the question.
	cutAfter(t, w.path("runs", run.RunID+".journal.jsonl"), `"state":"requires_action"`, true)
	cutAfter(t, w.path("runs", run.RunID+".events.jsonl"), `"kind":"inputRequest"`, false)

	b, _ := w.open(t)
	got := b.Pending("")
	require.Len(t, got, 1)
	assert.Equal(t, sent[0].RequestID, got[0].RequestID)
	evs, _, _, err := b.Events(run.RunID, 0, 0)
	require.NoError(t, err)
	last := evs[len(evs)-1]
	assert.Equal(t, EventInputRequest, last.Kind)
	assert.Equal(t, got[0].Seq, last.Seq, "pending gives the seq the log has")
	for i, ev := range evs {
		assert.Equal(t, int64(i+1), ev.Seq, "no gap in the log")
	}
}

// cutAfter cuts a file of lines at the first line holding mark: after it
// (with), or before it.
func cutAfter(t *testing.T, path, mark string, with bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var kept []byte
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		found := bytes.Contains(line, []byte(mark))
		if found && with {
			kept = append(kept, line...)
		}
		if found {
			break
		}
		kept = append(kept, line...)
	}
	require.Less(t, len(kept), len(data), "%s holds %s, and more after it", path, mark)
	require.NoError(t, os.WriteFile(path, kept, 0o600))
}

// TestRequestsSavedBeforeTheInbox: a run saved while requests were kept on
// their calls and in a held list (before runRecord.Requests) is restored
// with them: pending lists the question as sent, and its answer ends the
// run.
func TestRequestsSavedBeforeTheInbox(t *testing.T) {
	w := newSessionWorld(t)
	run, sent := askAndStop(t, w)
	path := w.path("runs", run.RunID+".journal.jsonl")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		out = append(out, oldJournalLine(t, line))
	}
	require.Contains(t, out[len(out)-1], `"request":{`, "the last line holds the question the old way")
	require.NotContains(t, out[len(out)-1], `"requests"`)
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(out, "\n")+"\n"), 0o600))

	b, l := w.open(t)
	assert.Equal(t, sent, b.Pending(""))
	require.NoError(t, b.Reply(context.Background(), ReplyParams{RequestID: sent[0].RequestID, Text: ptrTo("8080")}))
	l.await(t, run.RunID, StateCompleted)
}

// oldJournalLine rewrites a journal line as runs were saved before the
// inbox: each call's request and resolution on the call, the held ones in
// "held".
func oldJournalLine(t *testing.T, line string) string {
	t.Helper()
	var e map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(line), &e))
	var rec map[string]any
	require.NoError(t, json.Unmarshal(e["run"], &rec))
	reqs, _ := rec["requests"].([]any)
	delete(rec, "requests")
	var held []any
	for _, x := range reqs {
		q := x.(map[string]any)
		switch q["origin"] {
		case string(originCall):
			for _, p := range rec["pending"].([]any) {
				pc := p.(map[string]any)
				if pc["requestId"] == q["request"].(map[string]any)["requestId"] {
					pc["request"], pc["resolved"] = q["request"], q["resolved"]
					delete(pc, "requestId")
				}
			}
		case string(originHeld):
			held = append(held, map[string]any{"key": q["key"], "callId": q["callId"], "request": q["request"], "resolved": q["resolved"]})
		}
	}
	if held != nil {
		rec["held"] = held
	}
	run, err := json.Marshal(rec)
	require.NoError(t, err)
	e["run"] = run
	b, err := json.Marshal(e)
	require.NoError(t, err)
	return string(b)
}

// TestANewKindIsARuleAway: a kind of request the agent has never had needs
// its constant, its rule and the code that opens it, nothing else: the
// inbox opens, lists and closes it like any other, it carries the generic
// form every front end shows, and replyForm checks its answers.
func TestANewKindIsARuleAway(t *testing.T) {
	const kind RequestKind = "test_vote"
	requestRules[kind] = kindRule{reply: replyForm,
		input: func(*InputRequest) *TextInput {
			return &TextInput{Label: "Why", Required: true, With: []string{"against"}}
		}}
	t.Cleanup(func() { delete(requestRules, kind) })

	w := newSessionWorld(t)
	a, l := w.open(t)
	run, err := a.Run(context.Background(), RunParams{Prompt: "ask me"})
	require.NoError(t, err)
	l.await(t, run.RunID, StateRequiresAction)
	a.mu.Lock()
	r := a.runs[run.RunID]
	a.mu.Unlock()

	type held struct {
		res *resolution
		err error
	}
	got := make(chan held, 1)
	go func() {
		_, res, err := r.hold(context.Background(), "vote", "", func() *InputRequest {
			req := r.newRequest("")
			req.Kind, req.Title, req.Message = kind, "Vote", "Ship it?"
			req.Options = []tools.Option{{OptionID: "for", Label: "For"}, {OptionID: "against", Label: "Against"}}
			return req
		})
		got <- held{res, err}
	}()
	var vote InputRequest
	await.Until(t, "the vote in pending", 10*time.Second, func() bool {
		for _, p := range a.Pending(run.RunID) {
			if p.Kind == kind {
				vote = p
				return true
			}
		}
		return false
	})
	assert.Equal(t, AnswerReply, vote.AnswerWith)
	assert.Equal(t, &TextInput{Label: "Why", Required: true, With: []string{"against"}}, vote.Input)
	assert.NotZero(t, vote.Seq)

	ctx := context.Background()
	assert.ErrorIs(t, a.Reply(ctx, ReplyParams{RequestID: vote.RequestID, OptionID: "maybe"}), ErrWrongKind)
	assert.ErrorIs(t, a.Reply(ctx, ReplyParams{RequestID: vote.RequestID, OptionID: "against"}), ErrInvalid, "why is required with against")
	assert.ErrorIs(t, a.Reply(ctx, ReplyParams{RequestID: vote.RequestID, OptionID: "for", Text: ptrTo("sure")}), ErrWrongKind, "no words go with for")
	assert.ErrorIs(t, a.Confirm(ctx, ConfirmParams{RequestID: vote.RequestID, Decision: tools.AllowOnce}), ErrWrongKind)
	require.NoError(t, a.Reply(ctx, ReplyParams{RequestID: vote.RequestID, OptionID: "against", Text: ptrTo("not tested")}))
	h := <-got
	require.NoError(t, h.err)
	assert.Equal(t, "against", h.res.Option)
	assert.Equal(t, []string{"Against"}, h.res.Options)
	assert.Equal(t, "not tested", h.res.Text)
	assert.ErrorIs(t, a.Reply(ctx, ReplyParams{RequestID: vote.RequestID, OptionID: "for"}), ErrAlreadyResolved)
}
