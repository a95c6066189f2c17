-- Renders one input request. Questions go through vim.ui.input, choices and
-- command confirmations through vim.ui.select (so dressing, telescope or
-- fzf-lua users get their UI), secrets through inputsecret(), writes through
-- a diff tab (current vs proposed) with buffer-local keys.
--
-- M.show(req, ctx) returns a handle with close(). ctx:
--   reply(params)                       -- agent/reply (requestId added)
--   confirm(decision, reason, edited)   -- agent/confirm
--   postpone()                          -- dismissed: stays open in the daemon
--   root                                -- the workspace
--   started(handle)                     -- called before the UI shows (optional)
-- Exactly one of them is called, once; after close() none is.
local config = require('agentd.config')
local udiff = require('agentd.udiff')

local api = vim.api
local M = {}

-- inputsecret() is looked up at call time so tests can feed it keys.
M.inputsecret = function(prompt)
  return vim.fn.inputsecret(prompt)
end

local DECISION_LABELS = {
  allow_once = 'Allow once',
  allow_session = 'Allow for this session',
  allow_always = 'Always allow',
  reject_once = 'Reject',
  reject_always = 'Always reject',
}

local function settle_guard(ctx)
  local done = false
  local g = {}
  function g.live()
    return not done
  end
  function g.close()
    done = true
  end
  for _, name in ipairs({ 'reply', 'confirm', 'postpone' }) do
    g[name] = function(...)
      if done then
        return
      end
      done = true
      ctx[name](...)
    end
  end
  return g
end

-- Aborts the built-in input()/inputlist() when they are on screen.
local function abort_cmdline_prompt()
  local mode = api.nvim_get_mode().mode
  if mode == 'c' or mode:sub(1, 1) == 'r' then
    -- as if typed: input() is waiting on the input queue, not on typeahead
    api.nvim_input('<C-c>')
  end
end

local function header(req)
  local t = req.message ~= nil and req.message ~= '' and req.message or req.title or 'agentd'
  return t
end

local function show_question(req, g)
  local prompt = 'agentd: ' .. header(req)
  if req.context and req.context ~= '' then
    prompt = req.context .. '\n' .. prompt
  end
  vim.ui.input({ prompt = prompt .. ' ', default = req.default }, function(text)
    if text == nil or text == '' then
      return g.postpone()
    end
    g.reply({ text = text })
  end)
  return { close = abort_cmdline_prompt }
end

