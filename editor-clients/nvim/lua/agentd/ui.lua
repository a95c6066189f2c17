-- Small things every view uses: messages and statusline redraws.
local config = require('agentd.config')

local M = {}

--- vim.notify with the plugin's prefix (unless notify = false).
---@param msg string
---@param level integer|nil
function M.notify(msg, level)
  if config.values.notify then
    vim.notify('agentd: ' .. msg, level or vim.log.levels.INFO)
  end
end

--- vim.notify of one line that fits the command line (cut with …), for
--- text whose whole is shown elsewhere (the chat): a message longer than
--- the command line would stop the screen at "Press ENTER".
---@param msg string
---@param level integer|nil
function M.notify_brief(msg, level)
  local room = (vim.v.echospace and vim.v.echospace > 0 and vim.v.echospace or vim.o.columns - 12) - #'agentd: ' - 1
  local line = (msg:gsub('%s*\n.*', ' …'))
  if vim.fn.strdisplaywidth(line) > room then
    line = vim.fn.strcharpart(line, 0, math.max(10, room - 1)) .. '…'
  end
  M.notify(line, level)
end

function M.redraw_status()
  pcall(vim.cmd, 'redrawstatus!')
end

--- Closes a view of tabs: deletes its scratch buffers, closes its tabs and
--- goes back to the tab it was opened from (each step skipped when its
--- buffer or tab is already gone).
---@param bufs integer[]
---@param tabs integer[]
---@param prev_tab integer
function M.close_tabs(bufs, tabs, prev_tab)
  local api = vim.api
  for _, b in ipairs(bufs) do
    if api.nvim_buf_is_valid(b) then
      pcall(api.nvim_buf_delete, b, { force = true })
    end
  end
  for _, t in ipairs(tabs) do
    if api.nvim_tabpage_is_valid(t) then
      pcall(vim.cmd, 'tabclose! ' .. api.nvim_tabpage_get_number(t))
    end
  end
  if api.nvim_tabpage_is_valid(prev_tab) then
    pcall(api.nvim_set_current_tabpage, prev_tab)
  end
end

--- Whether a UI is attached (headless tests have none).
function M.has_ui()
  return #vim.api.nvim_list_uis() > 0
end

return M
