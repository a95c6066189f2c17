package wire

// ProtocolVersion is the major version of the agentd protocol. It rises only
// on a breaking change; additions are announced through capabilities.
const ProtocolVersion = 1

// Editor → daemon requests.
const (
	MethodInitialize  = "initialize"
	MethodShutdown    = "shutdown"
	MethodRun         = "agent/run"
	MethodReply       = "agent/reply"
	MethodConfirm     = "agent/confirm"
	MethodSteer       = "agent/steer"
	MethodCancel      = "agent/cancel"
	MethodResume      = "agent/resume"
	MethodPending     = "agent/pending"
	MethodEvents      = "agent/events"
	MethodSessions    = "agent/sessions"
	MethodHistory     = "agent/history"
	MethodConfigure   = "agent/configure"
	MethodModels      = "agent/models"
	MethodCommands    = "agent/commands"
	MethodIndexStatus = "index/status"
	MethodIndexSearch = "index/search"
	MethodMCPStatus   = "mcp/status"
	MethodImage       = "agent/image"
	// Background processes (docs/protocol.md#background-processes).
	MethodProcesses   = "agent/processes"
	MethodStopProcess = "agent/stopProcess"
)

// Editor → daemon notifications.
const (
	MethodInitialized    = "initialized"
	MethodExit           = "exit"
	MethodCancelRequest  = "$/cancelRequest"
	MethodDidOpen        = "textDocument/didOpen"
	MethodDidChange      = "textDocument/didChange"
	MethodDidSave        = "textDocument/didSave"
	MethodDidClose       = "textDocument/didClose"
	MethodProgressCancel = "window/workDoneProgress/cancel"
)

// Daemon → editor notifications and requests.
const (
	MethodUpdate         = "agent/update"
	MethodInputRequest   = "agent/inputRequest"
	MethodInputResolved  = "agent/inputResolved"
	MethodRunState       = "agent/runState"
	MethodProgress       = "$/progress"
	MethodProgressCreate = "window/workDoneProgress/create"
)

// Editor → daemon requests of undo (docs/protocol.md#undo): a session's
// checkpoints, undoing them, rewinding the conversation.
const (
	MethodCheckpoints = "agent/checkpoints"
	MethodUndo        = "agent/undo"
	MethodRewind      = "agent/rewind"
)

// Editor → daemon requests of the user's controls (docs/protocol.md#rules,
// #mcp-servers, #sessions, #context): the rules the policy applies, the MCP
// servers, sessions, the context window.
const (
	MethodRulesList     = "rules/list"
	MethodRulesRevoke   = "rules/revoke"
	MethodRulesEdit     = "rules/edit"
	MethodMCPEnable     = "mcp/enable"
	MethodMCPDisable    = "mcp/disable"
	MethodMCPRestart    = "mcp/restart"
	MethodRenameSession = "agent/renameSession"
	MethodDeleteSession = "agent/deleteSession"
	MethodContext       = "agent/context"
	MethodCompact       = "agent/compact"
)

// MethodMCPChanged (daemon → editor notification): an MCP server's state
// changed; the editor asks mcp/status again.
const MethodMCPChanged = "mcp/changed"

// MethodProcessChanged (daemon → editor notification): a session's
// background process started, ended or was stopped.
const MethodProcessChanged = "agent/processChanged"
