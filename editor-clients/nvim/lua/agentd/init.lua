-- agentd for Neovim: the public API behind the commands (plugin/agentd.lua)
-- and setup(). The work is done by:
--   agentd.lifecycle  the daemon process (start, initialize, restart, stop)
--   agentd.documents  document sync and reloading files the agent changed
--   agentd.methods    what each message from the daemon does
--   agentd.pump       open input requests in, answers out
--   agentd.chat       the transcript and the compose window
--   agentd.float, agentd.diff  the request float and the diff tab
--   agentd.undo, agentd.restore  undo and rewind, and their preview tab
--   agentd.commands   custom commands: completion after /, the list
--   agentd.mcp        the MCP servers' states
local config = require('agentd.config')
local P = require('agentd.protocol')
local S = require('agentd.state')
local lifecycle = require('agentd.lifecycle')
local documents = require('agentd.documents')
local methods = require('agentd.methods')
local pump = require('agentd.pump')
local chat = require('agentd.chat')
local float = require('agentd.float')
local sessions = require('agentd.sessions')
local settings = require('agentd.settings')
local ui = require('agentd.ui')

local api = vim.api
local M = {}
M._state = S

local function err_text(e)
  return ('%s (%s)'):format(tostring(e.message), tostring(e.code))
end

-- The context of a prompt: the file the user is in (or was last in, when
-- the prompt comes from the chat) and, with a range, the selected lines.
local function context_for(opts)
  local buf = api.nvim_get_current_buf()
  if not documents.path(buf) and S.last_file_buf and api.nvim_buf_is_valid(S.last_file_buf) then
    buf = S.last_file_buf
  end
  local rel = documents.relative(buf)
  if not rel then
    return nil
  end
  local ctx = { files = { rel } }
  if opts.range and opts.range > 0 then
    local lines = api.nvim_buf_get_lines(buf, opts.line1 - 1, opts.line2, false)
    ctx.selection = { path = rel, startLine = opts.line1, endLine = opts.line2, text = table.concat(lines, '\n') }
  end
  return ctx
end

