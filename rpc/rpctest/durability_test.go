package rpctest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/rpc"
	"github.com/agentd/agentd/rpc/wire"
	"github.com/agentd/agentd/tools"
)

// A run's state on disk (issue 12): killed mid-step, a run loses nothing
// and repeats nothing; when the state directory stops taking writes, an
// answer is refused and its request stays open, a run pauses instead of
// claiming a state it could not save, and once the directory can be
// written again everything goes on.

const readSteps = 8

// readingScript reads f1.txt … f<readSteps>.txt, one a step, then answers.
// Every turn repeats, so that a step a restart cuts off can be asked again;
// slow is the step whose model call takes a while (0: none).
func readingScript(slow int) func(t *testing.T) Config {
	return func(t *testing.T) Config {
		var turns []modeltest.Turn
		files := map[string]string{}
		read := func(i int) modeltest.Reply {
			args, _ := json.Marshal(map[string]string{"path": fmt.Sprintf("f%d.txt", i)})
			r := modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: fmt.Sprintf("call_f%d", i), Name: "read_file", Arguments: args}}}
			if i == slow {
				r.DelayMs = 2000
			}
			return r
		}
		for i := 1; i <= readSteps; i++ {
			files[fmt.Sprintf("f%d.txt", i)] = fmt.Sprintf("<f%d>\n%s", i, strings.Repeat("some words of a file\n", 100))
			if i > 1 {
				turns = append(turns, modeltest.Turn{Name: fmt.Sprint("read ", i), Repeat: true,
					Match: modeltest.Match{LastTool: fmt.Sprintf("<f%d>", i-1)}, Reply: read(i)})
			}
		}
		turns = append(turns,
			modeltest.Turn{Name: "done", Repeat: true, Match: modeltest.Match{LastTool: fmt.Sprintf("<f%d>", readSteps)},
				Reply: modeltest.Reply{Text: "Read them all."}},
			// Last: the first request has no tool result for the others to match.
			modeltest.Turn{Name: "read 1", Repeat: true, Match: modeltest.Match{LastUser: "read the files"}, Reply: read(1)})
		return Config{Script: &modeltest.Script{Turns: turns}, Files: files, Policy: tools.ModeFullAuto}
	}
}

// assertEveryStepOnce checks the conversation the model last saw: every
// file read exactly once, in order, each call with its one result.
func assertEveryStepOnce(t *testing.T, env *Env) {
	t.Helper()
	reqs := env.Model.Requests()
	require.NotEmpty(t, reqs)
	var calls, results []string
	for _, m := range reqs[len(reqs)-1].Messages {
		for _, c := range m.ToolCalls {
			calls = append(calls, c.ID)
		}
		if m.Role == "tool" {
			results = append(results, m.ToolCallID)
			assert.NotContains(t, m.Content, "Interrupted", "a read is redone, never reported interrupted")
		}
	}
	var want []string
	for i := 1; i <= readSteps; i++ {
		want = append(want, fmt.Sprintf("call_f%d", i))
	}
	assert.Equal(t, want, calls, "each call once, in order")
	assert.Equal(t, want, results, "each result once, in order")
}

// awaitModelRequests waits until the model has received n requests.
func awaitModelRequests(t *testing.T, env *Env, n int) {
	t.Helper()
	awaitCond(t, fmt.Sprintf("%d model requests", n), func() bool { return len(env.Model.Requests()) >= n })
}

