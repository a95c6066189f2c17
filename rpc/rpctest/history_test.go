package rpctest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/rpc"
	"github.com/agentd/agentd/rpc/wire"
	"github.com/agentd/agentd/tools"
)

// Conversations that come back whole, with the model and mode chosen per
// session (issue 16).

// History is the session's page of runs, as an editor restoring it reads it.
func (e *Editor) History(p agent.HistoryParams) rpc.HistoryResult {
	e.t.Helper()
	var h rpc.HistoryResult
	e.MustCall(wire.MethodHistory, p, &h)
	return h
}

// historyText joins a run's streamed answer from its events.
func historyText(t *testing.T, evs []rpc.Event) string {
	t.Helper()
	var b strings.Builder
	for _, u := range historyUpdates(t, evs) {
		if u.Kind == agent.UpdateMessageChunk {
			b.WriteString(u.Text)
		}
	}
	return b.String()
}

func historyUpdates(t *testing.T, evs []rpc.Event) []agent.Update {
	t.Helper()
	var out []agent.Update
	for _, ev := range evs {
		if ev.Method != wire.MethodUpdate {
			continue
		}
		var p agent.UpdateParams
		require.NoError(t, json.Unmarshal(ev.Params, &p))
		out = append(out, p.Update)
	}
	return out
}

func configure(model, effort *string, mode *tools.Mode) func(sessionID string) agent.ConfigureParams {
	return func(id string) agent.ConfigureParams {
		return agent.ConfigureParams{SessionID: id, Model: model, ReasoningEffort: effort, ApprovalPolicy: mode}
	}
}

// TestHistoryAfterRestart: two runs of a session, the daemon killed, and a
// new daemon gives back both in order, each with its prompt, context,
// answer, settings and every update, one of them the model's thinking.
func TestHistoryAfterRestart(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{Script: &modeltest.Script{Turns: []modeltest.Turn{
			on("first question", modeltest.Reply{Reasoning: "Think of a greeting.", Text: "Hello there.", Chunks: 3}),
			on("second question", modeltest.Reply{Text: "Goodbye now.", Chunks: 2}),
		}}, Files: map[string]string{"cart.go": "package cart\n"}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		first := e.Run(agent.RunParams{Prompt: "first question\nwith a second line", Context: &agent.RunContext{Files: []string{"cart.go"}}})
		e.RunState(first.RunID, agent.StateCompleted)
		second := e.Run(agent.RunParams{Prompt: "second question", SessionID: first.SessionID})
		e.RunState(second.RunID, agent.StateCompleted)
		e.Close(true)

		e2 := env.StartInitialized()
		h := e2.History(agent.HistoryParams{SessionID: first.SessionID})
		require.Len(t, h.Runs, 2)
		assert.Equal(t, 0, h.EarlierRuns)
		assert.Empty(t, h.Pending)
		assert.Equal(t, first.SessionID, h.Session.SessionID)
		assert.Equal(t, "first question", h.Session.Title, "the title is the prompt's first line")
		assert.Equal(t, 2, h.Session.RunCount)
		assert.Equal(t, agent.StateCompleted, h.Session.State)

		one, two := h.Runs[0], h.Runs[1]
		assert.Equal(t, []string{first.RunID, second.RunID}, []string{one.RunID, two.RunID})
		assert.Equal(t, "first question\nwith a second line", one.Prompt)
		assert.Equal(t, &agent.RunContext{Files: []string{"cart.go"}}, one.Context)
		assert.Equal(t, "second question", two.Prompt)
		for i, run := range h.Runs {
			assert.Equal(t, agent.StateCompleted, run.State)
			assert.Equal(t, agent.StopEndTurn, run.StopReason)
			assert.Equal(t, agent.SessionSettings{Model: "fake", ApprovalPolicy: tools.ModeAsk}, run.Settings)
			assert.False(t, run.CreatedAt.IsZero() || run.UpdatedAt.Before(run.CreatedAt), "run %d times", i)
			assert.False(t, run.MoreEvents)
			for j, ev := range run.Events {
				assert.Equal(t, int64(j+1), ev.Seq, "run %d events from seq 1, gapless", i)
			}
			assert.Equal(t, wire.MethodRunState, run.Events[len(run.Events)-1].Method)
		}
		assert.Equal(t, "Hello there.", one.Answer)
		assert.Equal(t, "Hello there.", historyText(t, one.Events))
		assert.Equal(t, "Goodbye now.", historyText(t, two.Events))
		thought := ""
		for _, u := range historyUpdates(t, one.Events) {
			if u.Kind == agent.UpdateThoughtChunk {
				thought += u.Text
			}
		}
		assert.Equal(t, "Think of a greeting.", thought, "the thinking is in the history")

		// The events are the ones agent/events returns.
		var evs rpc.EventsResult
		e2.MustCall(wire.MethodEvents, rpc.EventsParams{RunID: one.RunID}, &evs)
		assert.Equal(t, evs.Events, one.Events)

		var sessions rpc.SessionsResult
		e2.MustCall(wire.MethodSessions, []any{nil}, &sessions)
		require.Len(t, sessions.Sessions, 1)
		assert.Equal(t, h.Session, sessions.Sessions[0])

		// A third run continues the restored conversation.
		env.Model.Append(on("third question", modeltest.Reply{Text: "Still here."}))
		third := e2.Run(agent.RunParams{Prompt: "third question", SessionID: first.SessionID})
		e2.RunState(third.RunID, agent.StateCompleted)
		reqs := env.Model.Requests()
		assert.Contains(t, fmt.Sprint(reqs[len(reqs)-1].Messages), "Goodbye now.", "the model sees the earlier runs")
		assert.Equal(t, 3, e2.History(agent.HistoryParams{SessionID: first.SessionID}).Session.RunCount)
	})
}

