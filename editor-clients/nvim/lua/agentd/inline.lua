-- Inline edit (:'<,'>AgentdEdit): the selected lines and what to change in
-- them go to the agent as a run of its own session, in mode ask; the write
-- it proposes for that file is not shown in a float or a diff tab but in
-- the buffer itself, hunk by hunk: the lines it removes highlighted, the
-- lines it adds under them as virtual lines, a label with the keys. gy
-- keeps a hunk, gh rejects it, ga writes what is kept (a hunk not decided
-- counts as kept), gx rejects the write. The answer is the same
-- agent/confirm as everywhere (editedContent when some hunks were
-- rejected), so the change is a checkpoint like any other (undo), and the
-- buffer reloads once the daemon wrote it. Nothing is written to the
-- buffer meanwhile: the overlay is extmarks.
local config = require('agentd.config')
local S = require('agentd.state')
local udiff = require('agentd.udiff')
local ui = require('agentd.ui')

local api = vim.api
local M = {}

local NS = api.nvim_create_namespace('agentd.inline')

---@class agentd.InlineEdit     an inline edit's run (S.inline[runId])
---@field buf integer
---@field path string            workspace-relative
---@field line1 integer
---@field line2 integer

---@class agentd.InlineHunk
---@field a integer      first current line it replaces (1-based; for an insertion, the line it follows)
---@field ac integer     how many current lines it replaces
---@field b integer      first proposed line
---@field bc integer     how many proposed lines
---@field state 'keep'|'reject'|nil

---@class agentd.InlineReview
---@field id string
---@field buf integer
---@field current string[]
---@field proposed string[]
---@field hunks agentd.InlineHunk[]
---@field saved table<string, table> lhs -> the buffer's own mapping it replaced

---@type table<string, agentd.InlineReview>
local reviews = {}
M._reviews = reviews

local function keys()
  local k = config.values.keymaps.request
  return { apply = k.allow_once, reject_all = k.reject, keep = k.keep_hunk, reject = k.reject_hunk }
end

