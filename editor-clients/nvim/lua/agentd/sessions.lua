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

--- One line of the sessions list: title, state, run count, time (and, for a
--- search, the prompt that matched).
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
  local line = table.concat(parts, '  ·  ')
  if type(s.match) == 'string' and s.match ~= '' then
    line = line .. '  —  "' .. s.match .. '"'
  end
  return line
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

--- Asks the daemon for the sessions (those matching query, when given)
--- and takes what it says of each; cb(err, list).
---@param cb fun(err: table|nil, list: table[])|nil
---@param query string|nil
function M.refresh(cb, query)
  local params = query and query ~= '' and { query = query } or nil
  lifecycle.request(P.request.sessions, params, function(e, res)
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
      if type(hr.images) == 'table' then
        run.images = hr.images
      end
      -- a rewind cut it from the conversation
      run.rewound = hr.rewound == true or run.rewound
      replay(run, hr)
    end
  end
  S.runs:place(sid, ids, before, snap)
  if not before and type(res.processes) == 'table' then
    -- its background processes, under the calls that started them
    require('agentd.processes').set(sid, res.processes)
  end
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
      -- which of its changes were undone since; how full its context is
      require('agentd.undo').refresh(sid)
      M.fetch_context(sid)
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

--- Lists the workspace's sessions (vim.ui.select), those whose title or
--- prompts hold every word of query when given; the one picked comes back
--- whole in the chat and the next prompt continues it.
---@param query string|nil
function M.pick(query)
  M.refresh(function(e, list)
    if e then
      return ui.notify(('sessions: %s (%s)'):format(tostring(e.message), tostring(e.code)), vim.log.levels.ERROR)
    end
    if #list == 0 then
      return ui.notify(query and query ~= '' and ('no session mentions "' .. query .. '"')
        or 'no sessions in this workspace yet')
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
  end, query)
end

local function err_text(e)
  return ('%s (%s)'):format(tostring(e.message), tostring(e.code))
end

--- Renames session sid (agent/renameSession); without a title,
--- vim.ui.input asks for it. done(ok) once the daemon answered.
---@param sid string|nil
---@param title string|nil
---@param done fun(ok: boolean)|nil
function M.rename(sid, title, done)
  if not sid then
    return ui.notify('no conversation in the chat: :AgentdSessions picks one', vim.log.levels.WARN)
  end
  if not title or vim.trim(title) == '' then
    return vim.ui.input({ prompt = 'agentd: rename the conversation to: ', default = S.session_info(sid).title or '' },
      function(text)
        if text and vim.trim(text) ~= '' then
          M.rename(sid, text, done)
        end
      end)
  end
  lifecycle.request(P.request.rename_session, { sessionId = sid, title = title }, function(e, res)
    if e then
      ui.notify('rename: ' .. err_text(e), vim.log.levels.ERROR)
    elseif type(res) == 'table' then
      M.note(res.session)
      require('agentd.chat').render()
    end
    if done then
      done(not e)
    end
  end)
end

--- Deletes session sid (agent/deleteSession) once the user said yes: its
--- runs, their events and its undo history; the files stay as they are.
---@param sid string
---@param done fun(ok: boolean)|nil
function M.delete(sid, done)
  local title = S.session_info(sid).title or sid
  vim.ui.select({ 'Delete it', 'Keep it' }, {
    prompt = ('agentd: delete "%s"? Its runs and its undo history go; the files stay as they are'):format(
      (title:gsub('\n.*', ' …'))),
    kind = 'agentd.confirm',
  }, function(choice)
    if choice ~= 'Delete it' then
      return done and done(false)
    end
    lifecycle.request(P.request.delete_session, { sessionId = sid }, function(e)
      if e and e.code == P.error_codes.SessionBusy then
        ui.notify('that conversation has a run going on (working, waiting or paused): :AgentdCancel it first',
          vim.log.levels.WARN)
      elseif e then
        ui.notify('delete: ' .. err_text(e), vim.log.levels.ERROR)
      else
        S.sessions[sid] = nil
        if S.session == sid then
          S.session, S.new_chat = nil, true
        end
        require('agentd.chat').render()
        ui.notify(('deleted "%s"'):format((title:gsub('\n.*', ' …'))))
      end
      if done then
        done(not e)
      end
    end)
  end)
end

-- --------------------------------------------------------------- context

--- A token count for people: 512, 6.8k, 41k.
---@param n number
---@return string
function M.tokens(n)
  if n < 1000 then
    return tostring(math.floor(n))
  elseif n < 10000 then
    return ('%.1fk'):format(n / 1000)
  end
  return ('%dk'):format(math.floor(n / 1000 + 0.5))
end

--- How full the context window is, in a few words: "context 41k/128k
--- (32%)", "… · compacts soon" near the point where agentd compacts.
---@param c table|nil the context update's (or agent/context's) object
---@return string|nil
function M.meter(c)
  if type(c) ~= 'table' or type(c.used) ~= 'number' or type(c.window) ~= 'number' or c.window <= 0 then
    return nil
  end
  local s = ('context %s/%s (%d%%)'):format(M.tokens(c.used), M.tokens(c.window), math.floor(100 * c.used / c.window + 0.5))
  if type(c.compactAt) == 'number' and c.compactAt > 0 and c.used >= 0.9 * c.compactAt then
    s = s .. ' · compacts soon'
  end
  if c.compacted == true then
    s = s .. ' · compacted'
  end
  return s
