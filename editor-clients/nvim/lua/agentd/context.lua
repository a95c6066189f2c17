-- Context in the compose window: what a prompt points at, typed in it.
--   @path     a file of the workspace: it goes along as context.files
--   #name     an open buffer (#buffer: the file you were in): its file goes
--             along, and its text too when it has unsaved changes
--             (context.attachments, "cart.go (unsaved)")
--   #diff     the uncommitted changes (git diff HEAD), attached
--   /file, /buffer, /diff  a picker of files or buffers, or #diff
-- Typing @, # or / at the start of a word opens a completion menu that
-- narrows as you type (substring and in-order matching, so "@cart" finds
-- src/cart.go); 'omnifunc' (<C-x><C-o>) completes them too. The prompt is
-- sent as typed; M.resolve reads the tokens back into the run's context.
local S = require('agentd.state')
local ui = require('agentd.ui')

local api = vim.api
local uv = vim.uv or vim.loop
local M = {}

--- The file list is asked for again after this long (ms).
M.FRESH_MS = 5000
--- At most this many files are listed.
M.MAX_FILES = 20000
--- At most this many items in a menu.
M.MAX_ITEMS = 200
--- An attachment is cut after this many bytes.
M.MAX_ATTACHMENT = 256 * 1024

local cache = { at = -M.FRESH_MS, root = nil, files = {} }

local function root()
  return require('agentd.lifecycle').root()
end

local function lines_of(cmd)
  local out = vim.fn.systemlist(cmd)
  if vim.v.shell_error ~= 0 then
    return nil
  end
  return out
end