// TestKilledMidStepLosesAndRepeatsNothing kills the daemon twice in the
// middle of steps, once while a tool's result is being committed and once
// while the model is thinking; each time the run comes back paused and is
// resumed, and the conversation holds every step exactly once.
func TestKilledMidStepLosesAndRepeatsNothing(t *testing.T) {
	t.Parallel()
	env := NewEnv(t, Binary, readingScript(6)(t))
	e := env.StartInitialized()
	run := e.Run(agent.RunParams{Prompt: "read the files"})
	e.Await("the third step's call", func(m Message) bool {
		return m.Method == wire.MethodUpdate && strings.Contains(string(m.Params), `"toolCallId":"call_f3"`)
	})
	e.Close(true)

	e = env.StartInitialized()
	e.MustCall(wire.MethodResume, rpc.RunRef{RunID: run.RunID}, nil)
	awaitCond(t, "the slow step's model call", func() bool {
		reqs := env.Model.Requests()
		return reqs[len(reqs)-1].Turn == "read 6"
	})
	e.Close(true)

	e = env.StartInitialized()
	var evs rpc.EventsResult
	e.MustCall(wire.MethodEvents, rpc.EventsParams{RunID: run.RunID}, &evs)
	require.Equal(t, agent.StatePaused, evs.State)
	var paused agent.RunState
	last := evs.Events[len(evs.Events)-1]
	require.Equal(t, wire.MethodRunState, last.Method)
	require.NoError(t, json.Unmarshal(last.Params, &paused))
	assert.Equal(t, agent.PauseRestart, paused.PauseReason, "an editor resumes it by itself")
	e.MustCall(wire.MethodResume, rpc.RunRef{RunID: run.RunID}, nil)
	st := e.Finished(run.RunID)
	require.Equal(t, agent.StateCompleted, st.State, st.Error)
	assertEveryStepOnce(t, env)
	assertSeqsGapless(t, e, run.RunID)
}

// assertSeqsGapless checks the run's logged events run 1, 2, 3 … .
func assertSeqsGapless(t *testing.T, e *Editor, runID string) {
	t.Helper()
	var evs rpc.EventsResult
	e.MustCall(wire.MethodEvents, rpc.EventsParams{RunID: runID}, &evs)
	for i, ev := range evs.Events {
		if !assert.Equal(t, int64(i+1), ev.Seq, "event %d", i) {
			return
		}
	}
}

// TestAnswerNotSavedStaysOpen: the state directory becomes unwritable
// while a question is open; the answer is refused with NotSaved, naming
// the file and the cause, and the question stays open. Once the directory
// can be written again the same answer is taken and the run completes; a
// restart does not ask again.
func TestAnswerNotSavedStaysOpen(t *testing.T) {
	both(t, withScript("question.json"), func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "what is the meaning?"})
		req := e.Requests(run.RunID, 1)[0]

		thaw := FreezeTree(t, env.State)
		msg := e.CallErr(wire.MethodReply, agent.ReplyParams{RequestID: req.RequestID, Text: ptr("42")}, wire.CodeNotSaved)
		assert.Contains(t, msg, "state not saved")
		assert.Contains(t, msg, env.State, "the message names the file")
		assert.Contains(t, msg, "operation not permitted", "and the cause")
		var pending rpc.PendingResult
		e.MustCall(wire.MethodPending, rpc.PendingParams{}, &pending)
		require.Len(t, pending.Requests, 1, "the question is still open")
		assert.Equal(t, req.RequestID, pending.Requests[0].RequestID)
		e.CallErr(wire.MethodRun, agent.RunParams{Prompt: "another"}, wire.CodeNotSaved)

		thaw()
		e.Answer(ReplyText(req.RequestID, "42"))
		st := e.Finished(run.RunID)
		require.Equal(t, agent.StateCompleted, st.State)
		e.Close(true)

		e2 := env.StartInitialized()
		e2.MustCall(wire.MethodPending, rpc.PendingParams{}, &pending)
		assert.Empty(t, pending.Requests, "nothing is asked again")
		var evs rpc.EventsResult
		e2.MustCall(wire.MethodEvents, rpc.EventsParams{RunID: run.RunID}, &evs)
		assert.Equal(t, agent.StateCompleted, evs.State)
		assert.Len(t, env.Model.Requests(), 2)
	})
}