// TestHistoryParams: the params every editor sends, and the errors of a
// bad one.
func TestHistoryParams(t *testing.T) {
	both(t, withScript("stream.json"), func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		for _, params := range []any{nil, []any{nil}, []any{}, map[string]any{}} {
			msg := e.CallErr(wire.MethodHistory, params, wire.CodeInvalidParams)
			assert.Contains(t, msg, "sessionId is required")
			var models agent.ModelList
			e.MustCall(wire.MethodModels, params, &models)
			assert.Equal(t, "fake", models.Default)
			var sessions rpc.SessionsResult
			e.MustCall(wire.MethodSessions, params, &sessions)
			assert.Empty(t, sessions.Sessions)
		}
		e.CallErr(wire.MethodHistory, agent.HistoryParams{SessionID: "s_nope"}, wire.CodeUnknownSession)
		e.CallErr(wire.MethodHistory, agent.HistoryParams{SessionID: "../../etc/passwd"}, wire.CodeUnknownSession)
		e.CallErr(wire.MethodHistory, map[string]any{"sessionId": 5}, wire.CodeInvalidParams)

		run := e.Run(agent.RunParams{Prompt: "hello"})
		e.RunState(run.RunID, agent.StateCompleted)
		e.CallErr(wire.MethodHistory, agent.HistoryParams{SessionID: run.SessionID, Limit: -1}, wire.CodeInvalidParams)
		e.CallErr(wire.MethodHistory, agent.HistoryParams{SessionID: run.SessionID, BeforeRunID: "r_nope"}, wire.CodeUnknownRun)
		e.CallErr(wire.MethodConfigure, agent.ConfigureParams{SessionID: run.SessionID, ReasoningEffort: ptr("extreme")}, wire.CodeInvalidParams)
		e.CallErr(wire.MethodConfigure, map[string]any{"sessionId": run.SessionID, "approvalPolicy": "yolo"}, wire.CodeInvalidParams)
		e.CallErr(wire.MethodConfigure, agent.ConfigureParams{SessionID: "s_nope", Model: ptr("big")}, wire.CodeUnknownSession)
		e.CallErr(wire.MethodConfigure, nil, wire.CodeInvalidParams)
		e.CallErr(wire.MethodRun, agent.RunParams{Prompt: "x", ReasoningEffort: "max"}, wire.CodeInvalidParams)
	})
}

