-- Reviewing a change the agent already made (a write allowed by a rule or
-- the mode, an edit, a command's changes): gd on its line in the chat (↶ c1
-- …) opens a tab per file in diff mode, the text before the change on the
-- left and the file itself on the right (its real buffer). gh takes a hunk
-- of the change back in the buffer (:diffget), gy keeps it; :w writes what
-- you kept. The text before comes from the daemon (agent/undo of that
-- checkpoint alone, dryRun: nothing is written by it); a file a later change
-- touched again is shown against what undoing would give it.
local P = require('agentd.protocol')
local S = require('agentd.state')
local lifecycle = require('agentd.lifecycle')
local udiff = require('agentd.udiff')
local ui = require('agentd.ui')

local api = vim.api
local M = {}

---@class agentd.ReviewTab
---@field tabs integer[]
---@field bufs integer[] the scratch buffers (the "before" sides)
---@field prev_tab integer

---@type agentd.ReviewTab|nil
local current

local function read(path)
  local f = io.open(path, 'rb')
  if not f then
    return nil
  end
  local s = f:read('*a')
  f:close()
  return s
end

local function esc(x)
  return (x:gsub('%%', '%%%%'))
end

--- Closes the review tabs (the files' buffers stay, with what you did).
function M.close()
  local c = current
  current = nil
  if not c then
    return
  end
  ui.close_tabs(c.bufs, c.tabs, c.prev_tab)
end

--- Whether a review is open.
function M.is_open()
  return current ~= nil
end

local function keys(buf, left_win, right_win)
  local k = require('agentd.config').values.keymaps.request
  local function reject()
    local w = api.nvim_get_current_win()
    if w == left_win then
      pcall(vim.cmd, 'diffput')
    else
      if w ~= right_win and api.nvim_win_is_valid(right_win) then
        api.nvim_set_current_win(right_win)
      end
      pcall(vim.cmd, 'diffget')
    end
    vim.cmd('diffupdate')
    pcall(vim.cmd, 'normal! ]c')
  end
  for _, b in ipairs(buf) do
    for lhs, fn in pairs({ [k.reject_hunk] = reject, [k.keep_hunk] = function()
      pcall(vim.cmd, 'normal! ]c')
    end, [k.close] = M.close }) do
      if lhs and lhs ~= '' then
        vim.keymap.set('n', lhs, fn, { buffer = b, nowait = true, silent = true, desc = 'agentd: review a change' })
      end
    end
  end
end

-- One file's tab: before on the left (scratch), the file on the right.
local function add_file(c, cp, f, i, n)
  local root = S.root or vim.fn.getcwd()
  local abs = root .. '/' .. f.path
  local now = read(abs) or ''
  local before
  if f.status == 'added' then
    before = type(f.newText) == 'string' and f.newText or udiff.apply('', f.diff or '') -- the change deleted it
  elseif f.status == 'deleted' then
    before = '' -- the change created it
  else
    before = udiff.apply(now, f.diff or '')
  end
  if type(before) ~= 'string' then
    return ui.notify(('%s: the text before %s could not be rebuilt'):format(f.path, cp), vim.log.levels.WARN)
  end
  vim.cmd('tabnew')
  c.tabs[#c.tabs + 1] = api.nvim_get_current_tabpage()
  local placeholder = api.nvim_get_current_buf()
  local left = api.nvim_create_buf(false, true)
  api.nvim_buf_set_lines(left, 0, -1, false, (udiff.lines(before)))
  vim.bo[left].buftype = 'nofile'
  pcall(api.nvim_buf_set_name, left, ('%s (before %s)'):format(f.path, cp))
  vim.bo[left].bufhidden = 'wipe'
  vim.bo[left].modifiable = false
  c.bufs[#c.bufs + 1] = left
  api.nvim_win_set_buf(0, left)
  vim.cmd('diffthis')
  local left_win = api.nvim_get_current_win()
  vim.cmd('rightbelow vsplit ' .. vim.fn.fnameescape(abs))
  vim.cmd('diffthis')
  local right_win = api.nvim_get_current_win()
  local right = api.nvim_get_current_buf()
  if vim.bo[left].filetype == '' and vim.bo[right].filetype ~= '' then
    vim.bo[left].filetype = vim.bo[right].filetype
  end
  if api.nvim_buf_is_valid(placeholder) and placeholder ~= left and placeholder ~= right then
    pcall(api.nvim_buf_delete, placeholder, { force = true })
  end
  local k = require('agentd.config').values.keymaps.request
  local title = (n > 1 and ('(%d/%d) '):format(i, n) or '') .. f.path
  vim.wo[left_win].statusline = esc((' before %s: %s'):format(cp, title))
  vim.wo[right_win].statusline = esc((' now · %s take a hunk back · %s keep it · :w writes what you kept · %s close'):format(
    k.reject_hunk, k.keep_hunk, k.close)) .. ' %m'
  keys({ left, right }, left_win, right_win)
  api.nvim_win_set_cursor(right_win, { 1, 0 })
  if vim.fn.diff_hlID(1, 1) == 0 then
    pcall(vim.cmd, 'normal! ]c')
  end
end

--- Opens the review of checkpoint cp of session sid.
---@param sid string
---@param cp string
function M.open(sid, cp)
  lifecycle.request(P.request.undo, { sessionId = sid, checkpoint = cp, only = true, dryRun = true }, function(e, res)
    if e then
      return ui.notify(('review %s: %s (%s)'):format(cp, tostring(e.message), tostring(e.code)), vim.log.levels.ERROR)
    end
    local files = {}
    for _, f in ipairs(type(res) == 'table' and type(res.files) == 'table' and res.files or {}) do
      files[#files + 1] = f
    end
    for _, c in ipairs(type(res) == 'table' and type(res.conflicts) == 'table' and res.conflicts or {}) do
      if type(c) == 'table' and type(c.diff) == 'table' then
        files[#files + 1] = c.diff -- changed again since: against what undoing would give
      end
    end
    if #files == 0 then
      return ui.notify(('%s: nothing left to review (undone, or its files changed back)'):format(cp))
    end
    M.close()
    current = { tabs = {}, bufs = {}, prev_tab = api.nvim_get_current_tabpage() }
    for i, f in ipairs(files) do
      add_file(current, cp, f, i, #files)
    end
    if #current.tabs > 1 then
      api.nvim_set_current_tabpage(current.tabs[1])
    end
  end)
end

return M
