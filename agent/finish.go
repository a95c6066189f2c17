package agent

import (
	"fmt"
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
	r.cancelChildren() // subagent.go
	r.mu.Lock()
	r.cancelOpenLocked()
	r.mu.Unlock()
	r.reportFiles()
	r.finish(StateFailed, stop, msg)
}

// finishCancelled ends a run as cancelled, never as a failure.
func (r *run) finishCancelled() {
	if r.state().Finished() {
		return
	}
	r.cancelChildren() // subagent.go: the cancel reaches them first
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

// ending is how a run ends, kept while its end cannot be saved.
type ending struct {
	state State
	stop  StopReason
	err   string
}

// finish ends the run: the conversation goes back to its session, then
// the final state is saved, synced, and only then does the editor hear the
// run is over, so a prompt sent the moment it ends continues the whole
// conversation, and no end is claimed that a restart would not find. An
// end that cannot be saved pauses the run instead (pauseUnsaved); resuming
// it ends it.
func (r *run) finish(state State, stop StopReason, errText string) {
	r.mu.Lock()
	r.over = true // a steer now is too late (steer.go)
	r.mu.Unlock()
	if r.sub == nil {
		r.runFinished(state, stop, errText) // a subagent is not a turn of its own
	}
	r.mu.Lock()
	r.ending = &ending{state, stop, errText}
	r.rec.State, r.rec.StopReason, r.rec.Error = state, stop, errText
	r.mu.Unlock()
	var err error
	if r.sub == nil {
		err = r.a.finishRun(r) // a subagent's conversation is its own
	}
	r.mu.Lock()
	if err == nil {
		err = r.persistLocked(true)
	}
	if err != nil {
		r.mu.Unlock()
		r.pauseUnsaved(err)
		return
	}
	r.ending = nil
	// The header says how the run ended to those who read it without
	// replaying its journal (agent/history, agent/sessions), so it is
	// written before anyone hears of the end; the open-run marker goes only
	// after it, so a restart between the two mends the header.
	if err := r.a.store.saveRun(r.rec, false); err != nil {
		r.logger().Warn("writing the run's header", "err", err)
	} else if err := r.a.store.markClosed(r.rec.ID); err != nil {
		r.logger().Warn("closing run", "err", err)
	}
	r.sendStateLocked()
	if err := r.flushEventsLocked(); err != nil {
		r.logger().Warn("the event log lacks the run's end", "err", err)
	}
	r.closeLogLocked()
	r.closeEndedLocked()
	r.mu.Unlock()
	if r.sub == nil {
		r.a.startQueued(r.rec.SessionID) // queue.go
	}
}

func (r *run) reportFiles() {
	if files := r.changedFiles(); len(files) > 0 {
		r.update(Update{Kind: UpdateFilesChanged, Files: files})
	}
}

// finishRun hands the run's conversation back to its session, closing any
// tool call left without a result so the history stays valid for the model.
func (a *Agent) finishRun(r *run) error {
	r.mu.Lock()
	msgs := closeDanglingCalls(r.rec.Messages, r.rec.State)
	state, sid, rid := r.rec.State, r.rec.SessionID, r.rec.ID
	r.mu.Unlock()

	s, err := a.sessionRec(sid) // a run restored at start-up finds its session here
	if err != nil {
		a.log.Error("finishing run", "run_id", rid, "err", err)
		return nil // the marker stays: the next start settles the run again
	}
	a.mu.Lock()
	if s.LastRunID == rid {
		s.Messages, s.State, s.UpdatedAt = msgs, state, time.Now().UTC()
	}
	a.mu.Unlock()
	if err := a.saveSession(s, true); err != nil {
		// The marker stays: the next start settles the run again.
		return fmt.Errorf("%w: %w", ErrNotSaved, err)
	}
	return nil
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