// TestRunPausesWhenItsStateCannotBeSaved: the state directory becomes
// unwritable while the model thinks; the step cannot be saved, so the run
// pauses, saying which file and why, and never reports completed. Once
// the directory can be written again, resume finishes it; a restart finds
// it completed with every step once.
func TestRunPausesWhenItsStateCannotBeSaved(t *testing.T) {
	both(t, readingScript(4), func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "read the files"})
		awaitModelRequests(t, env, 4)
		thaw := FreezeTree(t, env.State)

		st := e.RunState(run.RunID, agent.StatePaused)
		assert.Equal(t, agent.PauseNotSaved, st.PauseReason, "left to the user")
		assert.Contains(t, st.Error, "state not saved")
		assert.Contains(t, st.Error, env.State, "the error names the file")
		assert.Contains(t, st.Error, "operation not permitted", "and the cause")
		assert.Contains(t, st.Error, "agent/resume")
		for _, s := range e.runStates(run.RunID) {
			assert.False(t, s.State.Finished(), "no end is claimed: %s", s.State)
		}

		thaw()
		e.MustCall(wire.MethodResume, rpc.RunRef{RunID: run.RunID}, nil)
		done := e.Finished(run.RunID)
		require.Equal(t, agent.StateCompleted, done.State, done.Error)
		assertSeqsGapless(t, e, run.RunID)
		e.Close(true)

		e2 := env.StartInitialized()
		var evs rpc.EventsResult
		e2.MustCall(wire.MethodEvents, rpc.EventsParams{RunID: run.RunID}, &evs)
		assert.Equal(t, agent.StateCompleted, evs.State)
		assertEveryStepOnce(t, env)
	})
}

// TestRunPausesWhenTheDiskIsFull is the same with a state directory on a
// small tmpfs that fills up: the cause is "no space left on device", and
// freeing space lets the run go on.
func TestRunPausesWhenTheDiskIsFull(t *testing.T) {
	t.Parallel()
	env := NewEnv(t, Binary, readingScript(4)(t))
	if err := syscall.Mount("tmpfs", env.State, "tmpfs", 0, "size=8m"); err != nil {
		t.Skipf("cannot mount a tmpfs here (needs CAP_SYS_ADMIN): %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(env.State, syscall.MNT_DETACH) })
	e := env.StartInitialized()
	run := e.Run(agent.RunParams{Prompt: "read the files"})
	awaitModelRequests(t, env, 4)
	filler := filepath.Join(env.State, "filler")
	fill(t, filler)

	st := e.RunState(run.RunID, agent.StatePaused)
	assert.Contains(t, st.Error, env.State, "the error names the file")
	assert.Contains(t, st.Error, "no space left on device", "and the cause")
	for _, s := range e.runStates(run.RunID) {
		assert.False(t, s.State.Finished(), "no end is claimed: %s", s.State)
	}

	require.NoError(t, os.Remove(filler))
	e.MustCall(wire.MethodResume, rpc.RunRef{RunID: run.RunID}, nil)
	done := e.Finished(run.RunID)
	require.Equal(t, agent.StateCompleted, done.State, done.Error)
	e.Close(true)

	e2 := env.StartInitialized()
	var evs rpc.EventsResult
	e2.MustCall(wire.MethodEvents, rpc.EventsParams{RunID: run.RunID}, &evs)
	assert.Equal(t, agent.StateCompleted, evs.State)
	assertSeqsGapless(t, e2, run.RunID)
	assertEveryStepOnce(t, env)
	e2.Close(true)
}

// fill writes path until its file system has no space left.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			require.ErrorIs(t, err, syscall.ENOSPC)
			return
		}
	}
}

func (e *Editor) runStates(runID string) []agent.RunState {
	var out []agent.RunState
	for _, m := range e.Messages() {
		var s agent.RunState
		if m.Method == wire.MethodRunState && json.Unmarshal(m.Params, &s) == nil && s.RunID == runID {
			out = append(out, s)
		}
	}
	return out
}
