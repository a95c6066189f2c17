-- agentd for Neovim: starts `agentd serve`, speaks its protocol
-- (docs/protocol.md), shows runs in a conversation buffer and input requests
-- through vim.ui and a diff tab.
local config = require('agentd.config')
local rpc = require('agentd.rpc')
local queue_mod = require('agentd.queue')
local runs_mod = require('agentd.runs')
local conversation = require('agentd.conversation')
local prompts = require('agentd.prompts')

local api = vim.api
local uv = vim.uv or vim.loop
local M = {}

local S = {
  configured = false,
  conn = nil, -- the live connection (rpc.spawn)
  ready = false, -- initialize answered
  waiting = {}, -- functions to call once ready
  stopping = false,
  restarts = 0,
  restart_timer = nil,
  started_at = 0,
  server = nil, -- the initialize result
  root = nil,
  runs = runs_mod.new(),
  queue = queue_mod.new(),
  prompt = nil, -- the handle of the prompt on screen
  session = nil, -- the conversation's session
  run = nil, -- the latest run we started
  opened = {}, -- bufnr -> uri sent with didOpen
  index = nil, -- { title, message, percentage } while indexing
  stderr = {}, -- the daemon's last stderr lines
  log = nil, -- log file handle
  status = 'stopped', -- stopped | starting | ready | restarting | failed
  notifications = 0,
}
M._state = S

local function notify(msg, level)
  if config.values.notify then
    vim.notify('agentd: ' .. msg, level or vim.log.levels.INFO)
  end
end

local function redraw_status()
  pcall(vim.cmd, 'redrawstatus!')
end

-- ----------------------------------------------------------------- daemon

local function root_dir()
  local r = config.values.root
  if type(r) == 'function' then
    r = r()
  end
  r = r or vim.fn.getcwd()
  return vim.fn.fnamemodify(r, ':p'):gsub('/$', '')
end

