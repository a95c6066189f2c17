-- The daemon's life: start `agentd serve`, initialize it, restart it with
-- backoff when it dies, stop it. Requests made while it (re)starts wait
-- for it to be ready.
local config = require('agentd.config')
local rpc = require('agentd.rpc')
local P = require('agentd.protocol')
local S = require('agentd.state')
local ui = require('agentd.ui')

local uv = vim.uv or vim.loop
local M = {}

---@class agentd.LifecycleHooks
---@field notification fun(method: string, params: any)
---@field request fun(method: string, params: any): any, table|nil
---@field ready fun(was_restart: boolean)
local hooks = {
  notification = function() end,
  request = function()
    return nil, { code = -32601, message = 'not ready' }
  end,
  ready = function() end,
}

--- Wires the daemon's messages to their handlers (agentd.methods).
---@param h agentd.LifecycleHooks
function M.set_hooks(h)
  hooks = h
end

local function root_dir()
  local r = config.values.root
  if type(r) == 'function' then
    r = r()
  end
  r = r or vim.fn.getcwd()
  return (vim.fn.fnamemodify(r, ':p'):gsub('/$', ''))
end

--- The workspace (decided once, when first needed).
function M.root()
  S.root = S.root or root_dir()
  return S.root
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
  local root = M.root()
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
      experimental = { agentd = { promptKinds = c.prompt_kinds or P.prompt_kinds,
        -- a kind this plugin does not know is shown from its generic form
        -- (unless the user lists the kinds: then the daemon keeps to them)
        genericPrompts = c.prompt_kinds == nil or nil,
        -- the daemon → editor requests this editor answers (agentd.language)
        language = c.language and require('agentd.language').capabilities() or nil } },
    },
    initializationOptions = next(opts) and opts or vim.empty_dict(),
  }
end

M._initialize_params = initialize_params

-- A luv callback: no editor API here.
local function log_stderr(data)
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

local function open_log()
  local c = config.values
  if c.log_file ~= false and not S.log then
    local path = require('agentd.health').log_path()
    vim.fn.mkdir(vim.fn.fnamemodify(path, ':h'), 'p')
    S.log = io.open(path, 'a')
  end
end

local schedule_restart

local function on_exit(conn, code, signal)
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
  ui.notify(('the daemon exited (code %s%s)%s; restarting it'):format(code,
    signal ~= 0 and (', signal ' .. signal) or '', last and (': ' .. last) or ''), vim.log.levels.WARN)
  schedule_restart()
end

local function initialize(conn)
  conn.rpc:request(P.request.initialize, initialize_params(), function(e, result)
    if S.conn ~= conn then
      return
    end
    if e then
      ui.notify('initialize failed: ' .. tostring(e.message), vim.log.levels.ERROR)
      S.status = 'failed'
      return
    end
    local was_restart = S.status == 'restarting'
    S.server = result
    conn.rpc:notify(P.notification.initialized, vim.empty_dict())
    S.ready = true
    S.status = 'ready'
    local waiting = S.waiting
    S.waiting = {}
    for _, w in ipairs(waiting) do
      w.fn(conn.rpc)
    end
    hooks.ready(was_restart)
    ui.redraw_status()
  end)
end

--- Starts the daemon unless it runs. Returns false when it cannot start.
---@return boolean
function M.start()
  if S.conn and not S.conn.exited then
    return true
  end
  local c = config.values
  M.root()
  S.ready = false
  S.status = S.restarts > 0 and 'restarting' or 'starting'
  open_log()
  S.start_error = nil
  if vim.fn.executable(c.cmd) ~= 1 then
    S.status = 'failed'
    S.start_error = ('cannot find the daemon "%s" (set cmd in require("agentd").setup{})'):format(c.cmd)
    ui.notify(S.start_error, vim.log.levels.ERROR)
    return false
  end
  local conn, err
  conn, err = rpc.spawn({
    cmd = vim.fn.exepath(c.cmd) ~= '' and vim.fn.exepath(c.cmd) or c.cmd,
    args = c.args,
    env = environment(),
    cwd = S.root,
    on_stderr = log_stderr,
    handlers = {
      on_notification = function(method, params)
        hooks.notification(method, params)
      end,
      on_request = function(method, params, respond)
        return hooks.request(method, params, respond)
      end,
      on_protocol_error = function(msg)
        ui.notify(msg, vim.log.levels.WARN)
      end,
    },
    on_exit = function(code, signal)
      on_exit(conn, code, signal)
    end,
  })
  if not conn then
    S.status = 'failed'
    S.start_error = 'cannot start the daemon: ' .. tostring(err)
    ui.notify(S.start_error, vim.log.levels.ERROR)
    return false
  end
  S.conn = conn
  S.started_at = uv.now()
  initialize(conn)
  ui.redraw_status()
  return true