// TestHistoryPages: a long session comes back a page at a time, the newest
// first, and a page's events stay bounded however much the runs said.
func TestHistoryPages(t *testing.T) {
	big := strings.Repeat("All work and no play makes a long answer. ", 1500) // ~64 KB a run
	both(t, func(t *testing.T) Config {
		return Config{Script: &modeltest.Script{Turns: []modeltest.Turn{
			{Match: modeltest.Match{LastUser: "long"}, Repeat: true, Reply: modeltest.Reply{Text: big, Chunks: 4}},
			{Repeat: true, Reply: modeltest.Reply{Text: "Short.", Chunks: 1}},
		}}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		var ids []string
		session := ""
		for i := range 26 {
			prompt := fmt.Sprintf("short %d", i)
			if i >= 20 {
				prompt = fmt.Sprintf("long %d", i)
			}
			run := e.Run(agent.RunParams{Prompt: prompt, SessionID: session})
			e.RunState(run.RunID, agent.StateCompleted)
			session = run.SessionID
			ids = append(ids, run.RunID)
		}

		var raw json.RawMessage
		e.MustCall(wire.MethodHistory, agent.HistoryParams{SessionID: session}, &raw)
		assert.Less(t, len(raw), 320<<10, "a page is bounded")
		var page rpc.HistoryResult
		require.NoError(t, json.Unmarshal(raw, &page))
		require.Len(t, page.Runs, agent.DefaultHistoryRuns)
		assert.Equal(t, 26-agent.DefaultHistoryRuns, page.EarlierRuns)
		assert.Equal(t, ids[26-agent.DefaultHistoryRuns:], runIDs(page.Runs))
		newest := page.Runs[len(page.Runs)-1]
		assert.False(t, newest.MoreEvents, "the newest run comes whole")
		assert.True(t, historyText(t, newest.Events) == big, "the newest run's answer whole")
		cut := 0
		for _, r := range page.Runs {
			if r.MoreEvents {
				cut++
				// The rest of a cut run follows its last event.
				after := int64(0)
				if len(r.Events) > 0 {
					after = r.Events[len(r.Events)-1].Seq
				}
				var rest rpc.EventsResult
				e.MustCall(wire.MethodEvents, rpc.EventsParams{RunID: r.RunID, AfterSeq: after}, &rest)
				want := "Short."
				if strings.HasPrefix(r.Prompt, "long") {
					want = big
				}
				got := historyText(t, append(r.Events, rest.Events...))
				assert.True(t, got == want, "run %s: the events complete the answer (%d bytes, want %d)", r.Prompt, len(got), len(want))
				assert.True(t, strings.HasPrefix(want, strings.TrimSuffix(r.Answer, "…")), "the answer's beginning")
			}
		}
		assert.Positive(t, cut, "the older long runs are cut")

		earlier := e.History(agent.HistoryParams{SessionID: session, BeforeRunID: page.Runs[0].RunID, Limit: 4})
		assert.Equal(t, ids[2:6], runIDs(earlier.Runs))
		assert.Equal(t, 2, earlier.EarlierRuns)
		first := e.History(agent.HistoryParams{SessionID: session, BeforeRunID: earlier.Runs[0].RunID, Limit: 500})
		assert.Equal(t, ids[:2], runIDs(first.Runs))
		assert.Equal(t, 0, first.EarlierRuns)

		var some rpc.EventsResult
		e.MustCall(wire.MethodEvents, rpc.EventsParams{RunID: ids[0], Limit: 2}, &some)
		assert.Len(t, some.Events, 2)
		assert.True(t, some.More)
	})
}

func runIDs(runs []rpc.HistoryRun) []string {
	var out []string
	for _, r := range runs {
		out = append(out, r.RunID)
	}
	return out
}

// TestModelAndEffortSwitchMidSession: agent/configure changes the model and
// effort of a session between runs and in the middle of one (used from its
// next model call), survives a restart, and shows in the history; the model
// list comes from the endpoint.
func TestModelAndEffortSwitchMidSession(t *testing.T) {
	ask := modeltest.Args(map[string]any{"question": "Which port?"})
	both(t, func(t *testing.T) Config {
		return Config{Script: &modeltest.Script{
			Endpoint: &modeltest.Endpoint{Models: []modeltest.ModelEntry{{ID: "fake"}, {ID: "big", ContextLength: 200000}, {ID: "small"}}},
			Turns: []modeltest.Turn{
				on("one", modeltest.Reply{Text: "One."}),
				on("two", modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: "call_port", Name: "ask_user", Arguments: ask}}}),
				{Match: modeltest.Match{AfterTool: "ask_user"}, Reply: modeltest.Reply{Text: "Port noted."}},
			}}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		var models agent.ModelList
		e.MustCall(wire.MethodModels, nil, &models)
		assert.True(t, models.Listed)
		assert.Equal(t, []agent.ModelChoice{{ID: "fake", OwnedBy: "modeltest"}, {ID: "big", OwnedBy: "modeltest", ContextWindow: 200000},
			{ID: "small", OwnedBy: "modeltest"}}, models.Models)

		one := e.Run(agent.RunParams{Prompt: "one"})
		e.RunState(one.RunID, agent.StateCompleted)
		var res agent.ConfigureResult
		e.MustCall(wire.MethodConfigure, configure(ptr("big"), ptr("high"), nil)(one.SessionID), &res)
		assert.Equal(t, agent.SessionSettings{Model: "big", ReasoningEffort: "high", ApprovalPolicy: tools.ModeAsk}, res.Settings)
		assert.Empty(t, res.RunID, "no run is going on")

		two := e.Run(agent.RunParams{Prompt: "two", SessionID: one.SessionID})
		q := e.Requests(two.RunID, 1)[0]
		var changed agent.ConfigureResult
		e.MustCall(wire.MethodConfigure, configure(ptr("small"), ptr(""), nil)(one.SessionID), &changed)
		assert.Equal(t, two.RunID, changed.RunID, "the waiting run takes the change")
		assert.Equal(t, agent.SessionSettings{Model: "small", ApprovalPolicy: tools.ModeAsk}, changed.Settings, "an empty effort returns to the default: none")
		e.Close(true) // the change outlives the daemon

		e2 := env.StartInitialized()
		e2.Answer(ReplyText(q.RequestID, "8080"))
		e2.RunState(two.RunID, agent.StateCompleted)

		reqs := env.Model.Requests()
		require.Len(t, reqs, 3)
		got := [][2]string{}
		for _, r := range reqs {
			got = append(got, [2]string{r.Model, r.ReasoningEffort})
		}
		assert.Equal(t, [][2]string{{"fake", ""}, {"big", "high"}, {"small", ""}}, got,
			"each request names the session's model and effort at the time")

		h := e2.History(agent.HistoryParams{SessionID: one.SessionID})
		require.Len(t, h.Runs, 2)
		assert.Equal(t, agent.SessionSettings{Model: "fake", ApprovalPolicy: tools.ModeAsk}, h.Runs[0].Settings)
		assert.Equal(t, agent.SessionSettings{Model: "small", ApprovalPolicy: tools.ModeAsk}, h.Runs[1].Settings)
		assert.Equal(t, agent.SessionSettings{Model: "small", ApprovalPolicy: tools.ModeAsk}, h.Session.Settings)
	})
}

