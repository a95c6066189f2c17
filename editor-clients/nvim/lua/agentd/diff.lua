-- The diff tab of a write confirmation: per file, the current text on the
-- left and the proposed text on the right, in diff mode, with the request
-- keys (agentd.kinds) in both windows. A one-file write is reviewed change
-- by change (hunk by hunk): gh takes the current text back for the hunk
-- under the cursor, gy keeps it, and the proposed side may be edited like
-- any buffer; ga writes what is left (every hunk rejected: the write is
-- rejected). Closing the tab answers nothing (the request stays open).
-- With requests.auto_diff the tab opens by itself when a write arrives.
local config = require('agentd.config')
local kinds = require('agentd.kinds')
local udiff = require('agentd.udiff')
local S = require('agentd.state')
local ui = require('agentd.ui')

local api = vim.api
local M = {}

---@class agentd.DiffTab
---@field tabs integer[]
---@field bufs integer[]
---@field single {buf: integer, lines: string[], current: string[], left_win: integer, right_win: integer}|nil the sides of a one-file write
---@field closing boolean
---@field prev_tab integer

---@type table<string, agentd.DiffTab>
local open = {}
M._open = open

local function read_file(path)
  local f = io.open(path, 'rb')
  if not f then
    return nil
  end
  local s = f:read('*a')
  f:close()
  return s
end

local function abs(path)
  if path:sub(1, 1) == '/' then
    return path
  end
  return (S.root or vim.fn.getcwd()) .. '/' .. path
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

