package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/rpc/wire"
)

// Options configure a Server.
type Options struct {
	Version string
	// Agent is the configuration built from the daemon's settings; the
	// workspace's agent starts from it, with the editor's initialize
	// options over it.
	Agent agent.Config
	// StateDirs returns the per-workspace state directory (sessions, runs,
	// logs, rules) and cache directory (the index) for a workspace root.
	StateDirs func(root string) (state, cache string, err error)
	// OpenIndex starts the workspace index; nil means no index.
	OpenIndex IndexStarter
	Logger    *slog.Logger
}

type lifecycle int

const (
	stateNew lifecycle = iota
	stateInitialized
	stateShutdown
)

// Server is one connection to an editor.
type Server struct {
	opts   Options
	log    *slog.Logger
	conn   jsonrpc2.Conn
	framed *framedConn

	mu            sync.Mutex // guards the fields below
	state         lifecycle
	agent         *agent.Agent
	root          string
	cacheDir      string
	progress      bool
	progressToken string
	index         Index
	docs          map[string]bool
	// lang is the editor's language intelligence, when it declared any.
	lang *editorLanguage

	exited chan struct{}
	once   sync.Once
}

// Serve speaks the protocol on rwc until the editor sends exit or closes the
// connection, and returns the process exit code: 0 after shutdown, 1 without.
func Serve(ctx context.Context, rwc io.ReadWriteCloser, opts Options) int {
	s := newServer(opts)
	s.framed = newFramedConn(rwc, func(err error) { s.log.Warn("bad frame", "err", err) })
	s.framed.onOrphan = func(body []byte) {
		s.log.Warn("dropped a response without a usable id", "body", truncate(string(body), 200))
	}
	s.conn = jsonrpc2.NewConn(s.framed)
	s.conn.Go(ctx, s.handler())
	select {
	case <-s.conn.Done():
	case <-s.exited:
	case <-ctx.Done():
	}
	return s.close()
}

func newServer(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Server{opts: opts, log: opts.Logger, docs: map[string]bool{}, exited: make(chan struct{})}
}

// close stops runs and background work and flushes what is queued.
func (s *Server) close() int {
	s.mu.Lock()
	code := 1
	if s.state == stateShutdown {
		code = 0
	}
	s.mu.Unlock()
	s.stopWork()
	_ = s.conn.Close()
	return code
}

// handler builds the chain: $/cancelRequest is handled as it arrives; other
// messages are answered one after the other in arrival order, each in its
// own goroutine so the reader never blocks (runs report by notification).
func (s *Server) handler() jsonrpc2.Handler {
	h, canceller := jsonrpc2.CancelHandler(jsonrpc2.AsyncHandler(jsonrpc2.ReplyHandler(s.dispatch)))
	return func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
		if req.Method() == wire.MethodCancelRequest {
			var p struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal(req.Params(), &p) == nil {
				canceller(parseID(p.ID))
			}
			return nil
		}
		return h(ctx, reply, req)
	}
}

func parseID(raw json.RawMessage) jsonrpc2.ID {
	var n int32
	if json.Unmarshal(raw, &n) == nil {
		return jsonrpc2.NewNumberID(n)
	}
	var str string
	_ = json.Unmarshal(raw, &str)
	return jsonrpc2.NewStringID(str)
}

// dispatch routes a message to its handler and maps its error to a code. A
// panic in a handler is a bug: it is logged and answered as an internal
// error, and the daemon keeps serving.
func (s *Server) dispatch(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) (err error) {
	_, isCall := req.(*jsonrpc2.Call)
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("handler panic", "method", req.Method(), "panic", p)
			err = reply(ctx, nil, toWire(fmt.Errorf("%w: %v", errInternal, p)))
		}
	}()
	if !isCall {
		s.notification(ctx, req.Method(), req.Params())
		return reply(ctx, nil, nil)
	}
	result, herr := s.call(ctx, req.Method(), req.Params())
	if ctx.Err() != nil {
		// $/cancelRequest: whatever the handler made of it, the answer is
		// that the request was cancelled.
		herr = fmt.Errorf("%w: %s", errRequestCancelled, req.Method())
	}
	if herr != nil {
		s.log.Debug("request failed", "method", req.Method(), "err", herr)
		return reply(context.WithoutCancel(ctx), nil, toWire(herr))
	}
	return reply(ctx, result, nil)
}

func (s *Server) call(ctx context.Context, method string, params json.RawMessage) (any, error) {
	h, ok := requests[method]
	if !ok {
		return nil, fmt.Errorf("%w: %s", errMethodNotFound, method)
	}
	s.mu.Lock()
	state := s.state
	s.mu.Unlock()
	switch {
	case method == wire.MethodInitialize && state != stateNew:
		return nil, fmt.Errorf("%w: initialize was already called", errInvalidRequest)
	case method != wire.MethodInitialize && state == stateNew:
		return nil, fmt.Errorf("%w: %s before initialize", errNotInitialized, method)
	case state == stateShutdown:
		return nil, fmt.Errorf("%w: %s after shutdown", errShuttingDown, method)
	}
	return h.handle(ctx, s, params)
}

func (s *Server) notification(ctx context.Context, method string, params json.RawMessage) {
	if method == wire.MethodExit {
		s.once.Do(func() { close(s.exited) })
		return
	}
	s.mu.Lock()
	ready := s.state == stateInitialized
	s.mu.Unlock()
	if !ready {
		return // LSP: notifications before initialize are dropped
	}
	if h, ok := notifications[method]; ok {
		if err := h.handle(ctx, s, params); err != nil {
			s.log.Warn("bad notification", "method", method, "err", err)
		}
	}
}

// stopWork stops the runs (their state stays persisted) and the index.
func (s *Server) stopWork() {
	s.mu.Lock()
	a, idx := s.agent, s.index
	s.index = nil
	s.mu.Unlock()
	if a != nil {
		a.Shutdown()
	}
	if idx != nil {
		if err := idx.Close(); err != nil {
			s.log.Warn("closing index", "err", err)
		}
	}
}

func (s *Server) theAgent() (*agent.Agent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.agent == nil {
		return nil, errors.New("agent not started")
	}
	return s.agent, nil
}

// decode reads params into v; a mismatch names the field. No params, null,
// [] and [null] all mean "no params" (vscode-jsonrpc sends [null] for a
// request made without any), which is fine wherever every field is
// optional; a method with a required field says which is missing.
func decode(params json.RawMessage, v any) error {
	if noParams(params) {
		return nil
	}
	if err := json.Unmarshal(params, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("%w: field %q must be %s, not %s", errInvalidParams, te.Field, te.Type, te.Value)
		}
		return fmt.Errorf("%w: %v", errInvalidParams, err)
	}
	return nil
}

func noParams(params json.RawMessage) bool {
	if len(params) > 16 {
		return false
	}
	switch string(bytes.Join(bytes.Fields(params), nil)) {
	case "", "null", "[]", "[null]":
		return true
	}
	return false
}
