-- Sessions: the list (:AgentdSessions) with readable times, and bringing a
-- whole conversation back into the chat.
--
-- M.load is the one place that fetches a session's conversation: one
-- agent/history page (its latest runs with their prompts and events, and
-- its open requests), then the pages before it while earlierRuns says
-- there are some, and the events a page left out (agent/events). The
-- events go through the same code as live notifications (agentd.methods).
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

-- How a state reads in the list.
local STATE_WORDS = { requires_action = 'waiting for you', idle = 'no runs yet' }

--- One line of the sessions list: title, state, run count, time.
---@param s table an agent/sessions entry
---@param now integer|nil
---@return string
function M.label(s, now)
  local title = type(s.title) == 'string' and s.title ~= '' and s.title or s.sessionId
  local parts = { (title:gsub('\n.*', ' …')) }
  if type(s.state) == 'string' then
    parts[#parts + 1] = STATE_WORDS[s.state] or s.state
  end
  if type(s.runCount) == 'number' then
    parts[#parts + 1] = s.runCount == 1 and '1 run' or (s.runCount .. ' runs')
  end
  local t = M.parse_time(s.updatedAt) or M.parse_time(s.createdAt)
  if t then
    parts[#parts + 1] = M.format_time(t, now)
  end
  return table.concat(parts, '  ·  ')
end

--- Takes what an agent/sessions (or agent/history) entry says of a session.
---@param s table
---@return agentd.SessionInfo|nil
function M.note(s)
  if type(s) ~= 'table' or type(s.sessionId) ~= 'string' then
    return nil
  end
  local info = S.session_info(s.sessionId)
  if type(s.title) == 'string' and s.title ~= '' then
    info.title = s.title
  end
  if type(s.settings) == 'table' then
    info.settings = s.settings
  end
  if type(s.runCount) == 'number' then
    info.run_count = s.runCount
  end
  if type(s.state) == 'string' then
    info.state = s.state
  end
  return info
end

--- Asks the daemon for the sessions and takes what it says of each;
--- cb(err, list).
function M.refresh(cb)
  lifecycle.request(P.request.sessions, nil, function(e, res)
    local list = not e and type(res) == 'table' and type(res.sessions) == 'table' and res.sessions or {}
    for _, s in ipairs(list) do
      M.note(s)
    end
    if not e then
      require('agentd.chat').render()
    end
    if cb then
      cb(e, list)
    end
  end)
end

local function methods()
  return require('agentd.methods')
end

-- Replays a history run's events into the run model, as live notifications
-- are applied; a run whose events the page left out (or that has a gap)
-- fetches the rest with agent/events.
local function replay(run, hr)
  local complete = not hr.moreEvents
  if run.last_seq == 0 then
    run.state, run.stop_reason, run.error = hr.state, hr.stopReason, hr.error
  end
  for _, ev in ipairs(type(hr.events) == 'table' and hr.events or {}) do
    local p = type(ev) == 'table' and ev.params
    if type(p) == 'table' then
      p.seq = p.seq or ev.seq
      local verdict = S.runs:check(run, p.seq)
      if verdict == 'gap' then
        complete = false
        break
      elseif verdict == 'apply' then
        methods().apply(ev.method, p, 'history')
      end
    end
  end
  if not complete then
    -- where the run is now, until its remaining events say how it got there
    run.state, run.stop_reason, run.error = hr.state, hr.stopReason, hr.error
    methods().catch_up(run, nil, 'history')
  end
end

-- Takes one agent/history page into the run model.
local function take_page(sid, res, before, snap)
  M.note(res.session)
  local ids = {}
  for _, hr in ipairs(type(res.runs) == 'table' and res.runs or {}) do
    if type(hr) == 'table' and type(hr.runId) == 'string' then
      local run = S.runs:ensure(hr.runId, sid)
      ids[#ids + 1] = hr.runId
      if type(hr.prompt) == 'string' then
        run.prompt = hr.prompt
      end
      if type(hr.context) == 'table' then
        run.context = run.context or hr.context
      end
      if type(hr.usage) == 'table' then
        run.usage = run.usage or hr.usage
      end
      -- a rewind cut it from the conversation
      run.rewound = hr.rewound == true or run.rewound
      replay(run, hr)
    end
  end
  S.runs:place(sid, ids, before, snap)
  -- its open requests, in the float and the picker too
  local pump = require('agentd.pump')
  for _, r in ipairs(type(res.pending) == 'table' and res.pending or {}) do
    pump.add(r)
  end
  return ids
end

--- Brings session sid's whole conversation into the chat, page by page
--- (the latest runs first, then the earlier ones above them); the next
--- prompt continues the session.
---@param sid string
---@param done fun(ok: boolean)|nil called once every page is in
function M.load(sid, done)
  local info = S.session_info(sid)
  local chat = require('agentd.chat')
  local function page(before)
    local snap = S.runs:mark()
    info.loading = before and 'loading earlier runs…' or 'loading the conversation…'
    chat.render()
    lifecycle.request(P.request.history, { sessionId = sid, beforeRunId = before }, function(e, res)
      if e or type(res) ~= 'table' then
        info.loading = nil
        chat.render()
        ui.notify(('could not load the conversation: %s'):format(e and ('%s (%s)'):format(tostring(e.message),
          tostring(e.code)) or 'no answer'), vim.log.levels.ERROR)
        return done and done(false)
      end
      local ids = take_page(sid, res, before, snap)
      local earlier = type(res.earlierRuns) == 'number' and res.earlierRuns or 0
      if earlier > 0 and ids[1] then
        info.loading = ('loading %d earlier run%s…'):format(earlier, earlier == 1 and '' or 's')
        return page(ids[1])
      end
      info.loading = nil
      chat.render()
      -- which of its changes were undone since
      require('agentd.undo').refresh(sid)
      if done then
        done(true)
      end
    end)
  end
  page(nil)
end

--- Shows session s (an agent/sessions entry, or its id) in the chat and
--- loads its conversation; the next prompt continues it.
---@param s table|string
function M.open(s)
  local sid = type(s) == 'table' and s.sessionId or s
  M.note(type(s) == 'table' and s or nil)
  S.session, S.new_chat = sid, false
  require('agentd.chat').open({ focus = 'compose' })
  M.load(sid)
end

--- Lists the workspace's sessions (vim.ui.select); the one picked comes
--- back whole in the chat and the next prompt continues it.
function M.pick()
  M.refresh(function(e, list)
    if e then
      return ui.notify(('sessions: %s (%s)'):format(tostring(e.message), tostring(e.code)), vim.log.levels.ERROR)
    end
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
        M.open(s)
      end
    end)
  end)
end

return M