--- The hunks between the current and the proposed lines.
---@param current string[]
---@param proposed string[]
---@return agentd.InlineHunk[]
function M.hunks(current, proposed)
  local ok, idx = pcall(vim.diff, table.concat(current, '\n') .. '\n', table.concat(proposed, '\n') .. '\n',
    { result_type = 'indices' })
  local out = {}
  for _, h in ipairs(ok and type(idx) == 'table' and idx or {}) do
    out[#out + 1] = { a = h[1], ac = h[2], b = h[3], bc = h[4] }
  end
  return out
end

--- The text the review leaves: the current lines with the kept hunks (and,
--- with undecided_kept, those not decided) put in.
---@param r {current: string[], proposed: string[], hunks: agentd.InlineHunk[]}
---@param undecided_kept boolean
---@return string[]
function M.result(r, undecided_kept)
  local out, at = {}, 1
  for _, h in ipairs(r.hunks) do
    local upto = h.ac > 0 and h.a - 1 or h.a
    for i = at, upto do
      out[#out + 1] = r.current[i]
    end
    local keep = h.state == 'keep' or (h.state == nil and undecided_kept)
    if keep then
      for i = h.b, h.b + h.bc - 1 do
        out[#out + 1] = r.proposed[i]
      end
    else
      for i = upto + 1, upto + h.ac do
        out[#out + 1] = r.current[i]
      end
    end
    at = upto + h.ac + 1
  end
  for i = at, #r.current do
    out[#out + 1] = r.current[i]
  end
  return out
end

-- The buffer row (0-based) a hunk's label and added lines hang on, and
-- whether its added lines go above it (an insertion before line 1).
local function anchor(h)
  if h.ac > 0 then
    return h.a + h.ac - 2, false
  end
  if h.a == 0 then
    return 0, true
  end
  return h.a - 1, false
end

local function first_row(h)
  if h.ac > 0 then
    return h.a - 1
  end
  return (anchor(h))
end

local function undecided(r)
  local n = 0
  for _, h in ipairs(r.hunks) do
    n = n + (h.state == nil and 1 or 0)
  end
  return n
end

-- The overlay's colours (defaults: a colour scheme or the user may set
-- them): removed lines struck through in red, added lines as diff adds.
local function highlights()
  vim.cmd('highlight default AgentdInlineDelete ctermfg=red guifg=#e06c75 cterm=strikethrough gui=strikethrough')
  vim.cmd('highlight default link AgentdInlineAdd DiffAdd')
  vim.cmd('highlight default link AgentdInlineHint Comment')
end

local function render(r)
  highlights()
  api.nvim_buf_clear_namespace(r.buf, NS, 0, -1)
  local k = keys()
  local left = undecided(r)
  for i, h in ipairs(r.hunks) do
    local rejected = h.state == 'reject'
    if h.ac > 0 and not rejected then
      api.nvim_buf_set_extmark(r.buf, NS, h.a - 1, 0, { end_row = h.a - 1 + h.ac, end_col = 0, hl_group = 'AgentdInlineDelete',
        hl_eol = true, priority = 200 })
    end
    local row, above = anchor(h)
    if h.bc > 0 and not rejected then
      local lines = {}
      for j = h.b, h.b + h.bc - 1 do
        lines[#lines + 1] = { { r.proposed[j] ~= '' and r.proposed[j] or ' ', 'AgentdInlineAdd' } }
      end
      api.nvim_buf_set_extmark(r.buf, NS, row, 0, { virt_lines = lines, virt_lines_above = above })
    end
    local label
    if h.state == 'keep' then
      label = ('agentd: hunk %d/%d kept (%s rejects it)'):format(i, #r.hunks, k.reject)
    elseif rejected then
      label = ('agentd: hunk %d/%d rejected (%s keeps it)'):format(i, #r.hunks, k.keep)
    else
      label = ('agentd: hunk %d/%d · %s keep · %s reject'):format(i, #r.hunks, k.keep, k.reject)
    end
    if i == 1 or left == 0 then
      label = label .. (' · %s %s · %s reject all'):format(k.apply, left > 0 and 'keep the rest and write' or 'write',
        k.reject_all)
    end
    api.nvim_buf_set_extmark(r.buf, NS, first_row(h), 0, { virt_text = { { '  ' .. label, 'AgentdInlineHint' } },
      virt_text_pos = 'eol' })
  end
end

-- The hunk under the cursor, else the next one not decided, else the first.
local function hunk_at(r, row)
  for _, h in ipairs(r.hunks) do
    local top = first_row(h)
    local bottom = h.ac > 0 and h.a - 2 + h.ac or top
    if row >= top and row <= bottom then
      return h
    end
  end
  for _, h in ipairs(r.hunks) do
    if h.state == nil and first_row(h) >= row then
      return h
    end
  end
  for _, h in ipairs(r.hunks) do
    if h.state == nil then
      return h
    end
  end
end

-- Puts the cursor on the next hunk not decided (in the windows showing the buffer).
local function goto_next(r)
  for _, h in ipairs(r.hunks) do
    if h.state == nil then
      local win = api.nvim_get_current_win()
      if api.nvim_win_get_buf(win) == r.buf then
        api.nvim_win_set_cursor(win, { first_row(h) + 1, 0 })
      end
      return
    end
  end
end

local function clear(id)
  local r = reviews[id]
  if not r then
    return
  end
  reviews[id] = nil
  if not api.nvim_buf_is_valid(r.buf) then
    return
  end
  api.nvim_buf_clear_namespace(r.buf, NS, 0, -1)
  for lhs, saved in pairs(r.saved) do
    pcall(vim.keymap.del, 'n', lhs, { buffer = r.buf })
    if saved.lhs then
      pcall(vim.fn.mapset, 'n', false, saved)
    end
  end
end

--- Sends what the review leaves: the kept hunks (undecided ones too, with
--- keep_rest), or a rejection when nothing is left of the proposal.
---@param id string
---@param keep_rest boolean
function M.finish(id, keep_rest)
  local r = reviews[id]
  if not r then
    return
  end
  local pump = require('agentd.pump')
  local final = keep_rest and M.result(r, true) or r.current
  clear(id)
  if vim.deep_equal(final, r.current) then
    return pump.decide(id, 'reject_once', keep_rest and 'every change was rejected in the review' or nil)
  elseif vim.deep_equal(final, r.proposed) then
    return pump.decide(id, 'allow_once')
  end
  pump.decide(id, 'allow_once', nil, table.concat(final, '\n') .. '\n')
end

local function decide_hunk(id, state)
  local r = reviews[id]
  if not r then
    return
  end
  local row = api.nvim_win_get_buf(0) == r.buf and api.nvim_win_get_cursor(0)[1] - 1 or 0
  local h = hunk_at(r, row)
  if h then
    h.state = state
  end
  render(r)
  goto_next(r)
end

local function map(r, lhs, fn, desc)
  if not lhs or lhs == '' then
    return
  end
  local saved = vim.fn.maparg(lhs, 'n', false, true)
  r.saved[lhs] = (type(saved) == 'table' and saved.buffer == 1) and saved or {}
  vim.keymap.set('n', lhs, fn, { buffer = r.buf, nowait = true, silent = true, desc = 'agentd inline edit: ' .. desc })
end

local function read_file(path)
  local f = io.open(path, 'rb')
  if not f then
    return nil
  end
  local s = f:read('*a')
  f:close()
  return s
end

--- Whether request req is an inline edit's write, shown in its buffer (then
--- it is, and the float does not offer it).
---@param req table
---@return boolean
function M.claim(req)
  local ed = S.inline[req.runId]
  local files = type(req.diff) == 'table' and req.diff or {}
  if not ed or req.kind ~= 'confirm_write' or #files ~= 1 or files[1].path ~= ed.path or reviews[req.requestId] then
    return false
  end
  local buf = ed.buf
  if not api.nvim_buf_is_valid(buf) or vim.bo[buf].modified then
    return false -- its diff tab, as for any write
  end
  local current = api.nvim_buf_get_lines(buf, 0, -1, false)
  local f = files[1]
  local proposed = f.newText
  if type(proposed) ~= 'string' then
    local disk = read_file(S.root .. '/' .. ed.path) or ''
    proposed = udiff.apply(disk, f.diff or '')
  end
  if type(proposed) ~= 'string' then
    return false
  end
  local r = { id = req.requestId, buf = buf, current = current, proposed = udiff.lines(proposed), saved = {} }
  r.hunks = M.hunks(r.current, r.proposed)
  if #r.hunks == 0 then
    return false
  end
  reviews[req.requestId] = r
  S.requests:dismiss(req.requestId)
  render(r)
  local id = req.requestId
  local k = keys()
  map(r, k.keep, function()
    decide_hunk(id, 'keep')
  end, 'keep the hunk')
  map(r, k.reject, function()
    decide_hunk(id, 'reject')
  end, 'reject the hunk')
  map(r, k.apply, function()
    M.finish(id, true)
  end, 'write the kept hunks')
  map(r, k.reject_all, function()
    M.finish(id, false)
  end, 'reject the change')
  -- where the user is: the cursor on the first hunk; elsewhere, a word
  local win = api.nvim_get_current_win()
  if api.nvim_win_get_buf(win) == buf then
    goto_next(r)
  else
    ui.notify(('the change to %s waits in its buffer (%s keep · %s reject · %s write)'):format(ed.path, k.keep, k.reject,
      k.apply))
  end
  return true
end

--- The request was answered or resolved elsewhere: the overlay goes.
---@param id string
function M.on_resolved(id)
  clear(id)
end

--- Whether request id is being reviewed in its buffer.
function M.is_open(id)
  return reviews[id] ~= nil
end

--- :'<,'>AgentdEdit {instruction}: asks the agent to change lines line1-line2
--- of the current buffer; without an instruction, vim.ui.input asks for one.
---@param opts {line1: integer, line2: integer, instruction: string|nil}
function M.start(opts)
  local documents = require('agentd.documents')
  require('agentd.lifecycle').root()
  local buf = api.nvim_get_current_buf()
  local rel = documents.relative(buf)
  if not rel then
    return ui.notify('an inline edit works on a file of the workspace', vim.log.levels.WARN)
  end
  if vim.bo[buf].modified then
    return ui.notify('save the file first (:w): the agent changes what is on disk', vim.log.levels.WARN)
  end
  local instruction = opts.instruction and vim.trim(opts.instruction) or ''
  if instruction == '' then
    return vim.ui.input({ prompt = ('agentd: change lines %d-%d of %s: '):format(opts.line1, opts.line2, rel) },
      function(text)
        if text and vim.trim(text) ~= '' then
          M.start({ line1 = opts.line1, line2 = opts.line2, instruction = text })
        end
      end)
  end
  local lines = api.nvim_buf_get_lines(buf, opts.line1 - 1, opts.line2, false)
  local ed = { buf = buf, path = rel, line1 = opts.line1, line2 = opts.line2 }
  require('agentd').run({
    prompt = instruction .. ('\n\n(An inline edit: change only the selected lines of %s, with edit_file.)'):format(rel),
    new_session = true,
    inline = ed,
    approval_policy = 'ask', -- the change is shown before it is written, whatever the daemon's default
    context = { files = { rel }, selection = { path = rel, startLine = opts.line1, endLine = opts.line2,
      text = table.concat(lines, '\n') } },
    on_started = function()
      ui.notify(('editing %s, lines %d-%d: the change will show here'):format(rel, opts.line1, opts.line2))
    end,
  })
end

return M