--- The workspace's files, relative: git's (tracked and untracked, not
--- ignored), else rg --files, else a glob.
---@return string[]
function M.files()
  local r = root()
  if cache.root == r and uv.now() - cache.at < M.FRESH_MS then
    return cache.files
  end
  local files = lines_of({ 'git', '-C', r, 'ls-files', '--cached', '--others', '--exclude-standard' })
  if not files and vim.fn.executable('rg') == 1 then
    files = lines_of({ 'rg', '--files', r })
    for i, f in ipairs(files or {}) do
      files[i] = f:sub(1, #r + 1) == r .. '/' and f:sub(#r + 2) or f
    end
  end
  if not files then
    files = {}
    for _, f in ipairs(vim.fn.globpath(r, '**/*', false, true)) do
      if vim.fn.isdirectory(f) == 0 then
        files[#files + 1] = f:sub(#r + 2)
      end
    end
  end
  if #files > M.MAX_FILES then
    files = vim.list_slice(files, 1, M.MAX_FILES)
  end
  table.sort(files)
  cache = { at = uv.now(), root = r, files = files }
  return files
end

--- The open buffers of workspace files: {path, buf, modified}, the one you
--- were in last first.
---@return table[]
function M.buffers()
  local documents = require('agentd.documents')
  local out = {}
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(b) and vim.bo[b].buflisted then
      local rel = documents.relative(b)
      if rel then
        table.insert(out, b == S.last_file_buf and 1 or #out + 1, { path = rel, buf = b, modified = vim.bo[b].modified })
      end
    end
  end
  return out
end

-- How well query matches path (higher is better), or nil: the file's name
-- starting with it, containing it, the path containing it, or its
-- characters in order.
local function score(path, query)
  if query == '' then
    return 1
  end
  local p, q = path:lower(), query:lower()
  local base = p:match('[^/]*$')
  if base:sub(1, #q) == q then
    return 4
  elseif base:find(q, 1, true) then
    return 3
  elseif p:find(q, 1, true) then
    return 2
  end
  local at = 1
  for i = 1, #q do
    at = p:find(q:sub(i, i), at, true)
    if not at then
      return nil
    end
    at = at + 1
  end
  return 1
end

local function ranked(list, query, key)
  local hits = {}
  for i, it in ipairs(list) do
    local s = score(key(it), query)
    if s then
      hits[#hits + 1] = { it = it, s = s, i = i }
    end
  end
  table.sort(hits, function(a, b)
    if a.s ~= b.s then
      return a.s > b.s
    end
    return a.i < b.i
  end)
  local out = {}
  for i = 1, math.min(#hits, M.MAX_ITEMS) do
    out[i] = hits[i].it
  end
  return out
end

local BUILTINS = {
  { name = 'file', menu = 'pick a file to attach' },
  { name = 'buffer', menu = 'pick an open buffer to attach' },
  { name = 'diff', menu = 'attach the uncommitted changes (#diff)' },
}

--- Completion items for a token: '@…' files, '#…' buffers and #diff,
--- '/…' the pickers (and, in the prompt's first word, the custom
--- commands).
---@param token string what is typed, sigil included
---@param first_word boolean the token is the prompt's first word
---@return table[]
function M.items(token, first_word)
  local sigil, query = token:sub(1, 1), token:sub(2)
  local out = {}
  if sigil == '@' then
    for _, f in ipairs(ranked(M.files(), query, function(f)
      return f
    end)) do
      out[#out + 1] = { word = '@' .. f .. ' ', abbr = '@' .. f, kind = 'file', dup = 0, empty = 0 }
    end
  elseif sigil == '#' then
    local list = { { special = 'diff', menu = 'the uncommitted changes (git diff HEAD)' },
      { special = 'buffer', menu = 'the file you were in' } }
    for _, b in ipairs(M.buffers()) do
      list[#list + 1] = { path = b.path, menu = b.modified and 'unsaved: its text goes along' or nil }
    end
    for _, it in ipairs(ranked(list, query, function(it)
      return it.special or it.path
    end)) do
      local name = '#' .. (it.special or it.path)
      out[#out + 1] = { word = name .. ' ', abbr = name, menu = it.menu, kind = it.special and 'context' or 'buffer', dup = 0,
        empty = 0 }
    end
  elseif sigil == '/' then
    local commands = require('agentd.commands')
    local custom = {}
    if first_word then
      out = commands.items(commands.list(), query)
      for _, it in ipairs(out) do
        custom[it.abbr:match('^/(%S+)')] = true
      end
    end
    for _, b in ipairs(BUILTINS) do
      if not custom[b.name] and b.name:sub(1, #query) == query then
        out[#out + 1] = { word = '/' .. b.name .. ' ', abbr = '/' .. b.name, menu = b.menu, kind = 'agentd', dup = 0,
          empty = 0, user_data = 'agentd:' .. b.name }
      end
    end
  end
  return out
end

-- The token before the cursor in the current line (a sigil at the start of
-- a word, then no space), its start column (0-based) and whether it is the
-- prompt's first word; nil when there is none.
local function token_before_cursor()
  local row, col = unpack(api.nvim_win_get_cursor(0))
  local before = api.nvim_get_current_line():sub(1, col)
  local start, tok = before:match('()([@#/][^%s@#]*)$')
  if not start or (start > 1 and not before:sub(start - 1, start - 1):match('%s')) then
    return nil
  end
  local first = row == 1 and start == 1
  if tok:sub(1, 1) == '/' and not first and tok:find('/', 2, true) then
    return nil -- a path being typed, not a picker
  end
  return tok, start - 1, first
end

--- Opens (or narrows) the menu for the token before the cursor.
function M.complete_now()
  if api.nvim_get_mode().mode:sub(1, 1) ~= 'i' then
    return
  end
  local tok, col, first = token_before_cursor()
  if not tok then
    return
  end
  local commands = require('agentd.commands')
  if tok:sub(1, 1) == '/' and first and not commands.fresh() then
    -- the custom commands, listed once the daemon answers (then again
    -- from time to time: one added since shows)
    local had = S.commands ~= nil
    commands.refresh(function()
      if not had then
        vim.schedule(M.complete_now)
      end
    end)
    if not had then
      return
    end
  end
  local items = M.items(tok, first)
  if #items > 0 then
    vim.fn.complete(col + 1, items)
  end
end

-- Replaces what a picker item inserted ('/file ') with text, and goes on
-- typing after it.
local function replace_picked(buf, row, col, len, text)
  if not api.nvim_buf_is_valid(buf) then
    return
  end
  local line = api.nvim_buf_get_lines(buf, row - 1, row, false)[1] or ''
  local new = line:sub(1, col) .. text .. line:sub(col + len + 1)
  api.nvim_buf_set_lines(buf, row - 1, row, false, { new })
  for _, w in ipairs(api.nvim_list_wins()) do
    if api.nvim_win_get_buf(w) == buf then
      api.nvim_set_current_win(w)
      local at = col + #text
      if at >= #new then
        api.nvim_win_set_cursor(w, { row, math.max(0, #new - 1) })
        vim.cmd('startinsert!')
      else
        api.nvim_win_set_cursor(w, { row, at })
        vim.cmd('startinsert')
      end
      return
    end
  end
end

--- A picker item was taken (CompleteDone): /file and /buffer open a
--- picker whose choice becomes @path or #path; /diff becomes #diff.
---@param item table v:completed_item
function M.completed(item)
  local what = type(item) == 'table' and type(item.user_data) == 'string' and item.user_data:match('^agentd:(%a+)$')
  if not what then
    return
  end
  local buf = api.nvim_get_current_buf()
  local row, col = unpack(api.nvim_win_get_cursor(0))
  local len = #item.word
  local start = col - len
  if what == 'diff' then
    return vim.schedule(function()
      replace_picked(buf, row, start, len, '#diff ')
    end)
  end
  vim.schedule(function()
    vim.cmd('stopinsert')
    local list, label
    if what == 'file' then
      list, label = M.files(), function(f)
        return f
      end
    else
      list, label = M.buffers(), function(b)
        return b.path .. (b.modified and '  (unsaved)' or '')
      end
    end
    vim.ui.select(list, { prompt = what == 'file' and 'agentd: attach a file' or 'agentd: attach a buffer',
      kind = 'agentd.context', format_item = label }, function(choice)
      local text = ''
      if choice then
        text = (what == 'file' and ('@' .. choice) or ('#' .. choice.path)) .. ' '
      end
      replace_picked(buf, row, start, len, text)
    end)
  end)
end

--- Sets up the compose buffer: the keys that open the menus, narrowing as
--- you type, the pickers.
---@param buf integer
function M.attach(buf)
  for _, sigil in ipairs({ '@', '#', '/' }) do
    vim.keymap.set('i', sigil, function()
      local col = api.nvim_win_get_cursor(0)[2]
      local before = api.nvim_get_current_line():sub(1, col)
      if before == '' or before:match('%s$') then
        return sigil .. "<Cmd>lua require('agentd.context').complete_now()<CR>"
      end
      return sigil
    end, { buffer = buf, expr = true, replace_keycodes = true, desc = 'agentd: ' .. sigil .. ' and its completion' })
  end
  local group = api.nvim_create_augroup('agentd.context.' .. buf, { clear = true })
  api.nvim_create_autocmd({ 'TextChangedI', 'TextChangedP' }, {
    group = group,
    buffer = buf,
    callback = function()
      local tok = token_before_cursor()
      if tok and #tok > 1 then
        M.complete_now()
      end
    end,
  })
  api.nvim_create_autocmd('CompleteDone', {
    group = group,
    buffer = buf,
    callback = function()
      M.completed(vim.v.completed_item)
    end,
  })
end

local omni_first = false

--- 'omnifunc' of the compose window (<C-x><C-o>): @files, #buffers and
--- #diff, the pickers and, in the first word, the custom commands.
---@param findstart integer
---@param base string
---@return integer|table
function M.omnifunc(findstart, base)
  if findstart == 1 then
    local tok, col, first = token_before_cursor()
    omni_first = first == true
    return tok and col or -3
  end
  if not base or base == '' then
    return {}
  end
  if base:sub(1, 1) == '/' and not S.commands then
    require('agentd.commands').refresh()
  end
  return M.items(base, omni_first)
end

-- ---------------------------------------------------------------- sending

local function git_diff()
  local out = vim.fn.system({ 'git', '-C', root(), 'diff', 'HEAD', '--' })
  if vim.v.shell_error ~= 0 then
    -- no commit yet: what is staged and what is not
    out = vim.fn.system({ 'git', '-C', root(), 'diff', '--' })
    if vim.v.shell_error ~= 0 then
      return nil, 'not a git repository'
    end
  end
  if out == '' then
    return nil, 'no uncommitted changes'
  end
  return out
end

local function bounded(text)
  if #text <= M.MAX_ATTACHMENT then
    return text
  end
  return text:sub(1, M.MAX_ATTACHMENT) .. ('\n[… %d more bytes not attached …]\n'):format(#text - M.MAX_ATTACHMENT)
end

-- ------------------------------------------------------------- images

local IMAGE_TYPES = { png = 'image/png', jpg = 'image/jpeg', jpeg = 'image/jpeg', gif = 'image/gif', webp = 'image/webp' }

--- The image type of a path by its extension, or nil.
---@param path string
---@return string|nil
function M.image_type(path)
  return IMAGE_TYPES[(path:match('%.(%w+)$') or ''):lower()]
end

local B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'

--- Base64 of bytes (vim.base64 is 0.10+).
---@param data string
---@return string
function M.base64(data)
  if vim.base64 and vim.base64.encode then
    return vim.base64.encode(data)
  end
  local out = {}
  for i = 1, #data, 3 do
    local a, b, c = data:byte(i, i + 2)
    local n = a * 65536 + (b or 0) * 256 + (c or 0)
    local d1, d2 = math.floor(n / 262144) % 64, math.floor(n / 4096) % 64
    local d3, d4 = math.floor(n / 64) % 64, n % 64
    out[#out + 1] = B64:sub(d1 + 1, d1 + 1) .. B64:sub(d2 + 1, d2 + 1) .. (b and B64:sub(d3 + 1, d3 + 1) or '=')
      .. (c and B64:sub(d4 + 1, d4 + 1) or '=')
  end
  return table.concat(out)
end

-- An image for agent/run: a workspace file by its path, another read and
-- sent whole.
local function image_of(path)
  local r = root()
  local abs = path:sub(1, 1) == '/' and path or (r .. '/' .. path)
  abs = vim.fn.fnamemodify(abs, ':p')
  if abs:sub(1, #r + 1) == r .. '/' then
    return { path = abs:sub(#r + 2) }
  end
  local f = io.open(abs, 'rb')
  if not f then
    return nil
  end
  local data = f:read('*a')
  f:close()
  return { mimeType = M.image_type(abs), data = M.base64(data), name = vim.fn.fnamemodify(abs, ':t') }
end

--- The command that prints the clipboard's image (PNG): setup{
--- images = { paste = {…} } }, else wl-paste or xclip when installed.
---@return string[]|nil
function M.paste_command()
  local c = require('agentd.config').values.images or {}
  if type(c.paste) == 'table' then
    return c.paste
  end
  if vim.fn.executable('wl-paste') == 1 then
    return { 'wl-paste', '--no-newline', '--type', 'image/png' }
  elseif vim.fn.executable('xclip') == 1 then
    return { 'xclip', '-selection', 'clipboard', '-target', 'image/png', '-out' }
  end
end

--- :AgentdPaste: the clipboard's image goes with the next prompt (the
--- compose window's status line says so).
function M.paste()
  local cmd = M.paste_command()
  if not cmd then
    return ui.notify('no clipboard tool for images: install wl-clipboard or xclip, or set images.paste in setup{}',
      vim.log.levels.WARN)
  end
  -- read as bytes (system() turns NUL bytes into others)
  local quoted = {}
  for _, a in ipairs(cmd) do
    quoted[#quoted + 1] = vim.fn.shellescape(a)
  end
  local pipe = io.popen(table.concat(quoted, ' ') .. ' 2>/dev/null', 'r')
  local out = pipe and pipe:read('*a') or ''
  if pipe then
    pipe:close()
  end
  if out == '' then
    return ui.notify('the clipboard holds no image (' .. table.concat(cmd, ' ') .. ')', vim.log.levels.WARN)
  end
  if out:sub(1, 8) ~= '\137PNG\r\n\26\n' then
    return ui.notify('the clipboard holds no PNG image', vim.log.levels.WARN)
  end
  S.draft_images = S.draft_images or {}
  local n = #S.draft_images + 1
  table.insert(S.draft_images, { mimeType = 'image/png', data = M.base64(out),
    name = n == 1 and 'clipboard.png' or ('clipboard-%d.png'):format(n) })
  ui.notify(('a pasted image goes with the next prompt (%d in all)'):format(#S.draft_images))
  require('agentd.chat').render()
end

-- ------------------------------------------------------------- sending

-- The image file an @token names (an absolute path, or the workspace's),
-- or nil.
local function image_token(tok)
  local abs = vim.fn.expand(tok:sub(1, 1) == '/' and tok or (root() .. '/' .. tok))
  if M.image_type(tok) and vim.fn.filereadable(abs) == 1 then
    return abs
  end
end

--- The images that go with words sent now (a prompt or a steer): those the
--- words name (@shot.png) and those pasted (:AgentdPaste), or nil.
---@param text string
---@return table[]|nil
function M.images(text)
  local images = {}
  for tok in (' ' .. text):gmatch('%s@(%S+)') do
    local abs = image_token((tok:gsub('[,.;:!?)]+$', '')))
    local img = abs and image_of(abs)
    if img then
      images[#images + 1] = img
    end
  end
  for _, img in ipairs(S.draft_images or {}) do
    images[#images + 1] = img
  end
  return #images > 0 and images or nil
end

--- Reads a prompt's tokens into its context (ctx, changed and returned):
--- @path files, #name buffers (their unsaved text attached), #diff; and
--- the images it names (@shot.png) or that were pasted, for agent/run's
--- images. A token that names nothing stays plain text.
---@param prompt string
---@param ctx table|nil
---@return table|nil ctx, table[]|nil images
function M.resolve(prompt, ctx)
  local files, attachments = {}, {}
  local seen = {}
  local function add_file(p)
    if not seen[p] then
      seen[p] = true
      files[#files + 1] = p
    end
  end
  local known = {}
  for _, f in ipairs(M.files()) do
    known[f] = true
  end
  for tok in (' ' .. prompt):gmatch('%s@(%S+)') do
    tok = tok:gsub('[,.;:!?)]+$', '')
    if not image_token(tok) and (known[tok] or vim.fn.filereadable(root() .. '/' .. tok) == 1) then
      add_file(tok)
    end
  end
  local images = M.images(prompt)
  local buffers = M.buffers()
  for tok in (' ' .. prompt):gmatch('%s#(%S+)') do
    tok = tok:gsub('[,.;:!?)]+$', '')
    if tok == 'diff' and not seen['#diff'] then
      seen['#diff'] = true
      local diff, why = git_diff()
      if diff then
        attachments[#attachments + 1] = { name = 'git diff', text = bounded(diff) }
      else
        ui.notify('#diff: ' .. why .. '; nothing attached', vim.log.levels.WARN)
      end
    else
      for _, b in ipairs(buffers) do
        if (tok == 'buffer' and b == buffers[1]) or b.path == tok then
          add_file(b.path)
          if b.modified and not seen['#' .. b.path] then
            seen['#' .. b.path] = true
            local text = table.concat(api.nvim_buf_get_lines(b.buf, 0, -1, false), '\n') .. '\n'
            attachments[#attachments + 1] = { name = b.path .. ' (unsaved)', text = bounded(text) }
          end
          break
        end
      end
    end
  end
  if #files == 0 and #attachments == 0 then
    return ctx, images
  end
  ctx = ctx or {}
  ctx.files = ctx.files or {}
  for _, f in ipairs(ctx.files) do
    seen[f] = true
  end
  for _, f in ipairs(files) do
    if not vim.tbl_contains(ctx.files, f) then
      ctx.files[#ctx.files + 1] = f
    end
  end
  if #attachments > 0 then
    ctx.attachments = vim.list_extend(ctx.attachments or {}, attachments)
  end
  return ctx, images
end

return M
