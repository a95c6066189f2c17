package agent

import (
	"cmp"
	"slices"
	"time"
)

// A prompt sent while its session's run is still at work (or waiting on
// the user, or paused) queues: its run is saved in state queued before the
// editor hears of it, and starts when every run of the session before it
// has ended, in the order they were sent, after a daemon restart too. It
// takes the conversation as the run before it left it. Cancelled while it
// waits, it ends without ever running.

// sessionBusyLocked reports whether a run of the session has not finished:
// working, waiting on the user, paused, or queued. a.mu is held.
func (a *Agent) sessionBusyLocked(sessionID string) bool {
	for _, r := range a.runs {
		if r.rec.SessionID == sessionID && r.rec.Parent == nil && !r.state().Finished() {
			return true
		}
	}
	return false
}

// nextQueuedLocked is the session's oldest queued run, nil when there is
// none or a run of the session is still unfinished. a.mu is held.
func (a *Agent) nextQueuedLocked(sessionID string) *run {
	var next *run
	for _, r := range a.runs {
		if r.rec.SessionID != sessionID || r.rec.Parent != nil {
			continue // a subagent is part of its parent's turn
		}
		switch st := r.state(); {
		case st == StateQueued:
			if next == nil || cmp.Or(r.rec.CreatedAt.Compare(next.rec.CreatedAt), cmp.Compare(r.rec.ID, next.rec.ID)) < 0 {
				next = r
			}
		case !st.Finished():
			return nil // its turn has not come
		}
	}
	return next
}

// startQueued starts the session's next queued run, if its turn has come:
// called when a run ends, when a run is queued (the one before may have
// just ended), and at start-up.
func (a *Agent) startQueued(sessionID string) {
	if a.closing.Load() {
		return
	}
	s, err := a.sessionRec(sessionID)
	if err != nil {
		a.log.Error("starting a queued run", "session_id", sessionID, "err", err)
		return
	}
	a.mu.Lock()
	r := a.nextQueuedLocked(sessionID)
	if r == nil {
		a.mu.Unlock()
		return
	}
	toModel, err := a.expandPrompt(r.rec.Prompt)
	if err == nil {
		a.takeTurnLocked(r, s, toModel, time.Now().UTC())
	}
	a.mu.Unlock()
	if err != nil {
		// The custom command it names broke while it waited.
		r.mu.Lock()
		r.rec.State = StateRunning
		r.mu.Unlock()
		r.fail(StopError, err.Error())
		return
	}
	if err := a.saveSession(s, false); err != nil {
		a.log.Error("persisting session", "err", err)
	}
	r.mu.Lock()
	err = r.persistLocked(true)
	if err == nil {
		r.sendStateLocked()
	}
	r.mu.Unlock()
	if err != nil {
		r.pauseUnsaved(err) // resumed, it saves itself and goes on
		return
	}
	a.maintainCheckpoints()
	r.start()
}

// dropQueued ends a queued run as cancelled without running it, and
// reports whether r was queued.
func (a *Agent) dropQueued(r *run) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rec.State != StateQueued {
		return false
	}
	r.rec.State, r.rec.StopReason = StateCancelled, StopCancelled
	if err := r.persistLocked(true); err != nil {
		r.logger().Warn("the cancel of a queued run is not saved: it may wait again after a restart", "err", err)
	}
	if err := r.a.store.saveRun(r.rec, false); err != nil {
		r.logger().Warn("writing the run's header", "err", err)
	} else if err := r.a.store.markClosed(r.rec.ID); err != nil {
		r.logger().Warn("closing run", "err", err)
	}
	r.sendStateLocked()
	r.closeLogLocked()
	return true
}

// startQueuedAfterLoad starts, for each session with queued runs, the next
// one whose turn has come (the run before it ended before the restart).
func (a *Agent) startQueuedAfterLoad() {
	a.mu.Lock()
	var sessions []string
	for _, r := range a.runs {
		if r.rec.State == StateQueued && !slices.Contains(sessions, r.rec.SessionID) {
			sessions = append(sessions, r.rec.SessionID)
		}
	}
	a.mu.Unlock()
	for _, sid := range sessions {
		a.startQueued(sid)
	}
}
