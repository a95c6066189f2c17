package rpc

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/rpc/wire"
	"github.com/agentd/agentd/tools/mcp"
)

// request is a method an editor calls: a thin handler that only decodes
// and dispatches, and the Go types of its params and result, from which
// the protocol's contract is derived (rpc/contract_test.go writes
// testdata/contract/protocol.json and the clients' types from them).
type request struct {
	handle         func(ctx context.Context, s *Server, params json.RawMessage) (any, error)
	params, result reflect.Type
}

// notification is a method an editor notifies, with its params' type.
type notification struct {
	handle func(ctx context.Context, s *Server, params json.RawMessage) error
	params reflect.Type
}

// requests and notifications are the methods an editor may send.
var (
	requests      map[string]request
	notifications map[string]notification
)

// handle makes h a request: its params are decoded into P, its result is
// an R (struct{} for none: params absent, null, [] or [null]).
func handle[P, R any](h func(ctx context.Context, s *Server, p P) (R, error)) request {
	return request{
		handle: func(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
			var p P
			if err := decode(params, &p); err != nil {
				return nil, err
			}
			r, err := h(ctx, s, p)
			if err != nil {
				return nil, err
			}
			return r, nil
		},
		params: reflect.TypeFor[P](),
		result: reflect.TypeFor[R](),
	}
}

// notify makes h a notification whose params are decoded into P.
func notify[P any](h func(ctx context.Context, s *Server, p P) error) notification {
	return notification{
		handle: func(ctx context.Context, s *Server, params json.RawMessage) error {
			var p P
			if err := decode(params, &p); err != nil {
				return err
			}
			return h(ctx, s, p)
		},
		params: reflect.TypeFor[P](),
	}
}

func init() {
	requests = map[string]request{
		wire.MethodInitialize:  handle(initialize),
		wire.MethodShutdown:    handle(shutdown),
		wire.MethodRun:         handle(runHandler),
		wire.MethodReply:       replyHandler,
		wire.MethodSteer:       steerHandler,
		wire.MethodConfirm:     confirmHandler,
		wire.MethodCancel:      cancelHandler,
		wire.MethodResume:      resumeHandler,
		wire.MethodPending:     pendingHandler,
		wire.MethodEvents:      eventsHandler,
		wire.MethodSessions:    sessionsHandler,
		wire.MethodHistory:     historyHandler,
		wire.MethodConfigure:   configureHandler,
		wire.MethodModels:      modelsHandler,
		wire.MethodCommands:    commandsHandler,
		wire.MethodIndexStatus: handle(indexStatusHandler),
		wire.MethodIndexSearch: handle(indexSearchHandler),
		wire.MethodMCPStatus:   mcpStatusHandler,
		wire.MethodImage:       imageHandler,
		wire.MethodProcesses:   processesHandler,
		wire.MethodStopProcess: stopProcessHandler,

		wire.MethodRulesList:     rulesHandler,
		wire.MethodRulesRevoke:   revokeRuleHandler,
		wire.MethodRulesEdit:     editRuleHandler,
		wire.MethodMCPEnable:     mcpEnableHandler,
		wire.MethodMCPDisable:    mcpDisableHandler,
		wire.MethodMCPRestart:    mcpRestartHandler,
		wire.MethodRenameSession: renameSessionHandler,
		wire.MethodDeleteSession: deleteSessionHandler,
		wire.MethodContext:       contextHandler,
		wire.MethodCompact:       compactHandler,
	}
	notifications = map[string]notification{
		wire.MethodInitialized:    notify(initialized),
		wire.MethodDidOpen:        notify(didOpen),
		wire.MethodDidChange:      notify(didChange),
		wire.MethodDidSave:        notify(didSave),
		wire.MethodDidClose:       notify(didClose),
		wire.MethodProgressCancel: notify(progressCancel),
	}
}

