-- What the editor knows about runs, built from their notifications, as pure
-- Lua. It checks seq (duplicates are dropped, a gap is reported so the
-- caller can fill it with agent/events) and folds each notification into a
-- model the conversation buffer renders.
local P = require('agentd.protocol')

local M = {}

---@class agentd.Run
---@field id string
---@field session string|nil
---@field state string           a run state (protocol.run_states)
---@field stop_reason string|nil
---@field error string|nil
---@field pause_reason string|nil why it is paused: 'restart' (resumed by itself) or 'not_saved' (the user resumes it)
---@field last_seq integer       the last seq applied
---@field prompt string|nil      what the user asked (known when started here)
---@field context table|nil      the context sent with it ({files, selection})
---@field items table[]          what the conversation shows, in order
---@field tools table<string, table>
---@field requests table<string, table> requestId -> its item
---@field buffered table[]       notifications held while catching up
---@field catching_up boolean
---@field usage table|nil       cumulative token counts (cachedTokens, reasoningTokens when reported)
---@field files table[]|nil
---@field instructions table|nil the instruction files item: {type='instructions', files}
---@field seen integer           the store's counter when the run became known
---@field rewound boolean|nil    a rewind cut it from the conversation (agent/rewind, agent/history)
---@field adopting boolean|nil   not started here: its session's conversation was asked for (methods.adopt)

---@class agentd.RunStore
---@field runs table<string, agentd.Run>
---@field order string[]           every run, in the order it became known
---@field sessions table<string, string[]> session -> its runs, oldest first
---@field counter integer          how many runs became known
local Store = {}
Store.__index = Store

M.TERMINAL = P.terminal_states
local N = P.server_notification

-- A running command's streamed output (outputDelta) is kept as a tail of at
-- most LIVE_LINES lines and LIVE_BYTES bytes, until the call's final update
-- (with the full output) replaces it.
M.LIVE_LINES = 40
M.LIVE_BYTES = 16384

local TOOL_DONE = { completed = true, failed = true }

