package rpctest

import (
	"encoding/json"
	"fmt"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/rpc/wire"
	"github.com/agentd/agentd/tools"
)

// RunState waits for the run to reach state and returns the notification.
// A run that ended in another state fails the wait at once.
func (e *Editor) RunState(runID string, state agent.State) agent.RunState {
	e.t.Helper()
	var st agent.RunState
	e.AwaitUnless(fmt.Sprintf("run %s state %s", runID, state), func(m Message) bool {
		s, ok := runStateOf(m, runID)
		if ok && s.State == state {
			st = s
			return true
		}
		return false
	}, func(m Message) string { return endedOtherwise(m, runID, state) })
	return st
}

// runStateOf decodes m if it is the run's agent/runState.
func runStateOf(m Message, runID string) (agent.RunState, bool) {
	var s agent.RunState
	if m.Method != wire.MethodRunState || json.Unmarshal(m.Params, &s) != nil || s.RunID != runID {
		return s, false
	}
	return s, true
}

// endedOtherwise says why m makes waiting for the run to reach state
// pointless: the run ended in another state.
func endedOtherwise(m Message, runID string, state agent.State) string {
	if s, ok := runStateOf(m, runID); ok && s.State.Finished() && s.State != state {
		return fmt.Sprintf("run %s ended %s (%s)", runID, s.State, s.Error)
	}
	return ""
}

// Finished waits for the run to end in any final state.
func (e *Editor) Finished(runID string) agent.RunState {
	e.t.Helper()
	var st agent.RunState
	e.Await("run "+runID+" to finish", func(m Message) bool {
		s, ok := runStateOf(m, runID)
		if ok && s.State.Finished() {
			st = s
			return true
		}
		return false
	})
	return st
}

// runEnded says whether the run's end has arrived, without waiting.
func (e *Editor) runEnded(runID string) bool {
	for _, m := range e.Messages() {
		if s, ok := runStateOf(m, runID); ok && s.State.Finished() {
			return true
		}
	}
	return false
}

// ToolRunning waits until some tool call is in progress.
func (e *Editor) ToolRunning() {
	e.t.Helper()
	e.Await("a tool call in progress", func(m Message) bool {
		if m.Method != wire.MethodUpdate {
			return false
		}
		var p agent.UpdateParams
		return json.Unmarshal(m.Params, &p) == nil && p.Update.Kind == agent.UpdateToolCallUpdate && p.Update.Status == agent.StatusInProgress
	})
}

// Requests waits until n input requests of the run have arrived and returns
// them in order. A run that ended first fails the wait at once: it asks
// nothing more.
func (e *Editor) Requests(runID string, n int) []agent.InputRequest {
	e.t.Helper()
	var out []agent.InputRequest
	e.AwaitUnless(fmt.Sprintf("%d input requests of run %s", n, runID), func(Message) bool {
		out = e.inputRequests(runID)
		return len(out) >= n
	}, func(m Message) string {
		if s, ok := runStateOf(m, runID); ok && s.State.Finished() {
			return fmt.Sprintf("run %s ended %s (%s) after %d of them", runID, s.State, s.Error, len(out))
		}
		return ""
	})
	return out[:n]
}

func (e *Editor) inputRequests(runID string) []agent.InputRequest {
	var out []agent.InputRequest
	for _, m := range e.msgsLocked() {
		if m.Method != wire.MethodInputRequest {
			continue
		}
		var r agent.InputRequest
		if json.Unmarshal(m.Params, &r) == nil && r.RunID == runID {
			out = append(out, r)
		}
	}
	return out
}

// msgsLocked reads msgs while Await holds the lock.
func (e *Editor) msgsLocked() []Message { return e.msgs }

// Resolved waits for the request to be resolved and returns the notice.
func (e *Editor) Resolved(requestID string) agent.InputResolved {
	e.t.Helper()
	var res agent.InputResolved
	e.Await("request "+requestID+" resolved", func(m Message) bool {
		if m.Method != wire.MethodInputResolved {
			return false
		}
		var r agent.InputResolved
		if json.Unmarshal(m.Params, &r) != nil || r.RequestID != requestID {
			return false
		}
		res = r
		return true
	})
	return res
}

// Updates returns the run's updates received so far, in order.
func (e *Editor) Updates(runID string) []agent.Update {
	var out []agent.Update
	for _, m := range e.Messages() {
		if m.Method != wire.MethodUpdate {
			continue
		}
		var p agent.UpdateParams
		if json.Unmarshal(m.Params, &p) == nil && p.RunID == runID {
			out = append(out, p.Update)
		}
	}
	return out
}

// Text is the run's streamed message text.
func (e *Editor) Text(runID string) string {
	s := ""
	for _, u := range e.Updates(runID) {
		if u.Kind == agent.UpdateMessageChunk {
			s += u.Text
		}
	}
	return s
}

// Seqs returns the seq of every notification of the run, in arrival order.
func (e *Editor) Seqs(runID string) []int64 {
	var out []int64
	for _, m := range e.Messages() {
		var p struct {
			RunID string `json:"runId"`
			Seq   int64  `json:"seq"`
		}
		if json.Unmarshal(m.Params, &p) == nil && p.RunID == runID && p.Seq > 0 {
			out = append(out, p.Seq)
		}
	}
	return out
}

// Run starts a run and returns its ids.
func (e *Editor) Run(p agent.RunParams) agent.RunResult {
	e.t.Helper()
	var res agent.RunResult
	e.MustCall(wire.MethodRun, p, &res)
	return res
}

// ReplyOption answers a choice.
func ReplyOption(id, option string) (string, any) {
	return wire.MethodReply, agent.ReplyParams{RequestID: id, OptionID: option}
}

// ReplyText answers a question.
func ReplyText(id, text string) (string, any) {
	return wire.MethodReply, agent.ReplyParams{RequestID: id, Text: &text}
}

// Decide answers a confirmation.
func Decide(id string, decision tools.Decision, reason string) (string, any) {
	return wire.MethodConfirm, agent.ConfirmParams{RequestID: id, Decision: decision, Reason: reason}
}

// Answer sends a reply built by ReplyText, ReplyOption or Decide.
func (e *Editor) Answer(method string, params any) {
	e.t.Helper()
	e.MustCall(method, params, nil)
}