end

local function stop_timer()
  local t = S.restart_timer
  S.restart_timer = nil
  if t then
    t:stop()
    if not t:is_closing() then
      t:close()
    end
  end
end

function schedule_restart()
  local r = config.values.restart
  -- a daemon that ran a while earns a fresh set of retries
  if uv.now() - S.started_at > 30000 then
    S.restarts = 0
  end
  if S.restarts >= r.max_retries then
    S.status = 'failed'
    S.start_error = ('the daemon died %d times in a row'):format(S.restarts)
    ui.notify(S.start_error .. '; :AgentdRestart to try again', vim.log.levels.ERROR)
    M.fail_waiting(S.start_error)
    ui.redraw_status()
    return
  end
  local delay = r.backoff_ms * (2 ^ S.restarts)
  S.restarts = S.restarts + 1
  S.status = 'restarting'
  ui.redraw_status()
  stop_timer()
  local t = uv.new_timer()
  S.restart_timer = t
  t:start(delay, 0, vim.schedule_wrap(function()
    if S.restart_timer == t then
      stop_timer()
    end
    if not S.stopping then
      M.start()
    end
  end))
end

--- Tells every call waiting for the daemon that it will not come (fail(why)).
---@param why string
function M.fail_waiting(why)
  local waiting = S.waiting
  S.waiting = {}
  for _, w in ipairs(waiting) do
    if w.fail then
      w.fail(why)
    end
  end
end

--- Calls fn(endpoint) once the daemon is initialized (starting it if
--- needed), or fail(why) when it cannot start.
---@param fn fun(rpc: agentd.Endpoint)
---@param fail fun(why: string)|nil
function M.with_rpc(fn, fail)
  if S.ready and S.conn then
    return fn(S.conn.rpc)
  end
  table.insert(S.waiting, { fn = fn, fail = fail })
  if not S.conn and S.status ~= 'restarting' then
    S.stopping = false
    S.restarts = 0
    if not M.start() then
      M.fail_waiting(S.start_error or 'the daemon did not start')
    end
  end
end

--- Sends a request once the daemon is ready; cb(err, result). When it
--- cannot start, cb gets the error DISCONNECTED with why.
---@param method string
---@param params any
---@param cb fun(err: table|nil, result: any)|nil
function M.request(method, params, cb)
  M.with_rpc(function(r)
    r:request(method, params, cb)
  end, cb and function(why)
    cb({ code = P.DISCONNECTED, message = why })
  end)
end

--- Sends a notification now if the daemon is ready (dropped otherwise:
--- on_ready tells a new daemon what it needs).
function M.notify_now(method, params)
  if S.ready and S.conn then
    S.conn.rpc:notify(method, params)
  end
end

--- Stops the daemon (shutdown, exit; killed if it lingers).
---@param timeout integer|nil ms
function M.stop(timeout)
  S.stopping = true
  stop_timer()
  local conn = S.conn
  if not conn then
    S.status = 'stopped'
    return
  end
  if S.ready then
    conn.rpc:request_sync(P.request.shutdown, nil, timeout or 500)
    conn.rpc:notify(P.notification.exit)
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

function M.restart()
  M.stop()
  S.stopping = false
  S.restarts = 0
  M.start()
end

return M