end

--- The meter in a word, for a status line: "32% context".
---@param c table|nil
---@return string|nil
function M.meter_short(c)
  if type(c) ~= 'table' or type(c.used) ~= 'number' or type(c.window) ~= 'number' or c.window <= 0 then
    return nil
  end
  return ('%d%% context'):format(math.floor(100 * c.used / c.window + 0.5))
end

--- Asks the daemon how full session sid's context window is (agent/context).
---@param sid string
function M.fetch_context(sid)
  lifecycle.request(P.request.context, { sessionId = sid }, function(e, res)
    if not e and type(res) == 'table' then
      S.session_info(sid).context = res
      require('agentd.chat').render()
      ui.redraw_status()
    end
  end)
end

--- :AgentdCompact: the chat's conversation's older turns replaced by a
--- summary now (agent/compact); says how much it saved.
---@param sid string|nil
function M.compact(sid)
  if not sid then
    return ui.notify('no conversation in the chat: :AgentdSessions picks one', vim.log.levels.WARN)
  end
  lifecycle.request(P.request.compact, { sessionId = sid }, function(e, res)
    if e and e.code == P.error_codes.SessionBusy then
      return ui.notify('the conversation has a run going on: compact it once the run is over', vim.log.levels.WARN)
    elseif e then
      return ui.notify('compact: ' .. err_text(e), vim.log.levels.ERROR)
    end
    res = type(res) == 'table' and res or {}
    if (res.dropped or 0) == 0 then
      ui.notify('nothing to compact yet: the conversation is one turn')
    else
      local info = S.session_info(sid)
      info.compactions = info.compactions or {}
      table.insert(info.compactions, { after_run = (S.runs:of_session(sid)[#S.runs:of_session(sid)] or {}).id,
        dropped = res.dropped, before = res.before, after = res.after })
      ui.notify(('compacted: %d older message%s summarized, %s → %s tokens'):format(res.dropped,
        res.dropped == 1 and '' or 's', M.tokens(res.before or 0), M.tokens(res.after or 0)))
    end
    M.fetch_context(sid)
  end)
end

-- --------------------------------------------------------------- manager

M.PANEL = 'sessions'
--- The manager's keys (buffer-local in it).
M.KEYS = { open = '<CR>', rename = 'r', delete = 'dd', search = '/', all = 'a' }

local manager = { query = nil }

--- The manager's lines and items.
---@param list table[]
---@param query string|nil
---@param now integer|nil
function M.content(list, query, now)
  local k = M.KEYS
  local lines = { query and ('agentd sessions matching "' .. query .. '"') or 'agentd sessions',
    ('%s open · %s rename · %s delete · %s search · %s all · q close'):format(k.open, k.rename, k.delete, k.search, k.all) }
  local hl = { { 1, 'Title' }, { 2, 'Comment' } }
  local items = {}
  lines[#lines + 1] = ''
  if #list == 0 then
    lines[#lines + 1] = query and 'No session mentions that.' or 'No sessions in this workspace yet.'
  end
  for _, s in ipairs(list) do
    lines[#lines + 1] = (s.sessionId == S.session and '▸ ' or '  ') .. M.label(s, now)
    items[#lines] = s
    if s.sessionId == S.session then
      hl[#hl + 1] = { #lines, 'Bold' }
    end
  end
  return { lines = lines, hl = hl, items = items }
end

local function draw_manager(open)
  M.refresh(function(e, list)
    local panel = require('agentd.panel')
    if e then
      return ui.notify('sessions: ' .. err_text(e), vim.log.levels.ERROR)
    end
    if not open and not panel.is_open(M.PANEL) then
      return
    end
    panel.show(M.PANEL, M.content(list, manager.query, os.time()), M.manager_keys(), { filetype = 'agentd_sessions' })
  end, manager.query)
end

function M.manager_keys()
  local panel = require('agentd.panel')
  local k = M.KEYS
  return {
    { k.open, function(s)
      if s then
        panel.close(M.PANEL)
        M.open(s)
      end
    end, 'open the conversation' },
    { k.rename, function(s)
      if s then
        M.rename(s.sessionId, nil, function()
          draw_manager()
        end)
      end
    end, 'rename the conversation' },
    { k.delete, function(s)
      if s then
        M.delete(s.sessionId, function()
          draw_manager()
        end)
      end
    end, 'delete the conversation' },
    { k.search, function()
      vim.ui.input({ prompt = 'agentd: sessions mentioning: ', default = manager.query or '' }, function(q)
        if q ~= nil then
          manager.query = vim.trim(q) ~= '' and vim.trim(q) or nil
          draw_manager()
        end
      end)
    end, 'search the conversations' },
    { k.all, function()
      manager.query = nil
      draw_manager()
    end, 'every conversation' },
  }
end

--- :AgentdSessions!: the sessions in a panel, to open, rename, delete and
--- search.
---@param query string|nil
function M.manage(query)
  manager.query = query and query ~= '' and query or nil
  draw_manager(true)
end

--- The manager's text ('' when closed), for tests.
function M.manager_text()
  return require('agentd.panel').text(M.PANEL)
end

return M
