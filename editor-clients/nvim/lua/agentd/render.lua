-- The chat transcript as lines: each run's prompt, streamed answer, plan,
-- tool calls, input requests (with their keys while they are open), files
-- changed and final state. No editor state: it takes the runs and a view
-- of the open requests, and returns the lines and, per line, the request
-- (and choice option) it belongs to, so keys on a line know what to answer.
local config = require('agentd.config')
local kinds = require('agentd.kinds')
local runs = require('agentd.runs')

local M = {}

--- A prompt longer than this many lines shows folded to them.
M.PROMPT_LINES = 12

local STATUS_MARK = { pending = '[ ]', in_progress = '[>]', completed = '[x]', failed = '[!]' }
local TOOL_MARK = { pending = '…', in_progress = '…', completed = '✓', failed = '✗' }
local TOOL_DONE_STATUS = { completed = true, failed = true }
local FILE_MARK = { added = 'A', modified = 'M', deleted = 'D', moved = 'R', renamed = 'R', mode = 'P', type = 'T' }
M.FILE_MARK = FILE_MARK
-- Key hints break between keys, never between a key and what it does.
local HINT_WIDTH = 60

local function split(text)
  local out = {}
  for line in ((type(text) == 'string' and text or '') .. '\n'):gmatch('(.-)\r?\n') do
    out[#out + 1] = line
  end
  return out
end

local function one_line(v)
  if type(v) ~= 'string' then
    return ''
  end
  return (v:gsub('\n.*', ' …'))
end

---@class agentd.Lines
---@field lines string[]
---@field marks table<integer, {id: string, option: integer|nil}> line -> request
---@field toggles table<integer, table> line -> the item the open key folds or unfolds (thinking)
---@field hl table<integer, string> line -> highlight group (quiet lines, warnings)
---@field runs table<integer, string> line -> the run it belongs to
---@field changes table<integer, string> line -> the checkpoint of the tool call on it
---@field locations table<integer, table> line -> {path, line, column} the open key jumps to
---@field stops table<integer, table> line -> what the stop key stops there: {run = id} (a subagent) or {process = p}

local function new_lines()
  return { lines = {}, marks = {}, toggles = {}, hl = {}, runs = {}, changes = {}, locations = {}, stops = {} }
end
M.new_lines = new_lines

local function push(out, line, mark)
  out.lines[#out.lines + 1] = line
  if mark then
    out.marks[#out.lines] = mark
  end
end

-- Highlights the line just pushed.
local function hl(out, group)
  out.hl = out.hl or {}
  out.hl[#out.lines] = group
end

-- One line per picture that went with the user's words (a prompt's or a
-- steer's), as the model got it: `[image shot.png · PNG 12×8, 3 KB]`.
local function push_images(out, images)
  for _, img in ipairs(type(images) == 'table' and images or {}) do
    local kind = type(img.mimeType) == 'string' and img.mimeType:match('image/(%w+)') or '?'
    local dims = (type(img.width) == 'number' and type(img.height) == 'number') and (' %d×%d'):format(img.width, img.height) or ''
    push(out, ('   [image %s · %s%s%s%s]'):format(tostring(img.name or img.id or '?'), kind:upper(), dims,
      type(img.bytes) == 'number' and (', ' .. M.size(img.bytes)) or '', img.scaled and ', scaled down' or ''))
    hl(out, 'Comment')
  end
end

local function push_text(out, text, indent, group)
  for _, l in ipairs(split(text)) do
    push(out, (indent or '') .. l)
    if group then
      hl(out, group)
    end
  end
end

-- The last n characters of s (whole UTF-8 sequences), on one line.
local function tail(s, n)
  s = vim.trim((s:gsub('%s+', ' ')))
  if vim.fn.strchars(s) <= n then
    return s
  end
  return '…' .. vim.fn.strcharpart(s, vim.fn.strchars(s) - n, n)
end

-- A path for people: the home folder as ~.
local function short_path(p)
  if p:sub(1, 1) == '/' then
    return vim.fn.fnamemodify(p, ':~')
  end
  return p
end

local function context_line(ctx)
  if type(ctx) ~= 'table' then
    return nil
  end
  local parts = {}
  local sel = type(ctx.selection) == 'table' and ctx.selection or nil
  local attached = {}
  for _, at in ipairs(type(ctx.attachments) == 'table' and ctx.attachments or {}) do
    if type(at) == 'table' and type(at.name) == 'string' then
      attached[at.name] = true
    end
  end
  for _, f in ipairs(type(ctx.files) == 'table' and ctx.files or {}) do
    -- a file named by its selection or its unsaved text is said there
    if not (sel and sel.path == f) and not attached[f .. ' (unsaved)'] then
      parts[#parts + 1] = f
    end
  end
  if sel then
    parts[#parts + 1] = ('%s, lines %d-%d'):format(sel.path, sel.startLine or 0, sel.endLine or 0)
  end
  for _, at in ipairs(type(ctx.attachments) == 'table' and ctx.attachments or {}) do
    if type(at) == 'table' and type(at.name) == 'string' then
      parts[#parts + 1] = at.name
    end
  end
  if #parts == 0 then
    return nil
  end
  return '   with ' .. table.concat(parts, '; ')
end

-- How a run's state, its stop reason and a request's outcome read: the
-- protocol's words (requires_action, end_turn, allow_once) are not for
-- people. A stop reason the state says already (end_turn, cancelled,
-- error: the error is shown) adds nothing.
M.STATE_WORDS = {
  queued = 'queued',
  running = 'running',
  requires_action = 'waiting for you',
  paused = 'paused',
  completed = 'completed',
  failed = 'failed',
  cancelled = 'cancelled',
}
M.STOP_WORDS = {
  max_steps = 'stopped at the step limit',
  repetition = 'the model kept repeating itself',
  tool_errors = 'too many failed tool calls',
}
M.OUTCOME_WORDS = {
  answered = 'answered',
  allow_once = 'allowed',
  allow_session = 'allowed for this session',
  allow_always = 'always allowed',
  reject_once = 'rejected',
  reject_always = 'always rejected',
  allow_full = 'allowed once, without the sandbox',
  timeout = 'expired: no answer in time',
  cancelled = 'cancelled with the run',
}
-- What a mode lets the agent do, in a few words.
M.MODE_WORDS = {
  ['read-only'] = 'reads only',
  plan = 'reads, then proposes a plan to approve',
  ask = 'asks before each change and command',
  ['auto-edit'] = 'edits files without asking; commands ask',
  ['full-auto'] = 'runs everything without asking; deny rules still apply',
}
-- Who closed a request, when it was not the user's own answer.
local BY_WORDS = { policy = 'by a rule' }

--- A run state for people.
---@param state string|nil
---@return string
function M.state_word(state)
  return M.STATE_WORDS[state] or (state and state:gsub('_', ' ')) or 'running'
end

-- The ask_user call a question, choice or secret belongs to: the request
-- is the call, so the call's own line would say it twice. (A command's
-- prompt or an MCP server's question belongs to a call that is more.)
local function asking_call(req, run)
  local tool = run and type(req.toolCallId) == 'string' and run.tools[req.toolCallId]
  local sa = type(req.subagent) == 'table' and req.subagent or nil
  if tool and sa and tool.sub then
    -- a subagent's question: its own call, in the task call's work
    tool = type(sa.toolCallId) == 'string' and tool.sub.tools[sa.toolCallId] or nil
  end
  local input = tool and type(tool.input) == 'table' and tool.input or {}
  if (req.kind == 'question' or req.kind == 'choice' or req.kind == 'secret') and type(input.question) == 'string'
    or req.kind == 'confirm_plan' and type(input.plan) == 'string' then
    return tool
  end
end

-- What the user answered, from the sentence the model read ("The user
-- chose: blue"); nil for a secret or anything else.
local ANSWER_PREFIXES = { 'The user answered: ', 'The user chose: ' }
local function answer_of(tool)
  local output = tool and type(tool.output) == 'string' and tool.output or ''
  for _, p in ipairs(ANSWER_PREFIXES) do
    if output:sub(1, #p) == p then
      return one_line(output:sub(#p + 1))
    end
  end
end

local function render_request(out, item, open, run, in_card)
  local r = item.req
  local spec = kinds.of(r)
  local id = r.requestId
  -- in its subagent's card the card says whose it is
  local who = not in_card and kinds.who(r)
  local head = '? ' .. (who and (who .. ': ') or '') .. (spec and spec.summary(r) or one_line(r.message))
  local o = open(id)
  if item.outcome then
    local by = BY_WORDS[item.by]
    local what = M.OUTCOME_WORDS[item.outcome] or tostring(item.outcome):gsub('_', ' ')
    local answer = item.outcome == 'answered' and r.kind ~= 'secret' and answer_of(asking_call(r, run))
    if item.said and (item.outcome == 'answered' or not by) then
      -- the words of an answer given here (a kind known from its form)
      what = item.said
    elseif answer then
      what = what .. ': ' .. answer
    end
    push(out, head .. '  → ' .. what .. (by and (' (' .. by .. ')') or ''))
    if kinds.is_generic(r) then
      -- what was answered stays readable: a plan, a long question
      local msg = split(type(r.message) == 'string' and r.message or '')
      if #msg > 1 then
        for _, l in ipairs(msg) do
          push(out, '  │ ' .. l)
          hl(out, 'Comment')
        end
      end
    end
    return
  elseif not o then
    return push(out, head .. '  → answered')
  elseif o.sending then
    return push(out, head .. '  → sending…')
  end
  push(out, head, { id = id })
  for _, d in ipairs(spec and spec.details(r) or {}) do
    push(out, '  ' .. d, { id = id })
    if kinds.is_warning(d) then
      hl(out, 'WarningMsg')
    end
  end
  if kinds.picks(r) then
    for i, opt in ipairs(kinds.options(r)) do
      local desc = opt.description ~= '' and (' — ' .. opt.description) or ''
      push(out, ('  %d %s%s'):format(i, opt.label, desc), { id = id, option = (not r.multiple) and i or nil })
    end
  end
  local k = config.values.keymaps.request
  local parts
  if kinds.picks(r) then
    parts = { r.multiple and (k.open .. ' choose') or (k.open .. ' on an option picks it') }
    if kinds.allows_other(r) and k.other then
      parts[#parts + 1] = k.other .. ' other…'
    end
  else
    parts = kinds.hint_parts(r, 'chat')
  end
  for _, l in ipairs(kinds.join(parts, HINT_WIDTH)) do
    push(out, '  ' .. l, { id = id })
  end
end

-- A running command's output as it streams: its last `max` lines (what the
-- run model kept), a progress line rewritten with \r showing as it is now.
local function render_live(out, item, max)
  local lines = split(item.live)
  if lines[#lines] == '' then
    lines[#lines] = nil
  end
  local first = math.max(1, #lines - max + 1)
  local hidden = (item.live_dropped or 0) + first - 1
  if hidden > 0 then
    push(out, ('    … %d earlier lines'):format(hidden))
  end
  for i = first, #lines do
    local l = lines[i]:gsub('\r+$', '')
    push(out, '    ' .. (l:match('[^\r]*$')))
  end
end

local function render_tool(out, item, max)
  -- a command reads as one ($); other kinds say nothing the title does not
  local s = ('● %s%s %s'):format(item.kind == 'execute' and '$ ' or '', one_line(item.title or item.id),
    TOOL_MARK[item.status] or '')
  local outcome = type(item.outcome) == 'string' and item.outcome or ''
  local decided = item.status == 'failed' and (outcome:match('^reject') or outcome == 'cancelled' or outcome == 'timeout')
  if decided then
    -- a decision, not a failure; what the model was told about it is noise here
    s = s .. (outcome:match('^reject') and ' rejected' or outcome == 'timeout' and ' expired' or ' cancelled')
    return push(out, s)
  elseif item.status == 'failed' or item.isError == true then
    s = s .. ' failed'
  end
  if type(item.exitCode) == 'number' then
    s = s .. ' exit ' .. tostring(item.exitCode)
  end
  if type(item.durationMs) == 'number' and item.durationMs > 0 then
    s = s .. (' (%d ms)'):format(item.durationMs)
  end
  push(out, s)
  local f = type(item.fetched) == 'table' and item.fetched or nil
  if f and type(f.url) == 'string' then
    -- a page fetched: where it ended, how much, what
    local parts = { f.url }
    if type(f.status) == 'number' and f.status >= 400 then
      parts[#parts + 1] = 'HTTP ' .. f.status
    end
    if type(f.bytes) == 'number' then
      parts[#parts + 1] = M.size(f.bytes) .. (f.cut and ' (cut at 10 MB)' or '')
    end
    if type(f.contentType) == 'string' and f.contentType ~= '' then
      parts[#parts + 1] = (f.contentType:gsub(';.*', ''))
    end
    push(out, '    ↳ ' .. table.concat(parts, ' · '))
    hl(out, 'Comment')
  end
  if max <= 0 then
    return
  end
  if type(item.live) == 'string' and item.live ~= '' then
    return render_live(out, item, max)
  end
  if type(item.output) == 'string' and item.output ~= '' then
    local lines = split(item.output)
    if lines[#lines] == '' then
      lines[#lines] = nil
    end
    for i = 1, math.min(#lines, max) do
      push(out, '    ' .. lines[i])
    end
    if #lines > max then
      push(out, ('    … %d more lines'):format(#lines - max))
    end
  end
end

-- The diagnostics the daemon checked after a reply's edits, under the
-- edit: one line ("⚑ 1 error (1 new) · the editor"), the open key unfolds
-- the problems, each of which the open key then opens.
local function render_diagnostics(out, item)
  local d = item.diagnostics
  if type(d) ~= 'table' then
    return
  end
  local items = type(d.items) == 'table' and d.items or {}
  local errors, warnings = 0, 0
  for _, it in ipairs(items) do
    if it.severity == 'error' then
      errors = errors + 1
    else
      warnings = warnings + 1
    end
  end
  local servers = type(d.servers) == 'table' and #d.servers > 0 and table.concat(d.servers, ', ') or nil
  local key = config.values.keymaps.request.open or ''
  item.diag_fold = item.diag_fold or {}
  local fold = item.diag_fold
  if errors + warnings == 0 and (d.omitted or 0) == 0 then
    push(out, '  ✓ no problems after the edits' .. (servers and (' · ' .. servers) or ''))
    hl(out, 'Comment')
  else
    local parts = {}
    if errors > 0 then
      parts[#parts + 1] = ('%d error%s'):format(errors, errors == 1 and '' or 's')
    end
    if warnings > 0 then
      parts[#parts + 1] = ('%d warning%s'):format(warnings, warnings == 1 and '' or 's')
    end
    local s = '  ⚑ ' .. table.concat(parts, ', ')
    if type(d.new) == 'number' then
      s = s .. (' (%d new)'):format(d.new)
    end
    if (d.omitted or 0) > 0 then
      s = s .. (' +%d more'):format(d.omitted)
    end
    s = s .. (servers and (' · ' .. servers) or '') .. (' · %s %s'):format(key, fold.expanded and 'folds' or 'shows them')
    push(out, s)
    out.toggles[#out.lines] = fold
    hl(out, errors > 0 and 'WarningMsg' or 'Comment')
    if fold.expanded then
      for _, it in ipairs(items) do
        push(out, ('    %s:%d:%d: %s: %s%s'):format(tostring(it.path), it.line or 0, it.column or 0, tostring(it.severity),
          one_line(it.message), it.new and ' (new)' or ''))
        out.locations[#out.lines] = { path = it.path, line = it.line, column = it.column }
      end
    end
  end
  for _, n in ipairs(fold.expanded and type(d.notes) == 'table' and d.notes or {}) do
    push(out, '    note: ' .. one_line(n))
    hl(out, 'Comment')
  end
end

--- How many of a change's files its line names.
M.CHANGE_FILES = 4

-- The line of a call that changed the workspace: its checkpoint, the files,
-- and the key that restores them (or who undid it).
local function render_change(out, item, info, rewound)
  local names = {}
  local files = type(item.files) == 'table' and item.files or {}
  for i, f in ipairs(files) do
    if i > M.CHANGE_FILES then
      names[#names + 1] = ('+%d'):format(#files - M.CHANGE_FILES)
      break
    end
    if type(f) == 'table' and type(f.path) == 'string' then
      names[#names + 1] = (FILE_MARK[f.status] or '?') .. ' ' .. f.path
    end
  end
  local undone = type(info) == 'table' and type(info.undoneBy) == 'string' and info.undoneBy ~= '' and info.undoneBy
  local s = '  ↶ ' .. item.checkpoint .. (undone and (' (undone by ' .. undone .. ')') or '')
  if #names > 0 then
    s = s .. ': ' .. table.concat(names, ', ')
  end
  local key = config.values.keymaps.chat.undo_change
  local review = config.values.keymaps.chat.review_change
  if not undone and not rewound and review and review ~= '' then
    s = s .. ' · ' .. review .. ' review'
  end
  if not undone and not rewound and key and key ~= '' then
    s = s .. ' · ' .. key .. ' undo'
  end
  push(out, s)
  hl(out, 'Comment')
end

local render_item

-- Appends the lines of inner (rendered apart) to out, each after prefix,
-- keeping what each line is (requests, toggles, places, changes, stops);
-- a line without a highlight of its own reads quiet.
local function nest(out, inner, prefix)
  local base = #out.lines
  for i, l in ipairs(inner.lines) do
    push(out, prefix .. l)
    out.hl[base + i] = inner.hl[i] or 'Comment'
  end
  for _, f in ipairs({ 'marks', 'toggles', 'changes', 'locations', 'stops' }) do
    for i, v in pairs(inner[f] or {}) do
      out[f] = out[f] or {}
      out[f][base + i] = v
    end
  end
end

-- States of a subagent that has not ended.
local SUB_GOING = { running = true, requires_action = true, paused = true }

-- A task call: the subagent's card. Its state and tokens on the call's
-- line, the task it was given (its first line), its work nested under it
-- (folded once it ended: the open key shows it), then its answer (what the
-- model read) and the files it read.
local function render_subagent(out, item, open, max, ctx)
  local sa = type(item.subagent) == 'table' and item.subagent or {}
  local sub = item.sub
  local state = sa.state or sub.state or (item.status == 'completed' and 'completed')
    or (item.status == 'failed' and 'failed') or 'running'
  local going = SUB_GOING[state] and not TOOL_DONE_STATUS[item.status]
  local s = ('● %s %s'):format(one_line(item.title or ('Subagent: ' .. tostring(sa.description))),
    going and '…' or (state == 'completed' and '✓' or '✗'))
  if going or state ~= 'completed' then
    s = s .. ' ' .. M.state_word(state)
  end
  if type(sa.error) == 'string' and sa.error ~= '' then
    s = s .. ': ' .. one_line(sa.error)
  end
  local usage = type(sa.usage) == 'table' and sa.usage or sub.usage
  s = s .. M.usage(usage)
  local stop = config.values.keymaps.chat.drop_queued
  if going and sa.runId and stop and stop ~= '' then
    s = s .. ' · ' .. stop .. ' stops it'
  end
  push(out, s)
  if going and sa.runId then
    out.stops[#out.lines] = { run = sa.runId }
  end
  local input = type(item.input) == 'table' and item.input or {}
  if type(input.prompt) == 'string' and input.prompt ~= '' then
    push(out, '  ┊ task: ' .. one_line(input.prompt))
    hl(out, 'Comment')
  end
  -- its work: as it happens, then folded to a line
  local steps = 0
  for _, it in ipairs(sub.items) do
    if it.type == 'tool' then
      steps = steps + 1
    end
  end
  item.sub_fold = item.sub_fold or {}
  local key = config.values.keymaps.request.open or ''
  if not going and #sub.items > 0 and not item.sub_fold.expanded then
    push(out, ('  ┊ ▸ %d step%s (%s shows them)'):format(steps, steps == 1 and '' or 's', key))
    out.toggles[#out.lines] = item.sub_fold
    hl(out, 'Comment')
  else
    if not going and #sub.items > 0 then
      push(out, ('  ┊ ▾ %d step%s (%s folds them)'):format(steps, steps == 1 and '' or 's', key))
      out.toggles[#out.lines] = item.sub_fold
      hl(out, 'Comment')
    end
    local inner = new_lines()
    local sub_ctx = { checkpoint = ctx.checkpoint, rewound = ctx.rewound, run = sub, asking = ctx.asking, processes = {} }
    for _, it in ipairs(sub.items) do
      render_item(inner, it, open, math.min(max, 2), sub_ctx)
    end
    while #inner.lines > 0 and inner.lines[#inner.lines] == '' do
      inner.lines[#inner.lines] = nil
    end
    nest(out, inner, '  ┊ ')
  end
  -- its questions and approvals, in its card, open or answered
  local asks = ctx.cards and ctx.cards[item] or {}
  if #asks > 0 then
    local inner = new_lines()
    for _, it in ipairs(asks) do
      render_request(inner, it, open, ctx.run, true)
    end
    for i = 1, #inner.lines do
      inner.hl[i] = inner.hl[i] or 'Normal' -- not quiet: it is for you
    end
    nest(out, inner, '  ┊ ')
  end
  -- its answer, as the model read it
  if not going and type(item.output) == 'string' and item.output ~= '' then
    local lines = split((item.output:gsub('\n*Files the subagent read %(%d+%):.*$', '')))
    while #lines > 0 and lines[#lines] == '' do
      lines[#lines] = nil
    end
    for i = 1, math.min(#lines, max) do
      push(out, '    ' .. lines[i])
    end
    if #lines > max then
      push(out, ('    … %d more lines'):format(#lines - max))
    end
  end
  local read = type(sa.read) == 'table' and sa.read or {}
  if #read > 0 then
    local shown = vim.list_slice(read, 1, 6)
    push(out, ('    read %d file%s: %s%s'):format(#read, #read == 1 and '' or 's', table.concat(shown, ', '),
      #read > #shown and (', +' .. (#read - #shown)) or ''))
    hl(out, 'Comment')
  end
end

render_item = function(out, item, open, max, ctx)
  if item.type == 'text' then
    push_text(out, item.text)
  elseif item.type == 'thinking' then
    -- folded to one line (its latest words): the reasoning is there to
    -- glance at; the open key on the line unfolds it
    local n = vim.fn.strchars(item.text)
    local key = config.values.keymaps.request.open or ''
    if item.expanded then
      push(out, ('▾ Thinking (%d characters; %s folds)'):format(n, key))
      out.toggles[#out.lines] = item
      hl(out, 'Comment')
      push_text(out, item.text, '  ', 'Comment')
    else
      push(out, ('▸ Thinking (%d characters): %s'):format(n, tail(item.text, 60)))
      out.toggles[#out.lines] = item
      hl(out, 'Comment')
    end
  elseif item.type == 'plan' then
    push(out, 'Plan:' .. (item.explanation and (' ' .. one_line(item.explanation)) or ''))
    for _, e in ipairs(item.entries or {}) do
      push(out, '  ' .. (STATUS_MARK[e.status] or '[?]') .. ' ' .. one_line(e.content))
    end
  elseif item.type == 'tool' then
    if ctx.asking[item] then
      return -- its request says it (asking_call)
    end
    if item.sub then
      return render_subagent(out, item, open, max, ctx)
    end
    local first = #out.lines + 1
    render_tool(out, item, max)
    if type(item.checkpoint) == 'string' and item.checkpoint ~= '' then
      render_change(out, item, ctx.checkpoint(item.checkpoint), ctx.rewound)
      for i = first, #out.lines do
        out.changes[i] = item.checkpoint
      end
    end
    render_diagnostics(out, item)
    for _, p in ipairs(ctx.processes[item.id] or {}) do
      -- a background process the call started: its state, the stop key
      local going = p.state == 'running'
      local stop = config.values.keymaps.chat.drop_queued
      push(out, '  ⚙ ' .. require('agentd.processes').describe(p)
        .. ((going and stop and stop ~= '') and (' · ' .. stop .. ' stops it') or ''))
      hl(out, going and 'Special' or 'Comment')
      if going then
        out.stops[#out.lines] = { process = p }
      end
    end
  elseif item.type == 'request' then
    if not (ctx.in_card and ctx.in_card[item]) then
      render_request(out, item, open, ctx.run)
    end
  elseif item.type == 'instructions' then
    -- quiet: which instruction files the model was given
    local names = {}
    for _, f in ipairs(item.files or {}) do
      names[#names + 1] = short_path(f.path) .. (f.truncated and ' (first 32 KiB)' or '')
    end
    push(out, 'Instructions: ' .. (#names > 0 and table.concat(names, ' · ') or 'none'))
    hl(out, 'Comment')
  elseif item.type == 'steer' then
    -- the user's words, given while the run worked, and their pictures
    local lines = split(item.text)
    push(out, '» you: ' .. lines[1])
    hl(out, 'Special')
    for i = 2, #lines do
      push(out, '       ' .. lines[i])
      hl(out, 'Special')
    end
    push_images(out, item.images)
  elseif item.type == 'settings' then
    -- the conversation's mode changed during the run (a plan approved)
    local mode = type(item.settings.approvalPolicy) == 'string' and item.settings.approvalPolicy or ''
    if mode ~= '' then
      push(out, '⇢ mode ' .. mode .. ' from here on' .. (M.MODE_WORDS[mode] and (': ' .. M.MODE_WORDS[mode]) or ''))
      hl(out, 'Special')
    end
  elseif item.type == 'notice' then
    local lines = split(item.text)
    push(out, '⚠ ' .. lines[1])
    hl(out, 'WarningMsg')
    for i = 2, #lines do
      push(out, '  ' .. lines[i])
      hl(out, 'WarningMsg')
    end
  elseif item.type == 'files' then
    push(out, 'Files changed:')
    for _, f in ipairs(item.files or {}) do
      push(out, '  ' .. (FILE_MARK[f.status] or '?') .. ' ' .. tostring(f.path))
      if type(f.runsLater) == 'string' and f.runsLater ~= '' then
        push(out, '    ' .. kinds.runs_later(f.runsLater))
        hl(out, 'WarningMsg')
      end
    end
  end
end

--- Appends one run to out. open(requestId) returns the open request entry
--- (agentd.OpenRequest) or nil; checkpoint(id), what agent/checkpoints
--- said of a checkpoint (or nil).
---@param out agentd.Lines
---@param run agentd.Run
---@param open fun(id: string): agentd.OpenRequest|nil
---@param checkpoint (fun(id: string): table|nil)|nil
function M.run(out, run, open, checkpoint, procs)
  out.toggles, out.hl = out.toggles or {}, out.hl or {}
  out.runs, out.changes, out.locations = out.runs or {}, out.changes or {}, out.locations or {}
  out.stops = out.stops or {}
  local first_line = #out.lines + 1
  local ctx = { checkpoint = checkpoint or function() end, rewound = run.rewound, run = run, asking = {},
    processes = procs or {} }
  ctx.cards, ctx.in_card = {}, {}
  for _, item in ipairs(run.items) do
    local tool = item.type == 'request' and asking_call(item.req, run)
    if tool then
      ctx.asking[tool] = true
    end
    -- a subagent's request shows in its card (the task call it names)
    local card = item.type == 'request' and type(item.req.subagent) == 'table'
      and type(item.req.toolCallId) == 'string' and run.tools[item.req.toolCallId]
    if card and card.sub then
      ctx.cards[card] = ctx.cards[card] or {}
      table.insert(ctx.cards[card], item)
      ctx.in_card[item] = true
    end
  end
  local max = config.values.conversation.tool_output_lines
  local prompt = split(run.prompt or '')
  if prompt[#prompt] == '' and #prompt > 1 then
    prompt[#prompt] = nil
  end
  if run.prompt then
    -- a long prompt (one that quotes a file) is folded to its first lines
    local long = #prompt > M.PROMPT_LINES + 1
    run.prompt_fold = long and (run.prompt_fold or {}) or nil
    local shown = (long and not run.prompt_fold.expanded) and M.PROMPT_LINES or #prompt
    push(out, '## > ' .. prompt[1] .. (run.rewound and '  (rewound)' or ''))
    if long then
      out.toggles[#out.lines] = run.prompt_fold
    end
    for i = 2, shown do
      push(out, '   ' .. prompt[i])
    end
    if shown < #prompt then
      local key = config.values.keymaps.request.open or ''
      push(out, ('   … %d more lines (%s unfolds)'):format(#prompt - shown, key))
      out.toggles[#out.lines] = run.prompt_fold
      hl(out, 'Comment')
    end
  else
    -- started elsewhere: its prompt comes with the conversation (methods.adopt)
    push(out, '## > …' .. (run.rewound and '  (rewound)' or ''))
  end
  local with = context_line(run.context)
  if with then
    push(out, with)
  end
  push_images(out, run.images)
  push(out, '')
  for _, item in ipairs(run.items) do
    local before = #out.lines
    render_item(out, item, open, max, ctx)
    -- a blank line between blocks (not inside streamed text)
    if #out.lines > before and (item.type ~= 'text' or out.lines[#out.lines] ~= '') then
      push(out, '')
    end
  end
  local status = '— ' .. M.state_word(run.state)
  local stop = M.STOP_WORDS[run.stop_reason]
  if stop then
    status = status .. ' (' .. stop .. ')'
  end
  local paused = run.state == 'paused'
  if type(run.error) == 'string' and run.error ~= '' and not paused then
    status = status .. ': ' .. one_line(run.error)
  end
  status = status .. M.usage(run.usage)
  if run.state == 'queued' then
    local drop = config.values.keymaps.chat.drop_queued
    status = status .. ': starts when the run before it ends' .. (drop and drop ~= '' and (' · ' .. drop .. ' cancels it') or '')
  end
  push(out, status)
  if paused then
    hl(out, 'WarningMsg')
    -- why it stopped (the daemon restarted, or its state could not be saved)
    -- and how to go on
    if type(run.error) == 'string' and run.error ~= '' then
      push_text(out, run.error, '  ', 'WarningMsg')
    end
    local key = config.values.keymaps.chat.resume
    push(out, '  ' .. (key and key ~= '' and (key .. ' resumes it (:AgentdResume)') or ':AgentdResume resumes it'))
    hl(out, 'Comment')
  end
  local keys = config.values.keymaps.chat
  if run.rewound then
    push(out, '  ↶ rewound: cut from the conversation; the next prompt continues from before it')
  elseif runs.TERMINAL[run.state] and #runs.checkpoints_of(run) > 0 then
    -- a turn that changed the workspace: how to take it back
    local parts = {}
    if keys.undo_turn and keys.undo_turn ~= '' then
      parts[#parts + 1] = keys.undo_turn .. ' undo this turn'
    end
    if keys.rewind and keys.rewind ~= '' then
      parts[#parts + 1] = keys.rewind .. ' rewind to before it'
    end
    if #parts > 0 then
      push(out, '  ' .. table.concat(parts, ' · '))
      hl(out, 'Comment')
    end
  end
  push(out, '')
  for i = first_line, #out.lines do
    out.runs[i] = run.id
    if run.rewound then
      -- the whole run reads as history
      out.hl[i] = 'Comment'
    end
  end
end

--- A size for people: 512 B, 3 KB, 1.2 MB.
---@param n number bytes
---@return string
function M.size(n)
  if n < 1024 then
    return ('%d B'):format(n)
  elseif n < 1024 * 1024 then
    return ('%d KB'):format(math.floor(n / 1024 + 0.5))
  end
  return ('%.1f MB'):format(n / (1024 * 1024))
end

--- The token counts of a run's status line: " · 5216 tokens (4864 cached)".
---@param u table|nil the usage update's counts
---@return string
function M.usage(u)
  if type(u) ~= 'table' or type(u.totalTokens) ~= 'number' then
    return ''
  end
  local s = (' · %d tokens'):format(u.totalTokens)
  local extra = {}
  if type(u.cachedTokens) == 'number' and u.cachedTokens > 0 then
    extra[#extra + 1] = ('%d cached'):format(u.cachedTokens)
  end
  if type(u.reasoningTokens) == 'number' and u.reasoningTokens > 0 then
    extra[#extra + 1] = ('%d thinking'):format(u.reasoningTokens)
  end
  if #extra > 0 then
    s = s .. ' (' .. table.concat(extra, ', ') .. ')'
  end
  return s
end

--- A session's settings in a few words: "model qwen · effort high · mode ask".
--- Settings left to the daemon read "default".
---@param set {model: string|nil, reasoningEffort: string|nil, approvalPolicy: string|nil}|nil
---@return string
function M.settings(set)
  set = set or {}
  local function v(x)
    return type(x) == 'string' and x ~= '' and x or nil
  end
  local parts = { 'model ' .. (v(set.model) or 'default') }
  if v(set.reasoningEffort) then
    parts[#parts + 1] = 'effort ' .. set.reasoningEffort
  end
  parts[#parts + 1] = 'mode ' .. (v(set.approvalPolicy) or 'default')
  return table.concat(parts, ' · ')
end

---@class agentd.ChatView
---@field title string|nil
---@field settings table|nil     {model, reasoningEffort, approvalPolicy} (nil fields: the daemon's default)
---@field runs agentd.Run[]
---@field loading string|nil     what is still being fetched of the conversation
---@field checkpoint (fun(id: string): table|nil)|nil what agent/checkpoints said of a checkpoint
---@field warning string|nil     a warning for the whole conversation (the sandbox cannot confine commands)
---@field compactions table[]|nil the compactions asked from here, each after the run it followed
---@field meter string|nil        how full the context window is (sessions.meter)
---@field processes table[]|nil   the session's background processes (agent/processChanged)

--- The whole transcript of a session.
---@param view agentd.ChatView
---@param open fun(id: string): agentd.OpenRequest|nil
---@return agentd.Lines
function M.chat(view, open)
  local out = new_lines()
  push(out, '# agentd' .. (view.title and (' · ' .. one_line(view.title)) or ''))
  push(out, M.settings(view.settings) .. (view.meter and (' · ' .. view.meter) or ''))
  hl(out, 'Comment')
  if view.warning then
    push(out, '⚠ ' .. view.warning)
    hl(out, 'WarningMsg')
  end
  push(out, '')
  if view.loading then
    push(out, '… ' .. view.loading)
    hl(out, 'Comment')
    push(out, '')
  end
  if #view.runs == 0 and not view.loading then
    push(out, 'Type below and press ' .. (config.values.keymaps.compose.send or '<C-s>') .. ' to send.')
  end
  -- background processes, by the call that started them
  local procs = {}
  for _, p in ipairs(view.processes or {}) do
    if type(p.toolCallId) == 'string' then
      procs[p.toolCallId] = procs[p.toolCallId] or {}
      table.insert(procs[p.toolCallId], p)
    end
  end
  for _, run in ipairs(view.runs) do
    M.run(out, run, open, view.checkpoint, procs)
    for _, c in ipairs(view.compactions or {}) do
      if c.after_run == run.id then
        push(out, ('⇣ compacted: %d older message%s summarized for the model (%s → %s tokens); the chat keeps them')
          :format(c.dropped or 0, c.dropped == 1 and '' or 's', tostring(c.before or '?'), tostring(c.after or '?')))
        hl(out, 'Comment')
        push(out, '')
      end
    end
  end
  return out
end

return M
