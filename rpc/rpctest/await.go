package rpctest

import (
	"encoding/json"
	"fmt"

	"github.com/agentd/agentd/rpc/wire"
)

// RunState waits for the run to reach state and returns the notification.
func (e *Editor) RunState(runID, state string) wire.RunState {
	e.t.Helper()
	var st wire.RunState
	e.Await(fmt.Sprintf("run %s state %s", runID, state), func(m Message) bool {
		if m.Method != wire.MethodRunState {
			return false
		}
		var s wire.RunState
		if json.Unmarshal(m.Params, &s) != nil || s.RunID != runID || s.State != state {
			return false
		}
		st = s
		return true
	})
	return st
}

// Finished waits for the run to end in any final state.
func (e *Editor) Finished(runID string) wire.RunState {
	e.t.Helper()
	var st wire.RunState
	e.Await("run "+runID+" to finish", func(m Message) bool {
		if m.Method != wire.MethodRunState {
			return false
		}
		var s wire.RunState
		if json.Unmarshal(m.Params, &s) != nil || s.RunID != runID {
			return false
		}
		switch s.State {
		case wire.StateCompleted, wire.StateFailed, wire.StateCancelled:
			st = s
			return true
		}
		return false
	})
	return st
}

// ToolRunning waits until some tool call is in progress.
func (e *Editor) ToolRunning() {
	e.t.Helper()
	e.Await("a tool call in progress", func(m Message) bool {
		if m.Method != wire.MethodUpdate {
			return false
		}
		var p wire.UpdateParams
		return json.Unmarshal(m.Params, &p) == nil && p.Update.Kind == wire.UpdateToolCallUpdate && p.Update.Status == wire.StatusInProgress
	})
}

// Requests waits until n input requests of the run have arrived and returns
// them in order.
func (e *Editor) Requests(runID string, n int) []wire.InputRequest {
	e.t.Helper()
	var out []wire.InputRequest
	e.Await(fmt.Sprintf("%d input requests of run %s", n, runID), func(Message) bool {
		out = e.inputRequests(runID)
		return len(out) >= n
	})
	return out[:n]
}

func (e *Editor) inputRequests(runID string) []wire.InputRequest {
	var out []wire.InputRequest
	for _, m := range e.msgsLocked() {
		if m.Method != wire.MethodInputRequest {
			continue
		}
		var r wire.InputRequest
		if json.Unmarshal(m.Params, &r) == nil && r.RunID == runID {
			out = append(out, r)
		}
	}
	return out
}

// msgsLocked reads msgs while Await holds the lock.
func (e *Editor) msgsLocked() []Message { return e.msgs }

// Resolved waits for the request to be resolved and returns the notice.
func (e *Editor) Resolved(requestID string) wire.InputResolved {
	e.t.Helper()
	var res wire.InputResolved
	e.Await("request "+requestID+" resolved", func(m Message) bool {
		if m.Method != wire.MethodInputResolved {
			return false
		}
		var r wire.InputResolved
		if json.Unmarshal(m.Params, &r) != nil || r.RequestID != requestID {
			return false
		}
		res = r
		return true
	})
	return res
}

// Updates returns the run's updates received so far, in order.
func (e *Editor) Updates(runID string) []wire.Update {
	var out []wire.Update
	for _, m := range e.Messages() {
		if m.Method != wire.MethodUpdate {
			continue
		}
		var p wire.UpdateParams
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
		if u.Kind == wire.UpdateMessageChunk {
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
func (e *Editor) Run(p wire.RunParams) wire.RunResult {
	e.t.Helper()
	var res wire.RunResult
	e.MustCall(wire.MethodRun, p, &res)
	return res
}

// ReplyOption answers a choice.
func ReplyOption(id, option string) (string, any) {
	return wire.MethodReply, wire.ReplyParams{RequestID: id, OptionID: option}
}

// ReplyText answers a question.
func ReplyText(id, text string) (string, any) {
	return wire.MethodReply, wire.ReplyParams{RequestID: id, Text: &text}
}

// Decide answers a confirmation.
func Decide(id, decision, reason string) (string, any) {
	return wire.MethodConfirm, wire.ConfirmParams{RequestID: id, Decision: decision, Reason: reason}
}

// Answer sends a reply built by ReplyText, ReplyOption or Decide.
func (e *Editor) Answer(method string, params any) {
	e.t.Helper()
	e.MustCall(method, params, nil)
}
