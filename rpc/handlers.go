package rpc

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/rpc/wire"
	"github.com/agentd/agentd/tools/mcp"
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
		wire.MethodSteer:      steerHandler,
		wire.MethodConfirm:    confirmHandler,
		wire.MethodCancel:     cancelHandler,
		wire.MethodResume:     resumeHandler,
		wire.MethodPending:    pendingHandler,
		wire.MethodEvents:     eventsHandler,
		wire.MethodSessions:   sessionsHandler,
		wire.MethodHistory:    historyHandler,
		wire.MethodConfigure:  configureHandler,
		wire.MethodModels:     modelsHandler,
		wire.MethodCommands:   commandsHandler,
		wire.MethodIndexStat:  indexStatusHandler,
		wire.MethodIndexQuery: indexSearchHandler,
		wire.MethodMCPStatus:  mcpStatusHandler,
		wire.MethodImage:      imageHandler,

		wire.MethodRules:         rulesHandler,
		wire.MethodRevokeRule:    revokeRuleHandler,
		wire.MethodEditRule:      editRuleHandler,
		wire.MethodMCPEnable:     mcpEnableHandler,
		wire.MethodMCPDisable:    mcpDisableHandler,
		wire.MethodMCPRestart:    mcpRestartHandler,
		wire.MethodRenameSession: renameSessionHandler,
		wire.MethodDeleteSession: deleteSessionHandler,
		wire.MethodContext:       contextHandler,
		wire.MethodCompact:       compactHandler,
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

// runHandler starts a run. A run that comes without context gets the
// editor's (editor/context) when the editor offers it.
func runHandler(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p agent.RunParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	a, err := s.theAgent()
	if err != nil {
		return nil, err
	}
	if p.Context == nil {
		s.editorContext(ctx, &p)
	}
	return a.Run(ctx, p)
}

// agentCall builds a handler that decodes P and calls the agent with it.
func agentCall[P any](call func(ctx context.Context, a *agent.Agent, p P) (any, error)) requestHandler {
	return func(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
		var p P
		if err := decode(params, &p); err != nil {
			return nil, err
		}
		a, err := s.theAgent()
		if err != nil {
			return nil, err
		}
		return call(ctx, a, p)
	}
}

var (
	replyHandler = agentCall(func(ctx context.Context, a *agent.Agent, p agent.ReplyParams) (any, error) {
		return struct{}{}, a.Reply(ctx, p)
	})
	confirmHandler = agentCall(func(ctx context.Context, a *agent.Agent, p agent.ConfirmParams) (any, error) {
		if p.Decision == "" {
			return nil, fmt.Errorf("%w: decision is required", errInvalidParams)
		}
		return struct{}{}, a.Confirm(ctx, p)
	})
	steerHandler = agentCall(func(ctx context.Context, a *agent.Agent, p agent.SteerParams) (any, error) {
		return struct{}{}, a.Steer(ctx, p)
	})
	cancelHandler = agentCall(func(ctx context.Context, a *agent.Agent, p RunRef) (any, error) {
		return struct{}{}, a.Cancel(ctx, p.RunID)
	})
	resumeHandler = agentCall(func(ctx context.Context, a *agent.Agent, p RunRef) (any, error) {
		return struct{}{}, a.Resume(ctx, p.RunID)
	})
	pendingHandler = agentCall(func(ctx context.Context, a *agent.Agent, p PendingParams) (any, error) {
		return PendingResult{Requests: a.Pending(p.RunID)}, nil
	})
	eventsHandler = agentCall(func(ctx context.Context, a *agent.Agent, p EventsParams) (any, error) {
		evs, state, more, err := a.Events(p.RunID, p.AfterSeq, p.Limit)
		if err != nil {
			return nil, err
		}
		return EventsResult{Events: wireEvents(evs), State: state, More: more}, nil
	})
	sessionsHandler = agentCall(func(ctx context.Context, a *agent.Agent, p agent.SessionsParams) (any, error) {
		list, err := a.SearchSessions(p)
		if err != nil {
			return nil, err
		}
		return SessionsResult{Sessions: list}, nil
	})
	historyHandler = agentCall(func(ctx context.Context, a *agent.Agent, p agent.HistoryParams) (any, error) {
		h, err := a.History(ctx, p)
		if err != nil {
			return nil, err
		}
		return wireHistory(h), nil
	})
	configureHandler = agentCall(func(ctx context.Context, a *agent.Agent, p agent.ConfigureParams) (any, error) {
		return a.Configure(ctx, p)
	})
	modelsHandler = agentCall(func(ctx context.Context, a *agent.Agent, _ struct{}) (any, error) {
		return a.ModelList(ctx)
	})
	commandsHandler = agentCall(func(ctx context.Context, a *agent.Agent, _ struct{}) (any, error) {
		return CommandsResult{Commands: a.Commands(), Directories: a.CommandDirs()}, nil
	})
	imageHandler = agentCall(func(ctx context.Context, a *agent.Agent, p agent.ImageParams) (any, error) {
		return a.Image(ctx, p.ID)
	})
	mcpStatusHandler = agentCall(func(ctx context.Context, a *agent.Agent, p MCPStatusParams) (any, error) {
		return MCPStatusResult{Servers: a.MCPStatus(p.SessionID)}, nil
	})
)

