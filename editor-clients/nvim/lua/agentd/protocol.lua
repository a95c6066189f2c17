-- The words of the agentd protocol (docs/protocol.md) in one place: every
-- method name and every enumeration the plugin uses. No other module spells
-- a method name; test/unit_test.lua checks this module against
-- testdata/contract/protocol.json, which the daemon's own tests write.
local M = {}

M.VERSION = 1

--- Requests the editor sends.
M.request = {
  initialize = 'initialize',
  shutdown = 'shutdown',
  run = 'agent/run',
  cancel = 'agent/cancel',
  resume = 'agent/resume',
  events = 'agent/events',
  sessions = 'agent/sessions',
  history = 'agent/history',
  configure = 'agent/configure',
  models = 'agent/models',
  pending = 'agent/pending',
  reply = 'agent/reply',
  confirm = 'agent/confirm',
  checkpoints = 'agent/checkpoints',
  undo = 'agent/undo',
  rewind = 'agent/rewind',
  commands = 'agent/commands',
  rename_session = 'agent/renameSession',
  delete_session = 'agent/deleteSession',
  context = 'agent/context',
  compact = 'agent/compact',
  rules_list = 'rules/list',
  rules_revoke = 'rules/revoke',
  rules_edit = 'rules/edit',
  mcp_status = 'mcp/status',
  mcp_enable = 'mcp/enable',
  mcp_disable = 'mcp/disable',
  mcp_restart = 'mcp/restart',
}

--- Notifications the editor sends.
M.notification = {
  initialized = 'initialized',
  exit = 'exit',
  did_open = 'textDocument/didOpen',
  did_save = 'textDocument/didSave',
  did_close = 'textDocument/didClose',
}

--- Notifications the daemon sends (each has a handler in agentd.methods).
M.server_notification = {
  update = 'agent/update',
  input_request = 'agent/inputRequest',
  input_resolved = 'agent/inputResolved',
  run_state = 'agent/runState',
  progress = '$/progress',
  mcp_changed = 'mcp/changed',
}

--- Requests the daemon sends (each has a handler in agentd.methods).
M.server_request = {
  progress_create = 'window/workDoneProgress/create',
  -- language intelligence: the editor's servers (agentd.language)
  diagnostics = 'editor/diagnostics',
  definition = 'editor/definition',
  references = 'editor/references',
  hover = 'editor/hover',
  document_symbols = 'editor/documentSymbols',
  workspace_symbols = 'editor/workspaceSymbols',
  context = 'editor/context',
  read_file = 'editor/readFile',
}

-- Enumerations, in the daemon's order.
M.prompt_kinds = { 'question', 'choice', 'confirm_write', 'confirm_command', 'secret' }
M.decisions = { 'allow_once', 'allow_session', 'allow_always', 'reject_once', 'reject_always', 'allow_full' }
M.policies = { 'read-only', 'ask', 'auto-edit', 'full-auto' }
M.update_kinds = {
  'message_chunk', 'thought_chunk', 'plan', 'tool_call', 'tool_call_update', 'usage', 'files_changed', 'result',
  'instructions', 'notice', 'context',
}
M.run_states = { 'running', 'requires_action', 'paused', 'completed', 'failed', 'cancelled' }
M.stop_reasons = { 'end_turn', 'max_steps', 'cancelled', 'error', 'repetition', 'tool_errors' }
M.resolved_by = { 'user', 'timeout', 'cancel', 'policy' }
M.tool_kinds = { 'read', 'edit', 'search', 'execute', 'think', 'fetch', 'other' }
M.statuses = { 'pending', 'in_progress', 'completed', 'failed' }
-- What a session may choose with agent/configure when the daemon's
-- initialize does not say (capabilities.experimental.agentd.reasoningEfforts).
M.reasoning_efforts = { 'low', 'medium', 'high' }
-- The kernel sandbox profiles a command may run in (confirm_command's profile).
M.profiles = { 'read', 'workspace-write', 'full' }
-- agent/undo and agent/rewind: their result's status, what to do with a
-- conflict, the kinds of conflict.
M.undo_statuses = { 'restored', 'conflicts', 'nothing', 'preview' }
M.on_conflict = { 'stop', 'skip', 'overwrite' }
M.conflict_kinds = { 'changed', 'missing' }
-- mcp/status: a server's state.
M.mcp_states = { 'idle', 'starting', 'connected', 'failed', 'needs_approval', 'rejected', 'disabled' }
-- rules/list: a rule's action and where it comes from.
M.rule_actions = { 'allow', 'ask', 'deny' }
M.rule_scopes = { 'built-in', 'user', 'workspace', 'always', 'session' }

--- The error codes the plugin reacts to, by their protocol names.
M.error_codes = {
  InvalidParams = -32602,
  UnknownRun = -32010,
  UnknownRequest = -32011,
  AlreadyResolved = -32012,
  WrongKind = -32013,
  Expired = -32014,
  SessionBusy = -32016,
  UnknownSession = -32017,
  NoModel = -32018,
  RunNotPaused = -32019,
  ShuttingDown = -32020,
  NotSaved = -32021,
  UnknownCheckpoint = -32022,
  UnknownRule = -32023,
}

--- The plugin's own code for "the daemon went away" (never on the wire).
M.DISCONNECTED = -32099

--- Run states after which nothing more happens.
M.terminal_states = { completed = true, failed = true, cancelled = true }

--- Which answer method each prompt kind takes.
M.answer_method = {
  question = M.request.reply,
  choice = M.request.reply,
  secret = M.request.reply,
  confirm_write = M.request.confirm,
  confirm_command = M.request.confirm,
}

return M
