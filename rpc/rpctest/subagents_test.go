package rpctest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/internal/await"
	"github.com/agentd/agentd/rpc"
	"github.com/agentd/agentd/rpc/wire"
	"github.com/agentd/agentd/tools"
)

// Subagents (issue 26): the task calls of one reply start subagents that
// run at the same time, each with a context of its own; their work, their
// questions and their state reach the editor in the parent run, labelled
// with the subagent and placed under the task call; the parent's cancel
// reaches them; their tokens are counted each and in the parent's; and a
// restart neither loses nor repeats one.

const (
	cartPrompt     = "Find where the cart total is computed and report the function."
	currencyPrompt = "Which currency should totals use? Ask the user."
)

var cartFiles = map[string]string{"cart.go": "package cart\n\n// Total sums the cart.\nfunc Total(items []int) int { return 0 }\n"}

func taskCall(id, description, prompt string) modeltest.ToolCall {
	return callOf(id, "task", map[string]any{"description": description, "prompt": prompt})
}

func usage(prompt, completion int) *modeltest.Usage {
	return &modeltest.Usage{PromptTokens: prompt, CompletionTokens: completion}
}

// subagentScript: the parent starts two subagents in one reply; the first
// reads cart.go, the second asks the user. Each subagent's first answer
// waits for its gate, so the test sees both first requests arrive before
// either is answered.
func subagentScript(gateA, gateB string) *modeltest.Script {
	return &modeltest.Script{Turns: []modeltest.Turn{
		{Name: "parent done", Match: modeltest.Match{LastUser: "survey the cart", MinToolResults: 2},
			Reply: modeltest.Reply{Text: "Totals are in cart.go; the user wants EUR.", Usage: usage(100, 10)}},
		{Name: "parent", Match: modeltest.Match{LastUser: "survey the cart"}, Reply: modeltest.Reply{Usage: usage(100, 10), ToolCalls: []modeltest.ToolCall{
			taskCall("call_cart", "Find the cart total", cartPrompt),
			taskCall("call_currency", "Ask about the currency", currencyPrompt)}}},
		{Name: "cart done", Match: modeltest.Match{LastUser: cartPrompt, AfterTool: "read_file"},
			Reply: modeltest.Reply{Text: "Total is in cart.go, line 4.", Usage: usage(50, 5)}},
		{Name: "cart", Match: modeltest.Match{LastUser: cartPrompt}, Reply: modeltest.Reply{Gate: gateA, Usage: usage(50, 5),
			ToolCalls: []modeltest.ToolCall{callOf("call_1", "read_file", map[string]any{"path": "cart.go"})}}},
		{Name: "currency done", Match: modeltest.Match{LastUser: currencyPrompt, AfterTool: "ask_user"},
			Reply: modeltest.Reply{Text: "The user wants EUR.", Usage: usage(40, 4)}},
		{Name: "currency", Match: modeltest.Match{LastUser: currencyPrompt}, Reply: modeltest.Reply{Gate: gateB, Usage: usage(40, 4),
			ToolCalls: []modeltest.ToolCall{callOf("call_1", "ask_user", map[string]any{"question": "Which currency should totals use?"})}}},
	}}
}

// firstRequestOf is the model's first request whose last user message
// holds prompt.
func firstRequestOf(env *Env, prompt string) (modeltest.Request, bool) {
	for _, r := range env.Model.Requests() {
		if last := lastUser(r.Messages); strings.Contains(last, prompt) {
			return r, true
		}
	}
	return modeltest.Request{}, false
}

func lastUser(msgs []modeltest.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return msgs[i].Content
		}
	}
	return ""
}

// subagentUpdates are the run's subagent updates for the task call.
func subagentUpdates(e *Editor, runID, taskCallID string) []agent.Subagent {
	var out []agent.Subagent
	for _, u := range e.Updates(runID) {
		if u.Kind == agent.UpdateSubagent && u.ToolCallID == taskCallID && u.Subagent != nil {
			out = append(out, *u.Subagent)
		}
	}
	return out
}

// taskEnd is the task call's last tool_call_update.
func taskEnd(e *Editor, runID, taskCallID string) agent.Update {
	var end agent.Update
	for _, u := range e.Updates(runID) {
		if u.Kind == agent.UpdateToolCallUpdate && u.ToolCallID == taskCallID && u.Status != agent.StatusInProgress {
			end = u
		}
	}
	return end
}

