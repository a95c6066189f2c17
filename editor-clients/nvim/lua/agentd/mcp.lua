-- MCP servers (docs/extensions.md): :AgentdMcp shows each server the chat's
-- session sees, from mcp/status: starting, connected with its tools (and
-- what the server claims of them), failed with why, waiting for the user's
-- approval, disabled. On a server's lines, e enables it, d disables it, r
-- restarts it (mcp/enable, mcp/disable, mcp/restart); the view follows the
-- daemon's mcp/changed (and asks again while a server starts), R asks
-- again. :checkhealth reports the same (M.report).
local P = require('agentd.protocol')
local S = require('agentd.state')
local lifecycle = require('agentd.lifecycle')
local ui = require('agentd.ui')

local api = vim.api
local uv = vim.uv or vim.loop
local M = {}

--- How often the view asks again while a server is starting (ms).
M.POLL_MS = 500

local function list(v)
  return type(v) == 'table' and v or {}
end

local function str(v)
  return type(v) == 'string' and v or ''
end

-- A state in words, with its mark.
local STATE = {
  idle = { '○', 'not started yet' },
  starting = { '◌', 'starting…' },
  connected = { '●', 'connected' },
  failed = { '✗', 'failed' },
  needs_approval = { '?', 'needs your approval (a workspace server: asked when a run starts)' },
  rejected = { '-', 'rejected (you refused to start it)' },
  disabled = { '-', 'disabled (e enables it)' },
}

