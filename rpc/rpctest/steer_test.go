package rpctest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/internal/await"
	"github.com/agentd/agentd/rpc"
	"github.com/agentd/agentd/rpc/wire"
	"github.com/agentd/agentd/tools"
)

// Steering and queueing (issue 26): the user's words reach a working run
// before the model's next request, never in the middle of a tool; a prompt
// sent while the session's run works waits its turn, after a restart too.

func (e *Editor) steer(runID, text string) {
	e.t.Helper()
	e.MustCall(wire.MethodSteer, agent.SteerParams{RunID: runID, Text: text}, nil)
}

// lastMessages is the last model request's messages from the last prompt on, as
// "role: content" (tool results by their call id).
func lastMessages(t *testing.T, env *Env, from string) []string {
	t.Helper()
	reqs := env.Model.Requests()
	require.NotEmpty(t, reqs)
	var out []string
	started := false
	for _, m := range reqs[len(reqs)-1].Messages {
		content, _, _ := strings.Cut(m.Content, "\n\n[agentd:") // the notes agentd adds to a prompt
		if m.Role == "user" && content == from {
			started = true
		}
		if !started {
			continue
		}
		switch {
		case m.Role == "tool":
			out = append(out, "tool "+m.ToolCallID)
		case len(m.ToolCalls) > 0:
			out = append(out, "assistant calls "+m.ToolCalls[0].Name)
		default:
			out = append(out, m.Role+": "+content)
		}
	}
	require.True(t, started, "the model's last request holds the prompt %q", from)
	return out
}

// steerUpdates are the run's steer updates, in order.
func steerUpdates(e *Editor, runID string) []string {
	var out []string
	for _, u := range e.Updates(runID) {
		if u.Kind == agent.UpdateSteer {
			out = append(out, u.Text)
		}
	}
	return out
}

// TestSteerBetweenModelRequests: a steer sent while a command runs reaches
// the model in its next request, after the command's result (never in the
// middle of the command), and the run's events show it where it was given.
func TestSteerBetweenModelRequests(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{Policy: tools.ModeFullAuto, Script: &modeltest.Script{Turns: []modeltest.Turn{
			{Name: "wait", Match: modeltest.Match{LastUser: "build it"},
				Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{callOf("call_wait", "run_cmd", cmd("while [ ! -e go ]; do sleep 0.02; done; echo built"))}}},
			{Name: "steered", Match: modeltest.Match{LastUser: "use the debug flags"}, Reply: modeltest.Reply{Text: "Built with the debug flags."}},
			{Name: "unsteered", Match: modeltest.Match{AfterTool: "run_cmd"}, Reply: modeltest.Reply{Text: "Built."}},
		}}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "build it"})
		e.ToolRunning()
		e.steer(run.RunID, "use the debug flags")
		require.NoError(t, os.WriteFile(filepath.Join(env.Root, "go"), nil, 0o644))
		st := e.Finished(run.RunID)
		require.Equal(t, agent.StateCompleted, st.State, st.Error)
		assert.Equal(t, "Built with the debug flags.", e.Text(run.RunID))
		assert.Equal(t, []string{"user: build it", "assistant calls run_cmd", "tool call_wait", "user: use the debug flags"},
			lastMessages(t, env, "build it"), "the steer comes after the command's result, as the user's words")
		assert.Len(t, env.Model.Requests(), 2, "the command was not interrupted")
		assert.Equal(t, []string{"use the debug flags"}, steerUpdates(e, run.RunID))

		// In the run's events, the steer sits between the command's start and its end.
		var order []string
		for _, u := range e.Updates(run.RunID) {
			switch {
			case u.Kind == agent.UpdateSteer:
				order = append(order, "steer")
			case u.Kind == agent.UpdateToolCallUpdate && u.Status == agent.StatusCompleted:
				order = append(order, "done")
			}
		}
		assert.Equal(t, []string{"steer", "done"}, order)

		// Over: a steer now is refused, and says what to do instead.
		msg := e.CallErr(wire.MethodSteer, agent.SteerParams{RunID: run.RunID, Text: "and test it"}, wire.CodeRunFinished)
		assert.Contains(t, msg, "agent/run")
		e.CallErr(wire.MethodSteer, agent.SteerParams{RunID: run.RunID, Text: " "}, wire.CodeInvalidParams)
		e.CallErr(wire.MethodSteer, agent.SteerParams{RunID: "r_nope", Text: "x"}, wire.CodeUnknownRun)
	})
}