// TestSubagentsInParallel: two subagents run at once (each one's first
// request reaches the model before either is answered), each with only
// its own system message and prompt; one asks the user, who answers the
// request labelled with it; the parent gets both answers with the files
// read, and counts their tokens.
func TestSubagentsInParallel(t *testing.T) {
	both(t, func(t *testing.T) Config {
		dir := t.TempDir()
		return Config{Script: subagentScript(filepath.Join(dir, "a"), filepath.Join(dir, "b")), Files: cartFiles}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "survey the cart"})

		// Both subagents' first requests arrive while neither is answered.
		awaitCond(t, "both subagents' first model requests", func() bool {
			_, a := firstRequestOf(env, cartPrompt)
			_, b := firstRequestOf(env, currencyPrompt)
			return a && b
		})
		for _, g := range gateFiles(env) {
			require.NoError(t, os.WriteFile(g, nil, 0o644))
		}

		// The question is the subagent's, labelled, under the task call.
		q := e.Requests(run.RunID, 1)[0]
		assert.Equal(t, agent.KindQuestion, q.Kind)
		assert.Equal(t, "Which currency should totals use?", q.Message)
		assert.Equal(t, "call_currency", q.ToolCallID, "shown under the task call")
		require.NotNil(t, q.Subagent, "labelled with the subagent")
		assert.Equal(t, "Ask about the currency", q.Subagent.Description)
		assert.Equal(t, "call_1", q.Subagent.ToolCallID, "the subagent's own call")
		assert.NotEqual(t, run.RunID, q.Subagent.RunID)
		e.RunState(run.RunID, agent.StateRequiresAction)
		var pending rpc.PendingResult
		e.MustCall(wire.MethodPending, rpc.PendingParams{RunID: run.RunID}, &pending)
		require.Len(t, pending.Requests, 1, "agent/pending of the parent lists it")
		assert.Equal(t, q.RequestID, pending.Requests[0].RequestID)
		e.Answer(ReplyText(q.RequestID, "EUR"))

		st := e.Finished(run.RunID)
		require.Equal(t, agent.StateCompleted, st.State, st.Error)
		assert.Equal(t, "Totals are in cart.go; the user wants EUR.", e.Text(run.RunID))

		// Each subagent's first request: its own system message and prompt,
		// nothing of the parent's conversation; its tools, not the parent's.
		for _, prompt := range []string{cartPrompt, currencyPrompt} {
			first, ok := firstRequestOf(env, prompt)
			require.True(t, ok)
			require.Len(t, first.Messages, 2, "system and prompt only")
			assert.Equal(t, "system", first.Messages[0].Role)
			assert.Contains(t, first.Messages[0].Content, "You are a subagent of agentd")
			assert.Equal(t, prompt, first.Messages[1].Content)
			for _, m := range first.Messages {
				assert.NotContains(t, m.Content, "survey the cart")
			}
			assert.NotContains(t, first.Tools, "task", "a subagent cannot start subagents")
			assert.NotContains(t, first.Tools, "edit_file", "read-only by default")
			assert.NotContains(t, first.Tools, "run_cmd")
			assert.Contains(t, first.Tools, "read_file")
			assert.Contains(t, first.Tools, "ask_user")
		}

		// The parent read both answers, with the files read.
		reqs := env.Model.Requests()
		last := reqs[len(reqs)-1]
		require.Equal(t, "parent done", last.Turn)
		results := toolResults(env)
		assert.Equal(t, "Total is in cart.go, line 4.\n\nFiles the subagent read (1): cart.go.", results["call_cart"])
		assert.Equal(t, "The user wants EUR.", results["call_currency"])

		// The editor saw each subagent's work nested under its task call.
		cart := subagentUpdates(e, run.RunID, "call_cart")
		require.NotEmpty(t, cart)
		var nested []string
		for _, s := range cart {
			assert.Equal(t, "Find the cart total", s.Description)
			if s.Update != nil && s.Update.Kind == agent.UpdateToolCall {
				nested = append(nested, s.Update.ToolCallID+" "+s.Update.Title)
			}
		}
		assert.Equal(t, []string{"call_1 read cart.go"}, nested)
		end := taskEnd(e, run.RunID, "call_cart")
		assert.Equal(t, agent.StatusCompleted, end.Status)
		require.NotNil(t, end.Subagent)
		assert.Equal(t, agent.StateCompleted, end.Subagent.State)
		assert.Equal(t, []string{"cart.go"}, end.Subagent.Read)

		// Tokens: each subagent's own, and the parent's usage counts them.
		require.NotNil(t, end.Subagent.Usage)
		assert.Equal(t, 110, end.Subagent.Usage.TotalTokens)
		cur := taskEnd(e, run.RunID, "call_currency")
		require.NotNil(t, cur.Subagent.Usage)
		assert.Equal(t, 88, cur.Subagent.Usage.TotalTokens)
		var total *agent.Usage
		for _, u := range e.Updates(run.RunID) {
			if u.Kind == agent.UpdateUsage {
				total = u.Usage
			}
		}
		require.NotNil(t, total)
		assert.Equal(t, 220+110+88, total.TotalTokens, "the parent's usage counts its subagents'")
		var h agent.History
		e.MustCall(wire.MethodHistory, agent.HistoryParams{SessionID: run.SessionID}, &h)
		require.Len(t, h.Runs, 1, "a subagent is not a run of the session's own")
		assert.Equal(t, 418, h.Runs[0].Usage.TotalTokens)

		// The subagent's run: agent/events tells its state.
		var evs rpc.EventsResult
		e.MustCall(wire.MethodEvents, rpc.EventsParams{RunID: end.Subagent.RunID}, &evs)
		assert.Equal(t, agent.StateCompleted, evs.State)
		assertSeqsGapless(t, e, run.RunID)
	})
}

// gateFiles are the gates the script's turns wait for.
func gateFiles(env *Env) []string {
	var out []string
	for _, t := range env.cfg.Script.Turns {
		if t.Reply.Gate != "" && !slices.Contains(out, t.Reply.Gate) {
			out = append(out, t.Reply.Gate)
		}
	}
	return out
}

// TestSubagentsCancelledWithTheirParent: cancelling the parent while its
// subagents wait on the model ends them too, cancelled, and nothing asks
// the model again.
func TestSubagentsCancelledWithTheirParent(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{Files: cartFiles, Script: &modeltest.Script{Turns: []modeltest.Turn{
			{Name: "parent", Match: modeltest.Match{LastUser: "survey the cart"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
				taskCall("call_cart", "Find the cart total", cartPrompt),
				taskCall("call_currency", "Ask about the currency", currencyPrompt)}}},
			{Name: "cart", Match: modeltest.Match{LastUser: cartPrompt}, Reply: modeltest.Reply{Hang: true}},
			{Name: "currency", Match: modeltest.Match{LastUser: currencyPrompt}, Reply: modeltest.Reply{Hang: true}},
		}}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "survey the cart"})
		awaitModelRequests(t, env, 3)
		e.MustCall(wire.MethodCancel, rpc.RunRef{RunID: run.RunID}, nil)
		st := e.Finished(run.RunID)
		assert.Equal(t, agent.StateCancelled, st.State)

		for _, call := range []string{"call_cart", "call_currency"} {
			subs := subagentUpdates(e, run.RunID, call)
			require.NotEmpty(t, subs)
			last := subs[len(subs)-1]
			assert.Equal(t, agent.StateCancelled, last.State, "the subagent of %s ended cancelled", call)
			var evs rpc.EventsResult
			e.MustCall(wire.MethodEvents, rpc.EventsParams{RunID: last.RunID}, &evs)
			assert.Equal(t, agent.StateCancelled, evs.State)
		}
		assert.Len(t, env.Model.Requests(), 3, "nothing asked the model again")
		assertSeqsGapless(t, e, run.RunID)
	})
}

