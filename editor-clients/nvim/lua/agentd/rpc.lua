-- JSON-RPC 2.0 over a child process's pipes, framed with Content-Length.
--
-- The endpoint (Endpoint) knows nothing about processes: it takes bytes with
-- :receive() and writes through a function, so it can be tested alone.
-- M.spawn() wires one to a child started with vim.loop.spawn.
local framing = require('agentd.framing')
local P = require('agentd.protocol')

local uv = vim.uv or vim.loop
local M = {}

M.DISCONNECTED = P.DISCONNECTED

--- What a request handler returns when it answers later, through the
--- respond(result, err) it was given (once; a late answer after the
--- connection closed goes nowhere).
M.ASYNC = setmetatable({}, { __tostring = function()
  return 'agentd.rpc.ASYNC'
end })

---@class agentd.Endpoint
---@field write fun(data: string): boolean
---@field handlers table
---@field next_id integer
---@field callbacks table<integer, fun(err: table|nil, result: any)>
---@field closed boolean
local Endpoint = {}
Endpoint.__index = Endpoint

--- handlers: on_notification(method, params), on_request(method, params) ->
--- result, err (err = {code, message}), on_protocol_error(message).
--- Handlers are called from the main loop (vim.schedule), never from a luv callback.
function M.endpoint(write, handlers)
  return setmetatable({
    write = write,
    handlers = handlers or {},
    decoder = framing.decoder(),
    next_id = 1,
    callbacks = {},
    closed = false,
    schedule = vim.schedule,
  }, Endpoint)
end

function Endpoint:send(msg)
  if self.closed then
    return false
  end
  msg.jsonrpc = '2.0'
  local ok, body = pcall(vim.json.encode, msg)
  if not ok then
    error('agentd: cannot encode message: ' .. tostring(body))
  end
  return self.write(framing.encode(body))
end

--- Sends a request; cb(err, result) is called once. Returns the id.
function Endpoint:request(method, params, cb)
  local id = self.next_id
  self.next_id = id + 1
  if self.closed then
    if cb then
      self.schedule(function()
        cb({ code = M.DISCONNECTED, message = 'agentd is not running' })
      end)
    end
    return id
  end
  self.callbacks[id] = cb or function() end
  local msg = { id = id, method = method }
  if params ~= nil then
    msg.params = params
  end
  self:send(msg)
  return id
end

function Endpoint:notify(method, params)
  local msg = { method = method }
  if params ~= nil then
    msg.params = params
  end
  return self:send(msg)
end

--- Feeds bytes read from the daemon (may be called from a luv callback).
function Endpoint:receive(chunk)
  for _, item in ipairs(self.decoder:feed(chunk)) do
    self.schedule(function()
      if item.err then
        self:protocol_error('framing: ' .. item.err)
      else
        self:dispatch(item.body)
      end
    end)
  end
end

function Endpoint:protocol_error(message)
  if self.handlers.on_protocol_error then
    self.handlers.on_protocol_error(message)
  end
end

local function nn(v) -- JSON null is vim.NIL
  if v == vim.NIL then
    return nil
  end
  return v
end