--- Starts a run in the chat's session (a new session with new_session or
--- when there is none). opts: prompt, new_session, range/line1/line2 (as
--- from a user command), context (overrides), approval_policy, model,
--- reasoning_effort (this run's, and the session's from then on; a new
--- session otherwise starts with the draft settings), on_started(runId)
--- (called once the daemon accepted it). Without a prompt, the chat opens
--- with the cursor in the compose window.
function M.run(opts)
  M.setup_once()
  opts = opts or {}
  local prompt = opts.prompt
  lifecycle.root()
  local working = opts.steer and prompt and vim.trim(prompt) ~= '' and M.working_run()
  if working then
    return M.steer(working, prompt, opts)
  end
  if not prompt or vim.trim(prompt) == '' then
    if opts.new_session then
      S.session, S.new_chat = nil, true
      chat.render()
    end
    -- a selection given now goes with the prompt written in the chat
    S.draft_context = opts.range and opts.range > 0 and context_for(opts) or nil
    return chat.open({ focus = 'compose' })
  end
  -- a new session replaces the chat's once the daemon started it (not an
  -- inline edit's: it lives in its buffer, agentd.inline)
  local session = not opts.new_session and S.session or nil
  local params = { prompt = prompt, sessionId = session }
  params.context = opts.context or (opts.from_chat and S.draft_context) or context_for(opts)
  if not opts.inline then
    -- what the prompt points at: @files, #buffers, #diff, images (agentd.context)
    params.context, params.images = require('agentd.context').resolve(prompt, vim.deepcopy(params.context))
  end
  -- a new conversation starts with the settings chosen for it; a session
  -- keeps its own (agent/configure)
  local set = session and {} or settings.for_new_run()
  params.model = opts.model or set.model
  params.reasoningEffort = opts.reasoning_effort or set.reasoningEffort
  params.approvalPolicy = opts.approval_policy or set.approvalPolicy
  if config.values.conversation.auto_open and not opts.inline then
    chat.open()
  end
  S.starting = S.starting + 1
  lifecycle.request(P.request.run, params, function(e, res)
    S.starting = S.starting - 1
    if e then
      -- the prompt is never lost: it waits in the compose window
      local kept = opts.from_chat or (not opts.inline and chat.keep_prompt(prompt))
      local where = kept and ' (your prompt is in the compose window: <C-s> sends it)' or ''
      if e.code == P.error_codes.SessionBusy then
        ui.notify('this session is still running: wait for it, :AgentdCancel it, or :Agentd! starts a new session'
          .. where, vim.log.levels.WARN)
      elseif e.code == P.error_codes.NotSaved then
        ui.notify('the daemon could not save the run, so none was started: ' .. err_text(e) .. where,
          vim.log.levels.ERROR)
      elseif e.code == P.DISCONNECTED then
        ui.notify(tostring(e.message) .. where, vim.log.levels.ERROR)
      else
        ui.notify('run refused: ' .. err_text(e) .. where, vim.log.levels.ERROR)
      end
      return
    end
    local run = S.runs:ensure(res.runId, res.sessionId)
    run.prompt = prompt
    run.context = params.context
    run.images = type(res.images) == 'table' and res.images or nil
    if params.images and S.draft_images then
      S.draft_images = nil -- the pasted images went with it
    end
    if opts.inline then
      S.inline[res.runId] = opts.inline
      S.session_info(res.sessionId).title = prompt
      S.run = res.runId
      ui.redraw_status()
      if opts.on_started then
        opts.on_started(res.runId)
      end
      return
    end
    S.session, S.new_chat = res.sessionId, false
    local sinfo = S.session_info(res.sessionId)
    sinfo.title = sinfo.title or prompt
    if res.sessionId ~= session or not sinfo.settings then
      -- the settings in effect (the daemon's defaults filled in), for the status line
      sessions.refresh()
    end
    S.run = res.runId
    if opts.from_chat then
      S.draft_context = nil
    end
    chat.follow()
    ui.redraw_status()
    if opts.on_started then
      opts.on_started(res.runId)
    end
  end)
end

--- Opens the chat with the cursor in the compose window; new: start a new
--- conversation (the next prompt starts a session).
function M.chat(new)
  M.setup_once()
  if new then
    S.session, S.new_chat = nil, true
    chat.render()
  end
  chat.open({ focus = 'compose' })
end

-- The run :AgentdCancel stops: the latest unfinished run of the chat's
-- session that is not queued (one working comes before those waiting to
-- start), else the latest unfinished run.
local function active_run()
  local list = S.session and S.runs:of_session(S.session) or {}
  local queued
  for i = #list, 1, -1 do
    if not P.terminal_states[list[i].state] then
      if list[i].state ~= 'queued' then
        return list[i]
      end
      queued = queued or list[i]
    end
  end
  if queued then
    return queued
  end
  for i = #S.runs.order, 1, -1 do
    local r = S.runs:get(S.runs.order[i])
    if not P.terminal_states[r.state] then
      return r
    end
  end
end

--- The run of the chat's conversation that a prompt written now steers:
--- its latest run when it is not over (working, waiting for you, paused
--- or queued), else nil.
---@return agentd.Run|nil
function M.working_run()
  local list = S.session and S.runs:of_session(S.session) or {}
  local last = list[#list]
  if last and not P.terminal_states[last.state] and not last.rewound then
    return last
  end
end

--- Gives run the user's words while it works (agent/steer); a run over
--- meanwhile gets them as a new prompt instead.
---@param run agentd.Run
---@param text string
---@param opts table the run's options (from_chat, on_started)
function M.steer(run, text, opts)
  -- the pictures it names or that were pasted go with it, as a prompt's
  local images = require('agentd.context').images(text)
  S.starting = S.starting + 1
  lifecycle.request(P.request.steer, { runId = run.id, text = text, images = images }, function(e)
    S.starting = S.starting - 1
    if e and e.code == P.error_codes.RunFinished then
      -- over meanwhile: the words start the next run
      return M.run(vim.tbl_extend('force', opts, { steer = false }))
    elseif e then
      local kept = opts.from_chat or chat.keep_prompt(text)
      return ui.notify('steer refused: ' .. err_text(e) .. (kept and ' (your words are in the compose window)' or ''),
        vim.log.levels.ERROR)
    end
    if images and S.draft_images then
      S.draft_images = nil -- the pasted images went with it
      chat.render()
    end
    chat.follow()
    if opts.on_started then
      opts.on_started(run.id)
    end
  end)
end

function M.cancel(run_id)
  -- a run id given is cancelled as it is (a subagent is no run of the store)
  local id = run_id or (active_run() or {}).id
  if not id then
    return ui.notify('no run is going on')
  end
  lifecycle.request(P.request.cancel, { runId = id }, function(e)
    if e then
      ui.notify('cancel failed: ' .. err_text(e), vim.log.levels.ERROR)
    end
  end)
end

-- The latest paused run of the chat's session, else the latest paused run.
local function paused_run()
  local list = S.session and S.runs:of_session(S.session) or {}
  for i = #list, 1, -1 do
    if list[i].state == 'paused' then
      return list[i]
    end
  end
  for i = #S.runs.order, 1, -1 do
    local r = S.runs:get(S.runs.order[i])
    if r.state == 'paused' then
      return r
    end
  end
end

--- Resumes a paused run (run_id, else the chat's paused run, else the
--- latest paused one).
function M.resume(run_id)
  M.setup_once()
  local run = run_id and S.runs:get(run_id) or (not run_id and paused_run())
  if not run and run_id then
    run = S.runs:ensure(run_id)
  end
  if not run then
    return ui.notify('no paused run')
  end
  lifecycle.request(P.request.resume, { runId = run.id }, function(e)
    if e and e.code == P.error_codes.RunNotPaused then
      ui.notify('run ' .. run.id .. ' is not paused', vim.log.levels.WARN)
    elseif e then
      ui.notify('resume failed: ' .. err_text(e), vim.log.levels.ERROR)
    end
  end)
end

--- The open requests: asks the daemon for them, then the picker.
function M.pending()
  M.setup_once()
  methods.sync_pending(function()
    pump.pick()
  end)
end

--- :AgentdSessions [query]: a picker of the sessions (those mentioning
--- query); with manage (the bang), the sessions panel (rename, delete,
--- search).
---@param query string|nil
---@param manage boolean|nil
function M.sessions(query, manage)
  M.setup_once()
  if manage then
    return sessions.manage(query)
  end
  sessions.pick(query)
end

--- :AgentdRename [title]: renames the chat's conversation.
function M.rename(title)
  M.setup_once()
  sessions.rename(S.session, title)
end

--- :AgentdChatTab: another conversation, in a new tab page, while the
--- others go on.
function M.chat_tab()
  M.setup_once()
  chat.open_new_view()
end

--- :AgentdPaste: the clipboard's image goes with the next prompt.
function M.paste()
  M.setup_once()
  require('agentd.context').paste()
end

--- :AgentdCompact: summarizes the chat's conversation's older turns now.
function M.compact()
  M.setup_once()
  sessions.compact(S.session)
end

--- :AgentdRules: the rules the policy applies; revoke or edit yours.
function M.rules()
  M.setup_once()
  require('agentd.rules').show()
end

--- Sets a setting of the chat's conversation (agentd.settings): which is
--- 'model', 'effort' or 'mode'; value a name, or 'default' (the daemon's).
--- Without a value, a picker.
---@param which string
---@param value string|nil
function M.configure(which, value)
  M.setup_once()
  if not settings.fields[which] then
    return ui.notify('no setting ' .. tostring(which), vim.log.levels.ERROR)
  end
  if value == nil or value == '' then
    return settings.pick(which)
  end
  settings.set(which, value)
end

--- :AgentdMode: the approval mode of the chat's conversation.
function M.mode(mode)
  M.configure('mode', mode)
end

--- :AgentdModel: the model of the chat's conversation.
function M.model(name)
  M.configure('model', name)
end

--- :AgentdEffort: the reasoning effort of the chat's conversation.
function M.effort(effort)
  M.configure('effort', effort)
end

function M.toggle()
  M.setup_once()
  chat.toggle()
end

--- :AgentdUndo: undo the chat session's last change (bang: its last turn
--- that changed files; arg: a checkpoint "cN" or a run id), after a
--- preview.
---@param arg string|nil
---@param bang boolean|nil
function M.undo(arg, bang)
  M.setup_once()
  require('agentd.undo').command_undo(arg, bang)
end

--- :AgentdRewind: rewind the chat's conversation (and its files) N runs
--- back, or to before a run id; without arg, a picker of its runs.
---@param arg string|nil
function M.rewind(arg)
  M.setup_once()
  require('agentd.undo').command_rewind(arg)
end

--- :AgentdCheckpoints: the session's changes; the one picked is undone.
function M.checkpoints()
  M.setup_once()
  require('agentd.undo').pick()
end

--- :'<,'>AgentdEdit: change the selected lines, the change shown in the
--- buffer (agentd.inline).
---@param opts {line1: integer, line2: integer, instruction: string|nil}
function M.edit(opts)
  M.setup_once()
  require('agentd.inline').start(opts)
end

--- :AgentdCommands: the custom commands, with why some cannot run.
function M.commands()
  M.setup_once()
  require('agentd.commands').pick()
end

--- :AgentdMcp: the MCP servers' states and tools.
function M.mcp()
  M.setup_once()
  require('agentd.mcp').show()
end

function M.start()
  M.setup_once()
  S.stopping = false
  if not S.conn then
    S.restarts = 0
    lifecycle.start()
  end
end

function M.stop(timeout)
  lifecycle.stop(timeout)
end

function M.restart()
  M.setup_once()
  lifecycle.restart()
end

--- For the statusline: e.g. "agentd: running · 1 open request".
function M.statusline()
  if S.status == 'stopped' and not S.conn then
    return ''
  end
  local parts = {}
  if S.status == 'restarting' or S.status == 'starting' or S.status == 'failed' then
    parts[#parts + 1] = S.status
  end
  local active = active_run()
  local run = S.run and S.runs:get(S.run)
  if active then
    parts[#parts + 1] = require('agentd.render').state_word(active.state)
  elseif run then
    parts[#parts + 1] = require('agentd.render').state_word(run.state)
  end
  local queued = 0
  for _, r in pairs(S.runs.runs) do
    queued = queued + (r.state == 'queued' and 1 or 0)
  end
  if queued > 0 and not (active and active.state == 'queued') then
    parts[#parts + 1] = ('queued (%d)'):format(queued)
  end
  local n = S.requests:count()
  if n > 0 then
    parts[#parts + 1] = n .. ' open request' .. (n == 1 and '' or 's')
  end
  if S.index then
    parts[#parts + 1] = 'indexing' .. (type(S.index.percentage) == 'number' and (' ' .. S.index.percentage .. '%') or '')
  end
  if #parts == 0 then
    parts[1] = 'idle'
  end
  return 'agentd: ' .. table.concat(parts, ' · ')
end

function M.status()
  return {
    status = S.status,
    ready = S.ready,
    pid = S.conn and S.conn.pid,
    server = S.server,
    root = S.root,
    pending = S.requests:count(),
    restarts = S.restarts,
    stderr = S.stderr,
    start_error = S.start_error,
  }
end

-- ---------------------------------------------------------------- setup

local function set_global_keymaps()
  local g = config.values.keymaps.global or {}
  local function map(modes, lhs, rhs, desc)
    if lhs and lhs ~= '' then
      vim.keymap.set(modes, lhs, rhs, { silent = true, desc = 'agentd: ' .. desc })
    end
  end
  map('n', g.chat, function()
    M.chat()
  end, 'chat')
  map('n', g.prompt, ':Agentd ', 'prompt')
  map('x', g.prompt, ':Agentd ', 'prompt about the selection')
  map('x', g.edit, ':AgentdEdit ', 'change the selection (inline edit)')
  map('n', g.cancel, function()
    M.cancel()
  end, 'cancel the run')
  map('n', g.pending, M.pending, 'open requests')
  map('n', g.sessions, M.sessions, 'sessions')
  map('n', g.toggle, M.toggle, 'toggle the chat')
end

-- Makes :help agentd work without :helptags when doc/tags is missing
-- (a plugin manager that does not run it, a copy without the file).
local function ensure_helptags()
  local doc = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h:h') .. '/doc'
  if vim.fn.filereadable(doc .. '/tags') == 0 and vim.fn.filewritable(doc) == 2 then
    pcall(vim.cmd, 'silent helptags ' .. vim.fn.fnameescape(doc))
  end
end

local function autocmds()
  local group = api.nvim_create_augroup('agentd', { clear = true })
  api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile' }, {
    group = group,
    callback = function(a)
      documents.did_open(a.buf)
    end,
  })
  api.nvim_create_autocmd('BufEnter', {
    group = group,
    callback = function(a)
      if documents.path(a.buf) then
        S.last_file_buf = a.buf
        documents.did_open(a.buf)
      end
    end,
  })
  api.nvim_create_autocmd('BufWritePost', {
    group = group,
    callback = function(a)
      documents.did_save(a.buf)
    end,
  })
  api.nvim_create_autocmd({ 'BufDelete', 'BufWipeout' }, {
    group = group,
    callback = function(a)
      documents.did_close(a.buf)
    end,
  })
  api.nvim_create_autocmd('VimResized', {
    group = group,
    callback = function()
      float.render()
    end,
  })
  api.nvim_create_autocmd('VimLeavePre', {
    group = group,
    callback = function()
      lifecycle.stop(300)
    end,
  })
end

function M.setup(opts)
  config.set(opts)
  S.configured = true
  S.stopping = false
  lifecycle.set_hooks({
    notification = methods.notification,
    request = methods.request,
    ready = methods.ready,
  })
  autocmds()
  set_global_keymaps()
  ensure_helptags()
end

--- Applies the defaults if setup() was never called.
function M.setup_once()
  if not S.configured then
    M.setup({})
  end
end

--- Forgets everything (for tests): stops the daemon, drops runs and requests.
function M._reset()
  lifecycle.stop(300)
  float.close()
  for id in pairs(require('agentd.diff')._open) do
    require('agentd.diff').on_resolved(id)
  end
  require('agentd.restore').close()
  require('agentd.mcp').close()
  for id in pairs(require('agentd.inline')._reviews) do
    require('agentd.inline').on_resolved(id)
  end
  chat.reset()
  S.reset()
end

return M