// TestSteerWhileQuestionOpen: a steer sent while the run waits on the user
// goes to the model with the answer.
func TestSteerWhileQuestionOpen(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{Script: &modeltest.Script{Turns: []modeltest.Turn{
			{Name: "ask", Match: modeltest.Match{LastUser: "set up the service"},
				Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{callOf("call_port", "ask_user", map[string]any{"question": "Which port?"})}}},
			{Name: "steered", Match: modeltest.Match{LastUser: "bind to localhost only"}, Reply: modeltest.Reply{Text: "Port 8080 on localhost."}},
		}}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "set up the service"})
		q := e.Requests(run.RunID, 1)[0]
		e.steer(run.RunID, "bind to localhost only")
		e.Answer(ReplyText(q.RequestID, "8080"))
		st := e.Finished(run.RunID)
		require.Equal(t, agent.StateCompleted, st.State, st.Error)
		assert.Equal(t, "Port 8080 on localhost.", e.Text(run.RunID))
		assert.Equal(t, []string{"user: set up the service", "assistant calls ask_user", "tool call_port", "user: bind to localhost only"},
			lastMessages(t, env, "set up the service"))
		assert.Len(t, env.Model.Requests(), 2)
	})
}

// TestSteerDuringTheFinalAnswer: a steer sent while the model writes what
// would have been its final answer keeps the run going: the model reads the
// user's words after its answer and answers again.
func TestSteerDuringTheFinalAnswer(t *testing.T) {
	both(t, func(t *testing.T) Config {
		gate := filepath.Join(t.TempDir(), "answer")
		return Config{Script: &modeltest.Script{Turns: []modeltest.Turn{
			// Times 2: on a loaded machine the held attempt may be given up
			// and retried with the same request, which must still match.
			{Name: "answer", Match: modeltest.Match{LastUser: "explain the cache"}, Reply: modeltest.Reply{Text: "It is an LRU.", Gate: gate, Times: 2}},
			{Name: "again", Match: modeltest.Match{LastUser: "in one word"}, Reply: modeltest.Reply{Text: "LRU."}},
		}}, Env: map[string]string{"TEST_GATE": gate}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "explain the cache"})
		await.Until(t, "the model's request", 10*time.Second, func() bool { return len(env.Model.Requests()) > 0 })
		e.steer(run.RunID, "in one word")
		require.NoError(t, os.WriteFile(env.cfg.Env["TEST_GATE"], nil, 0o644))
		st := e.Finished(run.RunID)
		require.Equal(t, agent.StateCompleted, st.State, st.Error)
		assert.Equal(t, []string{"user: explain the cache", "assistant: It is an LRU.", "user: in one word"},
			lastMessages(t, env, "explain the cache"))
		var result string
		for _, u := range e.Updates(run.RunID) {
			if u.Kind == agent.UpdateResult {
				result = u.Text
			}
		}
		assert.Equal(t, "LRU.", result, "the run's result is the answer after the steer")
	})
}

// queueScript: "first" asks a question; "second" and "third" answer at once.
func queueScript(t *testing.T) Config {
	return Config{Script: &modeltest.Script{Turns: []modeltest.Turn{
		{Name: "ask", Match: modeltest.Match{LastUser: "first"},
			Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{callOf("call_q", "ask_user", map[string]any{"question": "Which port?"})}}},
		{Name: "first done", Match: modeltest.Match{AfterTool: "ask_user"}, Reply: modeltest.Reply{Text: "First done."}},
		{Name: "second", Match: modeltest.Match{LastUser: "second"}, Repeat: true, Reply: modeltest.Reply{Text: "Second done."}},
		{Name: "third", Match: modeltest.Match{LastUser: "third"}, Repeat: true, Reply: modeltest.Reply{Text: "Third done."}},
		{Name: "quick", Match: modeltest.Match{LastUser: "and be quick"}, Repeat: true, Reply: modeltest.Reply{Text: "Quickly done."}},
	}}}
}