// TestSubagentsAcrossRestart: the daemon is killed while one subagent
// waits on the user and the other on the model. After the restart the
// parent waits again (its subagent's question is pending, labelled), the
// other subagent goes on from its last step, and the parent completes
// with both answers; no subagent started twice, none was lost.
func TestSubagentsAcrossRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gateA := filepath.Join(dir, "a")
	script := subagentScript(gateA, "")
	// The cart subagent's first answer waits; after the restart it is
	// asked again and answers at once.
	script.Turns = append(script.Turns, modeltest.Turn{Name: "cart again", Match: modeltest.Match{LastUser: cartPrompt},
		Reply: modeltest.Reply{Usage: usage(50, 5), ToolCalls: []modeltest.ToolCall{callOf("call_1", "read_file", map[string]any{"path": "cart.go"})}}})
	env := NewEnv(t, Binary, Config{Files: cartFiles, Script: script})
	e := env.StartInitialized()
	run := e.Run(agent.RunParams{Prompt: "survey the cart"})
	q := e.Requests(run.RunID, 1)[0]
	awaitCond(t, "the cart subagent's first request", func() bool { _, ok := firstRequestOf(env, cartPrompt); return ok })
	e.Close(true)

	e = env.StartInitialized()
	var pending rpc.PendingResult
	e.MustCall(wire.MethodPending, rpc.PendingParams{}, &pending)
	require.Len(t, pending.Requests, 1, "the subagent's question is open again")
	got := pending.Requests[0]
	assert.Equal(t, q.RequestID, got.RequestID)
	assert.Equal(t, run.RunID, got.RunID)
	require.NotNil(t, got.Subagent)
	assert.Equal(t, "Ask about the currency", got.Subagent.Description)
	e.Answer(ReplyText(got.RequestID, "EUR"))
	st := e.Finished(run.RunID)
	require.Equal(t, agent.StateCompleted, st.State, st.Error)

	// The parent's conversation holds each task's answer once.
	reqs := env.Model.Requests()
	last := reqs[len(reqs)-1]
	require.Equal(t, "parent done", last.Turn)
	var results []string
	for _, m := range last.Messages {
		if m.Role == "tool" {
			results = append(results, m.ToolCallID+": "+m.Content)
		}
	}
	assert.Equal(t, []string{"call_cart: Total is in cart.go, line 4.\n\nFiles the subagent read (1): cart.go.",
		"call_currency: The user wants EUR."}, results)
	// Each subagent is one run: two run ids in all the parent's events.
	var evs rpc.EventsResult
	e.MustCall(wire.MethodEvents, rpc.EventsParams{RunID: run.RunID}, &evs)
	ids := map[string]bool{}
	for _, ev := range evs.Events {
		var p agent.UpdateParams
		if json.Unmarshal(ev.Params, &p) == nil && p.Update.Subagent != nil {
			ids[p.Update.Subagent.RunID] = true
		}
	}
	assert.Len(t, ids, 2, "no subagent started twice")
	n := 0
	for _, r := range reqs {
		if strings.Contains(lastUser(r.Messages), currencyPrompt) {
			n++
		}
	}
	assert.Equal(t, 2, n, "the waiting subagent was not asked again: its question was")
	assertSeqsGapless(t, e, run.RunID)
}

// isCallStatus matches the tool_call_update of a call with that status.
func isCallStatus(callID, status string) func(string, runNote) bool {
	return func(method string, n runNote) bool {
		return method == wire.MethodUpdate && n.Update.Kind == "tool_call_update" && n.Update.ToolCallID == callID && n.Update.Status == status
	}
}

func TestGoldenSubagents(t *testing.T) {
	goldenScenarioIn(t, "subagents", `
Subagents: the model's reply starts two subagents with task calls; both run at
once (each one's first model request arrives before either is answered), and
what each does comes in the parent run as subagent updates under its task
call. The first reads a file and answers; the second asks the user, a request
of the parent run labelled with the subagent; then the parent answers with
both results. A subagent's own run id answers agent/events with its state.`, func(t *testing.T) Config {
		dir := t.TempDir()
		s := subagentScript(filepath.Join(dir, "a"), filepath.Join(dir, "b"))
		for i := range s.Turns {
			s.Turns[i].Reply.Chunks = 1
		}
		return Config{Script: s, Files: cartFiles}
	}, func(g *golden) {
		g.initialize()
		run, _ := g.run("survey the cart")
		g.until(run, "both subagents started", isCallStatus("call_currency", "in_progress"))
		awaitCond(g.t, "both subagents' first model requests", func() bool {
			_, a := firstRequestOf(g.env, cartPrompt)
			_, b := firstRequestOf(g.env, currencyPrompt)
			return a && b
		})
		gates := gateFiles(g.env)
		require.Len(g.t, gates, 2)
		require.NoError(g.t, os.WriteFile(gates[0], nil, 0o644))
		end := g.until(run, "the first subagent's answer", isCallStatus("call_cart", "completed"))
		require.NoError(g.t, os.WriteFile(gates[1], nil, 0o644))
		q := g.until(run, "the second subagent's question", isRequest("question"))
		g.mustCall(wire.MethodPending, map[string]any{"runId": run}, nil)
		g.mustCall(wire.MethodReply, map[string]any{"requestId": q.RequestID, "text": "EUR"}, nil)
		g.until(run, "the run to complete", isState("completed"))
		_ = end
		var sub string
		for _, u := range g.e.Updates(run) {
			if u.Subagent != nil && u.ToolCallID == "call_cart" {
				sub = u.Subagent.RunID
			}
		}
		g.mustCall(wire.MethodEvents, map[string]any{"runId": sub, "afterSeq": 0}, nil)
		g.exit()
	})
}

