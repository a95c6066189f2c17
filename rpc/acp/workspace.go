package acp

import (
	"context"
	"encoding/json"
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
	events   *queue

	// routeMu is held (for writing) while a run starts, so the run's first
	// notifications, sent before Run returns, find their session.
	routeMu sync.RWMutex
	byAgent map[string]*session // agent session id → session
	done    chan struct{}
}

// event is one run notification as the agent sent it.
type event struct {
	method string
	params json.RawMessage
}

func openWorkspace(s *server, root string) (*workspace, error) {
	state, cache, err := s.opts.StateDirs(root)
	if err != nil {
		return nil, fmt.Errorf("state directory of %s: %w", root, err)
	}
	ws := &workspace{srv: s, root: root, stateDir: state, events: newQueue(), byAgent: map[string]*session{},
		index: newIndexState(s.opts.OpenIndex != nil), meta: openMetaStore(state, s.log), done: make(chan struct{})}
	o := s.opts
	ws.agent, err = agent.New(agent.Config{Root: root, StateDir: state, UserConfigDir: o.UserConfigDir, Model: o.Model,
		NewModel: o.NewModel, Policy: o.Policy, QuestionTimeout: o.QuestionTimeout, ConfirmTimeout: o.ConfirmTimeout,
		MaxSteps: o.MaxSteps, RetryBase: o.RetryBase, Searcher: ws.index, Logger: s.log.With("root", root),
		Notify: func(method string, params json.RawMessage) {
			// Called under the run's lock: only queue.
			ws.events.push(event{method: method, params: params})
		}})
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
	for {
		evs, ok := ws.events.pop(ws.srv.quit)
		if !ok {
			return
		}
		for _, ev := range evs {
			ws.dispatch(ev)
		}
	}
}

func (ws *workspace) dispatch(ev event) {
	var head struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(ev.params, &head); err != nil {
		ws.srv.log.Warn("undecodable run notification", "method", ev.method, "err", err)
		return
	}
	ws.routeMu.RLock()
	sess := ws.byAgent[head.SessionID]
	ws.routeMu.RUnlock()
	if sess == nil {
		return // a session this client has not opened
	}
	switch ev.method {
	case wire.MethodUpdate:
		var p wire.UpdateParams
		if json.Unmarshal(ev.params, &p) == nil {
			sess.onUpdate(p)
		}
	case wire.MethodInputRequest:
		var req wire.InputRequest
		if json.Unmarshal(ev.params, &req) == nil {
			sess.ask(req)
		}
	case wire.MethodInputResolved:
		var p wire.InputResolved
		if json.Unmarshal(ev.params, &p) == nil {
			sess.resolved(p.RequestID)
		}
	case wire.MethodRunState:
		var p wire.RunState
		if json.Unmarshal(ev.params, &p) == nil {
			sess.onRunState(p)
		}
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

// queue is an unbounded FIFO, so the agent never waits on the client.
type queue struct {
	mu    sync.Mutex
	items []event
	ready chan struct{}
}

func newQueue() *queue { return &queue{ready: make(chan struct{}, 1)} }

func (q *queue) push(ev event) {
	q.mu.Lock()
	q.items = append(q.items, ev)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// pop waits for events; false when quit closes.
func (q *queue) pop(quit <-chan struct{}) ([]event, bool) {
	for {
		q.mu.Lock()
		items := q.items
		q.items = nil
		q.mu.Unlock()
		if len(items) > 0 {
			return items, true
		}
		select {
		case <-q.ready:
		case <-quit:
			return nil, false
		}
	}
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
