-- The request float: one open input request in a small window at the
-- bottom right, and, when text is wanted (a question's answer, a choice's
-- "other", a reason for a rejection), a one-line answer field under it.
--
-- It never blocks the editor: it opens without taking the cursor when a
-- request arrives (:AgentdPending or <C-w>w goes there), and while it is
-- up every command works, :AgentdCancel included. Its keys come from the
-- kind table (agentd.kinds). Closing it answers nothing: the request stays
-- open.
local config = require('agentd.config')
local kinds = require('agentd.kinds')
local S = require('agentd.state')

local api = vim.api
local M = {}

local NS = api.nvim_create_namespace('agentd.float')

---@class agentd.FloatState
---@field id string|nil          the request shown
---@field mode 'view'|'text'|'reason'|'other'
---@field back 'view'|'close'    where <Esc> in the answer field goes
---@field card_win integer|nil
---@field card_buf integer|nil
---@field entry_win integer|nil
---@field entry_buf integer|nil
---@field return_win integer|nil where the cursor goes back to
---@field option_at table<integer, integer> card line -> option index (choices)
---@field selected table<string, boolean> toggled options (multiple choice)
local F = { mode = 'view', back = 'close', option_at = {}, selected = {} }
M._state = F

local function pump()
  return require('agentd.pump')
end

local function valid_win(w)
  return w and api.nvim_win_is_valid(w)
end

--- Whether the float is on screen (any tab).
function M.is_open()
  return valid_win(F.card_win)
end

--- The request shown, or nil.
function M.current()
  return M.is_open() and F.id or nil
end

--- Whether the cursor is in the float.
function M.has_focus()
  local cur = api.nvim_get_current_win()
  return cur == F.card_win or cur == F.entry_win
end

