-- The methods table: what the plugin does with each message the daemon
-- sends (protocol.server_notification, protocol.server_request), and what
-- it does each time a daemon is ready. Run notifications go through the
-- seq check: a duplicate is dropped, a gap is filled with agent/events
-- before anything newer is applied.
local P = require('agentd.protocol')
local S = require('agentd.state')
local lifecycle = require('agentd.lifecycle')
local documents = require('agentd.documents')
local pump = require('agentd.pump')
local ui = require('agentd.ui')

local N = P.server_notification
local M = {}

local function chat()
  return require('agentd.chat')
end

local function err_text(e)
  return ('%s (%s)'):format(tostring(e.message), tostring(e.code))
end

local function on_run_state(run, p)
  local st = p.state
  if st == 'completed' then
    ui.notify('run ' .. (run.stop_reason == 'max_steps' and 'stopped at the step limit' or 'completed'))
  elseif st == 'failed' then
    ui.notify('run failed: ' .. tostring(p.error or p.stopReason), vim.log.levels.ERROR)
  elseif st == 'cancelled' then
    ui.notify('run cancelled')
  elseif st == 'paused' and p.pauseReason ~= 'restart' then
    -- the whole reason is in the chat, under the run; a restart's pause
    -- is resumed by itself (resume_after_restart)
    local why = type(p.error) == 'string' and p.error ~= '' and 'its state could not be saved'
      or 'the daemon restarted in the middle of a step'
    ui.notify_brief(('run paused: %s; :AgentdResume continues it'):format(why), vim.log.levels.WARN)
  end
end

-- agentd's own warnings (a notice update) are told as they come, in a
-- line: the whole is in the chat.
local function on_update(p)
  local u = p.update or {}
  if u.kind == 'notice' and type(u.text) == 'string' and u.text ~= '' then
    ui.notify_brief(u.text, vim.log.levels.WARN)
  end
end

-- What a run notification does beyond the run model.
local effects = {
  [N.input_request] = function(p)
    pump.add(p)
  end,
  [N.input_resolved] = function(p)
    pump.resolved(p.requestId)
  end,
  [N.update] = function(p)
    local u = p.update or {}
    -- the agent wrote files: buffers showing them reload
    if u.kind == 'tool_call_update' and u.status == 'completed' and u.files then
      documents.reload(documents.paths_of(u.files))
    elseif u.kind == 'files_changed' then
      documents.reload(documents.paths_of(u.files))
    end
  end,
}