// runHandler starts a run. A run that comes without context gets the
// editor's (editor/context) when the editor offers it.
func runHandler(ctx context.Context, s *Server, p agent.RunParams) (agent.RunResult, error) {
	a, err := s.theAgent()
	if err != nil {
		return agent.RunResult{}, err
	}
	if p.Context == nil {
		s.editorContext(ctx, &p)
	}
	return a.Run(ctx, p)
}

// agentCall is a request that decodes P and calls the agent with it.
func agentCall[P, R any](call func(ctx context.Context, a *agent.Agent, p P) (R, error)) request {
	return handle(func(ctx context.Context, s *Server, p P) (R, error) {
		a, err := s.theAgent()
		if err != nil {
			var zero R
			return zero, err
		}
		return call(ctx, a, p)
	})
}

var (
	replyHandler = agentCall(func(ctx context.Context, a *agent.Agent, p agent.ReplyParams) (struct{}, error) {
		return struct{}{}, a.Reply(ctx, p)
	})
	steerHandler = agentCall(func(ctx context.Context, a *agent.Agent, p agent.SteerParams) (struct{}, error) {
		return struct{}{}, a.Steer(ctx, p)
	})
	confirmHandler = agentCall(func(ctx context.Context, a *agent.Agent, p agent.ConfirmParams) (struct{}, error) {
		if p.Decision == "" {
			return struct{}{}, fmt.Errorf("%w: decision is required", errInvalidParams)
		}
		return struct{}{}, a.Confirm(ctx, p)
	})
	cancelHandler = agentCall(func(ctx context.Context, a *agent.Agent, p RunRef) (struct{}, error) {
		return struct{}{}, a.Cancel(ctx, p.RunID)
	})
	resumeHandler = agentCall(func(ctx context.Context, a *agent.Agent, p RunRef) (struct{}, error) {
		return struct{}{}, a.Resume(ctx, p.RunID)
	})
	pendingHandler = agentCall(func(ctx context.Context, a *agent.Agent, p PendingParams) (PendingResult, error) {
		return PendingResult{Requests: a.Pending(p.RunID)}, nil
	})
	eventsHandler = agentCall(func(ctx context.Context, a *agent.Agent, p EventsParams) (EventsResult, error) {
		evs, state, more, err := a.Events(p.RunID, p.AfterSeq, p.Limit)
		if err != nil {
			return EventsResult{}, err
		}
		return EventsResult{Events: wireEvents(evs), State: state, More: more}, nil
	})
	sessionsHandler = agentCall(func(ctx context.Context, a *agent.Agent, p agent.SessionsParams) (SessionsResult, error) {
		list, err := a.SearchSessions(p)
		if err != nil {
			return SessionsResult{}, err
		}
		return SessionsResult{Sessions: list}, nil
	})
	historyHandler = agentCall(func(ctx context.Context, a *agent.Agent, p agent.HistoryParams) (HistoryResult, error) {
		h, err := a.History(ctx, p)
		if err != nil {
			return HistoryResult{}, err
		}
		return wireHistory(h), nil
	})
	configureHandler = agentCall(func(ctx context.Context, a *agent.Agent, p agent.ConfigureParams) (agent.ConfigureResult, error) {
		return a.Configure(ctx, p)
	})
	modelsHandler = agentCall(func(ctx context.Context, a *agent.Agent, _ struct{}) (agent.ModelList, error) {
		return a.ModelList(ctx)
	})
	commandsHandler = agentCall(func(ctx context.Context, a *agent.Agent, _ struct{}) (CommandsResult, error) {
		return CommandsResult{Commands: a.Commands(), Directories: a.CommandDirs()}, nil
	})
	imageHandler = agentCall(func(ctx context.Context, a *agent.Agent, p agent.ImageParams) (agent.ImageData, error) {
		return a.Image(ctx, p.ID)
	})
	processesHandler = agentCall(func(ctx context.Context, a *agent.Agent, p agent.ProcessesParams) (ProcessesResult, error) {
		ps, err := a.Processes(p)
		return ProcessesResult{Processes: ps}, err
	})
	stopProcessHandler = agentCall(func(ctx context.Context, a *agent.Agent, p agent.StopProcessParams) (ProcessResult, error) {
		info, err := a.StopProcess(ctx, p)
		return ProcessResult{Process: info}, err
	})
	mcpStatusHandler = agentCall(func(ctx context.Context, a *agent.Agent, p MCPStatusParams) (MCPStatusResult, error) {
		return MCPStatusResult{Servers: a.MCPStatus(p.SessionID)}, nil
	})
)

