-- A conversation's settings: the model, the reasoning effort and the
-- approval mode (:AgentdModel, :AgentdEffort, :AgentdMode). With a session
-- in the chat, a change goes to the daemon (agent/configure), which keeps
-- it with the session and applies it from the session's next step, the
-- running run's included; without one, it is the draft a new conversation
-- starts with (sent in agent/run). "default" (or "") hands the setting back
-- to the daemon's configuration.
local P = require('agentd.protocol')
local S = require('agentd.state')
local lifecycle = require('agentd.lifecycle')
local ui = require('agentd.ui')

local M = {}

--- The settings, by the name the commands use: the field of agent/configure
--- and agent/run, and how people call it.
M.fields = {
  model = { key = 'model', label = 'model' },
  effort = { key = 'reasoningEffort', label = 'reasoning effort' },
  mode = { key = 'approvalPolicy', label = 'mode' },
}

--- The word that hands a setting back to the daemon.
M.DEFAULT = 'default'

local function chat()
  return require('agentd.chat')
end

local function err_text(e)
  return ('%s (%s)'):format(tostring(e.message), tostring(e.code))
end

--- The chat's settings: its session's as the daemon last said, else the
--- draft of a new conversation.
---@return agentd.Settings
function M.current()
  if S.session then
    return S.session_info(S.session).settings or {}
  end
  return S.draft
end