// TestQueuedRunStartsAfterTheActiveOne: agent/run on a session whose run
// waits on the user queues; a cancelled queued run never runs; the other
// starts when the active one ends, with its conversation.
func TestQueuedRunStartsAfterTheActiveOne(t *testing.T) {
	both(t, queueScript, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		first := e.Run(agent.RunParams{Prompt: "first"})
		q := e.Requests(first.RunID, 1)[0]
		var second, third agent.RunResult
		e.MustCall(wire.MethodRun, agent.RunParams{Prompt: "second", SessionID: first.SessionID}, &second)
		e.MustCall(wire.MethodRun, agent.RunParams{Prompt: "third", SessionID: first.SessionID}, &third)
		assert.True(t, second.Queued)
		assert.True(t, third.Queued)
		e.RunState(second.RunID, agent.StateQueued)
		e.MustCall(wire.MethodCancel, rpc.RunRef{RunID: third.RunID}, nil)
		e.RunState(third.RunID, agent.StateCancelled)

		var hist rpc.HistoryResult
		e.MustCall(wire.MethodHistory, agent.HistoryParams{SessionID: first.SessionID}, &hist)
		states := map[string]agent.State{}
		for _, r := range hist.Runs {
			states[r.Prompt] = r.State
		}
		assert.Equal(t, map[string]agent.State{"first": agent.StateRequiresAction, "second": agent.StateQueued, "third": agent.StateCancelled}, states)

		e.Answer(ReplyText(q.RequestID, "8080"))
		require.Equal(t, agent.StateCompleted, e.Finished(first.RunID).State)
		st := e.Finished(second.RunID)
		require.Equal(t, agent.StateCompleted, st.State, st.Error)
		assert.Equal(t, "Second done.", e.Text(second.RunID))
		assert.Equal(t, []string{"user: first", "assistant calls ask_user", "tool call_q", "assistant: First done.", "user: second"},
			lastMessages(t, env, "first"), "the queued run continues the conversation the first one left")
		for _, r := range env.Model.Requests() {
			for _, m := range r.Messages {
				assert.NotEqual(t, "third", m.Content, "the cancelled run never ran")
			}
		}
	})
}

// TestQueuedRunAfterRestart: the daemon is killed while a run waits on the
// user with another queued behind it; after the restart the queued run is
// still queued, and starts once the first one is answered.
func TestQueuedRunAfterRestart(t *testing.T) {
	both(t, queueScript, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		first := e.Run(agent.RunParams{Prompt: "first"})
		q := e.Requests(first.RunID, 1)[0]
		var second agent.RunResult
		e.MustCall(wire.MethodRun, agent.RunParams{Prompt: "second", SessionID: first.SessionID}, &second)
		require.True(t, second.Queued)
		e.steer(second.RunID, "and be quick") // a queued run takes steers too
		e.Close(true)

		e2 := env.StartInitialized()
		var events rpc.EventsResult
		e2.MustCall(wire.MethodEvents, rpc.EventsParams{RunID: second.RunID}, &events)
		assert.Equal(t, agent.StateQueued, events.State, "still queued after the restart")
		e2.Answer(ReplyText(q.RequestID, "8080"))
		require.Equal(t, agent.StateCompleted, e2.Finished(first.RunID).State)
		st := e2.Finished(second.RunID)
		require.Equal(t, agent.StateCompleted, st.State, st.Error)
		assert.Equal(t, []string{"user: second", "user: and be quick"}, lastMessages(t, env, "second"))
		var raw json.RawMessage
		e2.MustCall(wire.MethodEvents, rpc.EventsParams{RunID: second.RunID}, &raw)
		assert.Contains(t, string(raw), `"state":"queued"`)
	})
}