--- Applies a run notification that passed the seq check. how: nil (it just
--- arrived), 'catchup' (agent/events after a gap or a restart: what it does
--- is done, but state changes seen long ago are not told), or 'history'
--- (agent/history, a conversation brought back: the run model only; its
--- open requests come from the page's pending list).
---@param method string
---@param p table
---@param how nil|'catchup'|'history'
function M.apply(method, p, how)
  local before = S.runs:get(p.runId)
  local old_state = before and before.state
  local run = S.runs:apply(method, p)
  if method == N.update and type(p.update) == 'table' and p.update.kind == 'context' and run.session
    and type(p.update.context) == 'table' then
    -- how full the conversation's context window is (the chat's meter)
    S.session_info(run.session).context = p.update.context
  end
  if method == N.update and how ~= 'history' and type(p.update) == 'table' and p.update.kind == 'settings' and run.session
    and type(p.update.settings) == 'table' then
    -- a plan approved into a mode: the conversation's mode now
    S.session_info(run.session).settings = p.update.settings
  end
  local effect = how ~= 'history' and effects[method]
  if effect then
    effect(p)
  end
  if method == N.run_state and p.state ~= old_state and how ~= 'history' and P.terminal_states[p.state]
    and run.session and #require('agentd.runs').checkpoints_of(run) > 0 then
    -- what its changes undid (undo_patch) and what they are now
    require('agentd.undo').refresh(run.session)
  end
  if method == N.run_state and p.state ~= old_state and not how then
    on_run_state(run, p)
    M.resume_after_restart(run)
  elseif method == N.update and how ~= 'history' then
    on_update(p)
  end
  -- a chat that shows nothing yet follows the run (after a restart of
  -- the editor), unless the user asked for a new conversation, or the run
  -- is one this editor is starting (its answer says where it goes: the
  -- chat, or an inline edit's buffer)
  if not S.session and run.session and not S.new_chat and S.starting == 0 and not S.inline[run.id] then
    S.session = run.session
  end
  -- every chat view showing its session (agentd.chat renders each once a tick)
  chat().render()
  ui.redraw_status()
end

--- How many events one agent/events request asks for.
M.EVENTS_PAGE = 500

--- Fetches what a run missed (agent/events after its last seq, a page at a
--- time while the daemon says there are more), then applies what was held
--- back meanwhile. how: as for M.apply ('catchup' by default).
---@param run agentd.Run
---@param after_done fun()|nil
---@param how nil|'catchup'|'history'
function M.catch_up(run, after_done, how)
  if run.catching_up then
    return
  end
  run.catching_up = true
  how = how or 'catchup'
  local function finish()
    run.catching_up = false
    local buffered = run.buffered
    run.buffered = {}
    for _, b in ipairs(buffered) do
      if S.runs:check(run, b.params.seq) ~= 'dup' then
        M.apply(b.method, b.params)
      end
    end
    chat().render()
    if after_done then
      after_done()
    end
  end
  local function page()
    local params = { runId = run.id, afterSeq = run.last_seq, limit = M.EVENTS_PAGE }
    lifecycle.request(P.request.events, params, function(e, res)
      if e or type(res) ~= 'table' then
        if e then
          ui.notify('could not catch up run ' .. run.id .. ': ' .. err_text(e), vim.log.levels.WARN)
        end
        return finish()
      end
      local before = run.last_seq
      for _, ev in ipairs(type(res.events) == 'table' and res.events or {}) do
        local p = type(ev) == 'table' and ev.params
        if type(p) == 'table' and (ev.seq or p.seq or 0) > run.last_seq then
          p.seq = p.seq or ev.seq
          M.apply(ev.method, p, how)
        end
      end
      if res.more == true and run.last_seq > before then
        return page()
      end
      if type(res.state) == 'string' then
        run.state = res.state
      end
      finish()
    end)
  end
  page()
end

--- A run this editor did not start, whose prompt it does not know: one
--- that came back with an open request after the editor restarted, or one
--- another editor started. Its session's conversation is fetched
--- (agent/history) so that it shows whole, with its prompt; a chat that
--- shows nothing yet follows it.
---@param run agentd.Run
function M.adopt(run)
  if run.prompt or not run.session or run.adopting then
    return
  end
  run.adopting = true
  local function check()
    if S.starting > 0 then
      -- an agent/run of ours is in flight: its answer names its runs
      return vim.defer_fn(check, 50)
    end
    local info = S.session_info(run.session)
    if run.prompt or info.loading then
      return
    end
    if not S.session and not S.new_chat then
      S.session = run.session
    end
    require('agentd.sessions').load(run.session)
  end
  vim.schedule(check)
end

local function run_notification(method, p)
  if type(p) ~= 'table' or not p.runId then
    return
  end
  local run = S.runs:ensure(p.runId, p.sessionId)
  M.adopt(run)
  if run.catching_up then
    table.insert(run.buffered, { method = method, params = p })
    return
  end
  local verdict = S.runs:check(run, p.seq)
  if verdict == 'dup' then
    return
  elseif verdict == 'gap' then
    table.insert(run.buffered, { method = method, params = p })
    return M.catch_up(run)
  end
  M.apply(method, p)
end

local function on_progress(p)
  local v = type(p) == 'table' and p.value
  if type(v) ~= 'table' then
    return
  end
  -- the index reports in the statusline only: start-up stays quiet
  if v.kind == 'begin' then
    S.index = { title = v.title, message = v.message, percentage = v.percentage }
  elseif v.kind == 'report' and S.index then
    S.index.message = v.message or S.index.message
    S.index.percentage = v.percentage or S.index.percentage
  elseif v.kind == 'end' then
    S.index = nil
  end
  ui.redraw_status()
end

--- Notification handlers, by method: every method of
--- protocol.server_notification has one (checked by the contract test).
---@type table<string, fun(params: any, method: string)>
M.notifications = {
  [N.update] = function(p, m)
    run_notification(m, p)
  end,
  [N.run_state] = function(p, m)
    run_notification(m, p)
  end,
  [N.input_request] = function(p, m)
    run_notification(m, p)
  end,
  [N.input_resolved] = function(p, m)
    run_notification(m, p)
  end,
  [N.progress] = on_progress,
  -- An MCP server's state changed (docs/protocol.md#mcpchanged): nothing shown yet.
  [N.mcp_changed] = function()
    require('agentd.mcp').on_changed()
  end,
  -- A background process started, ended or was stopped.
  [N.process_changed] = function(p)
    require('agentd.processes').on_changed(p)
  end,
}

--- Request handlers, by method (result, err).
---@type table<string, fun(params: any): any, table|nil>
M.requests = {
  [P.server_request.progress_create] = function()
    return vim.NIL
  end,
}
for _, method in ipairs({ 'editor_diagnostics', 'editor_definition', 'editor_references', 'editor_hover',
  'editor_document_symbols', 'editor_workspace_symbols', 'editor_context', 'editor_read_file' }) do
  local name = P.server_request[method]
  M.requests[name] = function(params, respond)
    return require('agentd.language').handlers[name](params, respond)
  end
end

function M.notification(method, params)
  local h = M.notifications[method]
  if h then
    h(params, method)
  end
end

function M.request(method, params, respond)
  local h = M.requests[method]
  if h then
    return h(params, respond)
  end
  return nil, { code = -32601, message = 'method not found: ' .. tostring(method) }
end

--- Asks the daemon for its open requests and makes the views match.
function M.sync_pending(done)
  lifecycle.request(P.request.pending, vim.empty_dict(), function(e, res)
    if e or type(res) ~= 'table' then
      if e then
        ui.notify('open requests: ' .. err_text(e), vim.log.levels.WARN)
      end
      return done and done(0)
    end
    local list = type(res.requests) == 'table' and res.requests or {}
    pump.sync(list)
    if done then
      done(#list)
    end
  end)
end

--- After each initialize: the open buffers, the open requests, the runs
--- that were going on.
---@param was_restart boolean
function M.ready(was_restart)
  documents.open_all()
  M.sync_pending(function(n)
    if was_restart then
      ui.notify('the daemon is back' .. (n > 0 and (' · %d open request%s'):format(n, n == 1 and '' or 's') or ''))
    end
  end)
  for _, id in ipairs(S.runs.order) do
    local run = S.runs:get(id)
    if not P.terminal_states[run.state] then
      M.catch_up(run, function()
        M.resume_after_restart(run)
      end)
    end
  end
end

--- A run the daemon's restart cut off in the middle of a step goes on by
--- itself once the editor is back (agent/resume); one paused because its
--- state could not be saved waits for the user (R, :AgentdResume).
---@param run agentd.Run
function M.resume_after_restart(run)
  if run.state ~= 'paused' or run.pause_reason ~= 'restart' then
    return
  end
  lifecycle.request(P.request.resume, { runId = run.id }, function(e)
    if e and e.code ~= P.error_codes.RunNotPaused then
      ui.notify('the run the restart paused did not resume: ' .. err_text(e) .. '; :AgentdResume tries again',
        vim.log.levels.WARN)
    end
  end)
end

return M
