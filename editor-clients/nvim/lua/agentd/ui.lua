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

--- Whether a UI is attached (headless tests have none).
function M.has_ui()
  return #vim.api.nvim_list_uis() > 0
end

return M
