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

function M.redraw_status()
  pcall(vim.cmd, 'redrawstatus!')
end

--- Whether a UI is attached (headless tests have none).
function M.has_ui()
  return #vim.api.nvim_list_uis() > 0
end

return M
