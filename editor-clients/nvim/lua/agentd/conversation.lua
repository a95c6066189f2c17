-- The conversation buffer: a scratch buffer in a split that shows the
-- current session's runs (prompt, streamed answer, plan, tool calls, input
-- requests, files changed, final state).
local config = require('agentd.config')

local api = vim.api
local M = {}

M.NAME = 'agentd://conversation'

local state = { buf = nil, pending_render = false, source = nil }

local function valid_buf()
  return state.buf and api.nvim_buf_is_valid(state.buf)
end

function M.buf()
  if valid_buf() then
    return state.buf
  end
  local existing = vim.fn.bufnr(M.NAME)
  local buf = existing > 0 and existing or api.nvim_create_buf(false, true)
  api.nvim_buf_set_name(buf, M.NAME)
  api.nvim_buf_set_option(buf, 'buftype', 'nofile')
  api.nvim_buf_set_option(buf, 'bufhidden', 'hide')
  api.nvim_buf_set_option(buf, 'swapfile', false)
  api.nvim_buf_set_option(buf, 'filetype', 'markdown')
  api.nvim_buf_set_option(buf, 'modifiable', false)
  local km = config.values.keymaps.conversation or {}
  local function map(lhs, fn, desc)
    if lhs and lhs ~= '' then
      vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true, silent = true, desc = desc })
    end
  end
  map(km.close, function()
    M.close()
  end, 'Close the agentd conversation')
  map(km.cancel, function()
    require('agentd').cancel()
  end, 'Cancel the agentd run')
  map(km.pending, function()
    require('agentd').pending()
  end, 'Show pending agentd requests')
  state.buf = buf
  return buf
end

function M.win()
  if not valid_buf() then
    return nil
  end
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    if api.nvim_win_get_buf(w) == state.buf then
      return w
    end
  end
end

--- Opens the conversation in a split of the current tab (or focuses nothing
--- if it is already shown). Returns the window.
function M.open(opts)
  opts = opts or {}
  local buf = M.buf()
  local win = M.win()
  if win then
    return win
  end
  local c = config.values.conversation
  local cur = api.nvim_get_current_win()
  local pos = c.position
  if pos == 'tab' then
    vim.cmd('tab sbuffer ' .. buf)
  elseif pos == 'left' then
    vim.cmd('topleft vertical sbuffer ' .. buf)
    vim.cmd('vertical resize ' .. c.width)
  elseif pos == 'below' then
    vim.cmd('botright sbuffer ' .. buf)
    vim.cmd('resize ' .. c.height)
  elseif pos == 'above' then
    vim.cmd('topleft sbuffer ' .. buf)
    vim.cmd('resize ' .. c.height)
  else
    vim.cmd('botright vertical sbuffer ' .. buf)
    vim.cmd('vertical resize ' .. c.width)
  end
  win = api.nvim_get_current_win()
  api.nvim_win_set_option(win, 'wrap', true)
  api.nvim_win_set_option(win, 'linebreak', true)
  api.nvim_win_set_option(win, 'number', false)
  api.nvim_win_set_option(win, 'winfixwidth', true)
  if not opts.focus and pos ~= 'tab' and api.nvim_win_is_valid(cur) then
    api.nvim_set_current_win(cur)
  end
  M.render_now()
  return win
end

function M.close()
  local win = M.win()
  if win and #api.nvim_list_wins() > 1 then
    api.nvim_win_close(win, false)
  end
end

function M.toggle()
  if M.win() then
    M.close()
  else
    M.open({ focus = true })
  end
end

local STATUS_MARK = {
  pending = '[ ]',
  in_progress = '[>]',
  completed = '[x]',
  failed = '[!]',
}

local TOOL_MARK = {
  pending = '…',
  in_progress = '…',
  completed = '✓',
  failed = '✗',
}

