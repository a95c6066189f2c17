package acp

import (
	"context"
	"sync"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/tools/mcp"
)

// session is an ACP session open in this connection.
type session struct {
	srv *server
	ws  *workspace
	id  string // the id the client knows

	// sendMu keeps run updates in order: it is held while one is translated
	// and sent, by the notification and by a deferred running output.
	sendMu sync.Mutex

	mu      sync.Mutex  // guards the fields below
	agentID string      // "" until the first run creates the agent session
	first   sessionMeta // the settings the first run takes, until it has
	// turns are the session/prompt requests in flight, by run: the one at
	// work and those queued behind it (agentd queues a prompt sent during a
	// turn, as Zed does its own: it starts when the turn before it ends).
	turns  map[string]*turn
	asking []agent.InputRequest          // free-text questions the next prompts answer
	asks   map[string]context.CancelFunc // client requests in flight, by input request id
	runs   map[string]*translator
	mcp    []mcp.Server // the servers the client passed; every run gets them
	closed bool
}

// turn is a session/prompt in flight: it waits for its run to end.
type turn struct {
	runID    string
	queued   bool          // its run waits for the session's run before it
	done     chan turnEnd  // buffered: the sender never waits
	stopping chan struct{} // closed by session/cancel
	stopOnce sync.Once
}

// stop says the client cancelled the turn.
func (t *turn) stop() { t.stopOnce.Do(func() { close(t.stopping) }) }

type turnEnd struct {
	stop acpsdk.StopReason
	err  error
}

func newTurn(runID string) *turn {
	return &turn{runID: runID, done: make(chan turnEnd, 1), stopping: make(chan struct{})}
}

func newSession(s *server, ws *workspace, id string, m sessionMeta) *session {
	return &session{srv: s, ws: ws, id: id, agentID: m.AgentID, first: m, turns: map[string]*turn{},
		asks: map[string]context.CancelFunc{}, runs: map[string]*translator{}}
}

// activeTurnLocked is the turn whose run is at work (not queued), if any.
// s.mu is held.
func (s *session) activeTurnLocked() *turn {
	for _, t := range s.turns {
		if !t.queued {
			return t
		}
	}
	return nil
}

// attach routes the agent session's notifications to this session.
func (s *session) attach() {
	s.mu.Lock()
	agentID := s.agentID
	s.mu.Unlock()
	if agentID == "" {
		return
	}
	s.ws.routeMu.Lock()
	s.ws.byAgent[agentID] = s
	s.ws.routeMu.Unlock()
}

// close forgets the session in this connection; its state stays on disk.
func (s *session) close() {
	s.mu.Lock()
	s.closed = true
	turns := s.turns
	s.turns = map[string]*turn{}
	cancels := s.asks
	s.asks = map[string]context.CancelFunc{}
	s.mu.Unlock()
	for _, c := range cancels {
		c()
	}
	for _, t := range turns {
		t.done <- turnEnd{stop: acpsdk.StopReasonCancelled}
	}
	s.ws.detach(s)
	s.srv.forget(s)
}

// send writes one session/update.
func (s *session) send(u acpsdk.SessionUpdate) {
	err := s.srv.client().SessionUpdate(context.Background(), acpsdk.SessionNotification{SessionId: acpsdk.SessionId(s.id), Update: u})
	if err != nil {
		s.srv.log.Debug("session/update not sent", "session", s.id, "err", err)
	}
}

func (s *session) say(text string) { s.send(acpsdk.UpdateAgentMessageText(text)) }

func (s *session) onUpdate(p agent.UpdateParams) {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	s.mu.Lock()
	tr := s.runs[p.RunID]
	if tr == nil {
		tr = newTranslator(s.ws.root, s.ws.contextWindow(), s.later)
		s.runs[p.RunID] = tr
	}
	s.mu.Unlock()
	for _, u := range tr.translate(p.Update) {
		s.send(u)
	}
}

// later sends what flush returns after d, in order with the run's updates
// (a translator's laterFunc).
func (s *session) later(d time.Duration, flush func() []acpsdk.SessionUpdate) *time.Timer {
	return time.AfterFunc(d, func() {
		s.sendMu.Lock()
		defer s.sendMu.Unlock()
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		if closed {
			return
		}
		for _, u := range flush() {
			s.send(u)
		}
	})
}