// TestOneSubagentCancelled: agent/cancel of a subagent's run id ends that
// subagent alone; the model reads that it was cancelled, and the other
// subagent and the parent go on.
func TestOneSubagentCancelled(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{Files: cartFiles, Script: &modeltest.Script{Turns: []modeltest.Turn{
			{Name: "parent done", Match: modeltest.Match{LastUser: "survey the cart", MinToolResults: 2}, Reply: modeltest.Reply{Text: "One answer, one cancelled."}},
			{Name: "parent", Match: modeltest.Match{LastUser: "survey the cart"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
				taskCall("call_cart", "Find the cart total", cartPrompt),
				taskCall("call_currency", "Ask about the currency", currencyPrompt)}}},
			{Name: "cart", Match: modeltest.Match{LastUser: cartPrompt}, Reply: modeltest.Reply{Hang: true}},
			{Name: "currency", Match: modeltest.Match{LastUser: currencyPrompt}, Reply: modeltest.Reply{Text: "EUR, by default."}},
		}}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "survey the cart"})
		awaitCond(t, "the cart subagent's request", func() bool { _, ok := firstRequestOf(env, cartPrompt); return ok })
		var sub string
		e.Await("the cart subagent's id", func(Message) bool {
			for _, u := range e.updatesLocked(run.RunID) {
				if u.Kind == agent.UpdateToolCall && u.ToolCallID == "call_cart" && u.Subagent != nil {
					sub = u.Subagent.RunID
				}
			}
			return sub != ""
		})
		e.MustCall(wire.MethodCancel, rpc.RunRef{RunID: sub}, nil)
		st := e.Finished(run.RunID)
		require.Equal(t, agent.StateCompleted, st.State, st.Error)
		reqs := env.Model.Requests()
		last := reqs[len(reqs)-1]
		require.Equal(t, "parent done", last.Turn)
		results := toolResults(env)
		assert.Equal(t, "The subagent was cancelled before it finished, and gave no answer.", results["call_cart"])
		assert.Equal(t, "EUR, by default.", results["call_currency"])
		end := taskEnd(e, run.RunID, "call_cart")
		assert.Equal(t, agent.StatusFailed, end.Status)
		require.NotNil(t, end.Subagent)
		assert.Equal(t, agent.StateCancelled, end.Subagent.State)
	})
}

// TestSubagentsPausedWithTheirParent: killed while both subagents wait on
// the model, the daemon comes back with the parent paused (nobody waits on
// the user) and its subagents paused with it; resuming the parent resumes
// them, each asked again from its last step, and the parent completes.
func TestSubagentsPausedWithTheirParent(t *testing.T) {
	t.Parallel()
	gate := filepath.Join(t.TempDir(), "never")
	script := &modeltest.Script{Turns: []modeltest.Turn{
		{Name: "parent done", Match: modeltest.Match{LastUser: "survey the cart", MinToolResults: 2}, Reply: modeltest.Reply{Text: "Both answered."}},
		{Name: "parent", Match: modeltest.Match{LastUser: "survey the cart"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
			taskCall("call_cart", "Find the cart total", cartPrompt),
			taskCall("call_currency", "Ask about the currency", currencyPrompt)}}},
		{Name: "cart held", Match: modeltest.Match{LastUser: cartPrompt}, Reply: modeltest.Reply{Gate: gate}},
		{Name: "currency held", Match: modeltest.Match{LastUser: currencyPrompt}, Reply: modeltest.Reply{Gate: gate}},
		{Name: "cart", Match: modeltest.Match{LastUser: cartPrompt}, Reply: modeltest.Reply{Text: "Total is in cart.go."}},
		{Name: "currency", Match: modeltest.Match{LastUser: currencyPrompt}, Reply: modeltest.Reply{Text: "EUR."}},
	}}
	env := NewEnv(t, Binary, Config{Files: cartFiles, Script: script})
	e := env.StartInitialized()
	run := e.Run(agent.RunParams{Prompt: "survey the cart"})
	awaitModelRequests(t, env, 3)
	e.Close(true)

	e = env.StartInitialized()
	var evs rpc.EventsResult
	e.MustCall(wire.MethodEvents, rpc.EventsParams{RunID: run.RunID}, &evs)
	require.Equal(t, agent.StatePaused, evs.State, "nobody waits on the user: the parent is paused")
	paused := 0
	for _, ev := range evs.Events {
		var p agent.UpdateParams
		if json.Unmarshal(ev.Params, &p) == nil && p.Update.Kind == agent.UpdateSubagent && p.Update.Subagent.State == agent.StatePaused {
			paused++
		}
	}
	assert.Equal(t, 2, paused, "each subagent says it is paused")
	e.MustCall(wire.MethodResume, rpc.RunRef{RunID: run.RunID}, nil)
	st := e.Finished(run.RunID)
	require.Equal(t, agent.StateCompleted, st.State, st.Error)
	turns := map[string]int{}
	for _, r := range env.Model.Requests() {
		turns[r.Turn]++
	}
	assert.Equal(t, map[string]int{"parent": 1, "cart held": 1, "currency held": 1, "cart": 1, "currency": 1, "parent done": 1}, turns,
		"each subagent asked again once, from its last step; the parent's step not redone")
	assertSeqsGapless(t, e, run.RunID)
}

// updatesLocked is Updates for a predicate of Await, which holds the lock.
func (e *Editor) updatesLocked(runID string) []agent.Update {
	var out []agent.Update
	for _, m := range e.msgsLocked() {
		var p agent.UpdateParams
		if m.Method == wire.MethodUpdate && json.Unmarshal(m.Params, &p) == nil && p.RunID == runID {
			out = append(out, p.Update)
		}
	}
	return out
}

