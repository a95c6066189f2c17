-- The words of the agentd protocol (docs/protocol.md) in one place. Every
-- method name, enumeration, error code and how each input-request kind is
-- answered is generated from the daemon's Go types into agentd.contract
-- (regenerate: `go test ./rpc -run TestContract -update` at the
-- repository's root; never edit it by hand; its LuaLS annotations,
-- agentd.InputRequest and the rest, describe every message). This module
-- gives the plugin those words, plus what only the plugin knows. No other
-- module spells a method name.
local C = require('agentd.contract')

local M = {}

M.VERSION = C.VERSION

--- Requests and notifications the editor sends, the daemon's notifications
--- (each has a handler in agentd.methods) and requests.
M.request = C.request
M.notification = C.notification
M.server_notification = C.server_notification
M.server_request = C.server_request

-- Enumerations, in the daemon's order.
M.prompt_kinds = C.prompt_kinds
M.decisions = C.decisions
M.policies = C.policies
M.update_kinds = C.update_kinds
M.run_states = C.run_states
M.stop_reasons = C.stop_reasons
M.resolved_by = C.resolved_by
M.tool_kinds = C.tool_kinds
M.statuses = C.statuses
-- What a session may choose with agent/configure when the daemon's
-- initialize does not say (capabilities.experimental.agentd.reasoningEfforts).
M.reasoning_efforts = C.reasoning_efforts
-- The kernel sandbox profiles a command may run in (confirm_command's profile).
M.profiles = C.profiles
-- agent/undo and agent/rewind: their result's status, what to do with a
-- conflict, the kinds of conflict.
M.undo_statuses = C.undo_statuses
M.on_conflict = C.on_conflict
M.conflict_kinds = C.conflict_kinds
-- mcp/status: a server's state.
M.mcp_states = C.mcp_states
-- rules/list: a rule's action and where it comes from.
M.rule_actions = C.rule_actions
M.rule_scopes = C.rule_scopes

--- The error codes, by their protocol names.
M.error_codes = C.error_codes

--- The plugin's own code for "the daemon went away" (never on the wire).
M.DISCONNECTED = -32099

--- Run states after which nothing more happens.
M.terminal_states = {}
for _, s in ipairs(C.finished_states) do
  M.terminal_states[s] = true
end

--- Which answer method each prompt kind takes.
M.answer_method = {}
for kind, k in pairs(C.kinds) do
  M.answer_method[kind] = k.answer
end

return M
