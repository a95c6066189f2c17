-- One table per input-request kind: how it reads (a summary line, its
-- details) and how it is answered (its actions and their keys). The
-- conversation, the request float and the diff tab all use it, so a new
-- kind is added here and in protocol.lua, nowhere else.
local config = require('agentd.config')
local udiff = require('agentd.udiff')

local M = {}

local function str(v)
  return type(v) == 'string' and v or ''
end

local function one_line(s)
  return (str(s):gsub('\n.*', ' …'))
end

local function text_lines(s)
  local out = {}
  for l in (str(s) .. '\n'):gmatch('(.-)\r?\n') do
    out[#out + 1] = l
  end
  if out[#out] == '' then
    out[#out] = nil
  end
  return out
end

local function message(req)
  local m = str(req.message)
  return m ~= '' and m or str(req.title)
end

--- The files of a write with their added/removed line counts.
function M.write_files(req)
  local out = {}
  for _, f in ipairs(type(req.diff) == 'table' and req.diff or {}) do
    local added, removed = udiff.stat(f.diff)
    local st = ({ added = 'A', modified = 'M', deleted = 'D', moved = 'R' })[f.status] or 'M'
    out[#out + 1] = { path = str(f.path), status = st, added = added, removed = removed,
      runs_later = str(f.runsLater) ~= '' and f.runsLater or nil }
  end
  return out
end

---@class agentd.KindSpec
---@field label string                      the kind's name for people
---@field confirm boolean                   answered with a decision (agent/confirm)
---@field open 'text'|'secret'|'diff'|nil   what the open key does
---@field summary fun(req: table): string   one line
---@field details fun(req: table): string[] what else to show

---@type table<string, agentd.KindSpec>
M.spec = {
  question = {
    label = 'question',
    confirm = false,
    open = 'text',
    summary = function(req)
      return one_line(message(req))
    end,
    details = function(req)
      local out = text_lines(req.context)
      local msg = text_lines(message(req))
      if #msg > 1 then
        vim.list_extend(out, msg)
      end
      return out
    end,
  },
  choice = {
    label = 'choice',
    confirm = false,
    open = nil,
    summary = function(req)
      return one_line(message(req))
    end,
    details = function(req)
      return text_lines(req.context)
    end,
  },
  secret = {
    label = 'secret',
    confirm = false,
    open = 'secret',
    summary = function(req)
      return one_line(message(req)) .. ' (a secret: typed hidden, never shown to the model)'
    end,
    details = function(req)
      local out = {}
      if str(req.command) ~= '' then
        out[1] = 'for: ' .. one_line(req.command)
      end
      return out
    end,
  },
  confirm_command = {
    label = 'command',
    confirm = true,
    open = nil,
    summary = function(req)
      if str(req.cwd) == '' and str(req.title) ~= '' then
        -- an MCP tool's call, or a server to start: no directory
        return one_line(req.title)
      end
      local cwd = str(req.cwd) ~= '' and req.cwd or '.'
      return ('Run `%s` in %s'):format(one_line(req.command), cwd)
    end,
    details = function(req)
      local out = {}
      local cmd = text_lines(req.command)
      if #cmd > 1 or (str(req.cwd) == '' and #cmd == 1) then
        out[#out + 1] = 'command:'
        for _, l in ipairs(cmd) do
          out[#out + 1] = '  ' .. l
        end
      end
      local where = M.where(req)
      if where then
        out[#out + 1] = where
      elseif str(req.message) ~= '' then
        -- no sandbox profile (an MCP tool's call): what the daemon says of it
        vim.list_extend(out, text_lines(req.message))
      end
      if type(req.secrets) == 'table' and #req.secrets > 0 then
        out[#out + 1] = 'uses your secret' .. (#req.secrets > 1 and 's' or '') .. ': $' .. table.concat(req.secrets, ', $')
      end
      M.grant_covers(req, out)
      if str(req.rule) ~= '' then
        out[#out + 1] = 'rule: ' .. req.rule
      end
      return out
    end,
  },
  confirm_write = {
    label = 'write',
    confirm = true,
    open = 'diff',
    summary = function(req)
      local files = M.write_files(req)
      local t = str(req.title) ~= '' and req.title or 'Write'
      if #files > 1 then
        t = t .. (' (%d files)'):format(#files)
      end
      return one_line(t)
    end,
    details = function(req)
      local out = {}
      for _, f in ipairs(M.write_files(req)) do
        out[#out + 1] = ('  %s %s  +%d -%d'):format(f.status, f.path, f.added, f.removed)
        if f.runs_later then
          out[#out + 1] = '    ' .. M.runs_later(f.runs_later)
        end
      end
      M.grant_covers(req, out)
      if str(req.rule) ~= '' then
        out[#out + 1] = 'rule: ' .. req.rule
      end
      return out
    end,
  },
}

--- Who asks, when it is a subagent of the run: 'Subagent “Find the cart
--- total”'; nil when it is the run's own agent.
---@param req table
---@return string|nil
function M.who(req)
  local sa = type(req.subagent) == 'table' and req.subagent or nil
  if not sa then
    return nil
  end
  return str(sa.description) ~= '' and ('Subagent “' .. one_line(sa.description) .. '”') or 'A subagent'
end

--- Appends to out what "allow for this session" and "always allow" would
--- allow from then on (grantCovers), one line each: plain text, as the
--- daemon says it.
---@param req table
---@param out string[]
function M.grant_covers(req, out)
  local covers = type(req.grantCovers) == 'table' and req.grantCovers or {}
  if #covers == 0 then
    return
  end
  out[#out + 1] = 'session / always would also allow:'
  for _, c in ipairs(covers) do
    if str(c) ~= '' then
      out[#out + 1] = '  · ' .. one_line(c)
    end
  end
end

--- A kind this plugin does not know, shown and answered from its generic
--- form (docs/protocol.md "The generic form"): its title, message,
--- context, command and files; its options to pick; its input (free text,
--- or text asked for once one of `input.with`'s options is picked);
--- answered as `answerWith` says.
M.generic = {
  label = 'request',
  confirm = false,
  open = nil,
  summary = function(req)
    return one_line(str(req.title) ~= '' and req.title or message(req))
  end,
  details = function(req)
    local out = {}
    if str(req.title) ~= '' then
      vim.list_extend(out, text_lines(req.message))
    elseif #text_lines(req.message) > 1 then
      vim.list_extend(out, vim.list_slice(text_lines(req.message), 2))
    end
    vim.list_extend(out, text_lines(req.context))
    if str(req.command) ~= '' then
      out[#out + 1] = 'command: ' .. one_line(req.command) .. (str(req.cwd) ~= '' and (' (in ' .. req.cwd .. ')') or '')
    end
    for _, f in ipairs(M.write_files(req)) do
      out[#out + 1] = ('  %s %s  +%d -%d'):format(f.status, f.path, f.added, f.removed)
    end
    return out
  end,
}

--- Whether request req is of a kind this plugin does not know (shown from
--- its generic form).
function M.is_generic(req)
  return M.spec[req.kind] == nil and type(req.answerWith) == 'string'
end

--- Whether the request is answered by picking one of its options (a
--- choice, or a request of another kind that offers options).
function M.picks(req)
  return req.kind == 'choice' or (M.is_generic(req) and #M.options(req) > 0)
end

--- A generic request's input when the text is an answer of its own (no
--- `with`), else nil.
function M.free_input(req)
  local i = req.input
  if type(i) == 'table' and (type(i.with) ~= 'table' or #i.with == 0) then
    return i
  end
end

--- A generic request's input when picking optionId asks for text with it.
function M.input_with(req, option_id)
  local i = req.input
  if type(i) == 'table' and type(i.with) == 'table' then
    for _, w in ipairs(i.with) do
      if w == option_id then
        return i
      end
    end
  end
end

--- Whether the request takes an answer in one's own words besides its
--- options (a choice's "other").
function M.allows_other(req)
  if req.kind == 'choice' then
    return req.allowOther == true
  end
  return M.is_generic(req) and #M.options(req) > 0 and M.free_input(req) ~= nil
end

--- What the open key does: 'text', 'secret', 'diff' or nil.
function M.open_of(req)
  local spec = M.spec[req.kind]
  if spec then
    return spec.open
  end
  local i = M.is_generic(req) and #M.options(req) == 0 and M.free_input(req)
  if i then
    return i.secret and 'secret' or 'text'
  end
end

--- Where a command would run once allowed, in a line: its sandbox profile
--- and whether it gets the network (nil when the request does not say).
---@param req table
---@return string|nil
function M.where(req)
  local p = str(req.profile)
  if p == '' then
    return nil
  end
  local net = req.network == true and 'with the network' or 'no network'
  if p == 'full' then
    return 'runs in: NO sandbox (it cannot be confined here): your full rights, ' .. net
  end
  return ('runs in: the %s sandbox, %s'):format(p, net)
end

--- A file that something runs later outside any sandbox, in words.
---@param who string the daemon's runsLater
---@return string
function M.runs_later(who)
  return '⚠ runs later, outside any sandbox: ' .. who
end

--- Whether a detail line is a warning (a command that would run
--- unconfined, a file that runs later outside any sandbox).
---@param line string
function M.is_warning(line)
  return line:find('^%s*runs in: NO sandbox') ~= nil or line:find('^%s*⚠ runs later') ~= nil
end

--- Whether the request would run a command with the user's full rights
--- once allowed (the sandbox cannot confine it here).
function M.unconfined(req)
  return str(req.profile) == 'full'
end

--- The spec of a request's kind (an unknown kind reads as a question
--- nobody can answer here).
---@return agentd.KindSpec|nil
function M.of(req)
  return M.spec[req.kind] or (type(req.answerWith) == 'string' and M.generic or nil)
end

-- Decisions, in the order they are offered, with their key names. An
-- explicit one is offered only when the request's options name it.
local DECISIONS = {
  { name = 'allow_once', decision = 'allow_once', label = 'allow' },
  { name = 'allow_session', decision = 'allow_session', label = 'session' },
  { name = 'allow_always', decision = 'allow_always', label = 'always' },
  { name = 'reject', decision = 'reject_once', label = 'reject' },
  { name = 'reject_with_reason', decision = 'reject_once', label = 'reject+why', reason = true },
  { name = 'reject_always', decision = 'reject_always', label = 'never' },
  -- only where the request offers it: a command run once without the sandbox
  { name = 'allow_full', decision = 'allow_full', label = 'no sandbox, once', explicit = true },
}

--- The key names of the decisions (keymaps.request), for the views that map them.
M.DECISION_NAMES = {}
for _, d in ipairs(DECISIONS) do
  M.DECISION_NAMES[#M.DECISION_NAMES + 1] = d.name
end

---@class agentd.Action
---@field name string        key name in keymaps.request
---@field key string         the key
---@field label string
---@field decision string|nil
---@field reason boolean|nil ask for a reason first

--- The decisions a confirmation offers (those in its options, or all but
--- the explicit ones when it lists none).
---@return agentd.Action[]
function M.decisions(req)
  local offered = {}
  local any = false
  for _, o in ipairs(type(req.options) == 'table' and req.options or {}) do
    offered[o.optionId] = true
    any = true
  end
  local keys = config.values.keymaps.request
  local out = {}
  for _, d in ipairs(DECISIONS) do
    local ok = offered[d.decision] or (not any and not d.explicit)
    if ok and keys[d.name] and keys[d.name] ~= '' then
      local label = d.label
      if d.decision == 'allow_once' and M.unconfined(req) then
        label = 'allow unsandboxed'
      end
      out[#out + 1] = { name = d.name, key = keys[d.name], label = label, decision = d.decision, reason = d.reason }
    end
  end
  return out
end

--- The options of a choice: { {id, label, description} }.
function M.options(req)
  local out = {}
  for _, o in ipairs(type(req.options) == 'table' and req.options or {}) do
    out[#out + 1] = { id = o.optionId, label = str(o.label) ~= '' and o.label or o.optionId, description = str(o.description) }
  end
  return out
end

--- Joins hint parts ("ga allow") with " · " into lines of at most width
--- columns, breaking between parts only.
---@param parts string[]
---@param width integer|nil
---@return string[]
function M.join(parts, width)
  local lines, cur = {}, ''
  for _, p in ipairs(parts) do
    if cur == '' then
      cur = p
    elseif width and vim.fn.strdisplaywidth(cur .. ' · ' .. p) > width then
      lines[#lines + 1] = cur
      cur = p
    else
      cur = cur .. ' · ' .. p
    end
  end
  if cur ~= '' then
    lines[#lines + 1] = cur
  end
  return lines
end

--- The keys of a request, e.g. { 'ga allow', 'gs session', … }.
---@param req table
---@param where 'card'|'chat'|'diff'
---@return string[]
function M.hint_parts(req, where)
  local k = config.values.keymaps.request
  local spec = M.of(req)
  local parts = {}
  local function add(key, label)
    if key and key ~= '' then
      parts[#parts + 1] = key .. ' ' .. label
    end
  end
  local open = M.open_of(req)
  if open == 'diff' and where ~= 'diff' then
    add(k.open, 'review the diff')
  elseif open == 'text' then
    add(k.open, 'answer')
  elseif open == 'secret' then
    add(k.open, 'type it')
  elseif M.picks(req) then
    if where == 'card' then
      add(req.multiple and '1-9' or '1-9', req.multiple and 'toggle' or 'pick')
    end
    add(k.open, req.multiple and (where == 'card' and 'toggle' or 'choose') or 'pick the line')
    if req.multiple and where == 'card' then
      add(k.send, 'send')
    end
    if M.allows_other(req) then
      add(k.other, 'other…')
    end
  end
  if spec and spec.confirm then
    for _, a in ipairs(M.decisions(req)) do
      add(a.key, a.label)
    end
  end
  if where ~= 'chat' then
    add(k.close, 'later')
  end
  return parts
end

--- "ga allow · gs session · …" for a request's keys, on one line.
---@param req table
---@param where 'card'|'chat'|'diff'
---@return string
function M.hint(req, where)
  return table.concat(M.hint_parts(req, where), ' · ')
end

return M