// TestSubagentsAtMostEightAtOnce: a reply with ten task calls starts eight
// subagents; the ninth starts only when one of those ends; the tenth,
// cancelled while it waits (agent/cancel of its runId), never starts; the
// parent reads nine answers and that one cancellation, in the order it
// asked.
func TestSubagentsAtMostEightAtOnce(t *testing.T) {
	t.Parallel()
	gate := filepath.Join(t.TempDir(), "gate")
	prompt := func(i int) string { return fmt.Sprintf("Subtask %d: check part %d.", i, i) }
	var calls []modeltest.ToolCall
	turns := []modeltest.Turn{{Name: "parent done", Match: modeltest.Match{LastUser: "split it", MinToolResults: 10},
		Reply: modeltest.Reply{Text: "All ten parts are fine."}}}
	for i := 1; i <= 10; i++ {
		calls = append(calls, taskCall(fmt.Sprintf("call_%d", i), fmt.Sprintf("Check part %d", i), prompt(i)))
		reply := modeltest.Reply{Text: fmt.Sprintf("Part %d is fine.", i)}
		if i <= 8 {
			reply.Gate = gate // the first eight hold until the test has counted them
		}
		turns = append(turns, modeltest.Turn{Name: fmt.Sprintf("sub %d", i), Match: modeltest.Match{LastUser: prompt(i)}, Reply: reply})
	}
	turns = append(turns, modeltest.Turn{Name: "parent", Match: modeltest.Match{LastUser: "split it"}, Reply: modeltest.Reply{ToolCalls: calls}})
	env := NewEnv(t, Binary, Config{Script: &modeltest.Script{Turns: turns}})
	e := env.StartInitialized()
	run := e.Run(agent.RunParams{Prompt: "split it"})

	subOf := func(r modeltest.Request) int {
		for i := 1; i <= 10; i++ {
			if lastUser(r.Messages) == prompt(i) {
				return i
			}
		}
		return 0
	}
	awaitCond(t, "the first eight subagents' model requests", func() bool {
		n := 0
		for _, r := range env.Model.Requests() {
			if i := subOf(r); i >= 1 && i <= 8 {
				n++
			}
		}
		return n == 8
	})
	// The eight hold their answers: the ninth and tenth have not started.
	// Every update the daemon sent so far is in; call_9 is still pending.
	held := env.Model.Requests()
	for _, r := range held {
		assert.Less(t, subOf(r), 9, "request %d: a ninth subagent started while eight worked", r.Seq)
	}
	var tenth string
	for _, u := range e.Updates(run.RunID) {
		if u.Kind == agent.UpdateToolCall && u.ToolCallID == "call_10" && u.Subagent != nil {
			tenth = u.Subagent.RunID
		}
	}
	require.NotEmpty(t, tenth, "the waiting task call names its subagent")
	e.MustCall(wire.MethodCancel, rpc.RunRef{RunID: tenth}, nil)
	var cancelled agent.Update
	e.Await("the waiting task call to end", func(Message) bool {
		for _, u := range e.updatesLocked(run.RunID) {
			if u.Kind == agent.UpdateToolCallUpdate && u.ToolCallID == "call_10" && u.Status != agent.StatusInProgress {
				cancelled = u
			}
		}
		return cancelled.Status != ""
	})
	assert.Equal(t, agent.StatusFailed, cancelled.Status)
	require.NotNil(t, cancelled.Subagent)
	assert.Equal(t, agent.StateCancelled, cancelled.Subagent.State)
	require.NoError(t, os.WriteFile(gate, nil, 0o644))

	st := e.Finished(run.RunID)
	require.Equal(t, agent.StateCompleted, st.State, st.Error)
	reqs := env.Model.Requests()
	for _, r := range reqs {
		if i := subOf(r); i >= 9 {
			assert.Greater(t, r.Seq, len(held), "subagent %d asked the model before one of the eight ended", i)
			assert.NotEqual(t, 10, i, "the cancelled subagent never started")
		}
	}
	last := reqs[len(reqs)-1]
	require.Equal(t, "parent done", last.Turn)
	var results []string
	for _, m := range last.Messages {
		if m.Role == "tool" {
			results = append(results, m.ToolCallID+": "+m.Content)
		}
	}
	var want []string
	for i := 1; i <= 9; i++ {
		want = append(want, fmt.Sprintf("call_%d: Part %d is fine.", i, i))
	}
	want = append(want, "call_10: The subagent was cancelled before it started, and did nothing.")
	assert.Equal(t, want, results)

	// In the stream, the ninth and tenth start after a subagent ended.
	firstEnd, started := -1, map[string]int{}
	for i, u := range e.Updates(run.RunID) {
		if firstEnd < 0 && u.Kind == agent.UpdateSubagent && u.Subagent != nil && u.Subagent.State == agent.StateCompleted {
			firstEnd = i
		}
		if u.Kind == agent.UpdateToolCallUpdate && u.Status == agent.StatusInProgress {
			started[u.ToolCallID] = i
		}
	}
	require.Len(t, started, 9)
	require.GreaterOrEqual(t, firstEnd, 0)
	for i := 1; i <= 9; i++ {
		id := fmt.Sprintf("call_%d", i)
		if i <= 8 {
			assert.Less(t, started[id], firstEnd, "%s started with the first eight", id)
		} else {
			assert.Greater(t, started[id], firstEnd, "%s waited for a subagent to end", id)
		}
	}
	assertSeqsGapless(t, e, run.RunID)
}

// runFile is a file of a run in the daemon's state directory.
func runFile(t *testing.T, env *Env, runID, suffix string) string {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(env.State, "*", "runs", runID+suffix))
	require.Len(t, matches, 1, "the file %s%s", runID, suffix)
	return matches[0]
}