-- What a tab shows as its label: the workspace-relative path and the side,
-- e.g. "src/cart.go (proposed)". Neovim shortens the directories of a
-- buffer name in the tab line, so the name holds no URL-like prefix.
local function side_name(path, side)
  local root = S.root or vim.fn.getcwd()
  local rel = path
  if rel:sub(1, #root + 1) == root .. '/' then
    rel = rel:sub(#root + 2)
  end
  return rel .. ' (' .. side .. ')'
end

local function scratch(name, lines, ft, modifiable)
  local buf = api.nvim_create_buf(false, true)
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].buftype = 'nofile' -- before the name: a nofile name stays as given
  if not pcall(api.nvim_buf_set_name, buf, name) then
    pcall(api.nvim_buf_set_name, buf, name .. ' ' .. buf) -- the same file in two open requests
  end
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  vim.bo[buf].modified = false
  vim.bo[buf].modifiable = modifiable
  if ft ~= '' then
    vim.bo[buf].filetype = ft
  end
  return buf
end

local function teardown(id)
  local d = open[id]
  if not d then
    return
  end
  open[id] = nil
  d.closing = true
  ui.close_tabs(d.bufs, d.tabs, d.prev_tab)
end

--- Whether request id has its diff tab open.
function M.is_open(id)
  return open[id] ~= nil
end

--- The request was answered or resolved: its tab closes.
function M.on_resolved(id)
  teardown(id)
end

-- The text the user left on the proposed side, when it differs from the
-- model's (single-file writes only).
local function edited_text(d)
  local single = d.single
  if not (single and api.nvim_buf_is_valid(single.buf)) then
    return nil
  end
  local now = api.nvim_buf_get_lines(single.buf, 0, -1, false)
  if vim.deep_equal(now, single.lines) then
    return nil
  end
  return table.concat(now, '\n') .. '\n'
end

local function add_file(d, f, n)
  local path = type(f.path) == 'string' and f.path or '?'
  local current = f.oldText
  if type(current) ~= 'string' then
    current = f.status == 'added' and '' or (read_file(abs(path)) or '')
  end
  local proposed = f.newText
  local note
  if type(proposed) ~= 'string' then
    if f.status == 'deleted' then
      proposed = ''
    else
      local err
      proposed, err = udiff.apply(current, f.diff or '')
      note = not proposed and err or nil
    end
  end
  vim.cmd('tabnew')
  d.tabs[#d.tabs + 1] = api.nvim_get_current_tabpage()
  local placeholder = api.nvim_get_current_buf()
  local ft = filetype_of(path)
  local left_win
  if note then
    -- the proposed text could not be rebuilt: show the diff itself
    local b = scratch(side_name(path, 'diff'), udiff.lines(f.diff or ''), 'diff', false)
    d.bufs[#d.bufs + 1] = b
    api.nvim_win_set_buf(0, b)
  else
    local new_lines = udiff.lines(proposed)
    local cur_lines = udiff.lines(current)
    local left = scratch(side_name(path, 'current'), cur_lines, ft, false)
    -- only a one-file write takes edited content (agent/confirm)
    local right = scratch(side_name(path, 'proposed'), new_lines, ft, n == 1)
    d.bufs[#d.bufs + 1] = left
    d.bufs[#d.bufs + 1] = right
    api.nvim_win_set_buf(0, left)
    vim.cmd('diffthis')
    left_win = api.nvim_get_current_win()
    vim.cmd('rightbelow vsplit')
    api.nvim_win_set_buf(0, right)
    vim.cmd('diffthis')
    if n == 1 then
      d.single = { buf = right, lines = new_lines, current = cur_lines, left_win = left_win,
        right_win = api.nvim_get_current_win() }
    end
  end
  if api.nvim_buf_is_valid(placeholder) and placeholder ~= api.nvim_get_current_buf() then
    pcall(api.nvim_buf_delete, placeholder, { force = true })
  end
  return path, left_win
end

-- The hunks between two lists of lines (vim.diff's indices).
local function hunks(a, b)
  local ok, idx = pcall(vim.diff, table.concat(a, '\n') .. '\n', table.concat(b, '\n') .. '\n',
    { result_type = 'indices' })
  return ok and type(idx) == 'table' and idx or {}
end

--- How far the review of a one-file write is: the model's hunks, and how
--- many of them the proposed side no longer has (taken back).
---@param id string
---@return {hunks: integer, rejected: integer, left: integer}|nil
function M.review_state(id)
  local d = open[id]
  local single = d and d.single
  if not (single and api.nvim_buf_is_valid(single.buf)) then
    return nil
  end
  local total = #hunks(single.current, single.lines)
  local left = #hunks(single.current, api.nvim_buf_get_lines(single.buf, 0, -1, false))
  return { hunks = total, left = left, rejected = math.max(0, total - left) }
end

-- The next hunk, in the window the cursor is in (nothing when it was the last).
local function next_hunk()
  pcall(vim.cmd, 'normal! ]c')
end

-- Takes the current text back for the hunk under the cursor (either side).
local function reject_hunk(d)
  local single = d.single
  if not single then
    return require('agentd.ui').notify('a write of several files is allowed or rejected whole: only a one-file '
      .. 'write takes the text you leave', vim.log.levels.WARN)
  end
  local win = api.nvim_get_current_win()
  if win == single.left_win then
    pcall(vim.cmd, 'diffput')
  else
    if win ~= single.right_win and api.nvim_win_is_valid(single.right_win) then
      api.nvim_set_current_win(single.right_win)
    end
    pcall(vim.cmd, 'diffget')
  end
  vim.cmd('diffupdate')
  next_hunk()
end

local function status_lines(id, req, d)
  local parts = kinds.hint_parts(req, 'diff')
  local allows, others = {}, {}
  local is_allow = {}
  for _, a in ipairs(kinds.decisions(req)) do
    if a.decision:match('^allow') then
      is_allow[a.key .. ' ' .. a.label] = true
    end
  end
  for _, p in ipairs(parts) do
    table.insert(is_allow[p] and allows or others, p)
  end
  local review
  local st = M.review_state(id)
  if st then
    local k = config.values.keymaps.request
    local keys = {}
    if k.reject_hunk and k.reject_hunk ~= '' then
      keys[#keys + 1] = k.reject_hunk .. ' reject'
    end
    if k.keep_hunk and k.keep_hunk ~= '' then
      keys[#keys + 1] = k.keep_hunk .. ' keep'
    end
    review = ('%d hunk%s%s'):format(st.hunks, st.hunks == 1 and '' or 's',
      st.rejected > 0 and (', %d rejected'):format(st.rejected) or '')
    if #keys > 0 then
      review = review .. ' (' .. table.concat(keys, ', ') .. ')'
    end
  end
  return allows, others, review
end

local function esc(x)
  return (x:gsub('%%', '%%%%'))
end

-- Writes the keys and the review's progress into the tab's status lines.
local function show_status(id, req, d)
  local allows, others, review = status_lines(id, req, d)
  for _, f in ipairs(d.files) do
    if f.left_win and api.nvim_win_is_valid(f.left_win) then
      vim.wo[f.left_win].statusline = esc((' current → proposed: %s · %s'):format(f.title, table.concat(allows, ' · ')))
      -- the review's count stays in sight: a narrow window cuts the keys' end (%<)
      vim.wo[f.right_win].statusline = (review and (esc(' ' .. review .. ' │') .. '%<') or '')
        .. esc(' ' .. table.concat(others, ' · '))
    elseif api.nvim_win_is_valid(f.right_win) then
      vim.wo[f.right_win].statusline = esc(' proposed: ' .. f.title .. ' │ '
        .. table.concat(vim.list_extend(vim.list_extend({}, allows), others), ' · '))
    end
  end
end

local function set_keys(id, req, d)
  local k = config.values.keymaps.request
  local pump = require('agentd.pump')
  local actions = {}
  for _, a in ipairs(kinds.decisions(req)) do
    actions[#actions + 1] = { a.key, function()
      if a.reason then
        return require('agentd.float').show(id, { focus = true, mode = 'reason', back = 'close' })
      end
      local st = M.review_state(id)
      if a.decision:match('^allow') and st and st.hunks > 0 and st.left == 0 then
        -- the review took every hunk back: nothing is left to write
        return pump.decide(id, 'reject_once', 'every change was rejected in the review')
      end
      local edited = a.decision:match('^allow') and edited_text(d) or nil
      pump.decide(id, a.decision, nil, edited)
    end }
  end
  actions[#actions + 1] = { k.reject_hunk, function()
    reject_hunk(d)
    show_status(id, req, d)
  end }
  actions[#actions + 1] = { k.keep_hunk, next_hunk }
  actions[#actions + 1] = { k.close, function()
    S.requests:dismiss(id) -- not offered again by itself (auto_diff)
    teardown(id)
  end }
  actions[#actions + 1] = { k.pick, function()
    pump.pick()
  end }
  for _, b in ipairs(d.bufs) do
    for _, a in ipairs(actions) do
      if a[1] and a[1] ~= '' then
        vim.keymap.set('n', a[1], a[2], { buffer = b, nowait = true, silent = true, desc = 'agentd: write request' })
      end
    end
    if d.single and b == d.single.buf then
      -- the review's progress follows edits (gh, do/dp, typing, u)
      api.nvim_create_autocmd({ 'TextChanged', 'TextChangedI' }, {
        buffer = b,
        callback = function()
          if open[id] == d then
            show_status(id, req, d)
          end
        end,
      })
    end
    -- closing the tab some other way closes the rest of it
    api.nvim_create_autocmd('BufWipeout', {
      buffer = b,
      once = true,
      callback = function()
        vim.schedule(function()
          if open[id] == d and not d.closing then
            teardown(id)
          end
        end)
      end,
    })
  end
end

--- Opens the diff tab of write request id (or goes to it when open).
---@param id string
function M.open(id)
  local o = S.requests:get(id)
  if not o or o.req.kind ~= 'confirm_write' then
    return
  end
  if open[id] then
    local t = open[id].tabs[1]
    if t and api.nvim_tabpage_is_valid(t) then
      api.nvim_set_current_tabpage(t)
    end
    return
  end
  local req = o.req
  local files = type(req.diff) == 'table' and req.diff or {}
  if #files == 0 then
    files = { { path = '?', diff = '' } }
  end
  local d = { tabs = {}, bufs = {}, files = {}, closing = false, prev_tab = api.nvim_get_current_tabpage() }
  open[id] = d
  for i, f in ipairs(files) do
    local path, left_win = add_file(d, f, #files)
    local title = (#files > 1 and ('(%d/%d) '):format(i, #files) or '') .. path .. ' (' .. (f.status or 'write') .. ')'
    if type(f.runsLater) == 'string' and f.runsLater ~= '' then
      title = title .. ' ⚠ runs later outside any sandbox'
    end
    d.files[#d.files + 1] = { title = title, left_win = left_win, right_win = api.nvim_get_current_win() }
  end
  -- the keys, split over the two windows' status lines: allows on the
  -- left, the review and the rejects on the right
  show_status(id, req, d)
  if #d.tabs > 1 then
    api.nvim_set_current_tabpage(d.tabs[1])
  end
  set_keys(id, req, d)
  -- the review starts on the first hunk, on the proposed side
  if d.single and api.nvim_win_is_valid(d.single.right_win) then
    api.nvim_set_current_win(d.single.right_win)
    api.nvim_win_set_cursor(d.single.right_win, { 1, 0 })
    if #hunks(d.single.current, d.single.lines) > 0 and vim.fn.diff_hlID(1, 1) == 0 then
      next_hunk()
    end
  end
end

--- With requests.auto_diff: opens the diff tab of the oldest write that
--- waits, unless a diff tab is open already (one at a time).
function M.offer()
  if not config.values.requests.auto_diff or next(open) then
    return
  end
  for _, o in ipairs(S.requests:list()) do
    if o.req.kind == 'confirm_write' and not o.dismissed and not o.sending then
      require('agentd.float').close()
      return M.open(o.req.requestId)
    end
  end
end

return M
