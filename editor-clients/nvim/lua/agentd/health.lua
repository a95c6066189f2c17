-- :checkhealth agentd: Neovim, the daemon, the model endpoint, the request
-- UI. The endpoint is the running daemon's: it is asked for its models
-- (agent/models), so what is checked is what the daemon uses, whichever of
-- setup{}, its environment or its config file set it. Before the daemon
-- starts, the endpoint is worked out as the daemon would and its /models
-- asked directly (GET {baseUrl}/models).
local http = require('agentd.http')
local P = require('agentd.protocol')

local M = {}

-- vim.health (0.8+: report_*, 0.9+: start/ok/...) or the 0.7 'health' module
local function reporter()
  local h = vim.health
  if h and h.start then
    return h
  end
  local old = (h and h.report_start) and h or require('health')
  return {
    start = old.report_start,
    ok = old.report_ok,
    warn = old.report_warn,
    error = old.report_error,
    info = old.report_info,
  }
end

-- A variable of the daemon's environment: setup{ env } over the editor's.
local function daemon_env(name)
  local env = require('agentd.config').values.env or {}
  if env[name] == false then
    return nil
  end
  local v = env[name] ~= nil and tostring(env[name]) or vim.env[name]
  return v ~= '' and v or nil
end

local function read_config_file()
  local dir = daemon_env('XDG_CONFIG_HOME') or ((daemon_env('HOME') or vim.fn.expand('~')) .. '/.config')
  local path = dir .. '/agentd/config.json'
  local f = io.open(path, 'r')
  if not f then
    return nil, path
  end
  local text = f:read('*a')
  f:close()
  local ok, cfg = pcall(vim.json.decode, text)
  if not ok or type(cfg) ~= 'table' then
    return { error = 'not valid JSON' }, path
  end
  return cfg, path
end