// awaitRunState polls agent/events until the run is in state: after a
// restart, a run may go on before the editor is there to hear it. A run
// that stopped in another state (ended, or paused) fails at once.
func awaitRunState(t *testing.T, e *Editor, runID string, state agent.State) {
	t.Helper()
	await.Check(t, "run "+runID+" "+string(state), DefaultTimeout, func() (bool, error) {
		var evs rpc.EventsResult
		e.MustCall(wire.MethodEvents, rpc.EventsParams{RunID: runID}, &evs)
		if evs.State != state && (evs.State.Finished() || evs.State == agent.StatePaused) {
			return false, fmt.Errorf("the run is %s", evs.State)
		}
		return evs.State == state, nil
	})
}

// resultsOf are the tool results of a model request, "id: content".
func resultsOf(r modeltest.Request) []string {
	var out []string
	for _, m := range r.Messages {
		if m.Role == "tool" {
			out = append(out, m.ToolCallID+": "+m.Content)
		}
	}
	return out
}

// TestSubagentsEndedBeforeTheRestart: both subagents ended and were saved,
// but the daemon died before their parent saved their results (its
// journal is put back as it was before they ended: what a kill at that
// moment leaves). After the restart the parent takes their results from
// their records and goes on by itself, not paused; neither runs again.
func TestSubagentsEndedBeforeTheRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gate, never := filepath.Join(dir, "gate"), filepath.Join(dir, "never")
	script := &modeltest.Script{Turns: []modeltest.Turn{
		{Name: "parent done held", Match: modeltest.Match{LastUser: "survey the cart", MinToolResults: 2}, Reply: modeltest.Reply{Gate: never}},
		{Name: "parent done", Match: modeltest.Match{LastUser: "survey the cart", MinToolResults: 2}, Reply: modeltest.Reply{Text: "Both answered."}},
		{Name: "parent", Match: modeltest.Match{LastUser: "survey the cart"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
			taskCall("call_cart", "Find the cart total", cartPrompt),
			taskCall("call_currency", "Ask about the currency", currencyPrompt)}}},
		{Name: "cart", Match: modeltest.Match{LastUser: cartPrompt}, Reply: modeltest.Reply{Gate: gate, Text: "Total is in cart.go."}},
		{Name: "currency", Match: modeltest.Match{LastUser: currencyPrompt}, Reply: modeltest.Reply{Gate: gate, Text: "EUR."}},
	}}
	env := NewEnv(t, Binary, Config{Files: cartFiles, Script: script})
	e := env.StartInitialized()
	run := e.Run(agent.RunParams{Prompt: "survey the cart"})
	awaitModelRequests(t, env, 3)
	journal := runFile(t, env, run.RunID, ".journal.jsonl")
	before, err := os.ReadFile(journal) // both task calls started, neither has a result
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(gate, nil, 0o644))
	awaitCond(t, "the parent's request with both results", func() bool {
		reqs := env.Model.Requests()
		return reqs[len(reqs)-1].Turn == "parent done held"
	})
	e.Close(true)
	require.NoError(t, os.WriteFile(journal, before, 0o600))

	e = env.StartInitialized()
	awaitRunState(t, e, run.RunID, agent.StateCompleted)
	turns := map[string]int{}
	for _, r := range env.Model.Requests() {
		turns[r.Turn]++
	}
	assert.Equal(t, map[string]int{"parent": 1, "cart": 1, "currency": 1, "parent done held": 1, "parent done": 1}, turns,
		"no subagent ran again")
	reqs := env.Model.Requests()
	assert.Equal(t, []string{"call_cart: Total is in cart.go.", "call_currency: EUR."}, resultsOf(reqs[len(reqs)-1]))
	assertSeqsGapless(t, e, run.RunID)
}

// TestSubagentLostInTheRestart: the daemon is killed while both subagents
// wait on the model, and one subagent's journal is damaged, so it cannot
// be restored. The parent comes back paused (the other subagent was cut
// off mid-step); resumed, the model reads that the lost one was
// interrupted and did not finish, the other answers, and the parent
// completes.
func TestSubagentLostInTheRestart(t *testing.T) {
	t.Parallel()
	gate := filepath.Join(t.TempDir(), "never")
	script := &modeltest.Script{Turns: []modeltest.Turn{
		{Name: "parent done", Match: modeltest.Match{LastUser: "survey the cart", MinToolResults: 2}, Reply: modeltest.Reply{Text: "One lost, one answered."}},
		{Name: "parent", Match: modeltest.Match{LastUser: "survey the cart"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
			taskCall("call_cart", "Find the cart total", cartPrompt),
			taskCall("call_currency", "Ask about the currency", currencyPrompt)}}},
		{Name: "cart held", Match: modeltest.Match{LastUser: cartPrompt}, Reply: modeltest.Reply{Gate: gate}},
		{Name: "currency held", Match: modeltest.Match{LastUser: currencyPrompt}, Reply: modeltest.Reply{Gate: gate}},
		{Name: "currency", Match: modeltest.Match{LastUser: currencyPrompt}, Reply: modeltest.Reply{Text: "EUR."}},
	}}
	env := NewEnv(t, Binary, Config{Files: cartFiles, Script: script})
	e := env.StartInitialized()
	run := e.Run(agent.RunParams{Prompt: "survey the cart"})
	awaitModelRequests(t, env, 3)
	var cart string
	e.Await("the cart subagent's id", func(Message) bool {
		for _, u := range e.updatesLocked(run.RunID) {
			if u.Kind == agent.UpdateToolCallUpdate && u.ToolCallID == "call_cart" && u.Subagent != nil {
				cart = u.Subagent.RunID
			}
		}
		return cart != ""
	})
	e.Close(true)
	// A journal whose one line is another run's state: it cannot be read
	// back as this subagent's.
	require.NoError(t, os.WriteFile(runFile(t, env, cart, ".journal.jsonl"), []byte(`{"run":{"id":"r_someoneelse"}}`+"\n"), 0o600))

	e = env.StartInitialized()
	awaitRunState(t, e, run.RunID, agent.StatePaused)
	e.MustCall(wire.MethodResume, rpc.RunRef{RunID: run.RunID}, nil)
	st := e.Finished(run.RunID)
	require.Equal(t, agent.StateCompleted, st.State, st.Error)
	reqs := env.Model.Requests()
	last := reqs[len(reqs)-1]
	require.Equal(t, "parent done", last.Turn)
	assert.Equal(t, []string{
		"call_cart: Interrupted: the daemon restarted while this subagent worked, and its state could not be loaded again, so it did not finish. Start it again if you still need it.",
		"call_currency: EUR."}, resultsOf(last))
	end := taskEnd(e, run.RunID, "call_cart")
	assert.Equal(t, agent.StatusFailed, end.Status)
	assertSeqsGapless(t, e, run.RunID)
}