// The user's controls: rules, MCP servers, sessions, the context window.
var (
	rulesHandler = agentCall(func(ctx context.Context, a *agent.Agent, p RulesParams) (any, error) {
		rules, files, err := a.Rules(p.SessionID)
		if err != nil {
			return nil, err
		}
		return RulesResult{Rules: rules, Files: files}, nil
	})
	revokeRuleHandler = agentCall(func(ctx context.Context, a *agent.Agent, p RuleRef) (any, error) {
		if p.ID == "" {
			return nil, fmt.Errorf("%w: id is required", errInvalidParams)
		}
		return struct{}{}, a.RevokeRule(p.SessionID, p.ID)
	})
	editRuleHandler = agentCall(func(ctx context.Context, a *agent.Agent, p RuleEditParams) (any, error) {
		if p.ID == "" {
			return nil, fmt.Errorf("%w: id is required", errInvalidParams)
		}
		r, err := a.EditRule(p.SessionID, p.ID, agent.RuleEdit{Tool: p.Tool, Pattern: p.Pattern, Action: p.Action})
		if err != nil {
			return nil, err
		}
		return RuleResult{Rule: r}, nil
	})
	mcpEnableHandler  = mcpControl((*agent.Agent).EnableMCPServer)
	mcpDisableHandler = mcpControl((*agent.Agent).DisableMCPServer)
	mcpRestartHandler = mcpControl((*agent.Agent).RestartMCPServer)

	renameSessionHandler = agentCall(func(ctx context.Context, a *agent.Agent, p agent.RenameParams) (any, error) {
		info, err := a.RenameSession(p)
		if err != nil {
			return nil, err
		}
		return SessionResult{Session: info}, nil
	})
	deleteSessionHandler = agentCall(func(ctx context.Context, a *agent.Agent, p SessionRef) (any, error) {
		return struct{}{}, a.DeleteSession(p.SessionID)
	})
	contextHandler = agentCall(func(ctx context.Context, a *agent.Agent, p SessionRef) (any, error) {
		return a.Context(p.SessionID)
	})
	compactHandler = agentCall(func(ctx context.Context, a *agent.Agent, p SessionRef) (any, error) {
		return a.Compact(ctx, p.SessionID)
	})
)

// mcpControl builds the handler of an MCP server control.
func mcpControl(do func(a *agent.Agent, sessionID, name string) (mcp.Status, error)) requestHandler {
	return agentCall(func(ctx context.Context, a *agent.Agent, p MCPServerRef) (any, error) {
		if p.Name == "" {
			return nil, fmt.Errorf("%w: name is required", errInvalidParams)
		}
		st, err := do(a, p.SessionID, p.Name)
		if err != nil {
			return nil, err
		}
		return MCPServerResult{Server: st}, nil
	})
}

func shutdown(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	s.mu.Lock()
	s.state = stateShutdown
	s.mu.Unlock()
	s.stopWork()
	return nil, nil
}
