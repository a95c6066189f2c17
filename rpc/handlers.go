package rpc

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentd/agentd/rpc/wire"
)

type requestHandler func(ctx context.Context, s *Server, params json.RawMessage) (any, error)

type notificationHandler func(ctx context.Context, s *Server, params json.RawMessage) error

// requests and notifications map each method to a thin handler that only
// decodes and dispatches.
var (
	requests      map[string]requestHandler
	notifications map[string]notificationHandler
)

func init() {
	requests = map[string]requestHandler{
		wire.MethodInitialize: initialize,
		wire.MethodShutdown:   shutdown,
		wire.MethodRun:        runHandler,
		wire.MethodReply:      replyHandler,
		wire.MethodConfirm:    confirmHandler,
		wire.MethodCancel:     cancelHandler,
		wire.MethodResume:     resumeHandler,
		wire.MethodPending:    pendingHandler,
		wire.MethodEvents:     eventsHandler,
		wire.MethodSessions:   sessionsHandler,
		wire.MethodIndexStat:  indexStatusHandler,
		wire.MethodIndexQuery: indexSearchHandler,
	}
	notifications = map[string]notificationHandler{
		wire.MethodInitialized:    initialized,
		wire.MethodDidOpen:        didOpen,
		wire.MethodDidChange:      didChange,
		wire.MethodDidSave:        didSave,
		wire.MethodDidClose:       didClose,
		wire.MethodProgressCancel: progressCancel,
	}
}

func runHandler(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p wire.RunParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	a, err := s.theAgent()
	if err != nil {
		return nil, err
	}
	return a.Run(ctx, p)
}

func replyHandler(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p wire.ReplyParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	a, err := s.theAgent()
	if err != nil {
		return nil, err
	}
	return struct{}{}, a.Reply(ctx, p)
}

func confirmHandler(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p wire.ConfirmParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.Decision == "" {
		return nil, fmt.Errorf("%w: decision is required", errInvalidParams)
	}
	a, err := s.theAgent()
	if err != nil {
		return nil, err
	}
	return struct{}{}, a.Confirm(ctx, p)
}

func cancelHandler(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p wire.RunRef
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	a, err := s.theAgent()
	if err != nil {
		return nil, err
	}
	return struct{}{}, a.Cancel(ctx, p.RunID)
}

func resumeHandler(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p wire.RunRef
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	a, err := s.theAgent()
	if err != nil {
		return nil, err
	}
	return struct{}{}, a.Resume(ctx, p.RunID)
}

func pendingHandler(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p wire.PendingParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	a, err := s.theAgent()
	if err != nil {
		return nil, err
	}
	return wire.PendingResult{Requests: a.Pending(p.RunID)}, nil
}

func eventsHandler(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p wire.EventsParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	a, err := s.theAgent()
	if err != nil {
		return nil, err
	}
	return a.Events(p.RunID, p.AfterSeq)
}

func sessionsHandler(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	a, err := s.theAgent()
	if err != nil {
		return nil, err
	}
	return wire.SessionsResult{Sessions: a.Sessions()}, nil
}

func shutdown(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	s.mu.Lock()
	a, idx, stop := s.agent, s.index, s.stopBg
	s.state = stateShutdown
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
	if a != nil {
		a.Shutdown()
	}
	if idx != nil {
		idx.close()
	}
	return nil, nil
}
