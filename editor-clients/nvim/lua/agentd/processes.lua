-- Background processes (docs/protocol.md "Background processes"): a
-- command the agent left running (a dev server, a watcher). Each shows
-- under the run_cmd call that started it, with its state; the stop key
-- (dd) on its line or :AgentdProcesses stops it (agent/stopProcess). The
-- session's list follows agent/processChanged, and comes with agent/history.
local P = require('agentd.protocol')
local S = require('agentd.state')
local lifecycle = require('agentd.lifecycle')
local ui = require('agentd.ui')

local M = {}

local function str(v)
  return type(v) == 'string' and v or ''
end

-- The session's processes: { by_id = {id -> process}, order = {ids} }.
local function of(sid)
  local info = S.session_info(sid)
  info.processes = info.processes or { by_id = {}, order = {} }
  return info.processes
end

--- Takes one process as the daemon says it is now.
---@param p table agentd.ProcessInfo
function M.take(p)
  if type(p) ~= 'table' or str(p.id) == '' or str(p.sessionId) == '' then
    return
  end
  local list = of(p.sessionId)
  if not list.by_id[p.id] then
    list.order[#list.order + 1] = p.id
  end
  list.by_id[p.id] = p
end

--- Takes a session's whole list (agent/history, agent/processes).
---@param sid string
---@param procs table[]|nil
function M.set(sid, procs)
  local info = S.session_info(sid)
  info.processes = { by_id = {}, order = {} }
  for _, p in ipairs(type(procs) == 'table' and procs or {}) do
    if type(p) == 'table' then
      p.sessionId = p.sessionId or sid
      M.take(p)
    end
  end
end

--- A session's processes, oldest first.
---@param sid string|nil
---@return table[]
function M.list(sid)
  if not sid then
    return {}
  end
  local list = of(sid)
  local out = {}
  for _, id in ipairs(list.order) do
    out[#out + 1] = list.by_id[id]
  end
  return out
end

--- How many of a session's processes are running.
function M.running(sid)
  local n = 0
  for _, p in ipairs(M.list(sid)) do
    if p.state == 'running' then
      n = n + 1
    end
  end
  return n
end

local STOPPED_BY = { model = 'by the agent', user = 'by you', agentd = 'by agentd' }

--- A process in words: "p1 running · npm run dev (in web) · 5 KB printed".
---@param p table
---@return string
function M.describe(p)
  local state = str(p.state)
  local words
  if state == 'running' then
    words = 'running'
  elseif state == 'exited' then
    words = 'exited' .. (type(p.exitCode) == 'number' and (' ' .. p.exitCode) or '')
  elseif state == 'stopped' then
    words = 'stopped ' .. (STOPPED_BY[p.stoppedBy] or '')
  elseif state == 'lost' then
    words = 'lost (it ended with an earlier daemon)'
  else
    words = state
  end
  local cmd = (str(p.command):gsub('\n.*', ' …'))
  local cwd = str(p.cwd)
  local s = ('%s %s · %s'):format(str(p.id), vim.trim(words), cmd) .. ((cwd ~= '' and cwd ~= '.') and (' (in ' .. cwd .. ')') or '')
  if type(p.output) == 'number' and p.output > 0 then
    s = s .. ' · ' .. require('agentd.render').size(p.output) .. ' printed'
  end
  return s
end

local function refresh()
  require('agentd.chat').render()
end

--- agent/processChanged: a process started, ended or was stopped.
function M.on_changed(params)
  M.take(type(params) == 'table' and params.process or nil)
  refresh()
end

--- Stops a process (agent/stopProcess): it and everything it started.
---@param p table
function M.stop(p)
  if p.state ~= 'running' then
    return ui.notify(('%s is not running (%s)'):format(str(p.id), M.describe(p)))
  end
  lifecycle.request(P.request.stop_process, { sessionId = p.sessionId, id = p.id }, function(e, res)
    if e then
      return ui.notify(('stopping %s failed: %s (%s)'):format(str(p.id), tostring(e.message), tostring(e.code)),
        vim.log.levels.ERROR)
    end
    M.take(type(res) == 'table' and res.process or nil)
    refresh()
  end)
end

--- :AgentdProcesses: the chat's session's background processes in a
--- picker (asked of the daemon); picking a running one stops it.
function M.pick()
  local sid = S.session
  if not sid then
    return ui.notify('no conversation in the chat')
  end
  lifecycle.request(P.request.processes, { sessionId = sid }, function(e, res)
    if e then
      return ui.notify(('processes: %s (%s)'):format(tostring(e.message), tostring(e.code)), vim.log.levels.ERROR)
    end
    M.set(sid, type(res) == 'table' and res.processes or {})
    refresh()
    local list = M.list(sid)
    if #list == 0 then
      return ui.notify('no background process in this conversation')
    end
    vim.ui.select(list, {
      prompt = 'agentd background processes (pick a running one to stop it)',
      kind = 'agentd.processes',
      format_item = M.describe,
    }, function(p)
      if p then
        M.stop(p)
      end
    end)
  end)
end

return M