// The user's controls: rules, MCP servers, sessions, the context window.
var (
	rulesHandler = agentCall(func(ctx context.Context, a *agent.Agent, p RulesParams) (RulesResult, error) {
		rules, files, err := a.Rules(p.SessionID)
		if err != nil {
			return RulesResult{}, err
		}
		return RulesResult{Rules: rules, Files: files}, nil
	})
	revokeRuleHandler = agentCall(func(ctx context.Context, a *agent.Agent, p RuleRef) (struct{}, error) {
		if p.ID == "" {
			return struct{}{}, fmt.Errorf("%w: id is required", errInvalidParams)
		}
		return struct{}{}, a.RevokeRule(p.SessionID, p.ID)
	})
	editRuleHandler = agentCall(func(ctx context.Context, a *agent.Agent, p RuleEditParams) (RuleResult, error) {
		if p.ID == "" {
			return RuleResult{}, fmt.Errorf("%w: id is required", errInvalidParams)
		}
		r, err := a.EditRule(p.SessionID, p.ID, agent.RuleEdit{Tool: p.Tool, Pattern: p.Pattern, Action: p.Action})
		if err != nil {
			return RuleResult{}, err
		}
		return RuleResult{Rule: r}, nil
	})
	mcpEnableHandler  = mcpControl((*agent.Agent).EnableMCPServer)
	mcpDisableHandler = mcpControl((*agent.Agent).DisableMCPServer)
	mcpRestartHandler = mcpControl((*agent.Agent).RestartMCPServer)

	renameSessionHandler = agentCall(func(ctx context.Context, a *agent.Agent, p agent.RenameParams) (SessionResult, error) {
		info, err := a.RenameSession(p)
		if err != nil {
			return SessionResult{}, err
		}
		return SessionResult{Session: info}, nil
	})
	deleteSessionHandler = agentCall(func(ctx context.Context, a *agent.Agent, p SessionRef) (struct{}, error) {
		return struct{}{}, a.DeleteSession(p.SessionID)
	})
	contextHandler = agentCall(func(ctx context.Context, a *agent.Agent, p SessionRef) (agent.ContextUse, error) {
		return a.Context(p.SessionID)
	})
	compactHandler = agentCall(func(ctx context.Context, a *agent.Agent, p SessionRef) (agent.CompactResult, error) {
		return a.Compact(ctx, p.SessionID)
	})
)

// mcpControl builds the handler of an MCP server control.
func mcpControl(do func(a *agent.Agent, sessionID, name string) (mcp.Status, error)) request {
	return agentCall(func(ctx context.Context, a *agent.Agent, p MCPServerRef) (MCPServerResult, error) {
		if p.Name == "" {
			return MCPServerResult{}, fmt.Errorf("%w: name is required", errInvalidParams)
		}
		st, err := do(a, p.SessionID, p.Name)
		if err != nil {
			return MCPServerResult{}, err
		}
		return MCPServerResult{Server: st}, nil
	})
}

// shutdown answers null.
func shutdown(ctx context.Context, s *Server, _ struct{}) (*struct{}, error) {
	s.mu.Lock()
	s.state = stateShutdown
	s.mu.Unlock()
	s.stopWork()
	return nil, nil
}