function Endpoint:dispatch(body)
  local ok, msg = pcall(vim.json.decode, body)
  if not ok or type(msg) ~= 'table' then
    return self:protocol_error('bad JSON from daemon: ' .. body:sub(1, 200))
  end
  local id, method = nn(msg.id), nn(msg.method)
  if method then
    local params = nn(msg.params)
    if id ~= nil then
      local answered = false
      local function respond(result, err)
        if answered or self.closed then
          return
        end
        answered = true
        if err then
          self:send({ id = id, error = err })
        else
          self:send({ id = id, result = result == nil and vim.NIL or result })
        end
      end
      if not self.handlers.on_request then
        return respond(nil, { code = -32601, message = 'method not found: ' .. method })
      end
      local okh, r, e = pcall(self.handlers.on_request, method, params, respond)
      if not okh then
        return respond(nil, { code = -32603, message = tostring(r) })
      end
      if r ~= M.ASYNC then
        respond(r, e)
      end
    elseif self.handlers.on_notification then
      local okh, e = pcall(self.handlers.on_notification, method, params)
      if not okh then
        self:protocol_error('handling ' .. method .. ': ' .. tostring(e))
      end
    end
    return
  end
  if id ~= nil then
    local cb = self.callbacks[id]
    self.callbacks[id] = nil
    if cb then
      local err = nn(msg.error)
      local okc, e
      if err then
        okc, e = pcall(cb, err, nil)
      else
        okc, e = pcall(cb, nil, nn(msg.result))
      end
      if not okc then
        self:protocol_error('callback of request ' .. tostring(id) .. ': ' .. tostring(e))
      end
    end
    return
  end
  -- an error with id null: the daemon could not parse something we sent
  if msg.error then
    self:protocol_error('daemon: ' .. tostring(nn(msg.error).message))
  end
end

--- Fails every outstanding request (the daemon went away).
function Endpoint:close(reason)
  if self.closed then
    return
  end
  self.closed = true
  local cbs = self.callbacks
  self.callbacks = {}
  for _, cb in pairs(cbs) do
    self.schedule(function()
      cb({ code = M.DISCONNECTED, message = reason or 'agentd exited' })
    end)
  end
end

--- Blocks (pumping the event loop) until the request is answered or timeout ms pass.
function Endpoint:request_sync(method, params, timeout)
  local done, err, res = false, nil, nil
  self:request(method, params, function(e, r)
    done, err, res = true, e, r
  end)
  vim.wait(timeout or 1000, function()
    return done
  end, 10)
  if not done then
    return nil, { code = -32001, message = 'timeout' }
  end
  return res, err
end

M.Endpoint = Endpoint

--- Starts `cmd args` and returns a connection:
---   conn.rpc (an Endpoint), conn.pid, conn:kill(), conn:close_stdin()
--- opts: cmd, args, env (list of "K=V"), cwd, handlers, on_exit(code, signal),
--- on_stderr(data) (called from a luv callback: keep it fast).
function M.spawn(opts)
  local stdin, stdout, stderr = uv.new_pipe(false), uv.new_pipe(false), uv.new_pipe(false)
  local conn = {}
  local handle, pid
  local function close_all()
    for _, p in ipairs({ stdin, stdout, stderr }) do
      if not p:is_closing() then
        p:close()
      end
    end
  end
  handle, pid = uv.spawn(opts.cmd, {
    args = opts.args,
    env = opts.env,
    cwd = opts.cwd,
    stdio = { stdin, stdout, stderr },
  }, function(code, signal)
    if handle and not handle:is_closing() then
      handle:close()
    end
    stdout:read_stop()
    stderr:read_stop()
    close_all()
    vim.schedule(function()
      conn.rpc:close('agentd exited (code ' .. tostring(code) .. ', signal ' .. tostring(signal) .. ')')
      conn.exited = true
      if opts.on_exit then
        opts.on_exit(code, signal)
      end
    end)
  end)
  if not handle then
    close_all()
    return nil, tostring(pid)
  end
  conn.pid = pid
  conn.handle = handle
  conn.rpc = M.endpoint(function(data)
    if stdin:is_closing() then
      return false
    end
    stdin:write(data)
    return true
  end, opts.handlers)
  stdout:read_start(function(err, data)
    if data then
      conn.rpc:receive(data)
    end
  end)
  stderr:read_start(function(err, data)
    if data and opts.on_stderr then
      opts.on_stderr(data)
    end
  end)
  function conn:close_stdin()
    if not stdin:is_closing() then
      stdin:shutdown(function()
        if not stdin:is_closing() then
          stdin:close()
        end
      end)
    end
  end
  function conn:kill(sig)
    if not self.exited and handle and not handle:is_closing() then
      handle:kill(sig or 'sigterm')
    end
  end
  return conn
end

return M