--- What a server claims of a tool (its annotations), in words: shown, not
--- trusted.
---@param h table|nil
---@return string
function M.hints(h)
  if type(h) ~= 'table' then
    return ''
  end
  local out = {}
  if h.readOnly == true then
    out[#out + 1] = 'read-only'
  end
  if h.destructive == true then
    out[#out + 1] = 'destructive'
  elseif h.destructive == false then
    out[#out + 1] = 'not destructive'
  end
  if h.idempotent == true then
    out[#out + 1] = 'idempotent'
  end
  if h.openWorld == true then
    out[#out + 1] = 'open world'
  elseif h.openWorld == false then
    out[#out + 1] = 'closed world'
  end
  return table.concat(out, ', ')
end

--- A server's state in one line: "test  connected · 11 tools", "x  failed: why".
---@param s table an mcp/status entry
---@return string
function M.headline(s)
  local st = STATE[s.state] or { '?', str(s.state) }
  local line = ('%s %s  %s'):format(st[1], str(s.name), st[2])
  if s.state == 'connected' then
    local n = #list(s.tools)
    line = line .. (' · %d tool%s'):format(n, n == 1 and '' or 's')
  elseif s.state == 'failed' and str(s.error) ~= '' then
    line = line .. ': ' .. (s.error:gsub('\n.*', ' …'))
  end
  if s.toolsChanged == true then
    line = line .. ' · new tools announced (the next session offers them)'
  end
  return line
end

--- The view's keys (buffer-local in it), on a server's lines.
M.KEYS = { enable = 'e', disable = 'd', restart = 'r', refresh = 'R' }

--- The view's lines, highlights ({line (1-based), group}) and the server
--- of each line (line -> name).
---@param servers table[] mcp/status's servers
---@param opts {session: string|nil, error: string|nil}|nil
---@return string[] lines, table[] hl, table<integer, string> items
function M.lines(servers, opts)
  opts = opts or {}
  local lines, hl, items = {}, {}, {}
  local current
  local function push(s, group)
    lines[#lines + 1] = s
    if group then
      hl[#hl + 1] = { #lines, group }
    end
    items[#lines] = current
  end
  local k = M.KEYS
  push('MCP servers' .. (opts.session and ' of this conversation' or ''), 'Title')
  push(('on a server: %s enable · %s disable · %s restart  ·  %s asks again  ·  q closes'):format(k.enable, k.disable,
    k.restart, k.refresh), 'Comment')
  if opts.error then
    push('mcp/status failed: ' .. opts.error, 'ErrorMsg')
    return lines, hl, items
  end
  if #servers == 0 then
    push('None configured: add "mcpServers" to ~/.config/agentd/config.json or the workspace\'s .mcp.json')
    return lines, hl, items
  end
  for _, s in ipairs(servers) do
    current = nil
    push('')
    current = str(s.name)
    push(M.headline(s), ({ connected = 'String', failed = 'ErrorMsg', starting = 'WarningMsg',
      needs_approval = 'WarningMsg' })[s.state] or 'Comment')
    local where = { str(s.origin), str(s.transport) }
    local target = str(s.command) ~= '' and s.command or str(s.url)
    if target ~= '' then
      where[#where + 1] = target
    end
    if str(s.sandbox) ~= '' then
      where[#where + 1] = 'sandbox ' .. s.sandbox
    end
    if type(s.starts) == 'number' and s.starts > 1 then
      where[#where + 1] = ('started %d times'):format(s.starts)
    end
    push('  ' .. table.concat(vim.tbl_filter(function(x)
      return x ~= ''
    end, where), ' · '), 'Comment')
    if s.state == 'failed' and str(s.error):find('\n') then
      for l in (s.error .. '\n'):gmatch('(.-)\n') do
        push('    ' .. l, 'ErrorMsg')
      end
    end
    for _, t in ipairs(list(s.tools)) do
      local d = str(t.title) ~= '' and t.title or str(t.description)
      local line = '    ' .. str(t.tool ~= nil and t.tool or t.name)
      if d ~= '' then
        line = line .. ' — ' .. (d:gsub('\n.*', ' …'))
      end
      local h = M.hints(t.hints)
      if h ~= '' then
        line = line .. '  (server says: ' .. h .. ')'
      end
      push(line)
    end
  end
  return lines, hl, items
end

--- Asks the daemon (mcp/status, for the chat's session when there is one);
--- cb(err, servers).
---@param cb fun(err: table|nil, servers: table[])
function M.fetch(cb)
  local params = S.session and { sessionId = S.session } or vim.empty_dict()
  lifecycle.request(P.request.mcp_status, params, function(e, res)
    cb(e, list(type(res) == 'table' and res.servers or nil))
  end)
end

-- ------------------------------------------------------------------ view

---@class agentd.McpView
---@field win integer
---@field buf integer
---@field timer userdata|nil
---@field items table<integer, string> line -> server name
local V = { items = {} }

local NS = api.nvim_create_namespace('agentd.mcp')

local function open()
  return V.win and api.nvim_win_is_valid(V.win) and V.buf and api.nvim_buf_is_valid(V.buf)
end

local function stop_timer()
  if V.timer then
    V.timer:stop()
    if not V.timer:is_closing() then
      V.timer:close()
    end
    V.timer = nil
  end
end

--- Closes the view.
function M.close()
  stop_timer()
  local w = V.win
  V.win, V.buf = nil, nil
  if w and api.nvim_win_is_valid(w) then
    pcall(api.nvim_win_close, w, true)
  end
end

--- The view's text (for tests): '' when it is closed.
function M.text()
  return open() and table.concat(api.nvim_buf_get_lines(V.buf, 0, -1, false), '\n') or ''
end

-- The float's place and size; its height counts the screen rows of the
-- lines, which wrap (a failure's reason and a command line are long).
local function layout(lines)
  local width = math.min(110, vim.o.columns - 4)
  local rows = 0
  for _, l in ipairs(lines) do
    rows = rows + math.max(1, math.ceil(vim.fn.strdisplaywidth(l) / width))
  end
  local height = math.max(3, math.min(rows, vim.o.lines - vim.o.cmdheight - 6))
  return {
    relative = 'editor',
    width = width,
    height = height,
    row = math.max(0, math.floor((vim.o.lines - height) / 2) - 1),
    col = math.max(0, math.floor((vim.o.columns - width) / 2)),
  }
end

local control

local function draw(servers, opts)
  local lines, hl, items = M.lines(servers, opts)
  V.items = items
  if not open() then
    V.buf = api.nvim_create_buf(false, true)
    vim.bo[V.buf].buftype = 'nofile'
    vim.bo[V.buf].bufhidden = 'wipe'
    vim.bo[V.buf].filetype = 'agentd_mcp'
    local cfg = layout(lines)
    cfg.style, cfg.border = 'minimal', 'rounded'
    V.win = api.nvim_open_win(V.buf, true, cfg)
    vim.wo[V.win].wrap = true
    vim.wo[V.win].linebreak = true
    vim.wo[V.win].breakindent = true
    local buf = V.buf
    vim.keymap.set('n', 'q', M.close, { buffer = buf, nowait = true, silent = true, desc = 'agentd: close' })
    vim.keymap.set('n', '<Esc>', M.close, { buffer = buf, nowait = true, silent = true, desc = 'agentd: close' })
    local k = M.KEYS
    vim.keymap.set('n', k.refresh, M.refresh, { buffer = buf, nowait = true, silent = true, desc = 'agentd: ask again' })
    for _, what in ipairs({ 'enable', 'disable', 'restart' }) do
      vim.keymap.set('n', k[what], function()
        control(what)
      end, { buffer = buf, nowait = true, silent = true, desc = 'agentd: ' .. what .. ' the server' })
    end
    api.nvim_create_autocmd('BufWipeout', {
      buffer = buf,
      once = true,
      callback = function()
        if V.buf == buf then
          stop_timer()
          V.win, V.buf = nil, nil
        end
      end,
    })
  else
    api.nvim_win_set_config(V.win, layout(lines))
  end
  vim.bo[V.buf].modifiable = true
  api.nvim_buf_set_lines(V.buf, 0, -1, false, lines)
  vim.bo[V.buf].modifiable = false
  api.nvim_buf_clear_namespace(V.buf, NS, 0, -1)
  for _, h in ipairs(hl) do
    pcall(api.nvim_buf_add_highlight, V.buf, NS, h[2], h[1] - 1, 0, -1)
  end
end

-- Asks again while a server is starting and the view is open.
local function poll(servers)
  local starting = false
  for _, s in ipairs(servers) do
    starting = starting or s.state == 'starting'
  end
  if not starting then
    return stop_timer()
  end
  if not V.timer then
    V.timer = uv.new_timer()
    V.timer:start(M.POLL_MS, M.POLL_MS, vim.schedule_wrap(function()
      if not open() then
        return stop_timer()
      end
      M.refresh()
    end))
  end
end

local asking = false

--- Asks the daemon again and redraws the open view.
function M.refresh()
  if asking then
    return
  end
  asking = true
  M.fetch(function(e, servers)
    asking = false
    if not open() then
      return
    end
    draw(servers, { session = S.session, error = e and ('%s (%s)'):format(tostring(e.message), tostring(e.code)) })
    poll(servers)
  end)
end

-- The server of the cursor's line in the view.
local function server_at_cursor()
  if not open() then
    return nil
  end
  return V.items[api.nvim_win_get_cursor(V.win)[1]]
end

--- Enables, disables or restarts a server (name, else the one under the
--- cursor in the view); the view follows.
---@param what 'enable'|'disable'|'restart'
---@param name string|nil
function control(what, name)
  name = name or server_at_cursor()
  if not name then
    return ui.notify('put the cursor on a server', vim.log.levels.WARN)
  end
  local params = { name = name }
  if S.session then
    params.sessionId = S.session
  end
  lifecycle.request(P.request['mcp_' .. what], params, function(e, res)
    if e then
      ui.notify(('mcp/%s %s: %s (%s)'):format(what, name, tostring(e.message), tostring(e.code)), vim.log.levels.ERROR)
    else
      local st = type(res) == 'table' and type(res.server) == 'table' and res.server.state or '?'
      ui.notify(('%s: %s'):format(name, (STATE[st] or { '', st })[2]))
    end
    M.refresh()
  end)
end
M.control = control

local changed_pending = false

--- mcp/changed: a server's state changed; the open view asks again (once
--- for a burst).
function M.on_changed()
  if changed_pending or not open() then
    return
  end
  changed_pending = true
  vim.defer_fn(function()
    changed_pending = false
    M.refresh()
  end, 50)
end

--- :AgentdMcp: the MCP servers' states in a float.
function M.show()
  M.fetch(function(e, servers)
    if e and e.code == P.DISCONNECTED then
      return ui.notify('the daemon is not running', vim.log.levels.WARN)
    end
    draw(servers, { session = S.session, error = e and ('%s (%s)'):format(tostring(e.message), tostring(e.code)) })
    poll(servers)
  end)
end

--- Reports the servers to :checkhealth (h: the health reporter).
---@param h table
---@param e table|nil
---@param servers table[]
function M.report(h, e, servers)
  if e then
    return h.warn(('mcp/status failed: %s (%s)'):format(tostring(e.message), tostring(e.code)))
  end
  if #servers == 0 then
    return h.info('no MCP servers configured')
  end
  for _, s in ipairs(servers) do
    local line = M.headline(s):gsub('^%S+ ', '')
    if s.state == 'connected' then
      h.ok(line)
    elseif s.state == 'failed' then
      h.error(line)
    elseif s.state == 'needs_approval' or s.state == 'starting' then
      h.warn(line)
    else
      h.info(line)
    end
  end
end

return M
