-- The restore preview: what an undo or a rewind would do, in a tab of its
-- own, before anything is written (agent/undo and agent/rewind with
-- dryRun). The files it would restore come with their diffs; a file that
-- changed since the agent's change (a conflict) comes first, with the diff
-- of what the restore would do to it, and is written only if the user says
-- so: restore the rest and leave it (skip), or restore it too (overwrite).
-- Closing the tab writes nothing. The lines are built by M.lines (pure);
-- the keys call back into agentd.undo.
local config = require('agentd.config')

local api = vim.api
local M = {}

---@class agentd.RestoreView
---@field title string           what would be undone, for people
---@field rewind boolean|nil     a rewind: the conversation is cut too
---@field result table           the dry run's result ({status, undone, files, conflicts, notes, rewound})
---@field runs table<string, string>|nil a rewind: run id -> its prompt, to name the runs it cuts
---@field again string|nil       why the preview shows again (something changed since the last one)

-- What a restore does to a file, by the status of its diff (from the file
-- as it is now to what the restore puts back).
local DOES = { added = 'comes back', deleted = 'is removed', modified = 'is restored', moved = 'is moved back' }
local MARK = { added = 'A', deleted = 'D', modified = 'M', moved = 'R' }

local function list(v)
  return type(v) == 'table' and v or {}
end