// TestModeChangeTakesEffect: switching a session to full-auto while a write
// waits for approval lets the run's next write through without asking; a
// new run set to read-only is refused writes.
func TestModeChangeTakesEffect(t *testing.T) {
	write := func(id, path string) modeltest.Reply {
		return modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: id, Name: "write_file",
			Arguments: modeltest.Args(map[string]string{"path": path, "content": "x\n"})}}}
	}
	both(t, func(t *testing.T) Config {
		return Config{Script: &modeltest.Script{Turns: []modeltest.Turn{
			on("write two", write("call_a", "a.txt")),
			{Match: modeltest.Match{AfterTool: "write_file", LastTool: "a.txt"}, Reply: write("call_b", "b.txt")},
			{Match: modeltest.Match{AfterTool: "write_file", LastTool: "b.txt"}, Reply: modeltest.Reply{Text: "Both written."}},
			on("write three", write("call_c", "c.txt")),
			{Match: modeltest.Match{AfterTool: "write_file"}, Reply: modeltest.Reply{Text: "Could not write."}},
		}}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "write two"})
		first := e.Requests(run.RunID, 1)[0]
		require.Equal(t, agent.KindConfirmWrite, first.Kind)
		full := tools.ModeFullAuto
		var res agent.ConfigureResult
		e.MustCall(wire.MethodConfigure, configure(nil, nil, &full)(run.SessionID), &res)
		assert.Equal(t, run.RunID, res.RunID)
		e.Answer(Decide(first.RequestID, tools.AllowOnce, ""))
		e.RunState(run.RunID, agent.StateCompleted)
		assert.Len(t, e.inputRequestsAll(run.RunID), 1, "the second write was not asked about")
		assert.Equal(t, "x\n", env.WorkspaceFile("b.txt"))

		readOnly := tools.ModeReadOnly
		e.MustCall(wire.MethodConfigure, configure(nil, nil, &readOnly)(run.SessionID), &res)
		next := e.Run(agent.RunParams{Prompt: "write three", SessionID: run.SessionID})
		e.RunState(next.RunID, agent.StateCompleted)
		assert.Equal(t, "Could not write.", e.Text(next.RunID))
		assert.NoFileExists(t, env.Root+"/c.txt")
		h := e.History(agent.HistoryParams{SessionID: run.SessionID})
		assert.Equal(t, tools.ModeFullAuto, h.Runs[0].Settings.ApprovalPolicy)
		assert.Equal(t, tools.ModeReadOnly, h.Runs[1].Settings.ApprovalPolicy)
	})
}