local function show_choice(req, g)
  local items = {}
  for _, o in ipairs(req.options or {}) do
    items[#items + 1] = { id = o.optionId, label = o.label, description = o.description }
  end
  if req.allowOther then
    items[#items + 1] = { other = true, label = 'Other…' }
  end
  local prompt = 'agentd: ' .. header(req)
  local function fmt(item)
    local s = item.label
    if item.selected ~= nil then
      s = (item.selected and '[x] ' or '[ ] ') .. s
    end
    if item.description and item.description ~= '' then
      s = s .. ' — ' .. item.description
    end
    return s
  end
  local function ask_other()
    vim.ui.input({ prompt = prompt .. ' (your answer) ' }, function(text)
      if text == nil or text == '' then
        return g.postpone()
      end
      g.reply({ text = text })
    end)
  end
  if req.multiple then
    -- several answers: toggle entries until "Done"
    for _, it in ipairs(items) do
      if not it.other then
        it.selected = false
      end
    end
    local done_item = { done = true, label = 'Done' }
    local function loop()
      local list = vim.list_extend({}, items)
      list[#list + 1] = done_item
      vim.ui.select(list, { prompt = prompt, format_item = fmt, kind = 'agentd.choice' }, function(item)
        if not g.live() then
          return
        end
        if item == nil then
          return g.postpone()
        elseif item.other then
          return ask_other()
        elseif item.done then
          local answers = {}
          for _, it in ipairs(items) do
            if it.selected then
              answers[#answers + 1] = it.id
            end
          end
          if #answers == 0 then
            return g.postpone()
          end
          return g.reply({ answers = answers })
        end
        item.selected = not item.selected
        vim.schedule(loop)
      end)
    end
    loop()
    return { close = abort_cmdline_prompt }
  end
  vim.ui.select(items, { prompt = prompt, format_item = fmt, kind = 'agentd.choice' }, function(item)
    if not g.live() then
      return
    end
    if item == nil then
      return g.postpone()
    elseif item.other then
      return ask_other()
    end
    g.reply({ optionId = item.id })
  end)
  return { close = abort_cmdline_prompt }
end

local function show_secret(req, g)
  -- inputsecret() blocks; run it after the current callback returns.
  vim.schedule(function()
    if not g.live() then
      return
    end
    local ok, text = pcall(M.inputsecret, 'agentd (secret): ' .. header(req) .. ' ')
    if not ok or text == nil or text == '' then
      return g.postpone()
    end
    g.reply({ text = text })
  end)
  return { close = abort_cmdline_prompt }
end

local function decisions(req)
  local out = {}
  for _, o in ipairs(req.options or {}) do
    out[#out + 1] = { id = o.optionId, label = o.label ~= '' and o.label or DECISION_LABELS[o.optionId] or o.optionId }
  end
  if #out == 0 then
    for _, id in ipairs({ 'allow_once', 'allow_session', 'allow_always', 'reject_once', 'reject_always' }) do
      out[#out + 1] = { id = id, label = DECISION_LABELS[id] }
    end
  end
  return out
end

local function ask_reason(g, decision)
  vim.ui.input({ prompt = 'agentd: reason for the model (optional) ' }, function(text)
    g.confirm(decision, text ~= '' and text or nil)
  end)
end

local function show_command(req, g)
  local items = decisions(req)
  items[#items + 1] = { id = 'reject_once', reason = true, label = 'Reject with a reason…' }
  -- one line: vim.ui.select's prompt is a title in most UIs
  local cmdline = (req.command or '?'):gsub('\n', ' ⏎ ')
  local prompt = ('agentd wants to run: %s   (in %s)'):format(cmdline, req.cwd and req.cwd ~= '' and req.cwd or '.')
  vim.ui.select(items, {
    prompt = prompt,
    kind = 'agentd.confirm_command',
    format_item = function(i)
      return i.label
    end,
  }, function(item)
    if not g.live() then
      return
    end
    if item == nil then
      return g.postpone()
    end
    if item.reason then
      return ask_reason(g, 'reject_once')
    end
    g.confirm(item.id)
  end)
  return { close = abort_cmdline_prompt }
end

-- ---------------------------------------------------------------- diff tab

local function read_file(path)
  local f = io.open(path, 'rb')
  if not f then
    return nil
  end
  local s = f:read('*a')
  f:close()
  return s
end

local function abs(root, path)
  if path:sub(1, 1) == '/' then
    return path
  end
  return (root or vim.fn.getcwd()) .. '/' .. path
end

local function filetype_of(path)
  local ok, ft = pcall(vim.filetype.match, { filename = path }) -- 0.8+
  if ok and type(ft) == 'string' then
    return ft
  end
  ok, ft = pcall(vim.filetype.match, path) -- 0.7
  if ok and type(ft) == 'string' then
    return ft
  end
  return ''
end

local function scratch(name, lines, ft, modifiable)
  local buf = api.nvim_create_buf(false, true)
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  pcall(api.nvim_buf_set_name, buf, name)
  api.nvim_buf_set_option(buf, 'buftype', 'nofile')
  api.nvim_buf_set_option(buf, 'bufhidden', 'wipe')
  api.nvim_buf_set_option(buf, 'swapfile', false)
  api.nvim_buf_set_option(buf, 'modified', false)
  api.nvim_buf_set_option(buf, 'modifiable', modifiable)
  if ft ~= '' then
    api.nvim_buf_set_option(buf, 'filetype', ft)
  end
  return buf
end

--- The keys line shown in the diff windows' statuslines.
function M.diff_help()
  local k = config.values.keymaps.diff
  local parts = {}
  for _, e in ipairs({
    { 'allow_once', 'allow' },
    { 'allow_session', 'session' },
    { 'allow_always', 'always' },
    { 'reject', 'reject' },
    { 'reject_with_reason', 'reject+why' },
    { 'reject_always', 'never' },
  }) do
    if k[e[1]] then
      parts[#parts + 1] = k[e[1]] .. ' ' .. e[2]
    end
  end
  return table.concat(parts, ' · ')
end

local function show_write(req, g, ctx)
  local files = req.diff or {}
  if #files == 0 then
    files = { { path = '?', diff = '' } }
  end
  local prev_tab = api.nvim_get_current_tabpage()
  local tabs, bufs = {}, {}
  local proposed_single -- { buf, lines } when the request touches one file
  local closing = false

  local function teardown()
    closing = true
    for _, b in ipairs(bufs) do
      if api.nvim_buf_is_valid(b) then
        pcall(api.nvim_buf_delete, b, { force = true })
      end
    end
    for _, t in ipairs(tabs) do
      if api.nvim_tabpage_is_valid(t) then
        local n = api.nvim_tabpage_get_number(t)
        pcall(vim.cmd, 'tabclose! ' .. n)
      end
    end
    if api.nvim_tabpage_is_valid(prev_tab) then
      pcall(api.nvim_set_current_tabpage, prev_tab)
    end
  end

  local function decide(decision, reason)
    if not g.live() then
      return
    end
    local edited
    if proposed_single and decision:match('^allow') and api.nvim_buf_is_valid(proposed_single.buf) then
      local now = api.nvim_buf_get_lines(proposed_single.buf, 0, -1, false)
      if not vim.deep_equal(now, proposed_single.lines) then
        edited = table.concat(now, '\n') .. '\n'
      end
    end
    teardown()
    g.confirm(decision, reason, edited)
  end

  for i, f in ipairs(files) do
    local path = f.path or '?'
    local current = f.oldText
    if current == nil or current == vim.NIL then
      current = f.status == 'added' and '' or (read_file(abs(ctx.root, path)) or '')
    end
    local proposed = f.newText
    local note
    if proposed == nil or proposed == vim.NIL then
      if f.status == 'deleted' then
        proposed = ''
      else
        local err
        proposed, err = udiff.apply(current, f.diff or '')
        if not proposed then
          note = err
        end
      end
    end
    local ft = filetype_of(path)
    local left_win
    vim.cmd('tabnew')
    local tab = api.nvim_get_current_tabpage()
    tabs[#tabs + 1] = tab
    local placeholder = api.nvim_get_current_buf()
    if note then
      -- could not rebuild the proposed text: show the diff itself
      local b = scratch('agentd://diff/' .. path, udiff.lines(f.diff or ''), 'diff', false)
      bufs[#bufs + 1] = b
      api.nvim_win_set_buf(0, b)
    else
      local cur_lines = udiff.lines(current)
      local new_lines = udiff.lines(proposed)
      local left = scratch('agentd://current/' .. path, cur_lines, ft, false)
      local right = scratch('agentd://proposed/' .. path, new_lines, ft, true)
      bufs[#bufs + 1] = left
      bufs[#bufs + 1] = right
      if #files == 1 then
        proposed_single = { buf = right, lines = new_lines }
      end
      api.nvim_win_set_buf(0, left)
      vim.cmd('diffthis')
      left_win = api.nvim_get_current_win()
      vim.cmd('rightbelow vsplit')
      api.nvim_win_set_buf(0, right)
      vim.cmd('diffthis')
    end
    if api.nvim_buf_is_valid(placeholder) and placeholder ~= api.nvim_get_current_buf() then
      pcall(api.nvim_buf_delete, placeholder, { force = true })
    end
    local title = (#files > 1 and ('(%d/%d) '):format(i, #files) or '') .. path .. ' (' .. (f.status or 'write') .. ')'
    local function esc(x)
      return (x:gsub('%%', '%%%%'))
    end
    if left_win and api.nvim_win_is_valid(left_win) then
      -- left: what this is; right: the keys
      api.nvim_win_set_option(left_win, 'statusline', esc(' current → proposed: ' .. title))
      api.nvim_win_set_option(0, 'statusline', esc(' ' .. M.diff_help()))
    else
      api.nvim_win_set_option(0, 'statusline', esc(' proposed: ' .. title .. ' │ ' .. M.diff_help()))
    end
  end

  local k = config.values.keymaps.diff
  local actions = {
    allow_once = function()
      decide('allow_once')
    end,
    allow_session = function()
      decide('allow_session')
    end,
    allow_always = function()
      decide('allow_always')
    end,
    reject_always = function()
      decide('reject_always')
    end,
    reject = function()
      decide('reject_once')
    end,
    reject_with_reason = function()
      vim.ui.input({ prompt = 'agentd: reason for the model (optional) ' }, function(text)
        if text == nil then
          return -- back to the diff
        end
        decide('reject_once', text ~= '' and text or nil)
      end)
    end,
  }
  for _, b in ipairs(bufs) do
    for name, fn in pairs(actions) do
      if k[name] then
        vim.keymap.set('n', k[name], fn, { buffer = b, nowait = true, silent = true, desc = 'agentd: ' .. name })
      end
    end
    -- closing the tab some other way postpones the request
    api.nvim_create_autocmd('BufWipeout', {
      buffer = b,
      once = true,
      callback = function()
        if closing or not g.live() then
          return
        end
        vim.schedule(function()
          if closing or not g.live() then
            return
          end
          teardown()
          g.postpone()
        end)
      end,
    })
  end
  if #api.nvim_list_uis() > 0 then
    vim.cmd('redraw')
    api.nvim_echo({ { 'agentd: ' .. (req.title or 'write') .. '  ' .. M.diff_help(), 'WarningMsg' } }, false, {})
  end
  return { close = teardown, tabs = tabs }
end

function M.show(req, ctx)
  local g = settle_guard(ctx)
  local h
  -- The handle exists before any UI call: the built-in vim.ui.input blocks
  -- in input() while events (and so agent/inputResolved) are processed.
  local handle = {}
  function handle.close()
    if not g.live() then
      return
    end
    g.close()
    if h and h.close then
      h.close()
    else
      abort_cmdline_prompt()
    end
  end
  if ctx.started then
    ctx.started(handle)
  end
  if req.kind == 'question' then
    h = show_question(req, g)
  elseif req.kind == 'choice' then
    h = show_choice(req, g)
  elseif req.kind == 'secret' then
    h = show_secret(req, g)
  elseif req.kind == 'confirm_command' then
    h = show_command(req, g)
  elseif req.kind == 'confirm_write' then
    h = show_write(req, g, ctx)
  else
    vim.notify('agentd: unknown request kind ' .. tostring(req.kind), vim.log.levels.WARN)
    g.postpone()
    h = {}
  end
  handle.tabs = h.tabs
  return handle
end

return M