const fixPrompt = "Make Total in cart.go return the number of items."

// fixScript: the parent starts one subagent that may edit; it reads
// cart.go and edits it, and edits again if the first edit is refused.
func fixScript() *modeltest.Script {
	edit := func(id string) modeltest.Reply {
		return modeltest.Reply{ToolCalls: []modeltest.ToolCall{callOf(id, "edit_file",
			map[string]any{"path": "cart.go", "old_string": "return 0", "new_string": "return len(items)"})}}
	}
	return &modeltest.Script{Turns: []modeltest.Turn{
		{Name: "parent done", Match: modeltest.Match{LastUser: "fix the cart", MinToolResults: 1}, Reply: modeltest.Reply{Text: "Fixed."}},
		{Name: "parent", Match: modeltest.Match{LastUser: "fix the cart"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
			callOf("call_fix", "task", map[string]any{"description": "Fix the cart total", "prompt": fixPrompt, "tools": []string{"read_file", "edit_file"}})}}},
		{Name: "fix done", Match: modeltest.Match{LastUser: fixPrompt, MinToolResults: 3}, Reply: modeltest.Reply{Text: "Total returns len(items) now."}},
		{Name: "fix again", Match: modeltest.Match{LastUser: fixPrompt, MinToolResults: 2}, Reply: edit("call_3")},
		{Name: "fix edit", Match: modeltest.Match{LastUser: fixPrompt, MinToolResults: 1}, Reply: edit("call_2")},
		{Name: "fix", Match: modeltest.Match{LastUser: fixPrompt}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
			callOf("call_1", "read_file", map[string]any{"path": "cart.go"})}}},
	}}
}

// TestSubagentWriteApproved: a subagent given edit_file asks the user to
// approve its write like its parent would, in the parent's run, labelled
// with it, with the diff; a rejection's reason is what it reads, and its
// next write, approved, is on disk before the parent goes on.
func TestSubagentWriteApproved(t *testing.T) {
	t.Parallel()
	env := NewEnv(t, Binary, Config{Files: cartFiles, Script: fixScript()})
	e := env.StartInitialized()
	run := e.Run(agent.RunParams{Prompt: "fix the cart"})
	first := e.Requests(run.RunID, 1)[0]
	assert.Equal(t, agent.KindConfirmWrite, first.Kind)
	assert.Equal(t, run.RunID, first.RunID)
	assert.Equal(t, "call_fix", first.ToolCallID, "shown under the task call")
	require.NotNil(t, first.Subagent, "labelled with the subagent")
	assert.Equal(t, "Fix the cart total", first.Subagent.Description)
	assert.Equal(t, "call_2", first.Subagent.ToolCallID)
	require.Len(t, first.Diff, 1)
	assert.Contains(t, first.Diff[0].Diff, "+func Total(items []int) int { return len(items) }")
	e.Answer(Decide(first.RequestID, tools.RejectOnce, "say why in a comment"))

	second := e.Requests(run.RunID, 2)[1]
	assert.Equal(t, "call_3", second.Subagent.ToolCallID)
	assert.Contains(t, env.WorkspaceFile("cart.go"), "return 0", "nothing written before the approval")
	e.Answer(Decide(second.RequestID, tools.AllowOnce, ""))
	st := e.Finished(run.RunID)
	require.Equal(t, agent.StateCompleted, st.State, st.Error)
	assert.Contains(t, env.WorkspaceFile("cart.go"), "return len(items)")

	var rejected string
	for _, r := range env.Model.Requests() {
		if r.Turn == "fix again" {
			rejected = r.Last().Content
		}
	}
	assert.Contains(t, rejected, "say why in a comment", "the subagent read the user's reason")
	reqs := env.Model.Requests()
	assert.Equal(t, []string{"call_fix: Total returns len(items) now.\n\nFiles the subagent read (1): cart.go."}, resultsOf(reqs[len(reqs)-1]))
}

// TestSubagentNeverBroaderThanItsParent: in read-only mode a subagent
// given edit_file cannot write: its write is refused without asking, as
// its parent's would be, and the file is untouched.
func TestSubagentNeverBroaderThanItsParent(t *testing.T) {
	t.Parallel()
	script := fixScript()
	env := NewEnv(t, Binary, Config{Files: cartFiles, Script: script, Policy: tools.ModeReadOnly})
	e := env.StartInitialized()
	run := e.Run(agent.RunParams{Prompt: "fix the cart"})
	st := e.Finished(run.RunID)
	require.Equal(t, agent.StateCompleted, st.State, st.Error)
	for _, m := range e.Messages() {
		assert.NotEqual(t, wire.MethodInputRequest, m.Method, "nobody was asked")
	}
	assert.Equal(t, cartFiles["cart.go"], env.WorkspaceFile("cart.go"))
	refused := 0
	for _, r := range env.Model.Requests() {
		if (r.Turn == "fix again" || r.Turn == "fix done") && assert.Equal(t, "tool", r.Last().Role) {
			assert.Contains(t, r.Last().Content, "Not run: the policy denies it (mode read-only", "the subagent's write, refused")
			refused++
		}
	}
	assert.Equal(t, 2, refused)
}

