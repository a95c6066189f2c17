package agent

import (
	"time"
)

// complete ends a run with its answer.
func (r *run) complete(text string, stop StopReason) {
	r.reportFiles()
	r.update(Update{Kind: UpdateResult, StopReason: stop, Text: text})
	r.mu.Lock()
	r.rec.FinalText = text
	r.mu.Unlock()
	r.finish(StateCompleted, stop, "")
}

// fail ends a run with an error that says what went wrong.
func (r *run) fail(stop StopReason, msg string) {
	r.logger().Warn("run failed", "stop_reason", stop, "err", msg)
	r.mu.Lock()
	r.cancelOpenLocked()
	r.mu.Unlock()
	r.reportFiles()
	r.finish(StateFailed, stop, msg)
}

// finishCancelled ends a run as cancelled, never as a failure.
func (r *run) finishCancelled() {
	r.mu.Lock()
	if r.rec.State.Finished() {
		r.mu.Unlock()
		return
	}
	r.cancelOpenLocked()
	r.mu.Unlock()
	r.reportFiles()
	r.finish(StateCancelled, StopCancelled, "")
}

// finish records the final state durably and hands the conversation back to
// the session before the editor hears the run is over, so a prompt sent the
// moment it ends continues the whole conversation.
func (r *run) finish(state State, stop StopReason, errText string) {
	r.mu.Lock()
	r.rec.State, r.rec.StopReason, r.rec.Error = state, stop, errText
	r.durableLocked()
	r.mu.Unlock()
	r.a.finishRun(r)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sendStateLocked()
	r.persistLocked(false) // the final seq
	r.closeLogLocked()
}

func (r *run) reportFiles() {
	if files := r.changedFiles(); len(files) > 0 {
		r.update(Update{Kind: UpdateFilesChanged, Files: files})
	}
}

// finishRun hands the run's conversation back to its session, closing any
// tool call left without a result so the history stays valid for the model.
func (a *Agent) finishRun(r *run) {
	r.mu.Lock()
	msgs := closeDanglingCalls(r.rec.Messages, r.rec.State)
	state, sid, rid := r.rec.State, r.rec.SessionID, r.rec.ID
	r.mu.Unlock()

	s, err := a.sessionRec(sid) // a run restored at start-up finds its session here
	if err != nil {
		a.log.Error("finishing run", "run_id", rid, "err", err)
		return
	}
	a.mu.Lock()
	if s.LastRunID == rid {
		s.Messages, s.State, s.UpdatedAt = msgs, state, time.Now().UTC()
	}
	a.mu.Unlock()
	if err := a.saveSession(s, true); err != nil {
		a.log.Error("persisting session", "err", err)
		return // the marker stays: the next start settles the run again
	}
	if err := a.store.markClosed(rid); err != nil {
		a.log.Warn("closing run", "err", err)
	}
}

// closeDanglingCalls adds a result for every tool call that has none (the
// run stopped in the middle of a step).
func closeDanglingCalls(msgs []Message, state State) []Message {
	out := append([]Message(nil), msgs...)
	answered := map[string]bool{}
	for _, m := range out {
		if m.Role == RoleTool {
			answered[m.ToolCallID] = true
		}
	}
	for i := len(out) - 1; i >= 0; i-- {
		if out[i].Role != RoleAssistant || len(out[i].ToolCalls) == 0 {
			continue
		}
		for _, c := range out[i].ToolCalls {
			if !answered[c.ID] {
				out = append(out, Message{Role: RoleTool, ToolCallID: c.ID, Content: "Not run: the run ended (" + string(state) + ") before this call finished."})
			}
		}
		break
	}
	return out
}