// onRunState ends the turn waiting on a run that finished, or that paused
// because its state could not be saved (ACP has no resume to go on with);
// a queued turn whose run starts becomes the turn at work.
func (s *session) onRunState(p agent.RunState) {
	if !p.State.Finished() && p.State != agent.StatePaused {
		s.mu.Lock()
		if t := s.turns[p.RunID]; t != nil && p.State != agent.StateQueued {
			t.queued = false
		}
		s.mu.Unlock()
		return
	}
	s.mu.Lock()
	t := s.turns[p.RunID]
	delete(s.turns, p.RunID)
	s.asking = dropRun(s.asking, p.RunID)
	tr := s.runs[p.RunID]
	delete(s.runs, p.RunID)
	s.mu.Unlock()
	if tr != nil {
		s.sendMu.Lock()
		tr.stop()
		s.sendMu.Unlock()
	}
	end := s.endOf(p)
	if t != nil {
		t.done <- end
	}
}

// endOf says how a finished run ends the ACP turn. A run that gave up
// (repeated calls, failing tools) is a refusal to go on; a model that kept
// failing is an error.
func (s *session) endOf(p agent.RunState) turnEnd {
	switch p.State {
	case agent.StateCancelled:
		return turnEnd{stop: acpsdk.StopReasonCancelled}
	case agent.StatePaused:
		return turnEnd{err: &acpsdk.RequestError{Code: -32603, Message: "agentd: the run stopped: " + p.Error}}
	case agent.StateFailed:
		if p.StopReason == agent.StopError {
			return turnEnd{err: &acpsdk.RequestError{Code: -32603, Message: "agentd: the run failed: " + p.Error}}
		}
		s.say("\n\nagentd stopped: " + p.Error)
		return turnEnd{stop: acpsdk.StopReasonRefusal}
	}
	if p.StopReason == agent.StopMaxSteps {
		return turnEnd{stop: acpsdk.StopReasonMaxTurnRequests}
	}
	return turnEnd{stop: acpsdk.StopReasonEndTurn}
}

func dropRun(reqs []agent.InputRequest, runID string) []agent.InputRequest {
	out := reqs[:0]
	for _, r := range reqs {
		if r.RunID != runID {
			out = append(out, r)
		}
	}
	return out
}

// cancel stops the session's unfinished run, if any, and the runs queued
// behind it: the user stopped the agent.
func (s *session) cancel() {
	s.mu.Lock()
	runID := ""
	var queued []string
	for _, t := range s.turns {
		t.stop()
		if t.queued {
			queued = append(queued, t.runID)
		} else {
			runID = t.runID
		}
	}
	if runID == "" && len(s.asking) > 0 {
		runID = s.asking[0].RunID
	}
	agentID := s.agentID
	s.mu.Unlock()
	for _, id := range queued {
		if err := s.ws.agent.Cancel(context.Background(), id); err != nil {
			s.srv.log.Warn("cancelling queued run", "run", id, "err", err)
		}
	}
	if runID == "" && agentID != "" {
		if si, ok := s.ws.sessionState(agentID); ok && !si.State.Finished() && si.State != agent.StateIdle {
			runID = si.LastRunID
		}
	}
	if runID != "" {
		if err := s.ws.agent.Cancel(context.Background(), runID); err != nil {
			s.srv.log.Warn("cancelling run", "run", runID, "err", err)
		}
	}
}

// track registers a client request for an input request; false when it is
// already being asked (a re-ask racing the live notification).
func (s *session) track(requestID string) (context.Context, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.asks[requestID]; ok || s.closed {
		return nil, false
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.asks[requestID] = cancel
	return ctx, true
}

func (s *session) untrack(requestID string) {
	s.mu.Lock()
	cancel := s.asks[requestID]
	delete(s.asks, requestID)
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// resolved withdraws the client request of an input request resolved
// elsewhere (a rule, a timeout, a cancel, another editor).
func (s *session) resolved(requestID string) {
	s.mu.Lock()
	cancel := s.asks[requestID]
	delete(s.asks, requestID)
	for i, q := range s.asking {
		if q.RequestID == requestID {
			s.asking = append(s.asking[:i:i], s.asking[i+1:]...)
			break
		}
	}
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}
