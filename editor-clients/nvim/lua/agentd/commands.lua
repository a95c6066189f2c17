-- Custom commands (docs/extensions.md): Markdown prompts of the workspace
-- (.agentd/commands/) and of the user (~/.config/agentd/commands/), listed
-- by agent/commands. In the compose window a / at the start of the prompt
-- opens a completion menu of them (name, argument hint, description), with
-- the context pickers (agentd.context), and 'omnifunc' completes them with
-- <C-x><C-o>: plain ins-completion, so it works on Neovim 0.7 and with any
-- completion plugin that reads omnifunc.
-- The prompt is sent as typed ("/review cart.go"); the daemon expands it.
-- :AgentdCommands lists every command, those that cannot run with why.
local P = require('agentd.protocol')
local S = require('agentd.state')
local config = require('agentd.config')
local lifecycle = require('agentd.lifecycle')
local ui = require('agentd.ui')

local api = vim.api
local uv = vim.uv or vim.loop
local M = {}

--- A list older than this (ms) is asked for again when a / is typed.
M.FRESH_MS = 2000

local fetched_at = 0

local function list(v)
  return type(v) == 'table' and v or {}
end

--- Asks the daemon for the commands and keeps them; cb(err, result).
---@param cb fun(err: table|nil, result: table|nil)|nil
function M.refresh(cb)
  lifecycle.request(P.request.commands, nil, function(e, res)
    if not e and type(res) == 'table' then
      S.commands = res
      fetched_at = uv.now()
    end
    if cb then
      cb(e, res)
    end
  end)
end

--- The commands as the daemon last listed them.
---@return table[]
function M.list()
  return list(S.commands and S.commands.commands)
end

--- Whether "/name" runs the command (not shadowed, not broken).
---@param c table
---@return boolean
function M.runnable(c)
  return type(c) == 'table' and type(c.name) == 'string' and c.shadowed ~= true
    and (type(c.error) ~= 'string' or c.error == '')
end

local function one_line(s, max)
  s = (type(s) == 'string' and s or ''):gsub('\n.*', ' …')
  if max and vim.fn.strchars(s) > max then
    s = vim.fn.strcharpart(s, 0, max - 1) .. '…'
  end
  return s
end

--- Completion items (complete-items) for the commands whose name starts
--- with prefix (what follows the /), runnable ones only.
---@param commands table[]
---@param prefix string
---@return table[]
function M.items(commands, prefix)
  local out = {}
  for _, c in ipairs(commands) do
    if M.runnable(c) and c.name:sub(1, #prefix) == prefix then
      local hint = type(c.argumentHint) == 'string' and c.argumentHint ~= '' and (' ' .. c.argumentHint) or ''
      local info = one_line(c.description)
      if type(c.path) == 'string' then
        info = (info ~= '' and (info .. '\n') or '') .. c.path
      end
      out[#out + 1] = {
        word = '/' .. c.name .. ' ',
        abbr = '/' .. c.name .. hint,
        menu = one_line(c.description, 60),
        kind = c.source == 'user' and 'user' or 'workspace',
        info = info,
        dup = 0,
        empty = 0,
      }
    end
  end
  return out
end

-- 'completeopt' while the compose window is in Insert mode: the menu
-- without inserting the first command, so that typing narrows it.
local saved_completeopt

--- Whether the list is recent enough to complete from.
---@return boolean
function M.fresh()
  return S.commands ~= nil and uv.now() - fetched_at <= M.FRESH_MS
end

--- Sets up the compose buffer: 'omnifunc' and the menus after / @ #
--- (agentd.context), 'completeopt' while typing.
---@param buf integer
function M.attach(buf)
  vim.bo[buf].omnifunc = "v:lua.require'agentd.context'.omnifunc"
  if not config.values.conversation.complete_commands then
    return
  end
  require('agentd.context').attach(buf)
  local group = api.nvim_create_augroup('agentd.commands.' .. buf, { clear = true })
  api.nvim_create_autocmd('InsertEnter', {
    group = group,
    buffer = buf,
    callback = function()
      saved_completeopt = saved_completeopt or vim.o.completeopt
      vim.o.completeopt = 'menuone,noinsert'
      if S.ready and uv.now() - fetched_at > M.FRESH_MS then
        M.refresh()
      end
    end,
  })
  api.nvim_create_autocmd({ 'InsertLeave', 'BufLeave' }, {
    group = group,
    buffer = buf,
    callback = function()
      if saved_completeopt then
        vim.o.completeopt = saved_completeopt
        saved_completeopt = nil
      end
    end,
  })
end

--- One line of :AgentdCommands: how it is typed, what it does, where it
--- comes from, and why it cannot run (shadowed, broken).
---@param c table
---@return string
function M.label(c)
  local parts = { '/' .. tostring(c.name) .. (type(c.argumentHint) == 'string' and c.argumentHint ~= ''
    and (' ' .. c.argumentHint) or '') }
  if type(c.description) == 'string' and c.description ~= '' then
    parts[#parts + 1] = one_line(c.description, 60)
  end
  parts[#parts + 1] = tostring(c.source or '?')
  if type(c.error) == 'string' and c.error ~= '' then
    parts[#parts + 1] = 'broken: ' .. one_line(c.error)
  elseif c.shadowed == true then
    parts[#parts + 1] = "shadowed: your own /" .. tostring(c.name) .. ' runs instead'
  end
  return table.concat(parts, '  ·  ')
end

--- :AgentdCommands: every command, those that cannot run with why. The one
--- picked goes into the compose window ("/name "); a broken or shadowed
--- one opens its file.
function M.pick()
  M.refresh(function(e, res)
    if e then
      return ui.notify('commands: ' .. ('%s (%s)'):format(tostring(e.message), tostring(e.code)), vim.log.levels.ERROR)
    end
    local cmds = list(res and res.commands)
    local dirs = {}
    for _, d in ipairs(list(res and res.directories)) do
      if type(d) == 'table' and type(d.path) == 'string' then
        dirs[#dirs + 1] = vim.fn.fnamemodify(d.path, ':~')
      end
    end
    if #cmds == 0 then
      return ui.notify('no custom commands: add Markdown files to ' .. table.concat(dirs, ' or '))
    end
    vim.ui.select(cmds, {
      prompt = 'agentd: custom commands (' .. table.concat(dirs, ', ') .. ')',
      kind = 'agentd.commands',
      format_item = M.label,
    }, function(c)
      if not c then
        return
      end
      if not M.runnable(c) then
        ui.notify(M.label(c), vim.log.levels.WARN)
        if type(c.path) == 'string' then
          vim.cmd('tabedit ' .. vim.fn.fnameescape(c.path))
        end
        return
      end
      local chat = require('agentd.chat')
      chat.open({ focus = 'compose' })
      local buf = chat.compose_buf()
      local text = '/' .. c.name .. ' '
      api.nvim_buf_set_lines(buf, 0, -1, false, { text })
      local _, cwin = chat.wins()
      if cwin then
        api.nvim_win_set_cursor(cwin, { 1, #text })
      end
      vim.cmd('startinsert!')
    end)
  end)
end

return M