--- The model endpoint as the daemon will see it: setup{ model } over the
--- environment over ~/.config/agentd/config.json (the daemon's order).
--- Returns { baseUrl, apiKey, name, from } (fields may be nil).
function M.endpoint()
  local cfg = require('agentd.config').values
  local m = cfg.model or {}
  local file, path = read_config_file()
  local fm = type(file) == 'table' and type(file.model) == 'table' and file.model or {}
  local function pick(field, env)
    if type(m[field]) == 'string' and m[field] ~= '' then
      return m[field], 'setup{ model }'
    end
    local v = daemon_env(env)
    if v then
      return v, env
    end
    if type(fm[field]) == 'string' and fm[field] ~= '' then
      return fm[field], path
    end
  end
  local e = {}
  e.baseUrl, e.from = pick('baseUrl', 'OPENAI_BASE_URL')
  e.apiKey = pick('apiKey', 'OPENAI_API_KEY')
  e.name = pick('name', 'AGENTD_MODEL')
  if not e.baseUrl and e.apiKey then
    e.baseUrl, e.from = 'https://api.openai.com/v1', 'the default for an API key'
  end
  e.file_error = type(file) == 'table' and file.error and (path .. ': ' .. file.error) or nil
  return e
end

local function model_names(body)
  local ok, data = pcall(vim.json.decode, body or '')
  if not ok or type(data) ~= 'table' or type(data.data) ~= 'table' then
    return nil
  end
  local names = {}
  for _, m in ipairs(data.data) do
    if type(m) == 'table' and type(m.id) == 'string' then
      names[#names + 1] = m.id
    end
  end
  return names
end

--- Contacts the endpoint's /models and reports what it found.
function M.check_endpoint(h, e, opts)
  local url = http.models_url(e.baseUrl)
  local headers = {}
  if e.apiKey then
    headers.Authorization = 'Bearer ' .. e.apiKey
  end
  local status, body = http.get(url, { headers = headers, timeout = (opts and opts.timeout) or 3000 })
  if not status then
    return h.error(('nobody answers at %s: %s'):format(url, tostring(body)), {
      'start the model server, or fix baseUrl (setup{ model }, OPENAI_BASE_URL or ~/.config/agentd/config.json)',
    })
  end
  if status == 401 or status == 403 then
    return h.error(('%s refused the API key (HTTP %d)'):format(url, status), { 'set apiKey or OPENAI_API_KEY' })
  end
  if status ~= 200 then
    return h.warn(('%s answered HTTP %d; the endpoint may still serve chat completions'):format(url, status))
  end
  local names = model_names(body)
  if not names then
    return h.warn(url .. ' answered, but not with a model list')
  end
  local shown = table.concat(vim.list_slice(names, 1, 5), ', ') .. (#names > 5 and ', …' or '')
  h.ok(('%s answers: %d model%s (%s)'):format(url, #names, #names == 1 and '' or 's', shown))
  if e.name and #names > 0 and not vim.tbl_contains(names, e.name) then
    h.warn(('model "%s" is not in that list'):format(e.name))
  end
end

-- The HTTP status a listing failure ends with ("GET …/models: 404 Not
-- Found"), or nil when nobody answered (a refused connection, a timeout).
local function http_status(err)
  return tonumber(err:match(': ([1-5]%d%d) [%w ]*$'))
end

--- Reports the daemon's agent/models answer (res or its error e).
function M.report_models(h, e, res)
  if e then
    if e.code == P.error_codes.NoModel then
      return h.warn('no model configured: ' .. tostring(e.message), {
        'setup{ model = { baseUrl = "http://127.0.0.1:11434/v1", name = "qwen2.5-coder" } }',
        'or OPENAI_BASE_URL and AGENTD_MODEL in the environment, or ~/.config/agentd/config.json',
      })
    end
    return h.error(('the daemon did not list its models: %s (%s)'):format(tostring(e.message), tostring(e.code)))
  end
  local ids = {}
  for _, m in ipairs(type(res.models) == 'table' and res.models or {}) do
    if type(m) == 'table' and type(m.id) == 'string' then
      ids[#ids + 1] = m.id
    end
  end
  local default = type(res.default) == 'string' and res.default or '?'
  if res.listed == true then
    local shown = table.concat(vim.list_slice(ids, 1, 5), ', ') .. (#ids > 5 and ', …' or '')
    return h.ok(('the endpoint answers: %d model%s (%s); default %s'):format(#ids, #ids == 1 and '' or 's', shown, default))
  end
  local err = type(res.error) == 'string' and res.error or 'no reason given'
  local status = http_status(err)
  if not status then
    return h.error(('nobody answers at the model endpoint: %s'):format(err), {
      'start the model server, or fix baseUrl (setup{ model }, OPENAI_BASE_URL or ~/.config/agentd/config.json)',
    })
  elseif status == 401 or status == 403 then
    return h.error(('the endpoint refused the API key: %s'):format(err), { 'set apiKey or OPENAI_API_KEY' })
  end
  h.warn(('the endpoint does not list its models (%s); model %s may still answer'):format(err, default))
end

--- Where the daemon's stderr goes (setup{ log_file }), or nil for nowhere.
---@return string|nil
function M.log_path()
  local f = require('agentd.config').values.log_file
  if f == false then
    return nil
  end
  return f or (vim.fn.stdpath('cache') .. '/agentd.log')
end

function M.check()
  local h = reporter()
  local config = require('agentd.config').values
  local agentd = require('agentd')

  h.start('agentd: Neovim')
  local v = vim.version()
  h.ok(('Neovim %d.%d.%d'):format(v.major, v.minor, v.patch))
  if vim.fn.filereadable(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h:h') .. '/doc/tags') == 1 then
    h.ok(':help agentd is available')
  else
    h.warn('doc/tags is missing: run :helptags on the plugin\'s doc folder')
  end

  h.start('agentd: daemon')
  local exe = config.cmd
  if vim.fn.executable(exe) == 1 then
    h.ok(('daemon: %s (%s %s)'):format(vim.fn.exepath(exe), exe, table.concat(config.args or {}, ' ')))
  else
    h.error(('"%s" is not executable or not on PATH'):format(exe), {
      'Build it: go build -o ~/.local/bin/agentd ./cmd/agentd',
      'or set cmd in require("agentd").setup{ cmd = "/path/to/agentd" }',
    })
  end
  local st = agentd.status()
  if st.ready and st.server then
    local info = st.server.serverInfo or {}
    h.ok(('running (pid %s): %s %s, protocol %s, workspace %s'):format(tostring(st.pid), tostring(info.name),
      tostring(info.version), tostring(st.server.protocolVersion), tostring(st.root)))
    if st.server.protocolVersion ~= require('agentd.protocol').VERSION then
      h.warn('this plugin speaks protocol version ' .. require('agentd.protocol').VERSION)
    end
  elseif st.status == 'failed' then
    local advice = {}
    local last = vim.list_slice(st.stderr, math.max(1, #st.stderr - 5))
    if #last > 0 then
      advice[#advice + 1] = 'its last words: ' .. table.concat(last, ' | ')
    end
    local log = M.log_path()
    advice[#advice + 1] = log and ('its log: ' .. log) or 'it has no log (log_file = false in setup{})'
    advice[#advice + 1] = ':AgentdRestart tries again'
    h.error(st.start_error or 'the daemon failed to start or kept dying', advice)
  else
    h.info('not started yet (it starts on the first :Agentd command, or with require("agentd").start())')
  end
  if st.restarts > 0 then
    h.warn(('restarted %d time(s) in a row'):format(st.restarts))
  end

  h.start('agentd: model')
  local e = M.endpoint()
  if e.file_error then
    h.error(e.file_error)
  end
  if st.ready and require('agentd')._state.conn then
    local res, err = require('agentd')._state.conn.rpc:request_sync(P.request.models, nil, 5000)
    M.report_models(h, err, res)
  elseif not e.baseUrl then
    h.warn('no model configured', {
      'setup{ model = { baseUrl = "http://127.0.0.1:11434/v1", name = "qwen2.5-coder" } }',
      'or OPENAI_BASE_URL and AGENTD_MODEL in the environment, or ~/.config/agentd/config.json',
    })
  else
    h.info(('endpoint %s (from %s), model %s'):format(e.baseUrl, e.from, e.name or '(the daemon\'s default)'))
    M.check_endpoint(h, e)
  end
  if config.approval_policy then
    h.info('approval policy: ' .. config.approval_policy)
  end

  h.start('agentd: sandbox')
  if st.ready and st.server then
    local caps = type(st.server.capabilities) == 'table' and st.server.capabilities or {}
    local x = type(caps.experimental) == 'table' and type(caps.experimental.agentd) == 'table' and caps.experimental.agentd or {}
    local sb = type(x.sandbox) == 'table' and x.sandbox or nil
    if not sb then
      h.info('the daemon does not say whether commands run in the kernel sandbox')
    elseif sb.active then
      h.ok(tostring(sb.summary))
    else
      h.warn(tostring(sb.summary), type(sb.problems) == 'table' and sb.problems or nil)
    end
  else
    h.info('known once the daemon runs (agentd doctor tells it too)')
  end

  h.start('agentd: MCP servers')
  if st.ready and require('agentd')._state.conn then
    local S = require('agentd')._state
    local params = S.session and { sessionId = S.session } or vim.empty_dict()
    local res, err = S.conn.rpc:request_sync(P.request.mcp_status, params, 5000)
    require('agentd.mcp').report(h, err, type(res) == 'table' and type(res.servers) == 'table' and res.servers or {})
  else
    h.info('known once the daemon runs (:AgentdMcp)')
  end

  h.start('agentd: requests')
  h.info('questions, choices and confirmations: the request float and the chat; writes: a diff tab; secrets: inputsecret()')
  local src = debug.getinfo(vim.ui.select, 'S').source or ''
  if not src:find('vim/ui.lua', 1, true) then
    h.ok('the pickers (open requests, sessions) use vim.ui.select from ' .. src:gsub('^@', ''))
  else
    h.info('the pickers use the built-in vim.ui.select (dressing.nvim, telescope-ui-select or fzf-lua can replace it)')
  end
end

return M