-- Wraps text to width columns; a paragraph's lines keep its indent (and
-- a bullet's "· " hangs), or take hang when it is given.
local function wrap(text, width, hang_as)
  local out = {}
  for _, para in ipairs(vim.split(text, '\n', { plain = true })) do
    local indent = para:match('^(%s*)') or ''
    local hang = hang_as or (indent .. ((para:match('^%s*· ') or para:match('^%s*%- ')) and '  ' or ''))
    local lead, line = indent, ''
    for word in para:gmatch('%S+') do
      if line == '' then
        line = word
      elseif vim.fn.strdisplaywidth(lead .. line .. ' ' .. word) <= width then
        line = line .. ' ' .. word
      else
        out[#out + 1] = lead .. line
        lead, line = hang, word
      end
    end
    out[#out + 1] = (line ~= '' and lead .. line or '')
  end
  return out
end

-- The last screen column the float may use: left of the chat when the
-- chat is a split on the right (the float must not hide what streams in).
local function right_edge()
  local edge = vim.o.columns - 1
  local twin = require('agentd.chat').wins()
  if twin then
    local col = api.nvim_win_get_position(twin)[2]
    if col > 0 and col - 1 >= config.values.requests.width / 2 then
      edge = col - 1
    end
  end
  return edge
end

local function width()
  return math.max(20, math.min(config.values.requests.width, right_edge() - 3))
end

-- The card's lines and highlights for request o in the current mode.
local function card_content(o)
  local req = o.req
  local spec = kinds.of(req)
  local w = width() - 2
  local lines, hl = {}, {}
  local list = S.requests:list()
  local pos = 1
  for i, x in ipairs(list) do
    if x.req.requestId == req.requestId then
      pos = i
    end
  end
  lines[1] = ('agentd · %s · %d of %d open'):format(spec and spec.label or tostring(req.kind), pos, #list)
  hl[#hl + 1] = { 0, 'Title' }
  local who = kinds.who(req)
  if who then
    -- a subagent of the run asks, not the run's own agent
    lines[#lines + 1] = who .. ' asks:'
    hl[#hl + 1] = { #lines - 1, 'Special' }
  end
  for _, l in ipairs(wrap(spec and spec.summary(req) or tostring(req.message), w)) do
    lines[#lines + 1] = l
  end
  for _, d in ipairs(spec and spec.details(req) or {}) do
    -- wrapped here, so that the card's height counts every screen line
    -- (a command's rule says what a grant stores and how it runs)
    local warn = kinds.is_warning(d)
    for _, l in ipairs(vim.fn.strdisplaywidth(d) > w and wrap(d, w) or { d }) do
      lines[#lines + 1] = l
      if warn then
        hl[#hl + 1] = { #lines - 1, 'WarningMsg' }
      end
    end
  end
  F.option_at = {}
  if kinds.picks(req) then
    for i, opt in ipairs(kinds.options(req)) do
      local mark = req.multiple and (F.selected[opt.id] and '[x] ' or '[ ] ') or ''
      local desc = opt.description ~= '' and (' — ' .. opt.description) or ''
      -- wrapped here too (the card's height counts screen lines), each
      -- line of it picks the option
      local text = ('  %d %s%s%s'):format(i, mark, opt.label, desc)
      for _, l in ipairs(wrap(text, w, (' '):rep(#tostring(i) + 3))) do
        lines[#lines + 1] = l
        F.option_at[#lines] = i
      end
    end
  end
  lines[#lines + 1] = ''
  local k = config.values.keymaps.request
  local hint
  if F.mode == 'text' then
    hint = ('Type your answer below: Enter sends · Esc %s'):format(F.back == 'view' and 'goes back' or 'answers later')
  elseif F.mode == 'other' then
    hint = 'Type your own answer below: Enter sends · Esc goes back'
  elseif F.mode == 'reason' then
    hint = 'Why reject? Type it below (optional): Enter rejects · Esc goes back without rejecting'
  elseif F.mode == 'with' then
    local input = kinds.input_with(req, F.option) or {}
    local label = type(input.label) == 'string' and input.label ~= '' and input.label or 'Your text'
    local option = F.option or '?'
    for _, o in ipairs(kinds.options(req)) do
      if o.id == F.option then
        option = o.label
      end
    end
    hint = ('%s (with "%s"%s): type it below · Enter sends · Esc goes back'):format(label, option,
      input.required and '' or ', optional')
  end
  local hint_lines
  if hint then
    hint_lines = wrap(hint, w)
  elseif not M.has_focus() then
    -- the keys work once the cursor is here: say how to get here
    hint_lines = wrap(':AgentdPending (or <C-w>w) to answer here, or answer on its lines in the chat', w)
  else
    local parts = kinds.hint_parts(req, 'card')
    if #list > 1 and k.pick then
      parts[#parts + 1] = k.pick .. ' other requests'
    end
    hint_lines = kinds.join(parts, w)
  end
  for _, l in ipairs(hint_lines) do
    lines[#lines + 1] = l
    hl[#hl + 1] = { #lines - 1, 'Comment' }
  end
  return lines, hl
end

local function scratch(modifiable)
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  vim.bo[buf].modifiable = modifiable
  return buf
end

local function set_lines(buf, lines, hl)
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  api.nvim_buf_clear_namespace(buf, NS, 0, -1)
  for _, h in ipairs(hl or {}) do
    api.nvim_buf_add_highlight(buf, NS, h[2], h[1], 0, -1)
  end
end

-- Places the card (and the answer field under it) at the bottom right.
local function layout(card_h)
  local w = width()
  local entry = valid_win(F.entry_win)
  local max_h = math.max(3, vim.o.lines - vim.o.cmdheight - 8)
  card_h = math.min(card_h, max_h)
  local total = card_h + 2 + (entry and 3 or 0)
  local bottom = vim.o.lines - vim.o.cmdheight - 1 -- above the last statusline
  local row = math.max(0, bottom - total - 1)
  local col = math.max(0, right_edge() - w - 2)
  local card = { relative = 'editor', row = row, col = col, width = w, height = card_h }
  local field = { relative = 'editor', row = row + card_h + 2, col = col, width = w, height = 1 }
  return card, field
end

local function win_opts(win)
  vim.wo[win].wrap = true
  vim.wo[win].linebreak = true
  vim.wo[win].winhighlight = 'NormalFloat:NormalFloat,FloatBorder:FloatBorder'
end

local close_entry

local function map(buf, lhs, fn, modes)
  if lhs and lhs ~= '' then
    vim.keymap.set(modes or 'n', lhs, fn, { buffer = buf, nowait = true, silent = true })
  end
end

local function card_keys(buf)
  local k = config.values.keymaps.request
  local function with_req(fn)
    return function()
      local o = F.id and S.requests:get(F.id)
      if o then
        fn(o.req)
      end
    end
  end
  for _, name in ipairs(require('agentd.kinds').DECISION_NAMES) do
    map(buf, k[name], with_req(function(req)
      for _, a in ipairs(kinds.decisions(req)) do
        if a.name == name and kinds.of(req).confirm then
          if a.reason then
            return M.show(req.requestId, { focus = true, mode = 'reason', back = 'view' })
          end
          return pump().decide(req.requestId, a.decision)
        end
      end
    end))
  end
  map(buf, k.open, with_req(function(req)
    local line = api.nvim_win_get_cursor(0)[1]
    if kinds.picks(req) and F.option_at[line] then
      return M.choose(req, F.option_at[line])
    end
    pump().open(req.requestId, { back = 'view' })
  end))
  for i = 1, 9 do
    map(buf, tostring(i), with_req(function(req)
      if kinds.picks(req) and i <= #kinds.options(req) then
        M.choose(req, i)
      end
    end))
  end
  map(buf, k.other, with_req(function(req)
    if kinds.allows_other(req) then
      M.show(req.requestId, { focus = true, mode = 'other', back = 'view' })
    end
  end))
  map(buf, k.send, with_req(function(req)
    if req.kind == 'choice' and req.multiple then
      M.send_selected(req)
    end
  end))
  map(buf, k.close, function()
    M.dismiss()
  end)
  map(buf, '<Esc>', function()
    M.dismiss()
  end)
  map(buf, k.pick, function()
    pump().pick()
  end)
end

--- Picks option i of a choice (toggles it when several answers are allowed).
function M.choose(req, i)
  local opt = kinds.options(req)[i]
  if not opt then
    return
  end
  if req.multiple then
    F.selected[opt.id] = not F.selected[opt.id] or nil
    return M.render()
  end
  pump().pick_option(req.requestId, opt.id, 'view')
end

function M.send_selected(req)
  local answers = {}
  for _, opt in ipairs(kinds.options(req)) do
    if F.selected[opt.id] then
      answers[#answers + 1] = opt.id
    end
  end
  if #answers == 0 then
    return require('agentd.ui').notify('nothing chosen: toggle options with their numbers first')
  end
  pump().reply(req.requestId, { answers = answers })
end

local function submit_entry()
  local o = F.id and S.requests:get(F.id)
  if not (o and valid_win(F.entry_win)) then
    return
  end
  local text = table.concat(api.nvim_buf_get_lines(F.entry_buf, 0, -1, false), '\n')
  local mode = F.mode
  vim.cmd('stopinsert')
  if mode == 'reason' then
    return pump().decide(o.req.requestId, 'reject_once', text ~= '' and text or nil)
  end
  if mode == 'with' then
    local input = kinds.input_with(o.req, F.option) or {}
    if text == '' and input.required then
      return require('agentd.ui').notify('this answer needs the text; Esc goes back')
    end
    return pump().answer(o.req.requestId, F.option, text ~= '' and text or nil)
  end
  if text == '' then
    return require('agentd.ui').notify('an empty answer is not sent; Esc leaves the request open')
  end
  if kinds.is_generic(o.req) then
    return pump().answer(o.req.requestId, nil, text)
  end
  pump().reply(o.req.requestId, { text = text })
end

local function escape_entry()
  vim.cmd('stopinsert')
  if F.back == 'view' then
    F.mode = 'view'
    close_entry()
    M.render()
    if valid_win(F.card_win) then
      api.nvim_set_current_win(F.card_win)
    end
  else
    M.dismiss()
  end
end

local function open_entry(card_h)
  local buf = scratch(true)
  F.entry_buf = buf
  local _, field = layout(card_h)
  field.style, field.border, field.focusable, field.zindex = 'minimal', 'rounded', true, 51
  F.entry_win = api.nvim_open_win(buf, true, field)
  win_opts(F.entry_win)
  if F.mode == 'text' then
    local o = S.requests:get(F.id)
    local default = o and o.req.default
    if type(default) == 'string' and default ~= '' then
      api.nvim_buf_set_lines(buf, 0, -1, false, { default })
    end
  end
  local k = config.values.keymaps.request
  map(buf, '<CR>', submit_entry, { 'i', 'n' })
  map(buf, k.send, submit_entry, { 'i', 'n' })
  map(buf, '<Esc>', escape_entry, { 'i', 'n' })
  map(buf, k.close, escape_entry, 'n')
  vim.cmd('startinsert!')
end

function close_entry()
  local w, b = F.entry_win, F.entry_buf
  F.entry_win, F.entry_buf = nil, nil
  if valid_win(w) then
    pcall(api.nvim_win_close, w, true)
  end
  if b and api.nvim_buf_is_valid(b) then
    pcall(api.nvim_buf_delete, b, { force = true })
  end
end

local function close_card()
  local w = F.card_win
  F.card_win, F.card_buf = nil, nil
  if valid_win(w) then
    pcall(api.nvim_win_close, w, true)
  end
end

--- Redraws the float for the request it shows (counts, toggles).
function M.render()
  local o = F.id and S.requests:get(F.id)
  if not (o and valid_win(F.card_win)) then
    return
  end
  local lines, hl = card_content(o)
  set_lines(F.card_buf, lines, hl)
  local card, field = layout(#lines)
  api.nvim_win_set_config(F.card_win, card)
  if valid_win(F.entry_win) then
    api.nvim_win_set_config(F.entry_win, field)
  end
end

--- Shows request id. opts: focus (move the cursor there), mode ('view',
--- 'text', 'reason', 'other', 'with': the text asked with option), back
--- ('view' or 'close': where Esc in the answer field goes).
---@param id string
---@param opts {focus: boolean|nil, mode: string|nil, back: string|nil, option: string|nil}|nil
function M.show(id, opts)
  opts = opts or {}
  local o = S.requests:get(id)
  if not o then
    return
  end
  local cur = api.nvim_get_current_win()
  if not M.has_focus() and opts.focus then
    F.return_win = cur
  end
  if F.id ~= id then
    F.selected = {}
  end
  if cur == F.entry_win then
    vim.cmd('stopinsert') -- the answer field goes away under the cursor
  end
  close_entry()
  F.id = id
  F.mode = opts.mode or 'view'
  F.back = opts.back or 'close'
  F.option = opts.option
  if not valid_win(F.card_win) or api.nvim_win_get_tabpage(F.card_win) ~= api.nvim_get_current_tabpage() then
    close_card()
    F.card_buf = scratch(false)
    vim.bo[F.card_buf].filetype = 'agentd_request'
    card_keys(F.card_buf)
    local lines = card_content(o)
    local card = layout(#lines)
    card.style, card.border, card.focusable, card.zindex = 'minimal', 'rounded', true, 50
    F.card_win = api.nvim_open_win(F.card_buf, false, card)
    win_opts(F.card_win)
    local win = F.card_win
    -- the hint depends on where the cursor is
    api.nvim_create_autocmd({ 'WinEnter', 'WinLeave' }, {
      buffer = F.card_buf,
      callback = function()
        vim.schedule(M.render)
      end,
    })
    api.nvim_create_autocmd('WinClosed', {
      pattern = tostring(win),
      once = true,
      callback = function()
        if F.card_win == win then
          F.card_win, F.card_buf = nil, nil
          vim.schedule(close_entry)
        end
      end,
    })
  end
  if F.mode ~= 'view' then
    M.render()
    open_entry(#api.nvim_buf_get_lines(F.card_buf, 0, -1, false))
  elseif opts.focus then
    api.nvim_set_current_win(F.card_win)
    api.nvim_win_set_cursor(F.card_win, { 1, 0 })
  end
  M.render()
end

--- Closes the float; the cursor goes back where it was.
function M.close()
  local had_focus = M.has_focus()
  close_entry()
  close_card()
  F.id, F.mode = nil, 'view'
  if had_focus then
    vim.cmd('stopinsert')
    if valid_win(F.return_win) then
      api.nvim_set_current_win(F.return_win)
    end
  end
end

--- Closes the float without answering: the request stays open, and the
--- float stops offering it by itself.
function M.dismiss()
  if F.id then
    S.requests:dismiss(F.id)
  end
  M.close()
  require('agentd.ui').redraw_status()
end

--- A request arrived (or came back): when the float is free, show the
--- oldest request that waits, without moving the cursor.
function M.offer()
  if not config.values.requests.float then
    return
  end
  if M.is_open() and F.id and S.requests:get(F.id) then
    return M.render()
  end
  local nxt = S.requests:next()
  if nxt then
    M.show(nxt.req.requestId, { focus = false })
  end
end

--- Request id was answered or resolved: the float moves on to the next
--- request that waits (keeping the cursor when it had it) or closes.
function M.on_resolved(id)
  if F.id ~= id then
    return M.render()
  end
  local focused = M.has_focus()
  local nxt = S.requests:next()
  if nxt and (focused or config.values.requests.float) then
    M.show(nxt.req.requestId, { focus = focused })
  else
    M.close()
  end
end

return M
