package acp

import (
	"fmt"
	"sync"

	"github.com/agentd/agentd/agent"
)

// workspace is one agent (one root) and the sessions of it this connection
// has opened.
type workspace struct {
	srv      *server
	root     string
	stateDir string
	agent    *agent.Agent
	index    Index
	meta     *metaStore
	events   *agent.Queue

	// routeMu is held (for writing) while a run starts, so the run's first
	// notifications, sent before Run returns, find their session.
	routeMu sync.RWMutex
	byAgent map[string]*session // agent session id → session
	done    chan struct{}
}

func openWorkspace(s *server, root string) (*workspace, error) {
	state, cache, err := s.opts.StateDirs(root)
	if err != nil {
		return nil, fmt.Errorf("state directory of %s: %w", root, err)
	}
	ws := &workspace{srv: s, root: root, stateDir: state, byAgent: map[string]*session{},
		index: Index(noIndex{}), meta: openMetaStore(state, s.log), done: make(chan struct{})}
	if s.opts.OpenIndex != nil {
		ws.index = s.opts.OpenIndex(root, cache) // runs in the background
	}
	ws.events = agent.NewQueue(ws)
	cfg := s.opts.Agent
	cfg.Root, cfg.StateDir, cfg.Searcher, cfg.Logger = root, state, ws.index, s.log.With("root", root)
	cfg.Files = filesOf(ws, s.caps.Fs, s.clientName) // the caller holds s.mu; initialize has set caps
	cfg.Listener = ws.events                         // never makes a run wait on the client
	ws.agent, err = agent.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("opening agent for %s: %w", root, err)
	}
	go ws.work()
	return ws, nil
}

// work delivers run notifications in order, one workspace at a time.
func (ws *workspace) work() {
	defer close(ws.done)
	ws.events.Run(ws.srv.quit)
}

// route finds the ACP session of an agent session, nil for one this client
// has not opened.
func (ws *workspace) route(agentID string) *session {
	ws.routeMu.RLock()
	defer ws.routeMu.RUnlock()
	return ws.byAgent[agentID]
}

// Update implements agent.Listener.
func (ws *workspace) Update(p agent.UpdateParams) {
	if sess := ws.route(p.SessionID); sess != nil {
		sess.onUpdate(p)
	}
}

// InputRequest implements agent.Listener.
func (ws *workspace) InputRequest(req agent.InputRequest) {
	if sess := ws.route(req.SessionID); sess != nil {
		sess.ask(req)
	}
}

// InputResolved implements agent.Listener.
func (ws *workspace) InputResolved(p agent.InputResolved) {
	if sess := ws.route(p.SessionID); sess != nil {
		sess.resolved(p.RequestID)
	}
}

// RunState implements agent.Listener.
func (ws *workspace) RunState(p agent.RunState) {
	if sess := ws.route(p.SessionID); sess != nil {
		sess.onRunState(p)
	}
}

func (ws *workspace) detach(sess *session) {
	ws.routeMu.Lock()
	defer ws.routeMu.Unlock()
	for id, s := range ws.byAgent {
		if s == sess {
			delete(ws.byAgent, id)
		}
	}
}

// sessionState returns the state and last run of an agent session.
func (ws *workspace) sessionState(agentID string) (agent.SessionInfo, bool) {
	return ws.agent.SessionInfo(agentID)
}

func (ws *workspace) contextWindow() int {
	if w := ws.agent.ContextWindow(); w > 0 {
		return w
	}
	return 128_000
}

func (ws *workspace) close() {
	if err := ws.index.Close(); err != nil {
		ws.srv.log.Warn("closing index", "err", err)
	}
	ws.agent.Shutdown()
	<-ws.done
}