local function split(text)
  local out = {}
  for l in ((type(text) == 'string' and text or '') .. '\n'):gmatch('(.-)\r?\n') do
    out[#out + 1] = l
  end
  if out[#out] == '' then
    out[#out] = nil
  end
  return out
end

--- The conflicts the user may overwrite (changed files; a missing content
--- is never written) and those that are missing.
---@param result table
---@return table[] changed, table[] missing
function M.conflicts(result)
  local changed, missing = {}, {}
  for _, c in ipairs(list(result.conflicts)) do
    if type(c) == 'table' then
      table.insert(c.kind == 'missing' and missing or changed, c)
    end
  end
  return changed, missing
end

--- The actions the preview offers: apply (nothing conflicts), skip and
--- overwrite (something conflicts; overwrite only when a changed file can
--- be overwritten), conversation (a rewind: cut the conversation only),
--- close. Each: {name, key, label}.
---@param v agentd.RestoreView
---@return table[]
function M.actions(v)
  local k = config.values.keymaps.restore
  local changed, missing = M.conflicts(v.result)
  local out = {}
  local function add(name, label)
    if k[name] and k[name] ~= '' then
      out[#out + 1] = { name = name, key = k[name], label = label }
    end
  end
  local nfiles = #list(v.result.files)
  if #changed + #missing == 0 then
    add('apply', v.rewind and (nfiles > 0 and 'rewind and restore' or 'rewind') or 'restore')
  else
    add('skip', (#changed > 0 and 'leave the changed files' or 'leave them') .. (nfiles > 0 and ', restore the rest' or ''))
    if #changed > 0 then
      add('overwrite', 'restore the changed files too')
    end
  end
  if v.rewind and (nfiles > 0 or #changed + #missing > 0) then
    add('conversation', 'rewind the conversation only, keep the files')
  end
  add('close', 'cancel')
  return out
end

--- The preview's lines and their highlights ({line, group}).
---@param v agentd.RestoreView
---@return string[] lines, table[] hl
function M.lines(v)
  local r = v.result
  local lines, hl = {}, {}
  local function push(s, group)
    lines[#lines + 1] = s
    if group then
      hl[#hl + 1] = { #lines, group }
    end
  end
  local function diff(text)
    for _, l in ipairs(split(text)) do
      push(l)
    end
  end
  push(v.title, 'Title')
  local undone = list(r.undone)
  if #undone > 0 then
    push(('Undoes %s %s; nothing is written until you choose.'):format(#undone == 1 and 'change' or 'changes',
      table.concat(undone, ', ')), 'Comment')
  else
    push('Nothing is written until you choose.', 'Comment')
  end
  if v.again then
    push('⚠ ' .. v.again, 'WarningMsg')
  end
  if v.rewind then
    local cut = {}
    for _, id in ipairs(list(r.rewound)) do
      local p = v.runs and v.runs[id]
      cut[#cut + 1] = p and ('"' .. (p:gsub('\n.*', ' …')) .. '"') or id
    end
    if #cut > 0 then
      push(('The conversation goes back to before %s: %d run%s cut (%s); they stay in the chat, marked rewound.')
        :format(cut[1], #cut, #cut == 1 and '' or 's', table.concat(cut, ', ')))
    end
  end
  local parts = {}
  for _, a in ipairs(M.actions(v)) do
    parts[#parts + 1] = a.key .. ' ' .. a.label
  end
  push('Keys: ' .. table.concat(parts, ' · '), 'Comment')
  push('')
  local changed, missing = M.conflicts(r)
  if #changed + #missing > 0 then
    push(('Conflicts (%d): changed since, not written unless you say so'):format(#changed + #missing), 'WarningMsg')
    for _, c in ipairs(changed) do
      push(('! %s: %s'):format(tostring(c.path), tostring(c.reason or 'it changed since')), 'WarningMsg')
      if type(c.diff) == 'table' then
        diff(c.diff.diff)
      end
    end
    for _, c in ipairs(missing) do
      push(('✗ %s: cannot be restored: %s'):format(tostring(c.path), tostring(c.reason or 'its content was not kept')),
        'WarningMsg')
    end
    push('')
  end
  local files = list(r.files)
  if #files > 0 then
    push(('Files to restore (%d):'):format(#files), 'Title')
    for _, f in ipairs(files) do
      push(('  %s %s %s'):format(MARK[f.status] or '?', tostring(f.path), DOES[f.status] or ''))
    end
    push('')
    for i, f in ipairs(files) do
      if i > 1 then
        push('') -- one diff per file, apart: easier to read than one block
      end
      diff(f.diff)
    end
  elseif #changed + #missing == 0 then
    push(v.rewind and 'No files to restore: only the conversation goes back.' or 'No files to restore.')
  end
  for _, n in ipairs(list(r.notes)) do
    push('note: ' .. tostring(n), 'Comment')
  end
  return lines, hl
end

-- ---------------------------------------------------------------- the tab

---@class agentd.RestoreTab
---@field tab integer
---@field buf integer
---@field prev_tab integer
local current

local NS = api.nvim_create_namespace('agentd.restore')

--- The open preview ({tab, buf}) or nil.
function M.current()
  if current and api.nvim_tabpage_is_valid(current.tab) and api.nvim_buf_is_valid(current.buf) then
    return current
  end
  current = nil
end

--- Closes the preview (nothing is written).
function M.close()
  local c = current
  current = nil
  if not c then
    return
  end
  if api.nvim_buf_is_valid(c.buf) then
    pcall(api.nvim_buf_delete, c.buf, { force = true })
  end
  if api.nvim_tabpage_is_valid(c.tab) then
    pcall(vim.cmd, 'tabclose! ' .. api.nvim_tabpage_get_number(c.tab))
  end
  if api.nvim_tabpage_is_valid(c.prev_tab) then
    pcall(api.nvim_set_current_tabpage, c.prev_tab)
  end
end

--- The preview's text (for tests): '' when none is open.
function M.text()
  local c = M.current()
  return c and table.concat(api.nvim_buf_get_lines(c.buf, 0, -1, false), '\n') or ''
end

local function esc(s)
  return (s:gsub('%%', '%%%%'))
end

--- Shows the preview (replacing one already open). on_action(name) is
--- called with the action the user picks ('apply', 'skip', 'overwrite',
--- 'conversation'); close writes nothing.
---@param v agentd.RestoreView
---@param on_action fun(name: string)
function M.show(v, on_action)
  local prev = api.nvim_get_current_tabpage()
  if M.current() then
    prev = current.prev_tab
    M.close()
  end
  local lines, hl = M.lines(v)
  vim.cmd('tabnew')
  local tab = api.nvim_get_current_tabpage()
  local placeholder = api.nvim_get_current_buf()
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = 'nofile'
  local name = (v.rewind and 'agentd rewind' or 'agentd undo') .. ' (preview)'
  if not pcall(api.nvim_buf_set_name, buf, name) then
    api.nvim_buf_set_name(buf, name .. ' ' .. buf)
  end
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = 'diff'
  api.nvim_win_set_buf(0, buf)
  if api.nvim_buf_is_valid(placeholder) and placeholder ~= buf then
    pcall(api.nvim_buf_delete, placeholder, { force = true })
  end
  for _, h in ipairs(hl) do
    api.nvim_buf_add_highlight(buf, NS, h[2], h[1] - 1, 0, -1)
  end
  vim.wo.wrap = false
  current = { tab = tab, buf = buf, prev_tab = prev }
  local parts = {}
  for _, a in ipairs(M.actions(v)) do
    parts[#parts + 1] = a.key .. ' ' .. a.label
    local action = a.name
    vim.keymap.set('n', a.key, function()
      if action == 'close' then
        return M.close()
      end
      on_action(action)
    end, { buffer = buf, nowait = true, silent = true, desc = 'agentd: ' .. a.label })
  end
  vim.wo.statusline = esc(' ' .. table.concat(parts, ' · '))
  -- closing the tab some other way cancels
  api.nvim_create_autocmd('BufWipeout', {
    buffer = buf,
    once = true,
    callback = function()
      vim.schedule(function()
        if current and current.buf == buf then
          M.close()
        end
      end)
    end,
  })
end

return M