-- Appends a piece of a running command's output to the tool's live tail.
local function add_live(t, piece)
  local s = (t.live or '') .. piece
  local starts = { 1 }
  for pos in s:gmatch('()\n') do
    starts[#starts + 1] = pos + 1
  end
  local n = #starts
  if starts[n] > #s then
    n = n - 1 -- s ends with a newline: no partial last line
  end
  local dropped = t.live_dropped or 0
  if n > M.LIVE_LINES then
    local cut = n - M.LIVE_LINES
    s = s:sub(starts[cut + 1])
    dropped = dropped + cut
  end
  if #s > M.LIVE_BYTES then
    -- one huge line: keep its end, not starting inside a UTF-8 sequence
    s = s:sub(-M.LIVE_BYTES):gsub('^[\128-\191]+', '')
  end
  t.live, t.live_dropped = s, dropped
end

---@return agentd.RunStore
function M.new()
  return setmetatable({ runs = {}, order = {}, sessions = {}, counter = 0 }, Store)
end

function Store:get(run_id)
  return self.runs[run_id]
end

function Store:ensure(run_id, session_id)
  local r = self.runs[run_id]
  if not r then
    r = {
      id = run_id,
      state = 'running',
      last_seq = 0,
      items = {},
      tools = {},
      requests = {},
      buffered = {},
      catching_up = false,
    }
    self.counter = self.counter + 1
    r.seen = self.counter
    self.runs[run_id] = r
    self.order[#self.order + 1] = run_id
  end
  if session_id and not r.session then
    r.session = session_id
    local list = self.sessions[session_id] or {}
    self.sessions[session_id] = list
    list[#list + 1] = run_id
  end
  return r
end

--- The runs of a session, oldest first.
function Store:of_session(session_id)
  local out = {}
  for _, id in ipairs(self.sessions[session_id] or {}) do
    out[#out + 1] = self.runs[id]
  end
  return out
end

--- The store's counter now: runs that become known later are newer than
--- a history page asked for now (see Store:place).
function Store:mark()
  return self.counter
end

--- Puts a history page's runs (ids, oldest first) in their place among the
--- session's runs. An earlier page (before: the run it precedes) goes just
--- before that run. The latest page (before nil) goes after the session's
--- other runs that were known when it was asked for (snap, from
--- Store:mark(): older runs, whose page comes later) and before those that
--- became known since (runs started meanwhile).
---@param session_id string
---@param ids string[]
---@param before string|nil
---@param snap integer
function Store:place(session_id, ids, before, snap)
  local list = self.sessions[session_id] or {}
  local in_page = {}
  for _, id in ipairs(ids) do
    in_page[id] = true
  end
  local older, newer = {}, {}
  local seen_before = before == nil
  for _, id in ipairs(list) do
    if id == before then
      seen_before = true
    end
    if not in_page[id] then
      local r = self.runs[id]
      if before then
        table.insert(seen_before and newer or older, id)
      else
        table.insert(r.seen > snap and newer or older, id)
      end
    end
  end
  local out = older
  vim.list_extend(out, ids)
  vim.list_extend(out, newer)
  self.sessions[session_id] = out
end

--- The checkpoints a run's calls made (tool_call_update.checkpoint), in
--- order.
---@param run agentd.Run
---@return string[]
function M.checkpoints_of(run)
  local out = {}
  for _, item in ipairs(run.items) do
    if item.type == 'tool' and type(item.checkpoint) == 'string' and item.checkpoint ~= '' then
      out[#out + 1] = item.checkpoint
    end
  end
  return out
end

--- 'apply', 'dup' (seq already seen) or 'gap' (some notifications are missing).
function Store:check(run, seq)
  if type(seq) ~= 'number' then
    return 'apply'
  end
  if seq <= run.last_seq then
    return 'dup'
  end
  if seq > run.last_seq + 1 then
    return 'gap'
  end
  return 'apply'
end

local function add_text(run, text)
  local last = run.items[#run.items]
  if last and last.type == 'text' then
    last.text = last.text .. text
  else
    run.items[#run.items + 1] = { type = 'text', text = text }
  end
end

--- Adds an input request to its run's items. From the run's own stream
--- (placed: agent/inputRequest, live or replayed) it takes its place in
--- order; from agent/pending, which carries no place in the stream, it goes
--- at the end until the stream replays it. A request already placed stays
--- where it is.
---@param req table
---@param placed boolean|nil
---@return agentd.Run
function Store:add_request(req, placed)
  local run = self:ensure(req.runId, req.sessionId)
  local item = run.requests[req.requestId]
  if item and (item.placed or not placed) then
    return run
  end
  if item then
    for i, it in ipairs(run.items) do
      if it == item then
        table.remove(run.items, i)
        break
      end
    end
  else
    item = { type = 'request', req = req }
    run.requests[req.requestId] = item
  end
  item.placed = placed or nil
  run.items[#run.items + 1] = item
  return run
end

--- Remembers what the user answered request_id with, in words (from this
--- editor: the daemon never sends an answer back).
function Store:said(run_id, request_id, words)
  local run = self.runs[run_id]
  local item = run and run.requests[request_id]
  if item and words ~= '' then
    item.said = words
  end
end

-- A subagent's work, nested in its task call (item.sub): a run's items and
-- tools of its own (its ids are its own: call_1 may be the parent's too).
local function new_sub()
  return { items = {}, tools = {}, requests = {} }
end

-- Folds one agent/update's update into run (a run, or a subagent's work).
local function apply_update(run, u)
  local k = u.kind
  if k == 'message_chunk' then
    add_text(run, u.text or '')
    run.streamed = true
  elseif k == 'thought_chunk' then
    -- the model's reasoning: kept apart from the answer, shown folded
    local last = run.items[#run.items]
    local text = type(u.text) == 'string' and u.text or ''
    if last and last.type == 'thinking' then
      last.text = last.text .. text
    else
      run.items[#run.items + 1] = { type = 'thinking', text = text }
    end
  elseif k == 'plan' then
    if not run.plan then
      run.plan = { type = 'plan' }
      run.items[#run.items + 1] = run.plan
    end
    run.plan.entries = u.entries or {}
    run.plan.explanation = u.explanation
  elseif k == 'tool_call' then
    local t = run.tools[u.toolCallId]
    if not t then
      t = { type = 'tool', id = u.toolCallId }
      run.tools[u.toolCallId] = t
      run.items[#run.items + 1] = t
    end
    t.title, t.kind, t.status, t.input, t.locations = u.title, u.toolKind, u.status, u.input, u.locations
    if type(u.subagent) == 'table' then
      -- a task call: the card a subagent's work nests in
      t.subagent = u.subagent
      t.sub = t.sub or new_sub()
    end
  elseif k == 'tool_call_update' then
    local t = run.tools[u.toolCallId]
    if not t then
      t = { type = 'tool', id = u.toolCallId, title = u.toolCallId }
      run.tools[u.toolCallId] = t
      run.items[#run.items + 1] = t
    end
    if TOOL_DONE[t.status] and u.status == 'in_progress' then
      -- nothing of a running call may come after its final update
      return
    end
    if u.status == nil and u.diagnostics ~= nil and TOOL_DONE[t.status] then
      -- the diagnostics after a reply's edits come once its calls ended
      t.diagnostics = u.diagnostics
      return
    end
    if type(u.outputDelta) == 'string' and u.outputDelta ~= '' then
      add_live(t, u.outputDelta)
    end
    if type(u.subagent) == 'table' then
      -- how the subagent ended: its state, tokens, the files it read
      t.subagent = vim.tbl_extend('force', t.subagent or {}, u.subagent)
      t.sub = t.sub or new_sub()
    end
    for _, f in ipairs({ 'status', 'output', 'isError', 'truncated', 'exitCode', 'durationMs', 'files', 'checkpoint',
      'diagnostics', 'fetched' }) do
      if u[f] ~= nil then
        t[f] = u[f]
      end
    end
    if TOOL_DONE[t.status] then
      -- the final update carries the full output: the live tail is done
      t.live, t.live_dropped = nil, nil
    end
  elseif k == 'usage' then
    run.usage = type(u.usage) == 'table' and u.usage or run.usage
  elseif k == 'files_changed' then
    run.files = u.files
    run.items[#run.items + 1] = { type = 'files', files = u.files }
  elseif k == 'instructions' then
    -- one line per run: the files of later updates join the first's
    if not run.instructions then
      run.instructions = { type = 'instructions', files = {} }
      run.items[#run.items + 1] = run.instructions
    end
    local files = run.instructions.files
    for _, f in ipairs(type(u.instructions) == 'table' and u.instructions or {}) do
      if type(f) == 'table' and type(f.path) == 'string' then
        local known = false
        for _, g in ipairs(files) do
          known = known or g.path == f.path
        end
        if not known then
          files[#files + 1] = f
        end
      end
    end
  elseif k == 'notice' then
    if type(u.text) == 'string' and u.text ~= '' then
      run.items[#run.items + 1] = { type = 'notice', text = u.text }
    end
  elseif k == 'settings' then
    -- the conversation's settings changed during the run (a plan approved
    -- into a mode)
    if type(u.settings) == 'table' then
      run.items[#run.items + 1] = { type = 'settings', settings = u.settings }
    end
  elseif k == 'subagent' then
    -- a subagent's own update or state, under its task call
    local sa = type(u.subagent) == 'table' and u.subagent or {}
    local t = run.tools[u.toolCallId]
    if not t then
      t = { type = 'tool', id = u.toolCallId, title = 'Subagent: ' .. tostring(sa.description or u.toolCallId), status = 'in_progress' }
      run.tools[u.toolCallId] = t
      run.items[#run.items + 1] = t
    end
    t.sub = t.sub or new_sub()
    t.subagent = t.subagent or {}
    t.subagent.runId = sa.runId or t.subagent.runId
    t.subagent.description = sa.description or t.subagent.description
    if type(sa.state) == 'string' then
      t.sub.state, t.sub.stop_reason, t.sub.error = sa.state, sa.stopReason, sa.error
    end
    if type(sa.update) == 'table' then
      apply_update(t.sub, sa.update)
    end
  elseif k == 'steer' then
    -- the user's words given while the run worked, where they were given
    if type(u.text) == 'string' and u.text ~= '' then
      run.items[#run.items + 1] = { type = 'steer', text = u.text,
        images = type(u.images) == 'table' and u.images or nil }
    end
  elseif k == 'result' then
    run.result = u.text
    run.stop_reason = u.stopReason
    if not run.streamed and u.text and u.text ~= '' then
      add_text(run, u.text)
    end
  end
end

--- Folds one notification into the run. Returns the run.
function Store:apply(method, p)
  local run = self:ensure(p.runId, p.sessionId)
  if type(p.seq) == 'number' and p.seq > run.last_seq then
    run.last_seq = p.seq
  end
  if method == N.run_state then
    run.state = p.state
    run.stop_reason = p.stopReason
    run.error = p.error
    run.pause_reason = p.pauseReason
  elseif method == N.update then
    apply_update(run, p.update or {})
  elseif method == N.input_request then
    self:add_request(p, true)
  elseif method == N.input_resolved then
    local item = run.requests[p.requestId]
    if item then
      item.outcome, item.by = p.outcome, p.by
      -- the tool call it asked about was decided, not broken
      local tool = type(item.req.toolCallId) == 'string' and run.tools[item.req.toolCallId]
      if tool then
        tool.outcome = p.outcome
      end
    end
  end
  return run
end

return M
