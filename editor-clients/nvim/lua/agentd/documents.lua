-- Document sync: tells the daemon which workspace files are open and saved
-- (textDocument/didOpen, didSave, didClose), and reloads the buffers of
-- files the agent changed, so that a later :w never writes the old text
-- over the agent's.
local P = require('agentd.protocol')
local S = require('agentd.state')
local lifecycle = require('agentd.lifecycle')
local ui = require('agentd.ui')

local api = vim.api
local M = {}

--- The absolute path of a buffer's workspace file, or nil (not a file, or
--- outside the workspace: the daemon would ignore it).
---@param buf integer
---@return string|nil
function M.path(buf)
  if not api.nvim_buf_is_valid(buf) or vim.bo[buf].buftype ~= '' then
    return nil
  end
  local name = api.nvim_buf_get_name(buf)
  if name == '' or name:match('^%a[%w+.-]*://') then
    return nil
  end
  local path = vim.fn.fnamemodify(name, ':p')
  local root = lifecycle.root()
  if path:sub(1, #root + 1) ~= root .. '/' then
    return nil
  end
  return path
end

--- The workspace-relative path of a buffer's file, or nil.
---@param buf integer
---@return string|nil
function M.relative(buf)
  local path = M.path(buf)
  return path and path:sub(#S.root + 2)
end

---@param buf integer
function M.did_open(buf)
  if not (S.ready and S.conn) or S.opened[buf] or not api.nvim_buf_is_loaded(buf) then
    return
  end
  local path = M.path(buf)
  if not path then
    return
  end
  local uri = vim.uri_from_fname(path)
  S.opened[buf] = uri
  local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
  lifecycle.notify_now(P.notification.did_open, {
    textDocument = {
      uri = uri,
      languageId = vim.bo[buf].filetype,
      version = api.nvim_buf_get_changedtick(buf),
      text = table.concat(lines, '\n') .. '\n',
    },
  })
end

---@param buf integer
function M.did_save(buf)
  if not S.opened[buf] then
    return M.did_open(buf)
  end
  lifecycle.notify_now(P.notification.did_save, { textDocument = { uri = S.opened[buf] } })
end

---@param buf integer
function M.did_close(buf)
  local uri = S.opened[buf]
  S.opened[buf] = nil
  if uri then
    lifecycle.notify_now(P.notification.did_close, { textDocument = { uri = uri } })
  end
end

--- Announces every loaded workspace buffer (after each initialize).
function M.open_all()
  for _, buf in ipairs(api.nvim_list_bufs()) do
    M.did_open(buf)
  end
end

--- The loaded buffer of a workspace path (relative or absolute), or nil.
---@param path string
---@return integer|nil
local function loaded_buffer(path)
  local abs = path:sub(1, 1) == '/' and path or (lifecycle.root() .. '/' .. path)
  abs = vim.fn.fnamemodify(abs, ':p')
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == '' then
      local name = api.nvim_buf_get_name(buf)
      if name ~= '' and vim.fn.fnamemodify(name, ':p') == abs then
        return buf
      end
    end
  end
end

-- Files the user was already warned about, so one run warns once per file.
local warned = {}

--- Reloads the buffers of files the agent changed. An unmodified buffer is
--- reloaded at once (:checktime with 'autoread' for that buffer; undo still
--- brings the old text back). A buffer with unsaved changes is left alone
--- and the user is told: reloading would lose their edits, and Vim itself
--- warns before a :w overwrites the newer file.
---@param paths string[]
function M.reload(paths)
  for _, path in ipairs(paths) do
    local buf = loaded_buffer(path)
    if buf and require('agentd.language').hidden[buf] then
      buf = nil -- loaded for the daemon's language questions: agentd.language keeps it in step
    end
    if buf then
      if vim.bo[buf].modified then
        if not warned[buf .. path] then
          warned[buf .. path] = true
          ui.notify(('the agent changed %s, which has unsaved changes here: :e! loads its version'):format(path),
            vim.log.levels.WARN)
        end
      elseif vim.fn.filereadable(api.nvim_buf_get_name(buf)) == 0 then
        -- the file is gone (a delete, or an undo of its creation): the
        -- buffer stays as it is, and :checktime would only warn
        if not warned[buf .. path .. ':gone'] then
          warned[buf .. path .. ':gone'] = true
          ui.notify(('%s was removed; its buffer is still open (:bwipeout closes it, :w writes it again)'):format(path))
        end
      else
        warned[buf .. path] = nil
        warned[buf .. path .. ':gone'] = nil
        local tick = api.nvim_buf_get_changedtick(buf)
        api.nvim_buf_call(buf, function()
          vim.cmd('setlocal autoread')
          pcall(vim.cmd, 'silent checktime ' .. buf)
          vim.cmd('set autoread<')
        end)
        -- the diagnostics that count after an edit are those published from now
        require('agentd.language').note_reload(buf, api.nvim_buf_get_changedtick(buf) ~= tick)
      end
    end
  end
end

--- The paths in a list of {path, ...} entries (tool_call_update.files,
--- files_changed.files).
---@param files table[]|nil
---@return string[]
function M.paths_of(files)
  local out = {}
  for _, f in ipairs(type(files) == 'table' and files or {}) do
    if type(f) == 'table' and type(f.path) == 'string' then
      out[#out + 1] = f.path
    end
  end
  return out
end

return M