--- The efforts the daemon offers (initialize's reasoningEfforts): nil when
--- the daemon is running and offers none (it has no per-session settings).
---@return string[]|nil
function M.efforts()
  if not S.server then
    return P.reasoning_efforts
  end
  local caps = type(S.server.capabilities) == 'table' and S.server.capabilities or {}
  local x = type(caps.experimental) == 'table' and type(caps.experimental.agentd) == 'table' and caps.experimental.agentd or {}
  if type(x.reasoningEfforts) == 'table' and #x.reasoningEfforts > 0 then
    return x.reasoningEfforts
  end
end

--- The modes the daemon offers (initialize's policies), else the
--- contract's.
---@return string[]
function M.modes()
  local caps = type(S.server) == 'table' and type(S.server.capabilities) == 'table' and S.server.capabilities or {}
  local x = type(caps.experimental) == 'table' and type(caps.experimental.agentd) == 'table' and caps.experimental.agentd or {}
  if type(x.policies) == 'table' and #x.policies > 0 then
    return x.policies
  end
  return P.policies
end

local function model_ids(res)
  local out = {}
  for _, m in ipairs(type(res) == 'table' and type(res.models) == 'table' and res.models or {}) do
    if type(m) == 'table' and type(m.id) == 'string' then
      out[#out + 1] = m.id
    end
  end
  return out
end

--- Asks the daemon for its models (agent/models); cb(err, result). The
--- answer is kept for completion.
function M.fetch_models(cb)
  lifecycle.request(P.request.models, nil, function(e, res)
    if not e and type(res) == 'table' then
      S.models = res
    end
    if cb then
      cb(e, res)
    end
  end)
end

--- The values a setting takes, for completion (synchronous: the models
--- come from the last agent/models answer, asked now if there is none and
--- the daemon runs).
---@param which string model | effort | mode
---@param lead string|nil what is typed so far
---@return string[]
function M.complete(which, lead)
  local values
  if which == 'mode' then
    values = M.modes()
  elseif which == 'effort' then
    values = M.efforts() or {}
  else
    if not S.models and S.ready and S.conn then
      local res = S.conn.rpc:request_sync(P.request.models, nil, 4000)
      if type(res) == 'table' then
        S.models = res
      end
    end
    values = model_ids(S.models)
  end
  local out = { M.DEFAULT }
  for _, v in ipairs(values) do
    if v ~= M.DEFAULT then
      out[#out + 1] = v
    end
  end
  lead = lead or ''
  return vim.tbl_filter(function(v)
    return v:sub(1, #lead) == lead
  end, out)
end

-- The value to send for what the user typed, or nil and why not.
local function check(which, value)
  if value == M.DEFAULT or value == '' then
    return ''
  end
  if which == 'mode' and not vim.tbl_contains(M.modes(), value) then
    return nil, ('unknown mode "%s": one of %s, or %s'):format(value, table.concat(M.modes(), ', '), M.DEFAULT)
  end
  if which == 'effort' then
    local efforts = M.efforts()
    if not efforts then
      return nil, 'this daemon has no reasoning effort setting (it offers no reasoningEfforts)'
    end
    if not vim.tbl_contains(efforts, value) then
      return nil, ('unknown effort "%s": one of %s, or %s'):format(value, table.concat(efforts, ', '), M.DEFAULT)
    end
  end
  if which == 'model' and value:find('[\r\n\t]') then
    return nil, 'a model name is one line'
  end
  return value
end

local function said(which, value)
  local f = M.fields[which]
  return value == '' and (f.label .. ": the daemon's default") or (f.label .. ' ' .. value)
end

--- Sets a setting of the chat's conversation (value: a model, an effort,
--- a mode, or "default"). done(ok) is called once it is in effect.
---@param which string model | effort | mode
---@param value string
---@param done fun(ok: boolean)|nil
function M.set(which, value, done)
  local v, why = check(which, vim.trim(value or ''))
  if not v then
    ui.notify(why, vim.log.levels.ERROR)
    return done and done(false)
  end
  local key = M.fields[which].key
  if not S.session then
    S.draft[key] = v ~= '' and v or nil
    ui.notify(said(which, v) .. ' for the next new conversation')
    chat().render()
    return done and done(true)
  end
  local sid = S.session
  lifecycle.request(P.request.configure, { sessionId = sid, [key] = v }, function(e, res)
    if e then
      ui.notify(('could not set the %s: %s'):format(M.fields[which].label, err_text(e)), vim.log.levels.ERROR)
      return done and done(false)
    end
    local info = S.session_info(sid)
    if type(res) == 'table' and type(res.settings) == 'table' then
      info.settings = res.settings
    end
    local running = type(res) == 'table' and type(res.runId) == 'string' and res.runId ~= ''
    ui.notify(said(which, v) .. ' for this conversation'
      .. (running and ' (the run going on takes it from its next step)' or ''))
    chat().render()
    if done then
      done(true)
    end
  end)
end

-- The picker's items for a setting: "default" first, the current one marked.
local function items(which, values, default_name)
  local cur = M.current()[M.fields[which].key]
  local out = { { value = M.DEFAULT, label = M.DEFAULT .. (default_name and (' (' .. default_name .. ')') or '') } }
  local words = which == 'mode' and require('agentd.render').MODE_WORDS or {}
  for _, v in ipairs(values) do
    out[#out + 1] = { value = v, label = v .. (words[v] and (' — ' .. words[v]) or '') }
  end
  for _, it in ipairs(out) do
    if it.value == cur then
      it.label = it.label .. '  ✓'
    end
  end
  return out
end

local function select(which, list)
  vim.ui.select(list, {
    prompt = 'agentd ' .. M.fields[which].label,
    kind = 'agentd.' .. which,
    format_item = function(it)
      return it.label
    end,
  }, function(it)
    if it then
      M.set(which, it.value)
    end
  end)
end

--- Sets a setting with a picker (vim.ui.select) of the values the daemon
--- offers: agent/models for the model.
---@param which string model | effort | mode
function M.pick(which)
  if which == 'mode' then
    return select(which, items(which, M.modes()))
  elseif which == 'effort' then
    local efforts = M.efforts()
    if not efforts then
      return ui.notify('this daemon has no reasoning effort setting', vim.log.levels.WARN)
    end
    return select(which, items(which, efforts))
  end
  M.fetch_models(function(e, res)
    if e then
      return ui.notify('models: ' .. err_text(e), vim.log.levels.ERROR)
    end
    if res.listed == false and type(res.error) == 'string' then
      ui.notify(("the endpoint does not list its models (%s): :AgentdModel {name} takes any name"):format(res.error),
        vim.log.levels.WARN)
    end
    select(which, items(which, model_ids(res), type(res.default) == 'string' and res.default or nil))
  end)
end

--- The settings a new conversation's agent/run carries (the draft).
---@return agentd.Settings
function M.for_new_run()
  local out = {}
  for _, f in pairs(M.fields) do
    local v = S.draft[f.key]
    if type(v) == 'string' and v ~= '' then
      out[f.key] = v
    end
  end
  return out
end

return M