// TestPausedRunComesBackWithItsHistory: a run cut off mid-step comes back
// paused after a restart, its history says so, and resuming finishes it.
func TestPausedRunComesBackWithItsHistory(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{Script: script(t, "resume.json"), Policy: tools.ModeFullAuto}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "build it"})
		e.ToolRunning()
		e.Close(true)

		e2 := env.StartInitialized()
		h := e2.History(agent.HistoryParams{SessionID: run.SessionID})
		require.Len(t, h.Runs, 1)
		assert.Equal(t, agent.StatePaused, h.Runs[0].State)
		assert.Equal(t, agent.StatePaused, h.Session.State)
		e2.MustCall(wire.MethodResume, rpc.RunRef{RunID: run.RunID}, nil)
		e2.RunState(run.RunID, agent.StateCompleted)
		h = e2.History(agent.HistoryParams{SessionID: run.SessionID})
		assert.Equal(t, agent.StateCompleted, h.Runs[0].State)
		assert.Equal(t, "Built.", h.Runs[0].Answer)
	})
}

// TestAttachmentsReachTheModelAndComeBack: a text the user attached (a git
// diff holding a ``` line) is quoted after the prompt in a fence it cannot
// close, and the run's history gives it back as sent.
func TestAttachmentsReachTheModelAndComeBack(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{Script: &modeltest.Script{Turns: []modeltest.Turn{
			{Match: modeltest.Match{LastUser: "Attached by the user, git diff:\n````\ndiff --git a/cart.go"},
				Reply: modeltest.Reply{Text: "I read the diff."}},
		}}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		diff := "diff --git a/cart.go b/cart.go\n+// ```go\n+func Sum() int\n"
		ctx := &agent.RunContext{Attachments: []agent.Attachment{{Name: "git diff", Text: diff}}}
		r := e.Run(agent.RunParams{Prompt: "review my changes", Context: ctx})
		e.RunState(r.RunID, agent.StateCompleted)
		h := e.History(agent.HistoryParams{SessionID: r.SessionID})
		require.Len(t, h.Runs, 1)
		assert.Equal(t, ctx, h.Runs[0].Context)
		assert.Equal(t, "I read the diff.", h.Runs[0].Answer)
	})
}