// TestSubagentsWaitingAcrossRestart: killed while eight subagents work and
// two task calls wait for them, the daemon comes back with the parent
// paused; resumed, the eight are asked again from their last step, the two
// start as they end, and the parent reads all ten answers once each.
func TestSubagentsWaitingAcrossRestart(t *testing.T) {
	t.Parallel()
	never := filepath.Join(t.TempDir(), "never")
	prompt := func(i int) string { return fmt.Sprintf("Subtask %d: check part %d.", i, i) }
	var calls []modeltest.ToolCall
	turns := []modeltest.Turn{{Name: "parent done", Match: modeltest.Match{LastUser: "split it", MinToolResults: 10},
		Reply: modeltest.Reply{Text: "All ten parts are fine."}}}
	for i := 1; i <= 10; i++ {
		calls = append(calls, taskCall(fmt.Sprintf("call_%d", i), fmt.Sprintf("Check part %d", i), prompt(i)))
		if i <= 8 {
			turns = append(turns, modeltest.Turn{Name: fmt.Sprintf("sub %d held", i), Match: modeltest.Match{LastUser: prompt(i)}, Reply: modeltest.Reply{Gate: never}})
		}
		turns = append(turns, modeltest.Turn{Name: fmt.Sprintf("sub %d", i), Match: modeltest.Match{LastUser: prompt(i)},
			Reply: modeltest.Reply{Text: fmt.Sprintf("Part %d is fine.", i)}})
	}
	turns = append(turns, modeltest.Turn{Name: "parent", Match: modeltest.Match{LastUser: "split it"}, Reply: modeltest.Reply{ToolCalls: calls}})
	env := NewEnv(t, Binary, Config{Script: &modeltest.Script{Turns: turns}})
	e := env.StartInitialized()
	run := e.Run(agent.RunParams{Prompt: "split it"})
	awaitModelRequests(t, env, 9) // the parent's, then the eight subagents'
	e.Close(true)

	e = env.StartInitialized()
	awaitRunState(t, e, run.RunID, agent.StatePaused)
	e.MustCall(wire.MethodResume, rpc.RunRef{RunID: run.RunID}, nil)
	st := e.Finished(run.RunID)
	require.Equal(t, agent.StateCompleted, st.State, st.Error)
	turnsUsed := map[string]int{}
	for _, r := range env.Model.Requests() {
		turnsUsed[r.Turn]++
	}
	want := map[string]int{"parent": 1, "parent done": 1}
	for i := 1; i <= 10; i++ {
		want[fmt.Sprintf("sub %d", i)] = 1
		if i <= 8 {
			want[fmt.Sprintf("sub %d held", i)] = 1
		}
	}
	assert.Equal(t, want, turnsUsed, "each of the eight asked again once, each of the two once")
	reqs := env.Model.Requests()
	var results []string
	for i := 1; i <= 10; i++ {
		results = append(results, fmt.Sprintf("call_%d: Part %d is fine.", i, i))
	}
	assert.Equal(t, results, resultsOf(reqs[len(reqs)-1]))
	assertSeqsGapless(t, e, run.RunID)
}

func TestGoldenSubagentCancelled(t *testing.T) {
	goldenScenarioIn(t, "subagent_cancel", `
Cancelling one subagent: the model's reply starts two subagents; while both
wait on the model, the editor cancels the first by its own run id
(agent/cancel). Its task call ends failed, its subagent cancelled; the other
answers, and the parent reads both results and completes.`, func(t *testing.T) Config {
		dir := t.TempDir()
		return Config{Files: cartFiles, Script: &modeltest.Script{Turns: []modeltest.Turn{
			{Name: "parent done", Match: modeltest.Match{LastUser: "survey the cart", MinToolResults: 2}, Reply: modeltest.Reply{Text: "One answer, one cancelled.", Chunks: 1, Usage: usage(100, 10)}},
			{Name: "parent", Match: modeltest.Match{LastUser: "survey the cart"}, Reply: modeltest.Reply{Usage: usage(100, 10), ToolCalls: []modeltest.ToolCall{
				taskCall("call_cart", "Find the cart total", cartPrompt),
				taskCall("call_currency", "Ask about the currency", currencyPrompt)}}},
			{Name: "cart", Match: modeltest.Match{LastUser: cartPrompt}, Reply: modeltest.Reply{Gate: filepath.Join(dir, "a"), Text: "never sent"}},
			{Name: "currency", Match: modeltest.Match{LastUser: currencyPrompt}, Reply: modeltest.Reply{Gate: filepath.Join(dir, "b"), Text: "EUR, by default.", Chunks: 1, Usage: usage(40, 4)}},
		}}}
	}, func(g *golden) {
		g.initialize()
		run, _ := g.run("survey the cart")
		g.until(run, "both subagents started", isCallStatus("call_currency", "in_progress"))
		awaitCond(g.t, "both subagents' first model requests", func() bool {
			_, a := firstRequestOf(g.env, cartPrompt)
			_, b := firstRequestOf(g.env, currencyPrompt)
			return a && b
		})
		var sub string
		for _, u := range g.e.Updates(run) {
			if u.Subagent != nil && u.ToolCallID == "call_cart" {
				sub = u.Subagent.RunID
			}
		}
		g.mustCall(wire.MethodCancel, map[string]any{"runId": sub}, nil)
		g.until(run, "the cancelled subagent's task call", isCallStatus("call_cart", "failed"))
		gates := gateFiles(g.env)
		require.NoError(g.t, os.WriteFile(gates[1], nil, 0o644))
		g.until(run, "the run to complete", isState("completed"))
		g.exit()
	})
}
