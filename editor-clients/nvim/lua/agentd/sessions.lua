-- Sessions: the list (:AgentdSessions) with readable times, and bringing a
-- session back into the chat.
--
-- What comes back is what the protocol offers today: the session's latest
-- run, replayed from agent/events (its prompt is not among its events).
-- M.load is the one place that fetches a session's conversation.
local P = require('agentd.protocol')
local S = require('agentd.state')
local lifecycle = require('agentd.lifecycle')
local ui = require('agentd.ui')

local M = {}

-- Days since 1970-01-01 of a civil date (proleptic Gregorian), so that a
-- UTC time converts without os.time's local-time reading.
local function days_from_civil(y, m, d)
  y = m <= 2 and y - 1 or y
  local era = math.floor(y / 400)
  local yoe = y - era * 400
  local mp = (m + 9) % 12
  local doy = math.floor((153 * mp + 2) / 5) + d - 1
  local doe = yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
end

--- Seconds since the epoch of an RFC 3339 time ("2026-11-22T10:01:02.123456789Z",
--- "…+02:00"), or nil.
---@param s string
---@return integer|nil
function M.parse_time(s)
  if type(s) ~= 'string' then
    return nil
  end
  local y, mo, d, h, mi, sec, rest = s:match('^(%d%d%d%d)-(%d%d)-(%d%d)[T ](%d%d):(%d%d):(%d%d)(.*)$')
  if not y then
    return nil
  end
  rest = rest:gsub('^%.%d+', '')
  local offset = 0
  if rest ~= 'Z' and rest ~= 'z' and rest ~= '' then
    local sign, oh, om = rest:match('^([+-])(%d%d):?(%d%d)$')
    if not sign then
      return nil
    end
    offset = (tonumber(oh) * 3600 + tonumber(om) * 60) * (sign == '+' and 1 or -1)
  end
  local days = days_from_civil(tonumber(y), tonumber(mo), tonumber(d))
  return days * 86400 + tonumber(h) * 3600 + tonumber(mi) * 60 + tonumber(sec) - offset
end

--- A time for people, in local time: "just now", "12 min ago",
--- "today 10:01", "yesterday 18:30", "Nov 22 10:01", "2025-03-04".
---@param t integer seconds since the epoch
---@param now integer|nil
---@return string
function M.format_time(t, now)
  now = now or os.time()
  local ago = now - t
  if ago >= 0 and ago < 60 then
    return 'just now'
  elseif ago >= 0 and ago < 3600 then
    return ('%d min ago'):format(math.floor(ago / 60))
  end
  local a, n = os.date('*t', t), os.date('*t', now)
  local y = os.date('*t', now - 86400)
  if a.year == n.year and a.yday == n.yday then
    return os.date('today %H:%M', t)
  elseif a.year == y.year and a.yday == y.yday then
    return os.date('yesterday %H:%M', t)
  elseif a.year == n.year then
    return os.date('%b %d %H:%M', t)
  end
  return os.date('%Y-%m-%d', t)
end

--- One line of the sessions list.
---@param s table an agent/sessions entry
---@param now integer|nil
---@return string
function M.label(s, now)
  local title = type(s.title) == 'string' and s.title ~= '' and s.title or s.sessionId
  local parts = { (title:gsub('\n.*', ' …')) }
  if type(s.state) == 'string' then
    parts[#parts + 1] = s.state
  end
  local t = M.parse_time(s.updatedAt) or M.parse_time(s.createdAt)
  if t then
    parts[#parts + 1] = M.format_time(t, now)
  end
  return table.concat(parts, '  ·  ')
end

--- Brings session sid into the chat: its record, and its runs as far as
--- the daemon gives them (today: the latest run, replayed from its events).
---@param s table an agent/sessions entry
function M.load(s)
  local sid = s.sessionId
  S.session = sid
  local info = S.session_info(sid)
  if type(s.title) == 'string' and s.title ~= '' then
    info.title = s.title
  end
  local last = s.lastRunId
  if type(last) == 'string' and last ~= '' then
    local run = S.runs:ensure(last, sid)
    if run.last_seq == 0 then
      require('agentd.methods').catch_up(run)
    end
  end
  require('agentd.chat').open({ focus = 'compose' })
end

--- Lists the workspace's sessions (vim.ui.select); the one picked comes
--- back in the chat and the next prompt continues it.
function M.pick()
  lifecycle.request(P.request.sessions, nil, function(e, res)
    if e then
      return ui.notify(('sessions: %s (%s)'):format(tostring(e.message), tostring(e.code)), vim.log.levels.ERROR)
    end
    local list = type(res) == 'table' and type(res.sessions) == 'table' and res.sessions or {}
    if #list == 0 then
      return ui.notify('no sessions in this workspace yet')
    end
    local now = os.time()
    vim.ui.select(list, {
      prompt = 'agentd sessions',
      kind = 'agentd.sessions',
      format_item = function(s)
        return M.label(s, now)
      end,
    }, function(s)
      if s then
        M.load(s)
      end
    end)
  end)
end

return M
