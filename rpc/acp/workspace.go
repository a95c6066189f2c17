package acp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/rpc/wire"
)

// workspace is one agent (one root) and the sessions of it this connection
// has opened.
type workspace struct {
	srv      *server
	root     string
	stateDir string
	agent    *agent.Agent
	index    *indexState
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
		index: newIndexState(s.opts.OpenIndex != nil), meta: openMetaStore(state, s.log), done: make(chan struct{})}
	ws.events = agent.NewQueue(ws)
	o := s.opts
	ws.agent, err = agent.New(agent.Config{Root: root, StateDir: state, UserConfigDir: o.UserConfigDir, Model: o.Model,
		NewModel: o.NewModel, Policy: o.Policy, QuestionTimeout: o.QuestionTimeout, ConfirmTimeout: o.ConfirmTimeout,
		MaxSteps: o.MaxSteps, RetryBase: o.RetryBase, Searcher: ws.index, Logger: s.log.With("root", root),
		Notify: ws.events.Notify}) // never makes a run wait on the client
	if err != nil {
		return nil, fmt.Errorf("opening agent for %s: %w", root, err)
	}
	go ws.work()
	if s.opts.OpenIndex != nil {
		ws.index.start(s.opts.OpenIndex, root, cache, s.log)
	}
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
func (ws *workspace) Update(p wire.UpdateParams) {
	if sess := ws.route(p.SessionID); sess != nil {
		sess.onUpdate(p)
	}
}

// InputRequest implements agent.Listener.
func (ws *workspace) InputRequest(req wire.InputRequest) {
	if sess := ws.route(req.SessionID); sess != nil {
		sess.ask(req)
	}
}

// InputResolved implements agent.Listener.
func (ws *workspace) InputResolved(p wire.InputResolved) {
	if sess := ws.route(p.SessionID); sess != nil {
		sess.resolved(p.RequestID)
	}
}

// RunState implements agent.Listener.
func (ws *workspace) RunState(p wire.RunState) {
	if sess := ws.route(p.SessionID); sess != nil {
		sess.onRunState(p)
	}
}

// attach makes the session receive its agent session's notifications.
// routeMu is held by the caller.
func (ws *workspace) attachLocked(sess *session, agentID string) {
	if agentID != "" {
		ws.byAgent[agentID] = sess
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
func (ws *workspace) sessionState(agentID string) (wire.SessionInfo, bool) {
	for _, si := range ws.agent.Sessions() {
		if si.SessionID == agentID {
			return si, true
		}
	}
	return wire.SessionInfo{}, false
}

func (ws *workspace) contextWindow() int {
	if w := ws.agent.ModelConfig().ContextWindow; w > 0 {
		return w
	}
	return 128_000
}

func (ws *workspace) close() {
	ws.index.close()
	ws.agent.Shutdown()
	<-ws.done
}

// indexState holds the index once open; until then search answers an empty
// partial result, so nothing waits for indexing.
type indexState struct {
	mu     sync.Mutex // guards idx, err, closed
	idx    Index
	err    error
	closed bool
	cancel context.CancelFunc
}

func newIndexState(enabled bool) *indexState {
	st := &indexState{cancel: func() {}}
	if !enabled {
		st.err = errors.New("agentd acp runs without a workspace index")
	}
	return st
}

// start opens, builds and watches the index in the background until close.
func (st *indexState) start(open IndexOpener, root, dir string, log *slog.Logger) {
	ctx, cancel := context.WithCancel(context.Background())
	st.mu.Lock()
	st.cancel = cancel
	st.mu.Unlock()
	go st.run(ctx, open, root, dir, log)
}

func (st *indexState) run(ctx context.Context, open IndexOpener, root, dir string, log *slog.Logger) {
	idx, err := open(ctx, root, dir)
	st.mu.Lock()
	if st.closed {
		st.mu.Unlock()
		if idx != nil {
			_ = idx.Close()
		}
		return
	}
	st.idx, st.err = idx, err
	st.mu.Unlock()
	if err != nil {
		log.Warn("opening index", "root", root, "err", err)
		return
	}
	if err := idx.Build(ctx, func(int, int) {}); err != nil && ctx.Err() == nil {
		log.Warn("building index", "root", root, "err", err)
	}
	if ctx.Err() == nil {
		if err := idx.Watch(ctx); err != nil && ctx.Err() == nil {
			log.Warn("watching workspace", "root", root, "err", err)
		}
	}
}

// Search implements tools.Searcher.
func (st *indexState) Search(ctx context.Context, query string, limit int) ([]wire.SearchHit, bool, error) {
	st.mu.Lock()
	idx, err := st.idx, st.err
	st.mu.Unlock()
	if err != nil {
		return nil, false, fmt.Errorf("the workspace index could not be opened: %w", err)
	}
	if idx == nil {
		return nil, true, nil
	}
	return idx.Search(ctx, query, limit)
}

func (st *indexState) close() {
	st.mu.Lock()
	idx, cancel := st.idx, st.cancel
	st.idx, st.closed = nil, true
	st.mu.Unlock()
	cancel()
	if idx != nil {
		_ = idx.Close()
	}
}
