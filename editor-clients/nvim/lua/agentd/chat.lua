-- The chat: the session's transcript ("agentd chat", read-only, rendered
-- by agentd.render) with a compose window under it ("agentd compose")
-- where the user writes the next prompt over as many lines as needed and
-- sends it with a key; the run it starts continues the same session and
-- shows up in place. Open requests are answered on the transcript with the
-- request keys (agentd.kinds) on their lines.
--
-- Several conversations are open at once in views of their own (one per
-- tab page, :AgentdChatTab): each view has its transcript and compose
-- buffers and its session. The view the cursor was in last is the current
-- one, and S.session is its session (every command acts on it); the others
-- keep theirs and render them. Their runs all go on side by side.
local config = require('agentd.config')
local render = require('agentd.render')
local S = require('agentd.state')

local api = vim.api
local M = {}

-- Plain names: a tab line shortens the directories of a name, and would
-- show a URL-like name as "a//chat".
M.TRANSCRIPT = 'agentd chat'
M.COMPOSE = 'agentd compose'

---@class agentd.ChatView
---@field n integer             its number (1: the first chat)
---@field tbuf integer|nil      the transcript buffer
---@field cbuf integer|nil      the compose buffer
---@field session string|nil    its session while it is not the current view (S.session is the current's)
---@field new_chat boolean      likewise, S.new_chat
---@field marks table<integer, {id: string, option: integer|nil}> transcript line -> request
---@field toggles table<integer, table> transcript line -> an item the open key folds or unfolds
---@field runs table<integer, string> transcript line -> the run it belongs to
---@field changes table<integer, string> transcript line -> the checkpoint of the change on it
---@field locations table<integer, table> transcript line -> a place the open key opens
---@field follow boolean

---@type agentd.ChatView[]
local views = {}

local function new_view()
  local v = { n = #views + 1, marks = {}, toggles = {}, runs = {}, changes = {}, locations = {}, stops = {}, follow = false,
    new_chat = false }
  views[#views + 1] = v
  return v
end

--- The current view (the one the cursor was in last).
local C = new_view()
local pending_render = false

local NS = api.nvim_create_namespace('agentd.chat')

local function valid(buf)
  return buf and api.nvim_buf_is_valid(buf)
end

local function pump()
  return require('agentd.pump')
end

local function agentd()
  return require('agentd')
end

local function map(buf, modes, lhs, fn, desc)
  if lhs and lhs ~= '' then
    vim.keymap.set(modes, lhs, fn, { buffer = buf, nowait = true, silent = true, desc = 'agentd: ' .. desc })
  end
end

local function named_scratch(name, modifiable)
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = 'nofile' -- before the name: a nofile name stays as given
  if not pcall(api.nvim_buf_set_name, buf, name) then
    api.nvim_buf_set_name(buf, name .. ' ' .. buf)
  end
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  -- Markdown's syntax marks an underscore inside a word as an error
  -- (markdownError): the chat names files and tools that have them
  api.nvim_create_autocmd('Syntax', {
    buffer = buf,
    callback = function()
      vim.cmd('silent! syntax clear markdownError')
    end,
  })
  vim.bo[buf].filetype = 'markdown'
  vim.bo[buf].modifiable = modifiable
  return buf
end

--- The request (and option) on the transcript's cursor line.
function M.request_at_cursor()
  local line = api.nvim_win_get_cursor(0)[1]
  local m = C.marks[line]
  if m and S.requests:get(m.id) then
    return m
  end
end

-- Moves the cursor to the next (dir 1) or previous (-1) open request.
local function jump_request(dir)
  local cur = api.nvim_win_get_cursor(0)[1]
  local n = api.nvim_buf_line_count(0)
  local i = cur + dir
  while i >= 1 and i <= n do
    local m = C.marks[i]
    if m and (not C.marks[i - 1] or C.marks[i - 1].id ~= m.id) then
      return api.nvim_win_set_cursor(0, { i, 0 })
    end
    i = i + dir
  end
end

local function transcript_keys(buf)
  local km = config.values.keymaps.chat
  map(buf, 'n', km.close, M.close, 'close the chat')
  map(buf, 'n', km.cancel, function()
    agentd().cancel()
  end, 'cancel the run')
  map(buf, 'n', km.pending, function()
    pump().pick()
  end, 'open requests')
  map(buf, 'n', km.compose, function()
    M.focus_compose(true)
  end, 'write a prompt')
  map(buf, 'n', km.next_request, function()
    jump_request(1)
  end, 'next open request')
  map(buf, 'n', km.prev_request, function()
    jump_request(-1)
  end, 'previous open request')
  map(buf, 'n', km.resume, function()
    agentd().resume()
  end, 'resume the paused run')
  -- undo: the change on the cursor's line, the turn it is in, or a rewind
  -- to before that turn
  map(buf, 'n', km.undo_change, function()
    local line = api.nvim_win_get_cursor(0)[1]
    local id = C.changes[line]
    if id then
      return require('agentd.undo').undo_change(id)
    end
    require('agentd.ui').notify(('no change on this line: %s on a line under a change (↶ c1 …), %s on a turn')
      :format(km.undo_change, km.undo_turn or ''))
  end, 'undo the change under the cursor')
  map(buf, 'n', km.review_change, function()
    local id = C.changes[api.nvim_win_get_cursor(0)[1]]
    if id and S.session then
      return require('agentd.review').open(S.session, id)
    end
    require('agentd.ui').notify('no change on this line: put the cursor on a change (↶ c1 …)')
  end, 'review the change under the cursor')
  map(buf, 'n', km.undo_turn, function()
    local run = C.runs[api.nvim_win_get_cursor(0)[1]]
    if run then
      return require('agentd.undo').undo_turn(run)
    end
    require('agentd.ui').notify('no turn on this line: put the cursor on a run')
  end, 'undo the turn under the cursor')
  map(buf, 'n', km.rewind, function()
    local run = C.runs[api.nvim_win_get_cursor(0)[1]]
    if run then
      return require('agentd.undo').rewind(run)
    end
    require('agentd.ui').notify('no turn on this line: put the cursor on the run to rewind to before')
  end, 'rewind the conversation to before the turn under the cursor')
  map(buf, 'n', km.drop_queued, function()
    local line = api.nvim_win_get_cursor(0)[1]
    local stop = C.stops[line]
    if stop and stop.run then
      -- a subagent at work: it alone stops, the run goes on
      return agentd().cancel(stop.run)
    elseif stop and stop.process then
      return require('agentd.processes').stop(stop.process)
    end
    local id = C.runs[line]
    local run = id and S.runs:get(id)
    if run and run.state == 'queued' then
      return agentd().cancel(id)
    end
    require('agentd.ui').notify('nothing to stop on this line (a queued run, a subagent at work, a background process)')
  end, 'cancel the queued run, stop the subagent or the background process under the cursor')
  local k = config.values.keymaps.request
  map(buf, 'n', k.open, function()
    local line = api.nvim_win_get_cursor(0)[1]
    local toggle = C.toggles[line]
    if toggle then
      -- the model's reasoning, a long prompt, diagnostics: unfold, or fold back
      toggle.expanded = not toggle.expanded or nil
      return M.render_now()
    end
    local loc = C.locations[line]
    if loc then
      return M.open_location(loc)
    end
    local m = M.request_at_cursor()
    if not m then
      return
    end
    if m.option then
      return pump().pick_option(m.id, require('agentd.kinds').options(S.requests:get(m.id).req)[m.option].id)
    end
    pump().open(m.id, { back = 'close' })
  end, 'answer the request under the cursor')
  map(buf, 'n', k.other, function()
    local m = M.request_at_cursor()
    local o = m and S.requests:get(m.id)
    if o and require('agentd.kinds').allows_other(o.req) then
      require('agentd.float').show(m.id, { focus = true, mode = 'other', back = 'close' })
    end
  end, 'answer a choice in your own words')
  local kinds = require('agentd.kinds')
  for _, name in ipairs(require('agentd.kinds').DECISION_NAMES) do
    map(buf, 'n', k[name], function()
      local m = M.request_at_cursor()
      local o = m and S.requests:get(m.id)
      if not (o and kinds.of(o.req) and kinds.of(o.req).confirm) then
        return
      end
      for _, a in ipairs(kinds.decisions(o.req)) do
        if a.name == name then
          if a.reason then
            return require('agentd.float').show(m.id, { focus = true, mode = 'reason', back = 'close' })
          end
          return pump().decide(m.id, a.decision)
        end
      end
    end, (name:gsub('_', ' ')))
  end
end

local function compose_keys(buf)
  local km = config.values.keymaps.compose
  map(buf, { 'n', 'i' }, km.send, M.send, 'send the prompt (a steer while the run works)')
  map(buf, 'n', km.send_normal, M.send, 'send the prompt (a steer while the run works)')
  map(buf, { 'n', 'i' }, km.queue, function()
    M.send({ queue = true })
  end, 'queue the prompt as the next run')
  map(buf, 'n', km.close, M.close, 'close the chat')
  map(buf, 'n', km.cancel, function()
    agentd().cancel()
  end, 'cancel the run')
end

-- Makes v the current view: S.session and S.new_chat become its, the
-- previous view keeps its own.
local function switch(v)
  if v == C then
    return
  end
  C.session, C.new_chat = S.session, S.new_chat
  C = v
  S.session, S.new_chat = v.session, v.new_chat or false
  require('agentd.ui').redraw_status()
end

-- A view's buffer entered, or a tab page showing one: that view becomes
-- the current one.
local tab_group
local function follow_focus(buf, v)
  api.nvim_create_autocmd('BufEnter', {
    buffer = buf,
    callback = function()
      switch(v)
    end,
  })
  if not tab_group then
    tab_group = api.nvim_create_augroup('agentd.chat.tabs', { clear = true })
    api.nvim_create_autocmd('TabEnter', {
      group = tab_group,
      callback = function()
        for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
          local b = api.nvim_win_get_buf(w)
          for _, cv in ipairs(views) do
            if b == cv.tbuf or b == cv.cbuf then
              return switch(cv)
            end
          end
        end
      end,
    })
  end
end

local function suffix(v)
  return v.n == 1 and '' or (' ' .. v.n)
end

function M.transcript_buf()
  if not valid(C.tbuf) then
    C.tbuf = named_scratch(M.TRANSCRIPT .. suffix(C), false)
    transcript_keys(C.tbuf)
    follow_focus(C.tbuf, C)
  end
  return C.tbuf
end

function M.compose_buf()
  if not valid(C.cbuf) then
    C.cbuf = named_scratch(M.COMPOSE .. suffix(C), true)
    compose_keys(C.cbuf)
    require('agentd.commands').attach(C.cbuf)
    follow_focus(C.cbuf, C)
  end
  return C.cbuf
end

local function win_of(buf)
  if not valid(buf) then
    return nil
  end
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    if api.nvim_win_get_buf(w) == buf then
      return w
    end
  end
end

--- The transcript's and the compose window's ids in this tab (or nil).
function M.wins()
  return win_of(C.tbuf), win_of(C.cbuf)
end

local function esc(s)
  return (s:gsub('%%', '%%%%'))
end

local function compose_status()
  local km = config.values.keymaps.compose
  local s
  if agentd().working_run() then
    -- the run goes on: what is sent now steers it
    s = (' compose · %s steers the run · %s queues a follow-up · %s close'):format(km.send, km.queue, km.close)
  else
    s = (' compose · %s send · %s (Normal) send · %s close'):format(km.send, km.send_normal, km.close)
  end
  local ctx = S.draft_context
  if ctx and ctx.selection then
    s = s .. (' · with %s, lines %d-%d'):format(ctx.selection.path, ctx.selection.startLine, ctx.selection.endLine)
  end
  local n = S.draft_images and #S.draft_images or 0
  if n > 0 then
    s = s .. (' · %d pasted image%s'):format(n, n == 1 and '' or 's')
  end
  return esc(s)
end

local function open_compose_under(twin)
  api.nvim_set_current_win(twin)
  vim.cmd('belowright sbuffer ' .. M.compose_buf())
  local cwin = api.nvim_get_current_win()
  vim.cmd('resize ' .. config.values.conversation.compose_height)
  vim.wo[cwin].winfixheight = true
  vim.wo[cwin].wrap = true
  vim.wo[cwin].number = false
  vim.wo[cwin].statusline = compose_status()
  return cwin
end

--- Opens the chat in this tab (unless shown). opts.focus: 'compose'
--- (Insert mode), 'transcript', or nil (the cursor stays).
---@param opts {focus: string|nil}|nil
function M.open(opts)
  opts = opts or {}
  local cur = api.nvim_get_current_win()
  local twin, cwin = M.wins()
  if not twin then
    local c = config.values.conversation
    local buf = M.transcript_buf()
    local pos = c.position
    if pos == 'tab' then
      vim.cmd('tab sbuffer ' .. buf)
    elseif pos == 'left' then
      vim.cmd('topleft vertical sbuffer ' .. buf)
      vim.cmd('vertical resize ' .. c.width)
    elseif pos == 'below' then
      vim.cmd('botright sbuffer ' .. buf)
      vim.cmd('resize ' .. c.height)
    elseif pos == 'above' then
      vim.cmd('topleft sbuffer ' .. buf)
      vim.cmd('resize ' .. c.height)
    else
      vim.cmd('botright vertical sbuffer ' .. buf)
      vim.cmd('vertical resize ' .. c.width)
    end
    twin = api.nvim_get_current_win()
    vim.wo[twin].wrap = true
    vim.wo[twin].linebreak = true
    vim.wo[twin].breakindent = true
    vim.wo[twin].number = false
    vim.wo[twin].winfixwidth = pos == 'left' or pos == 'right' or pos == nil
    cwin = nil
  end
  if not cwin then
    cwin = open_compose_under(twin)
  end
  M.render_now()
  if opts.focus == 'compose' then
    api.nvim_set_current_win(cwin)
    vim.cmd('startinsert!')
  elseif opts.focus == 'transcript' then
    api.nvim_set_current_win(twin)
  elseif api.nvim_win_is_valid(cur) then
    api.nvim_set_current_win(cur)
  end
end

--- Puts the cursor in the compose window (opening the chat if needed).
function M.focus_compose(insert)
  local _, cwin = M.wins()
  if not cwin then
    return M.open({ focus = insert and 'compose' or nil })
  end
  api.nvim_set_current_win(cwin)
  if insert then
    vim.cmd('startinsert!')
  end
end

function M.close()
  local twin, cwin = M.wins()
  for _, w in ipairs({ cwin, twin }) do
    if w and api.nvim_win_is_valid(w) and #api.nvim_list_wins() > 1 then
      api.nvim_win_close(w, false)
    end
  end
end

function M.toggle()
  if M.wins() then
    M.close()
  else
    M.open({ focus = 'compose' })
  end
end

--- Sends the compose window's text: while the conversation's run works, as
--- its steer (opts.queue: as the next run, queued after it), else as the
--- next prompt; the text stays there until the daemon accepted it.
---@param opts {queue: boolean|nil}|nil
function M.send(opts)
  local buf = M.compose_buf()
  local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
  local text = vim.trim(table.concat(lines, '\n'))
  if text == '' then
    return require('agentd.ui').notify('nothing to send: write a prompt first')
  end
  vim.cmd('stopinsert')
  agentd().run({
    prompt = text,
    from_chat = true,
    steer = not (opts and opts.queue),
    on_started = function()
      if valid(buf) and vim.deep_equal(api.nvim_buf_get_lines(buf, 0, -1, false), lines) then
        api.nvim_buf_set_lines(buf, 0, -1, false, {})
      end
    end,
  })
end

--- Puts a prompt that could not be sent into the compose window (under
--- what is already there), and opens the chat, so that nothing typed is
--- lost. Returns true.
---@param prompt string
---@return boolean
function M.keep_prompt(prompt)
  local buf = M.compose_buf()
  local lines = vim.split(prompt, '\n', { plain = true })
  local have = api.nvim_buf_get_lines(buf, 0, -1, false)
  if vim.trim(table.concat(have, '\n')) ~= '' then
    table.insert(lines, 1, '')
    api.nvim_buf_set_lines(buf, -1, -1, false, lines)
  else
    api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  end
  M.open()
  return true
end

-- What view v shows of session sid.
local function view(sid)
  local title, loading
  if sid then
    local info = S.session_info(sid)
    title = info.title or ('session ' .. sid)
    loading = info.loading
  end
  return {
    session = sid,
    title = title,
    settings = sid and (S.session_info(sid).settings or {}) or require('agentd.settings').current(),
    loading = loading,
    runs = sid and S.runs:of_session(sid) or {},
    checkpoint = function(id)
      local c = sid and S.checkpoints[sid]
      return c and c.by_id[id]
    end,
    warning = M.sandbox_warning(),
    compactions = sid and S.session_info(sid).compactions or nil,
    meter = sid and require('agentd.sessions').meter(S.session_info(sid).context) or nil,
    processes = require('agentd.processes').list(sid),
  }
end

--- The daemon's sandbox summary when it cannot confine commands (initialize's
--- capabilities.experimental.agentd.sandbox), else nil.
---@return string|nil
function M.sandbox_warning()
  local caps = type(S.server) == 'table' and type(S.server.capabilities) == 'table' and S.server.capabilities or {}
  local x = type(caps.experimental) == 'table' and type(caps.experimental.agentd) == 'table' and caps.experimental.agentd or {}
  local sb = type(x.sandbox) == 'table' and x.sandbox or nil
  if sb and sb.active == false and type(sb.summary) == 'string' and sb.summary ~= '' then
    return sb.summary
  end
end

-- The transcript's status line: the state, the model and mode, the title
-- last, cut to what the window has room for.
local function transcript_status(v, width, n)
  local runs = v.runs
  local last = runs[#runs]
  local parts = { ' agentd chat' .. (n > 1 and (' ' .. n) or '') }
  if last then
    parts[#parts + 1] = render.state_word(last.state)
  elseif not v.session then
    parts[#parts + 1] = 'new'
  end
  local n = S.requests:count()
  if n > 0 then
    parts[#parts + 1] = n .. ' open request' .. (n == 1 and '' or 's')
  end
  local set = v.settings or {}
  local function val(x)
    return type(x) == 'string' and x ~= '' and x or nil
  end
  parts[#parts + 1] = (val(set.model) or 'default model') .. (val(set.reasoningEffort) and (' (' .. set.reasoningEffort .. ')') or '')
  parts[#parts + 1] = val(set.approvalPolicy) or 'default mode'
  local meter = v.session and require('agentd.sessions').meter_short(S.session_info(v.session).context)
  if meter then
    parts[#parts + 1] = meter
  end
  local procs = v.session and require('agentd.processes').running(v.session) or 0
  if procs > 0 then
    parts[#parts + 1] = ('⚙ %d running'):format(procs)
  end
  local s = table.concat(parts, ' · ')
  if v.title then
    local title = (v.title:gsub('\n.*', ' …'))
    local room = width - vim.fn.strdisplaywidth(s) - 4
    if vim.fn.strdisplaywidth(title) > room then
      title = room > 1 and (vim.fn.strcharpart(title, 0, room - 1) .. '…') or ''
    end
    if title ~= '' then
      s = s .. ' · ' .. title
    end
  end
  return esc(s)
end

-- The first line of the oldest request that waits, in the rendered lines.
local function first_open(out)
  local best, best_line
  for line, m in pairs(out.marks) do
    local o = S.requests:get(m.id)
    if o and not o.sending and (not best or o.order < best.order or (o == best and line < best_line)) then
      best, best_line = o, line
    end
  end
  return best_line
end

-- Renders one view: its session's transcript into its buffer.
local function render_view(cv)
  if not valid(cv.tbuf) then
    return
  end
  local sid = cv == C and S.session or cv.session
  local v = view(sid)
  local out = render.chat(v, function(id)
    return S.requests:get(id)
  end)
  cv.marks = out.marks
  cv.toggles = out.toggles or {}
  cv.runs = out.runs or {}
  cv.changes = out.changes or {}
  cv.locations = out.locations or {}
  cv.stops = out.stops or {}
  local buf = cv.tbuf
  local old_count = api.nvim_buf_line_count(buf)
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, out.lines)
  vim.bo[buf].modifiable = false
  api.nvim_buf_clear_namespace(buf, NS, 0, -1)
  for line, group in pairs(out.hl or {}) do
    api.nvim_buf_add_highlight(buf, NS, group, line - 1, 0, -1)
  end
  local cur = api.nvim_get_current_win()
  for _, w in ipairs(api.nvim_list_wins()) do
    if valid(cv.cbuf) and api.nvim_win_get_buf(w) == cv.cbuf then
      vim.wo[w].statusline = compose_status()
    end
    if api.nvim_win_get_buf(w) == buf then
      vim.wo[w].statusline = transcript_status(v, api.nvim_win_get_width(w), cv.n)
      -- follow the end, unless the user reads something higher up
      if w ~= cur then
        -- on the oldest open request (its keys work there), else the end
        api.nvim_win_set_cursor(w, { first_open(out) or #out.lines, 0 })
      elseif cv.follow or api.nvim_win_get_cursor(w)[1] >= old_count then
        api.nvim_win_set_cursor(w, { #out.lines, 0 })
      end
    end
  end
  cv.follow = false
end

function M.render_now()
  pending_render = false
  for _, cv in ipairs(views) do
    render_view(cv)
  end
end

--- Renders soon, with the cursor of the transcript at its end even where
--- the user had it higher up: a prompt the user just sent is what they
--- want to see next.
function M.follow()
  C.follow = true
  M.render()
end

--- Renders soon (several updates in one tick render once).
function M.render()
  if pending_render then
    return
  end
  pending_render = true
  vim.schedule(M.render_now)
end

--- :AgentdChatTab: another conversation in a new tab page, its own chat
--- (transcript and compose), while the others go on; S.session is now its.
function M.open_new_view()
  switch(new_view())
  S.session, S.new_chat = nil, true
  vim.cmd('tabnew')
  local placeholder = api.nvim_get_current_buf()
  local buf = M.transcript_buf()
  api.nvim_win_set_buf(0, buf)
  if api.nvim_buf_is_valid(placeholder) and placeholder ~= buf then
    pcall(api.nvim_buf_delete, placeholder, { force = true })
  end
  local twin = api.nvim_get_current_win()
  vim.wo[twin].wrap = true
  vim.wo[twin].linebreak = true
  vim.wo[twin].breakindent = true
  vim.wo[twin].number = false
  local cwin = open_compose_under(twin)
  M.render_now()
  api.nvim_set_current_win(cwin)
  vim.cmd('startinsert!')
end

--- Back to one view (the first), the others' buffers wiped (for tests
--- and _reset).
function M.reset()
  for i = #views, 2, -1 do
    for _, b in ipairs({ views[i].tbuf, views[i].cbuf }) do
      if valid(b) then
        pcall(api.nvim_buf_delete, b, { force = true })
      end
    end
    views[i] = nil
  end
  C = views[1]
  C.session, C.new_chat = nil, false
end

--- The open conversations (for tests and the status line): {n, session, current}.
function M.views()
  local out = {}
  for _, v in ipairs(views) do
    if valid(v.tbuf) then
      out[#out + 1] = { n = v.n, session = v == C and S.session or v.session, current = v == C }
    end
  end
  return out
end

--- Opens a workspace file at a 1-based line and column (UTF-16 units, as
--- the daemon counts them) in the window the user was in before the chat.
---@param loc {path: string, line: integer|nil, column: integer|nil}
function M.open_location(loc)
  local twin, cwin = M.wins()
  local target
  local prev = vim.fn.win_getid(vim.fn.winnr('#'))
  if prev ~= 0 and prev ~= twin and prev ~= cwin then
    target = prev
  else
    for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
      if w ~= twin and w ~= cwin and api.nvim_win_get_config(w).relative == '' then
        target = w
        break
      end
    end
  end
  if target then
    api.nvim_set_current_win(target)
  else
    vim.cmd('aboveleft new')
  end
  local path = loc.path:sub(1, 1) == '/' and loc.path or ((S.root or vim.fn.getcwd()) .. '/' .. loc.path)
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  local row = math.max(1, math.min(loc.line or 1, api.nvim_buf_line_count(0)))
  local text = api.nvim_buf_get_lines(0, row - 1, row, false)[1] or ''
  local col = math.max(0, (loc.column or 1) - 1)
  local ok, byte = pcall(vim.str_byteindex, text, col, true) -- UTF-16 → bytes
  api.nvim_win_set_cursor(0, { row, ok and byte or col })
end

--- The transcript's lines (for tests).
function M.lines()
  if not valid(C.tbuf) then
    return {}
  end
  return api.nvim_buf_get_lines(C.tbuf, 0, -1, false)
end

--- The first transcript line of a change (its checkpoint), or nil.
function M.line_of_change(id)
  local best
  for line, c in pairs(C.changes) do
    if c == id and (not best or line < best) then
      best = line
    end
  end
  return best
end

--- The transcript line of an open request's first line, or nil.
function M.line_of(id)
  local best
  for line, m in pairs(C.marks) do
    if m.id == id and (not best or line < best) then
      best = line
    end
  end
  return best
end

return M
