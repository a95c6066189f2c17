-- A panel: a centred float of lines with keys of its own (the rules, the
-- sessions). Each line may carry an item; a key's action gets the item of
-- the cursor's line. Closing it (q, <Esc>) does nothing else.
local api = vim.api
local M = {}

---@class agentd.Panel
---@field name string
---@field win integer|nil
---@field buf integer|nil
---@field items table<integer, any> line -> item
---@field keys table[]            {lhs, fn(item, panel), desc}

---@type table<string, agentd.Panel>
local panels = {}

local NS = api.nvim_create_namespace('agentd.panel')

--- Whether panel name is on screen.
function M.is_open(name)
  local p = panels[name]
  return p ~= nil and p.win ~= nil and api.nvim_win_is_valid(p.win) and api.nvim_buf_is_valid(p.buf)
end

--- The panel's text ('' when it is closed).
function M.text(name)
  return M.is_open(name) and table.concat(api.nvim_buf_get_lines(panels[name].buf, 0, -1, false), '\n') or ''
end

function M.close(name)
  local p = panels[name]
  panels[name] = nil
  if p and p.win and api.nvim_win_is_valid(p.win) then
    pcall(api.nvim_win_close, p.win, true)
  end
end

local function layout(lines, width)
  width = math.min(width or 100, vim.o.columns - 4)
  local rows = 0
  for _, l in ipairs(lines) do
    rows = rows + math.max(1, math.ceil(vim.fn.strdisplaywidth(l) / width))
  end
  local height = math.max(3, math.min(rows, vim.o.lines - vim.o.cmdheight - 6))
  return {
    relative = 'editor',
    width = width,
    height = height,
    row = math.max(0, math.floor((vim.o.lines - height) / 2) - 1),
    col = math.max(0, math.floor((vim.o.columns - width) / 2)),
  }
end

--- The item of the cursor's line in panel name (or of the nearest line
--- above that has one).
function M.item(name)
  local p = panels[name]
  if not (p and M.is_open(name)) then
    return nil
  end
  local line = api.nvim_win_get_cursor(p.win)[1]
  for i = line, 1, -1 do
    if p.items[i] ~= nil then
      return p.items[i]
    end
  end
end

--- Shows (or redraws) panel name. content: {lines, hl = {{line, group}},
--- items = {line -> item}}; keys: {{lhs, fn(item), desc}} (only when it
--- opens). The cursor stays on the same line when it redraws.
---@param name string
---@param content {lines: string[], hl: table[]|nil, items: table|nil}
---@param keys table[]|nil
---@param opts {width: integer|nil, filetype: string|nil}|nil
function M.show(name, content, keys, opts)
  opts = opts or {}
  local p = panels[name]
  if not M.is_open(name) then
    p = { name = name, items = {}, keys = keys or {} }
    panels[name] = p
    p.buf = api.nvim_create_buf(false, true)
    vim.bo[p.buf].buftype = 'nofile'
    vim.bo[p.buf].bufhidden = 'wipe'
    vim.bo[p.buf].filetype = opts.filetype or 'agentd_panel'
    local cfg = layout(content.lines, opts.width)
    cfg.style, cfg.border = 'minimal', 'rounded'
    p.win = api.nvim_open_win(p.buf, true, cfg)
    vim.wo[p.win].wrap = true
    vim.wo[p.win].linebreak = true
    vim.wo[p.win].cursorline = true
    local function close()
      M.close(name)
    end
    vim.keymap.set('n', 'q', close, { buffer = p.buf, nowait = true, silent = true, desc = 'agentd: close' })
    vim.keymap.set('n', '<Esc>', close, { buffer = p.buf, nowait = true, silent = true, desc = 'agentd: close' })
    for _, k in ipairs(p.keys) do
      vim.keymap.set('n', k[1], function()
        k[2](M.item(name))
      end, { buffer = p.buf, nowait = true, silent = true, desc = 'agentd: ' .. (k[3] or k[1]) })
    end
    local buf = p.buf
    api.nvim_create_autocmd('BufWipeout', {
      buffer = buf,
      once = true,
      callback = function()
        if panels[name] and panels[name].buf == buf then
          panels[name] = nil
        end
      end,
    })
  else
    api.nvim_win_set_config(p.win, layout(content.lines, opts.width))
  end
  local cursor = api.nvim_win_get_cursor(p.win)
  p.items = content.items or {}
  vim.bo[p.buf].modifiable = true
  api.nvim_buf_set_lines(p.buf, 0, -1, false, content.lines)
  vim.bo[p.buf].modifiable = false
  api.nvim_buf_clear_namespace(p.buf, NS, 0, -1)
  for _, h in ipairs(content.hl or {}) do
    pcall(api.nvim_buf_add_highlight, p.buf, NS, h[2], h[1] - 1, 0, -1)
  end
  pcall(api.nvim_win_set_cursor, p.win, { math.min(cursor[1], #content.lines), 0 })
  return p
end

--- Puts the cursor of panel name on the first line whose item satisfies pred.
function M.goto_item(name, pred)
  local p = panels[name]
  if not (p and M.is_open(name)) then
    return
  end
  local lines = {}
  for line in pairs(p.items) do
    lines[#lines + 1] = line
  end
  table.sort(lines)
  for _, line in ipairs(lines) do
    if pred(p.items[line]) then
      return api.nvim_win_set_cursor(p.win, { line, 0 })
    end
  end
end

return M