local function split(text)
  local out = {}
  for line in ((text or '') .. '\n'):gmatch('(.-)\r?\n') do
    out[#out + 1] = line
  end
  return out
end

local function push_text(lines, text, indent)
  for _, l in ipairs(split(text)) do
    lines[#lines + 1] = (indent or '') .. l
  end
end

local function one_line(v)
  if type(v) ~= 'string' then
    return ''
  end
  return (v:gsub('\n.*', ' …'))
end

local function render_request(lines, item)
  local r = item.req
  local head
  if r.kind == 'confirm_command' then
    head = ('? Run `%s` in %s'):format(one_line(r.command), r.cwd or '.')
  elseif r.kind == 'confirm_write' then
    local paths = {}
    for _, f in ipairs(r.diff or {}) do
      paths[#paths + 1] = f.path
    end
    head = '? ' .. (r.title ~= '' and r.title or 'Write') .. (#paths > 0 and (' (' .. table.concat(paths, ', ') .. ')') or '')
  else
    head = '? ' .. one_line(r.message ~= '' and r.message or r.title)
  end
  if item.outcome then
    local by = item.by
    if by == 'user' or by == item.outcome or by == vim.NIL then
      by = nil
    end
    head = head .. '  → ' .. item.outcome .. (by and (' (' .. by .. ')') or '')
  else
    head = head .. '  → waiting for you (:AgentdPending)'
  end
  lines[#lines + 1] = head
end

-- A running command's output as it streams: its last `max` lines (what the
-- run model kept), a progress line rewritten with \r showing as it is now.
local function render_live(lines, item, max)
  local out = split(item.live)
  if out[#out] == '' then
    out[#out] = nil
  end
  local first = math.max(1, #out - max + 1)
  local hidden = (item.live_dropped or 0) + first - 1
  if hidden > 0 then
    lines[#lines + 1] = ('    … %d earlier lines'):format(hidden)
  end
  for i = first, #out do
    local l = out[i]:gsub('\r+$', '')
    lines[#lines + 1] = '    ' .. (l:match('[^\r]*$'))
  end
end

--- The lines for one run.
function M.render_run(run)
  local lines = {}
  local c = config.values.conversation
  lines[#lines + 1] = '## > ' .. one_line(run.prompt or ('run ' .. run.id))
  lines[#lines + 1] = ''
  for _, item in ipairs(run.items) do
    if item.type == 'text' then
      push_text(lines, item.text)
    elseif item.type == 'plan' then
      lines[#lines + 1] = 'Plan:' .. (item.explanation and (' ' .. one_line(item.explanation)) or '')
      for _, e in ipairs(item.entries or {}) do
        lines[#lines + 1] = '  ' .. (STATUS_MARK[e.status] or '[?]') .. ' ' .. one_line(e.content)
      end
    elseif item.type == 'tool' then
      local s = ('● %s [%s] %s'):format(one_line(item.title or item.id), item.kind or 'tool', TOOL_MARK[item.status] or item.status or '')
      if item.status == 'failed' or item.isError then
        s = s .. ' failed'
      end
      if item.exitCode ~= nil and item.exitCode ~= vim.NIL then
        s = s .. ' exit ' .. tostring(item.exitCode)
      end
      if type(item.durationMs) == 'number' and item.durationMs > 0 then
        s = s .. (' (%d ms)'):format(item.durationMs)
      end
      lines[#lines + 1] = s
      if type(item.live) == 'string' and item.live ~= '' and c.tool_output_lines > 0 then
        render_live(lines, item, c.tool_output_lines)
      elseif type(item.output) == 'string' and item.output ~= '' and c.tool_output_lines > 0 then
        local out = split(item.output)
        if out[#out] == '' then
          out[#out] = nil
        end
        for i = 1, math.min(#out, c.tool_output_lines) do
          lines[#lines + 1] = '    ' .. out[i]
        end
        if #out > c.tool_output_lines then
          lines[#lines + 1] = ('    … %d more lines'):format(#out - c.tool_output_lines)
        end
      end
    elseif item.type == 'request' then
      render_request(lines, item)
    elseif item.type == 'files' then
      lines[#lines + 1] = 'Files changed:'
      for _, f in ipairs(item.files or {}) do
        local st = ({ added = 'A', modified = 'M', deleted = 'D', moved = 'R' })[f.status] or '?'
        lines[#lines + 1] = '  ' .. st .. ' ' .. f.path
      end
    end
    -- keep a blank line between blocks (not inside streamed text)
    if item.type ~= 'text' then
      lines[#lines + 1] = ''
    elseif lines[#lines] ~= '' then
      lines[#lines + 1] = ''
    end
  end
  local status = '— ' .. (run.state or 'running')
  if run.stop_reason and run.stop_reason ~= '' and run.stop_reason ~= run.state then
    status = status .. ' (' .. run.stop_reason .. ')'
  end
  if run.error and run.error ~= '' then
    status = status .. ': ' .. one_line(run.error)
  end
  if run.usage and type(run.usage.totalTokens) == 'number' then
    status = status .. (' · %d tokens'):format(run.usage.totalTokens)
  end
  lines[#lines + 1] = status
  lines[#lines + 1] = ''
  return lines
end

--- source() returns { title = ..., runs = {...} }.
function M.set_source(fn)
  state.source = fn
end

function M.render_now()
  state.pending_render = false
  if not valid_buf() or not state.source then
    return
  end
  local src = state.source()
  local lines = { '# agentd' .. (src.title and (' · ' .. src.title) or ''), '' }
  if #src.runs == 0 then
    lines[#lines + 1] = 'No run yet. :Agentd {prompt} starts one.'
  end
  for _, run in ipairs(src.runs) do
    vim.list_extend(lines, M.render_run(run))
  end
  local buf = state.buf
  api.nvim_buf_set_option(buf, 'modifiable', true)
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  api.nvim_buf_set_option(buf, 'modifiable', false)
  local cur = api.nvim_get_current_win()
  for _, w in ipairs(api.nvim_list_wins()) do
    if w ~= cur and api.nvim_win_get_buf(w) == buf then
      api.nvim_win_set_cursor(w, { #lines, 0 })
    end
  end
end

--- Renders soon (several updates in one tick render once).
function M.render()
  if state.pending_render then
    return
  end
  state.pending_render = true
  vim.schedule(M.render_now)
end

--- The buffer's lines (for tests and :AgentdLog-like uses).
function M.lines()
  if not valid_buf() then
    return {}
  end
  return api.nvim_buf_get_lines(state.buf, 0, -1, false)
end

return M