local function environment()
  local env = vim.fn.environ()
  for k, v in pairs(config.values.env or {}) do
    if v == false then
      env[k] = nil
    else
      env[k] = tostring(v)
    end
  end
  local list = {}
  for k, v in pairs(env) do
    list[#list + 1] = k .. '=' .. v
  end
  return list
end

local function initialize_params()
  local c = config.values
  local root = S.root
  local uri = vim.uri_from_fname(root)
  local v = vim.version()
  local opts = {}
  if c.model and next(c.model) then
    opts.model = c.model
  end
  if c.approval_policy then
    opts.approvalPolicy = c.approval_policy
  end
  return {
    processId = vim.fn.getpid(),
    clientInfo = { name = 'Neovim', version = ('%d.%d.%d'):format(v.major, v.minor, v.patch) },
    rootUri = uri,
    rootPath = root,
    workspaceFolders = { { uri = uri, name = vim.fn.fnamemodify(root, ':t') } },
    capabilities = {
      window = { workDoneProgress = true },
      experimental = { agentd = { promptKinds = c.prompt_kinds } },
    },
    initializationOptions = next(opts) and opts or vim.empty_dict(),
  }
end

local function log_stderr(data)
  -- luv callback: no editor API here
  for line in data:gmatch('[^\n]+') do
    table.insert(S.stderr, line)
    if #S.stderr > 200 then
      table.remove(S.stderr, 1)
    end
  end
  if S.log then
    S.log:write(data)
    S.log:flush()
  end
end

local handle_notification, handle_request, on_ready, schedule_restart

local function start()
  if S.conn and not S.conn.exited then
    return true
  end
  local c = config.values
  S.root = S.root or root_dir()
  S.ready = false
  S.status = S.restarts > 0 and 'restarting' or 'starting'
  if c.log_file ~= false and not S.log then
    local path = c.log_file or (vim.fn.stdpath('cache') .. '/agentd.log')
    vim.fn.mkdir(vim.fn.fnamemodify(path, ':h'), 'p')
    S.log = io.open(path, 'a')
  end
  local exe = c.cmd
  if vim.fn.executable(exe) ~= 1 then
    S.status = 'failed'
    notify(('cannot find the daemon "%s" (set cmd in require("agentd").setup{})'):format(exe), vim.log.levels.ERROR)
    return false
  end
  local conn, err
  conn, err = rpc.spawn({
    cmd = vim.fn.exepath(exe) ~= '' and vim.fn.exepath(exe) or exe,
    args = c.args,
    env = environment(),
    cwd = S.root,
    on_stderr = log_stderr,
    handlers = {
      on_notification = function(method, params)
        handle_notification(method, params)
      end,
      on_request = function(method, params)
        return handle_request(method, params)
      end,
      on_protocol_error = function(msg)
        notify(msg, vim.log.levels.WARN)
      end,
    },
    on_exit = function(code, signal)
      if S.conn ~= conn then
        return
      end
      S.conn = nil
      S.ready = false
      S.opened = {}
      if S.stopping then
        S.status = 'stopped'
        return
      end
      local last = S.stderr[#S.stderr]
      if last and last:find('level=[ID][NE][FB]') then
        last = nil -- an info or debug log line says nothing about the exit
      end
      notify(('the daemon exited (code %s%s)%s'):format(code, signal ~= 0 and (', signal ' .. signal) or '',
        last and (': ' .. last) or ''), vim.log.levels.WARN)
      schedule_restart()
    end,
  })
  if not conn then
    S.status = 'failed'
    notify('cannot start the daemon: ' .. tostring(err), vim.log.levels.ERROR)
    return false
  end
  S.conn = conn
  S.started_at = uv.now()
  conn.rpc:request('initialize', initialize_params(), function(e, result)
    if S.conn ~= conn then
      return
    end
    if e then
      notify('initialize failed: ' .. tostring(e.message), vim.log.levels.ERROR)
      S.status = 'failed'
      return
    end
    S.server = result
    conn.rpc:notify('initialized', vim.empty_dict())
    S.ready = true
    S.status = 'ready'
    on_ready()
  end)
  redraw_status()
  return true
end

function schedule_restart()
  local r = config.values.restart
  -- a daemon that ran a while earns a fresh set of retries
  if uv.now() - S.started_at > 30000 then
    S.restarts = 0
  end
  if S.restarts >= r.max_retries then
    S.status = 'failed'
    notify(('the daemon died %d times in a row; :AgentdRestart to try again'):format(S.restarts), vim.log.levels.ERROR)
    redraw_status()
    return
  end
  local delay = r.backoff_ms * (2 ^ S.restarts)
  S.restarts = S.restarts + 1
  S.status = 'restarting'
  redraw_status()
  if S.restart_timer then
    S.restart_timer:stop()
    S.restart_timer:close()
  end
  local t = uv.new_timer()
  S.restart_timer = t
  t:start(delay, 0, vim.schedule_wrap(function()
    if not t:is_closing() then
      t:close()
    end
    if S.restart_timer == t then
      S.restart_timer = nil
    end
    if not S.stopping then
      start()
    end
  end))
end

-- Calls fn(rpc_endpoint) once the daemon is initialized (starting it if needed).
local function with_rpc(fn)
  if S.ready and S.conn then
    return fn(S.conn.rpc)
  end
  table.insert(S.waiting, fn)
  if not S.conn and S.status ~= 'restarting' then
    S.restarts = 0
    if not start() then
      S.waiting = {}
    end
  end
end

local function request(method, params, cb)
  with_rpc(function(r)
    r:request(method, params, cb)
  end)
end
M.request = request

local function err_text(e)
  return ('%s (%s)'):format(tostring(e.message), tostring(e.code))
end

-- -------------------------------------------------------------- documents

local function buf_uri(buf)
  if not api.nvim_buf_is_valid(buf) or vim.bo[buf].buftype ~= '' then
    return nil
  end
  local name = api.nvim_buf_get_name(buf)
  if name == '' or name:match('^%a[%w+.-]*://') then
    return nil
  end
  local path = vim.fn.fnamemodify(name, ':p')
  if S.root and path:sub(1, #S.root + 1) ~= S.root .. '/' then
    return nil -- outside the workspace: the daemon would ignore it
  end
  return vim.uri_from_fname(path)
end

local function did_open(buf)
  if not (S.ready and S.conn) or S.opened[buf] or not api.nvim_buf_is_loaded(buf) then
    return
  end
  local uri = buf_uri(buf)
  if not uri then
    return
  end
  S.opened[buf] = uri
  local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
  S.conn.rpc:notify('textDocument/didOpen', {
    textDocument = {
      uri = uri,
      languageId = vim.bo[buf].filetype,
      version = api.nvim_buf_get_changedtick(buf),
      text = table.concat(lines, '\n') .. '\n',
    },
  })
end

local function did_save(buf)
  if not (S.ready and S.conn) then
    return
  end
  if not S.opened[buf] then
    return did_open(buf)
  end
  S.conn.rpc:notify('textDocument/didSave', { textDocument = { uri = S.opened[buf] } })
end

local function did_close(buf)
  local uri = S.opened[buf]
  S.opened[buf] = nil
  if uri and S.ready and S.conn then
    S.conn.rpc:notify('textDocument/didClose', { textDocument = { uri = uri } })
  end
end

-- ---------------------------------------------------------------- prompts

local pump

local function finish_prompt()
  S.prompt = nil
  redraw_status()
  vim.schedule(pump)
end

local function send_answer(req, method, params)
  params.requestId = req.requestId
  S.queue:answered(req.requestId)
  finish_prompt()
  request(method, params, function(e)
    if not e then
      return
    end
    if e.code == -32012 or e.code == -32011 then
      -- resolved elsewhere (or cancelled) while the prompt was up
      notify('that request was already resolved (' .. tostring(e.message) .. ')')
    elseif e.code == -32014 then
      notify('the request expired before your answer arrived', vim.log.levels.WARN)
    elseif e.code == rpc.DISCONNECTED then
      notify('the daemon is not running; the request stays open (:AgentdPending)', vim.log.levels.WARN)
      S.queue:unresolve(req)
      redraw_status()
    else
      notify('answer refused: ' .. err_text(e), vim.log.levels.ERROR)
      S.queue:unresolve(req)
      redraw_status()
    end
  end)
end

function pump()
  if S.prompt then
    return
  end
  local req = S.queue:next()
  if not req then
    return
  end
  redraw_status()
  local waiting = S.queue:count() - 1
  if waiting > 0 then
    notify(('%d more request%s waiting'):format(waiting, waiting == 1 and '' or 's'))
  end
  local entry = { req = req }
  prompts.show(req, {
    root = S.root,
    started = function(handle)
      entry.handle = handle
      S.prompt = entry
    end,
    reply = function(params)
      send_answer(req, 'agent/reply', params)
    end,
    confirm = function(decision, reason, edited)
      send_answer(req, 'agent/confirm', { decision = decision, reason = reason, editedContent = edited })
    end,
    postpone = function()
      S.queue:postpone(req.requestId)
      notify('request postponed; :AgentdPending shows it again')
      finish_prompt()
    end,
  })
end

local function add_request(req)
  if S.queue:add(req) then
    redraw_status()
    vim.schedule(pump)
  end
end

local function resolve_request(id)
  local where = S.queue:resolve(id)
  if where == 'active' and S.prompt and S.prompt.req.requestId == id then
    local h = S.prompt.handle
    S.prompt = nil
    if h then
      h.close()
    end
    vim.schedule(pump)
  end
  redraw_status()
end

-- ----------------------------------------------------------- notifications

local function is_current_session(sid)
  return sid ~= nil and sid == S.session
end

local apply_run_notification

local function on_run_state(run, p)
  local st = p.state
  if st == 'completed' then
    notify('run ' .. (run.stop_reason == 'max_steps' and 'stopped at the step limit' or 'completed'))
  elseif st == 'failed' then
    notify('run failed: ' .. tostring(p.error or p.stopReason), vim.log.levels.ERROR)
  elseif st == 'cancelled' then
    notify('run cancelled')
  elseif st == 'paused' then
    notify('run ' .. run.id .. ' is paused (the daemon restarted); :AgentdResume continues it', vim.log.levels.WARN)
  end
end

-- Applies a run notification that passed the seq check.
function apply_run_notification(method, p, replay)
  local before = S.runs:get(p.runId)
  local old_state = before and before.state
  local run = S.runs:apply(method, p)
  if method == 'agent/inputRequest' then
    add_request(p)
  elseif method == 'agent/inputResolved' then
    resolve_request(p.requestId)
  elseif method == 'agent/runState' and p.state ~= old_state and not replay then
    on_run_state(run, p)
  end
  if not S.session then
    S.session = run.session
  end
  if is_current_session(run.session) then
    conversation.render()
  end
  redraw_status()
end

local function catch_up(run, after_done)
  if run.catching_up then
    return
  end
  run.catching_up = true
  request('agent/events', { runId = run.id, afterSeq = run.last_seq }, function(e, res)
    run.catching_up = false
    if not e and res then
      for _, ev in ipairs(res.events or {}) do
        local p = ev.params
        if type(p) == 'table' and (ev.seq or p.seq or 0) > run.last_seq then
          p.seq = p.seq or ev.seq
          apply_run_notification(ev.method, p, true)
        end
      end
      if res.state and res.state ~= vim.NIL then
        run.state = res.state
      end
    elseif e then
      notify('could not catch up run ' .. run.id .. ': ' .. err_text(e), vim.log.levels.WARN)
    end
    local buffered = run.buffered
    run.buffered = {}
    for _, b in ipairs(buffered) do
      local verdict = S.runs:check(run, b.params.seq)
      if verdict ~= 'dup' then
        apply_run_notification(b.method, b.params)
      end
    end
    if is_current_session(run.session) then
      conversation.render()
    end
    if after_done then
      after_done()
    end
  end)
end

local RUN_METHODS = {
  ['agent/update'] = true,
  ['agent/runState'] = true,
  ['agent/inputRequest'] = true,
  ['agent/inputResolved'] = true,
}

local function on_progress(p)
  local v = p and p.value
  if type(v) ~= 'table' then
    return
  end
  if v.kind == 'begin' then
    S.index = { title = v.title, message = v.message, percentage = v.percentage }
  elseif v.kind == 'report' and S.index then
    S.index.message = v.message or S.index.message
    S.index.percentage = v.percentage or S.index.percentage
  elseif v.kind == 'end' then
    S.index = nil
    if v.message and v.message ~= vim.NIL and #api.nvim_list_uis() > 0 then
      api.nvim_echo({ { 'agentd: index ready: ' .. v.message } }, false, {})
    end
  end
  redraw_status()
end

function handle_notification(method, p)
  S.notifications = S.notifications + 1
  if RUN_METHODS[method] and type(p) == 'table' and p.runId then
    local run = S.runs:ensure(p.runId, p.sessionId)
    if run.catching_up then
      table.insert(run.buffered, { method = method, params = p })
      return
    end
    local verdict = S.runs:check(run, p.seq)
    if verdict == 'dup' then
      return
    elseif verdict == 'gap' then
      table.insert(run.buffered, { method = method, params = p })
      return catch_up(run)
    end
    return apply_run_notification(method, p)
  elseif method == '$/progress' then
    on_progress(p)
  elseif method == 'window/logMessage' or method == 'window/showMessage' then
    if type(p) == 'table' and p.message then
      notify(p.message, (p.type == 1 and vim.log.levels.ERROR) or (p.type == 2 and vim.log.levels.WARN) or nil)
    end
  end
end

function handle_request(method, p)
  if method == 'window/workDoneProgress/create' then
    return vim.NIL
  end
  return nil, { code = -32601, message = 'method not found: ' .. tostring(method) }
end

-- Runs after each (re)initialize: documents, pending requests, catch-up.
function on_ready()
  local was_restart = S.restarts > 0
  for _, buf in ipairs(api.nvim_list_bufs()) do
    did_open(buf)
  end
  local waiting = S.waiting
  S.waiting = {}
  for _, fn in ipairs(waiting) do
    fn(S.conn.rpc)
  end
  -- open input requests come back after a restart of the daemon or the editor
  request('agent/pending', vim.empty_dict(), function(e, res)
    if e or not res then
      return
    end
    local ids = {}
    for _, r in ipairs(res.requests or {}) do
      ids[#ids + 1] = r.requestId
    end
    if S.queue:sync(ids) and S.prompt then
      local h = S.prompt.handle
      S.prompt = nil
      if h then
        h.close()
      end
    end
    S.queue:requeue_postponed()
    for _, r in ipairs(res.requests or {}) do
      S.runs:ensure(r.runId, r.sessionId)
      add_request(r)
    end
    if #(res.requests or {}) > 0 then
      notify(('%d open request%s'):format(#res.requests, #res.requests == 1 and '' or 's'))
    end
    vim.schedule(pump)
    redraw_status()
  end)
  -- runs that were going on: fetch what we missed
  for _, id in ipairs(S.runs.order) do
    local run = S.runs:get(id)
    if not runs_mod.TERMINAL[run.state] then
      catch_up(run)
    end
  end
  if was_restart then
    notify('the daemon is back')
  end
end

-- ------------------------------------------------------------- commands

local last_file_buf

local function context_for(opts)
  local buf = api.nvim_get_current_buf()
  if not buf_uri(buf) and last_file_buf and api.nvim_buf_is_valid(last_file_buf) then
    buf = last_file_buf
  end
  local name = api.nvim_buf_get_name(buf)
  if not buf_uri(buf) then
    return nil
  end
  local path = vim.fn.fnamemodify(name, ':p')
  local rel = path
  if S.root and path:sub(1, #S.root + 1) == S.root .. '/' then
    rel = path:sub(#S.root + 2)
  end
  local ctx = { files = { rel } }
  if opts and opts.range and opts.range > 0 then
    local l1, l2 = opts.line1, opts.line2
    local lines = api.nvim_buf_get_lines(buf, l1 - 1, l2, false)
    ctx.selection = { path = rel, startLine = l1, endLine = l2, text = table.concat(lines, '\n') }
  end
  return ctx
end

--- Starts a run. opts: prompt, new_session (bool), range/line1/line2 (as
--- from a user command), context (overrides), approval_policy.
function M.run(opts)
  M.setup_once()
  opts = opts or {}
  local prompt = opts.prompt
  if not prompt or prompt == '' then
    return vim.ui.input({ prompt = 'agentd: ' }, function(text)
      if text and text ~= '' then
        opts.prompt = text
        M.run(opts)
      end
    end)
  end
  if not S.root then
    S.root = root_dir()
  end
  local params = { prompt = prompt }
  if S.session and not opts.new_session then
    params.sessionId = S.session
  end
  params.context = opts.context or context_for(opts)
  params.approvalPolicy = opts.approval_policy
  if config.values.conversation.auto_open then
    conversation.open()
  end
  request('agent/run', params, function(e, res)
    if e then
      if e.code == -32016 then
        notify('this session is still running; :AgentdCancel it, or :Agentd! starts a new session', vim.log.levels.WARN)
      else
        notify('run refused: ' .. err_text(e), vim.log.levels.ERROR)
      end
      return
    end
    local run = S.runs:ensure(res.runId, res.sessionId)
    run.prompt = prompt
    S.session = res.sessionId
    S.run = res.runId
    conversation.render()
    redraw_status()
  end)
end

-- The run :AgentdCancel stops: the latest unfinished run of the current session.
local function active_run()
  local list = S.session and S.runs:of_session(S.session) or {}
  for i = #list, 1, -1 do
    if not runs_mod.TERMINAL[list[i].state] then
      return list[i]
    end
  end
  for i = #S.runs.order, 1, -1 do
    local r = S.runs:get(S.runs.order[i])
    if not runs_mod.TERMINAL[r.state] then
      return r
    end
  end
end

function M.cancel(run_id)
  local run = run_id and S.runs:get(run_id) or active_run()
  if not run then
    return notify('no run is going on')
  end
  request('agent/cancel', { runId = run.id }, function(e)
    if e then
      notify('cancel failed: ' .. err_text(e), vim.log.levels.ERROR)
    end
  end)
end

function M.resume(run_id)
  local run = run_id and S.runs:get(run_id)
  if not run then
    for i = #S.runs.order, 1, -1 do
      local r = S.runs:get(S.runs.order[i])
      if r.state == 'paused' then
        run = r
        break
      end
    end
  end
  if not run then
    return notify('no paused run')
  end
  request('agent/resume', { runId = run.id }, function(e)
    if e then
      notify('resume failed: ' .. err_text(e), vim.log.levels.ERROR)
    end
  end)
end

--- Shows the open input requests again (asks the daemon for them).
function M.pending()
  M.setup_once()
  request('agent/pending', vim.empty_dict(), function(e, res)
    if e then
      return notify('pending: ' .. err_text(e), vim.log.levels.ERROR)
    end
    S.queue:requeue_postponed()
    local n = 0
    for _, r in ipairs(res.requests or {}) do
      S.runs:ensure(r.runId, r.sessionId)
      S.queue:add(r)
      n = n + 1
    end
    if n == 0 and S.queue:count() == 0 then
      notify('no open requests')
    end
    redraw_status()
    pump()
  end)
end

local function show_session(sid, last_run)
  S.session = sid
  conversation.open({ focus = true })
  if last_run and last_run ~= '' then
    local run = S.runs:ensure(last_run, sid)
    if run.last_seq == 0 then
      catch_up(run)
    end
  end
  conversation.render()
end

function M.sessions()
  M.setup_once()
  request('agent/sessions', nil, function(e, res)
    if e then
      return notify('sessions: ' .. err_text(e), vim.log.levels.ERROR)
    end
    local list = res.sessions or {}
    if #list == 0 then
      return notify('no sessions in this workspace yet')
    end
    vim.ui.select(list, {
      prompt = 'agentd sessions',
      kind = 'agentd.sessions',
      format_item = function(s)
        return ('%s  [%s]  %s'):format(s.title or s.sessionId, s.state or '?', (s.updatedAt or ''):gsub('T', ' '):gsub('Z$', ''))
      end,
    }, function(s)
      if s then
        show_session(s.sessionId, s.lastRunId)
      end
    end)
  end)
end

function M.toggle()
  M.setup_once()
  conversation.toggle()
end

function M.restart()
  M.setup_once()
  M.stop()
  S.stopping = false
  S.restarts = 0
  start()
end

--- Stops the daemon (shutdown, exit; killed if it lingers).
function M.stop(timeout)
  S.stopping = true
  if S.restart_timer then
    S.restart_timer:stop()
    if not S.restart_timer:is_closing() then
      S.restart_timer:close()
    end
    S.restart_timer = nil
  end
  local conn = S.conn
  if not conn then
    S.status = 'stopped'
    return
  end
  if S.ready then
    conn.rpc:request_sync('shutdown', nil, timeout or 500)
    conn.rpc:notify('exit')
  end
  conn:close_stdin()
  vim.wait(timeout or 500, function()
    return conn.exited == true
  end, 10)
  if not conn.exited then
    conn:kill('sigkill')
  end
  S.conn = nil
  S.ready = false
  S.opened = {}
  S.status = 'stopped'
end

--- For the statusline: e.g. "agentd: running · 1 pending".
function M.statusline()
  if S.status == 'stopped' and not S.conn then
    return ''
  end
  local parts = {}
  if S.status == 'restarting' or S.status == 'starting' or S.status == 'failed' then
    parts[#parts + 1] = S.status
  end
  local run = S.run and S.runs:get(S.run)
  local active = active_run()
  if active then
    parts[#parts + 1] = active.state == 'requires_action' and 'waiting for you' or active.state
  elseif run then
    parts[#parts + 1] = run.state
  end
  local n = S.queue:count()
  if n > 0 then
    parts[#parts + 1] = n .. ' pending'
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
    pending = S.queue:count(),
    restarts = S.restarts,
    stderr = S.stderr,
  }
end

-- ---------------------------------------------------------------- setup

local function set_global_keymaps()
  local g = config.values.keymaps.global or {}
  local function map(modes, lhs, rhs, desc)
    if lhs and lhs ~= '' then
      vim.keymap.set(modes, lhs, rhs, { silent = true, desc = desc })
    end
  end
  map('n', g.prompt, function()
    M.run({})
  end, 'agentd: prompt')
  map('x', g.prompt, ':Agentd<CR>', 'agentd: prompt about the selection')
  map('n', g.cancel, M.cancel, 'agentd: cancel the run')
  map('n', g.pending, M.pending, 'agentd: show pending requests')
  map('n', g.sessions, M.sessions, 'agentd: sessions')
  map('n', g.toggle, M.toggle, 'agentd: toggle the conversation')
end

function M.setup(opts)
  config.set(opts)
  S.configured = true
  S.stopping = false
  conversation.set_source(function()
    local title
    local list = S.session and S.runs:of_session(S.session) or {}
    if S.session then
      title = 'session ' .. S.session
    end
    return { title = title, runs = list }
  end)
  local group = api.nvim_create_augroup('agentd', { clear = true })
  api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile' }, {
    group = group,
    callback = function(a)
      did_open(a.buf)
    end,
  })
  api.nvim_create_autocmd('BufEnter', {
    group = group,
    callback = function(a)
      if buf_uri(a.buf) then
        last_file_buf = a.buf
        did_open(a.buf)
      end
    end,
  })
  api.nvim_create_autocmd('BufWritePost', {
    group = group,
    callback = function(a)
      did_save(a.buf)
    end,
  })
  api.nvim_create_autocmd({ 'BufDelete', 'BufWipeout' }, {
    group = group,
    callback = function(a)
      did_close(a.buf)
    end,
  })
  api.nvim_create_autocmd('VimLeavePre', {
    group = group,
    callback = function()
      M.stop(300)
    end,
  })
  set_global_keymaps()
end

--- Applies the defaults if setup() was never called.
function M.setup_once()
  if not S.configured then
    M.setup({})
  end
end

--- Starts the daemon now (it otherwise starts on the first command).
function M.start()
  M.setup_once()
  S.stopping = false
  if not S.conn then
    S.restarts = 0
    start()
  end
end

--- Forgets everything (for tests): stops the daemon, drops runs and requests.
function M._reset()
  M.stop(300)
  if S.prompt and S.prompt.handle then
    S.prompt.handle.close()
  end
  S.prompt = nil
  S.runs = runs_mod.new()
  S.queue = queue_mod.new()
  S.session, S.run, S.root, S.server = nil, nil, nil, nil
  S.waiting = {}
  S.stderr = {}
  S.restarts = 0
  S.configured = false
  S.index = nil
end

return M
