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
---@field last_seq integer       the last seq applied
---@field prompt string|nil      what the user asked (known when started here)
---@field context table|nil      the context sent with it ({files, selection})
---@field items table[]          what the conversation shows, in order
---@field tools table<string, table>
---@field requests table<string, table> requestId -> its item
---@field buffered table[]       notifications held while catching up
---@field catching_up boolean
---@field usage table|nil
---@field files table[]|nil

---@class agentd.RunStore
---@field runs table<string, agentd.Run>
---@field order string[]
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
  return setmetatable({ runs = {}, order = {} }, Store)
end

function Store:get(run_id)
  return self.runs[run_id]
end

function Store:ensure(run_id, session_id)
  local r = self.runs[run_id]
  if not r then
    r = {
      id = run_id,
      session = session_id,
      state = 'running',
      last_seq = 0,
      items = {},
      tools = {},
      requests = {},
      buffered = {},
      catching_up = false,
    }
    self.runs[run_id] = r
    self.order[#self.order + 1] = run_id
  end
  if session_id and not r.session then
    r.session = session_id
  end
  return r
end

--- The runs of a session, oldest first.
function Store:of_session(session_id)
  local out = {}
  for _, id in ipairs(self.order) do
    local r = self.runs[id]
    if r.session == session_id then
      out[#out + 1] = r
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

--- Adds an input request to its run's items (from agent/inputRequest, or
--- from agent/pending, which carries no seq of the run's stream). A request
--- already there moves to the end: a catch-up replays the run in order.
---@param req table
---@return agentd.Run
function Store:add_request(req)
  local run = self:ensure(req.runId, req.sessionId)
  local item = run.requests[req.requestId]
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
  run.items[#run.items + 1] = item
  return run
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
  elseif method == N.update then
    local u = p.update or {}
    local k = u.kind
    if k == 'message_chunk' then
      add_text(run, u.text or '')
      run.streamed = true
    elseif k == 'thought_chunk' then
      -- the model's reasoning: kept apart from the answer, shown folded
      local last = run.items[#run.items]
      if last and last.type == 'thinking' then
        last.text = last.text .. (u.text or '')
      else
        run.items[#run.items + 1] = { type = 'thinking', text = u.text or '' }
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
    elseif k == 'tool_call_update' then
      local t = run.tools[u.toolCallId]
      if not t then
        t = { type = 'tool', id = u.toolCallId, title = u.toolCallId }
        run.tools[u.toolCallId] = t
        run.items[#run.items + 1] = t
      end
      if TOOL_DONE[t.status] and u.status == 'in_progress' then
        -- nothing of a running call may come after its final update
        return run
      end
      if type(u.outputDelta) == 'string' and u.outputDelta ~= '' then
        add_live(t, u.outputDelta)
      end
      for _, f in ipairs({ 'status', 'output', 'isError', 'truncated', 'exitCode', 'durationMs', 'files' }) do
        if u[f] ~= nil then
          t[f] = u[f]
        end
      end
      if TOOL_DONE[t.status] then
        -- the final update carries the full output: the live tail is done
        t.live, t.live_dropped = nil, nil
      end
    elseif k == 'usage' then
      run.usage = u.usage
    elseif k == 'files_changed' then
      run.files = u.files
      run.items[#run.items + 1] = { type = 'files', files = u.files }
    elseif k == 'instructions' then
      -- the instruction files the model was given (AGENTS.md and friends)
      run.items[#run.items + 1] = { type = 'instructions', files = u.instructions or {} }
    elseif k == 'notice' then
      -- agentd speaking, not the model: a small context window, no sandbox
      run.items[#run.items + 1] = { type = 'notice', text = u.text or '' }
    elseif k == 'result' then
      run.result = u.text
      run.stop_reason = u.stopReason
      if not run.streamed and u.text and u.text ~= '' then
        add_text(run, u.text)
      end
    end
  elseif method == N.input_request then
    self:add_request(p)
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
