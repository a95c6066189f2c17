-- The editor's language intelligence for the agent (docs/protocol.md
-- "Language intelligence"): the daemon asks, with requests of its own
-- (editor/diagnostics, editor/definition, …), what Neovim's language
-- servers (vim.lsp) and diagnostics (vim.diagnostic: language servers and
-- any linter) know of a file; editor/readFile gives it a buffer's unsaved
-- text, editor/context the open files. A file no client of the editor
-- covers is declined (null): agentd asks its own servers. Files the user
-- does not have open are loaded hidden (bufadd, bufload), so that the
-- servers configured for their filetype attach as usual. Every answer is
-- asynchronous (agentd.rpc's ASYNC): nothing here blocks the editor.
local P = require('agentd.protocol')
local S = require('agentd.state')

local R = P.server_request
local api = vim.api
local uv = vim.uv or vim.loop
local M = {}

--- What initialize declares (capabilities.experimental.agentd.language).
function M.capabilities()
  return { diagnostics = true, definition = true, references = true, hover = true, documentSymbols = true,
    workspaceSymbols = true, context = true, buffers = true }
end

--- How long after a file is loaded hidden a language server may still be
--- attaching to it (ms): one starts and initializes first (seconds on a
--- busy machine). Past it, a file no client attached to is not covered.
M.ATTACH_MS = 10000
--- How long, at most, a request waits for servers that are starting (ms).
M.READY_MS = 5000

-- ------------------------------------------------------------- buffers

local function abs_of(uri)
  local ok, p = pcall(vim.uri_to_fname, uri)
  return ok and p or nil
end

local function uri_of(path)
  return vim.uri_from_fname(path)
end

--- The loaded buffer of a file (absolute path), or nil.
function M.buffer_of(path)
  path = vim.fn.fnamemodify(path, ':p')
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == '' then
      local name = api.nvim_buf_get_name(b)
      if name ~= '' and vim.fn.fnamemodify(name, ':p') == path then
        return b
      end
    end
  end
end

--- Buffers loaded here for the daemon, not shown to the user: this module
--- keeps them in step with the disk (agentd.documents leaves them alone).
M.hidden = {}
local loaded_at = {} -- hidden buffer -> uv.now() when it was loaded

-- The buffer of a file, loaded hidden when it is not (its filetype
-- detected, so that language servers attach); nil for a file that does
-- not exist. Second value: whether it was loaded now.
local function buffer_for(path)
  local b = M.buffer_of(path)
  if b then
    return b, false
  end
  if vim.fn.filereadable(path) == 0 then
    return nil
  end
  b = vim.fn.bufadd(path)
  vim.bo[b].buflisted = false
  vim.bo[b].bufhidden = 'hide'
  vim.fn.bufload(b)
  M.hidden[b] = true
  loaded_at[b] = uv.now()
  api.nvim_create_autocmd('BufWipeout', {
    buffer = b,
    once = true,
    callback = function()
      M.hidden[b] = nil
      loaded_at[b] = nil
    end,
  })
  if vim.bo[b].filetype == '' then
    local ft
    local ok, m = pcall(vim.filetype.match, { buf = b, filename = path }) -- 0.8+
    if ok and type(m) == 'string' then
      ft = m
    else
      ok, m = pcall(vim.filetype.match, path, b) -- 0.7
      ft = ok and type(m) == 'string' and m or nil
    end
    if ft then
      vim.bo[b].filetype = ft
    end
  end
  return b, true
end

-- The language clients attached to a buffer (0.7: buf_get_clients; 0.10+: get_clients).
local function clients(buf)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ bufnr = buf })
  end
  local out = {}
  for _, c in pairs(vim.lsp.buf_get_clients(buf)) do
    out[#out + 1] = c
  end
  return out
end

local function all_clients()
  if vim.lsp.get_clients then
    return vim.lsp.get_clients()
  end
  return vim.lsp.get_active_clients()
end

local function ready(c)
  return c.initialized ~= false and not (c.is_stopped and c.is_stopped())
end

-- Whether a client may still attach to buf: it was loaded hidden a moment
-- ago (its server may be starting).
local function attaching(buf)
  return loaded_at[buf] ~= nil and uv.now() - loaded_at[buf] < M.ATTACH_MS
end

-- Calls done(list of clients) once buf has clients and they are ready, or
-- once waiting is pointless (none attached and none attaching, or
-- deadline).
local function when_ready(buf, _, deadline, done)
  local function check()
    if not api.nvim_buf_is_valid(buf) then
      return done({})
    end
    local cs = clients(buf)
    local all = #cs > 0
    for _, c in ipairs(cs) do
      all = all and ready(c)
    end
    if all then
      return done(cs)
    end
    local now = uv.now()
    if now >= deadline or (#cs == 0 and not attaching(buf)) then
      return done(vim.tbl_filter(ready, cs))
    end
    vim.defer_fn(check, 20)
  end
  check()
end

-- ------------------------------------------------------------- requests

-- Sends method to buf's clients; done(list of results) with the results
-- that came (errors left out).
local function ask_buffer(buf, method, params, done)
  local ok = pcall(vim.lsp.buf_request_all, buf, method, params, function(results)
    local out = {}
    for _, r in pairs(results or {}) do
      if type(r) == 'table' and r.result ~= nil and r.result ~= vim.NIL and not (r.err or r.error) then
        out[#out + 1] = r.result
      end
    end
    done(out)
  end)
  if not ok then
    done({})
  end
end

-- A definition's or references' results as one list of locations.
local function locations(results)
  local out = {}
  for _, r in ipairs(results) do
    if type(r) == 'table' and (r.uri or r.targetUri) then
      out[#out + 1] = r
    elseif type(r) == 'table' then
      vim.list_extend(out, r)
    end
  end
  return out
end

-- Hovers' contents as one.
local function hover(results)
  local parts = {}
  for _, r in ipairs(results) do
    local c = type(r) == 'table' and r.contents
    if type(c) == 'string' then
      parts[#parts + 1] = c
    elseif type(c) == 'table' and c.value then
      parts[#parts + 1] = c.value
    elseif type(c) == 'table' then
      for _, x in ipairs(c) do
        parts[#parts + 1] = type(x) == 'table' and x.value or tostring(x)
      end
    end
  end
  if #parts == 0 then
    return nil
  end
  return { contents = { kind = 'markdown', value = table.concat(parts, '\n\n---\n\n') } }
end

-- The request a textDocument method of the daemon becomes, and how its
-- results are joined.
local DOCUMENT = {
  [R.editor_definition] = { 'textDocument/definition', locations },
  [R.editor_references] = { 'textDocument/references', locations },
  [R.editor_hover] = { 'textDocument/hover', hover },
  [R.editor_document_symbols] = { 'textDocument/documentSymbol', function(results)
    return results[1]
  end },
}

-- editor/definition, references, hover, documentSymbols: null when no
-- client covers the file.
local function document_request(method, params, respond)
  local spec = DOCUMENT[method]
  local path = type(params) == 'table' and type(params.textDocument) == 'table' and abs_of(params.textDocument.uri)
  local buf, loaded = path and buffer_for(path)
  if not buf then
    return respond(nil)
  end
  when_ready(buf, loaded and M.ATTACH_MS or 0, uv.now() + M.READY_MS, function(cs)
    if #cs == 0 then
      return respond(nil)
    end
    ask_buffer(buf, spec[1], params, function(results)
      local joined = spec[2](results)
      if joined == nil and method == R.editor_hover then
        return respond(vim.NIL)
      end
      respond(joined == nil and {} or joined)
    end)
  end)
end

-- editor/workspaceSymbols: workspace/symbol on every client that has
-- started; null when none has.
local function workspace_symbols(params, respond)
  local cs = vim.tbl_filter(ready, all_clients())
  if #cs == 0 then
    return respond(nil)
  end
  local left, out = #cs, {}
  for _, c in ipairs(cs) do
    local ok = pcall(c.request, 'workspace/symbol', { query = params and params.query or '' }, function(err, result)
      if not err and type(result) == 'table' then
        vim.list_extend(out, result)
      end
      left = left - 1
      if left == 0 then
        respond(out)
      end
    end)
    if not ok then
      left = left - 1
      if left == 0 then
        respond(out)
      end
    end
  end
end

-- ----------------------------------------------------------- diagnostics

-- Per buffer, how many states of its text the language servers were given
-- (opened, reloaded) and how many times its diagnostics changed since it
-- was first seen: the diagnostics are fresh once there have been as many
-- publications as states, so that one still in flight for the text before
-- the agent's edit is not taken for the new text's.
local gen = {}
local sent = {}
local sent_at, published_at = {}, {} -- buffer -> uv.now() of its last state given, of its last publication
-- buffer -> the document version its servers last published for (servers
-- that say it), and the version of the state it was last given (didChange)
local published, expected = {}, {}

--- A server may publish once for several states given in a row (it skips
--- an outdated one): after a publication for the latest state, this much
--- quiet (ms) counts as done.
M.QUIET_MS = 1000

local function gave(buf, n)
  sent[buf] = (sent[buf] or 0) + n
  sent_at[buf] = uv.now()
end

local function watch()
  if M.watching then
    return
  end
  M.watching = true
  api.nvim_create_autocmd('DiagnosticChanged', {
    group = api.nvim_create_augroup('agentd.language', { clear = true }),
    callback = function(a)
      gen[a.buf] = (gen[a.buf] or 0) + 1
      published_at[a.buf] = uv.now()
    end,
  })
  local key = 'textDocument/publishDiagnostics'
  local orig = vim.lsp.handlers[key]
  vim.lsp.handlers[key] = function(err, result, ctx, config)
    if type(result) == 'table' and type(result.uri) == 'string' and type(result.version) == 'number' then
      local ok, b = pcall(vim.uri_to_bufnr, result.uri)
      if ok then
        published[b] = math.max(published[b] or -1, result.version)
      end
    end
    return orig(err, result, ctx, config)
  end
end

-- The document version language servers have of a buffer.
local function version(buf)
  local v = vim.lsp.util and vim.lsp.util.buf_versions and vim.lsp.util.buf_versions[buf]
  return type(v) == 'number' and v or api.nvim_buf_get_changedtick(buf)
end

-- Whether buf's servers have published for the latest state they were
-- given: by its version when they say which (a publication still in
-- flight for an older text does not count), else by counting.
local function caught_up(buf)
  if expected[buf] ~= nil and published[buf] ~= nil then
    return published[buf] >= expected[buf]
  end
  if (gen[buf] or 0) >= (sent[buf] or 0) then
    return true
  end
  local p, g = published_at[buf], sent_at[buf]
  return p ~= nil and g ~= nil and p > g and uv.now() - p >= M.QUIET_MS
end

-- A buffer first seen here: what its servers had, they published.
local function seen(buf)
  watch()
  if sent[buf] == nil then
    sent[buf] = gen[buf] or 0
  end
end

--- agentd.documents reloaded buf from disk (the agent wrote it; changed:
--- its text did change). A reload closes and opens the document again for
--- its servers (with a version that says nothing new), and one that clears
--- its diagnostics on close publishes twice: both count.
function M.note_reload(buf, changed)
  seen(buf)
  if changed then
    expected[buf] = nil
    gave(buf, 2)
  end
end

-- A byte column of a line as UTF-16 code units.
local function utf16(buf, row, col)
  local line = api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ''
  col = math.min(col or 0, #line)
  if vim.fn.has('nvim-0.11') == 1 then
    local ok, n = pcall(vim.str_utfindex, line, 'utf-16', col, false)
    if ok then
      return n
    end
  end
  local ok, _, n = pcall(vim.str_utfindex, line, col)
  return ok and n or col
end

-- A vim.diagnostic entry as LSP's Diagnostic (the server's own when it
-- came from one).
local function lsp_diagnostic(buf, d)
  local orig = type(d.user_data) == 'table' and type(d.user_data.lsp) == 'table' and d.user_data.lsp or nil
  if orig and type(orig.range) == 'table' then
    return orig
  end
  local code = d.code
  if code == nil and orig then
    code = orig.code
  end
  return {
    range = {
      start = { line = d.lnum, character = utf16(buf, d.lnum, d.col) },
      ['end'] = { line = d.end_lnum or d.lnum, character = utf16(buf, d.end_lnum or d.lnum, d.end_col or d.col) },
    },
    severity = d.severity,
    code = code,
    source = d.source,
    message = d.message,
  }
end

-- One file's entry of editor/diagnostics' answer.
local function diagnostics_of(uri, buf, pending)
  local covered = #clients(buf) > 0
  local list = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    list[#list + 1] = lsp_diagnostic(buf, d)
  end
  covered = covered or #list > 0
  local item = { uri = uri, diagnostics = list }
  if not covered then
    item.covered = false
  elseif pending then
    item.pending = true
  end
  return item
end

-- Makes a buffer take the file's content from disk (an unmodified one):
-- a hidden one by a change of its lines (its servers get one didChange),
-- the user's by a reload (agentd.documents does the same).
local function take_disk(buf)
  seen(buf)
  if vim.bo[buf].modified then
    return
  end
  if M.hidden[buf] then
    local f = io.open(api.nvim_buf_get_name(buf), 'rb')
    local text = f and f:read('*a')
    if f then
      f:close()
    end
    if not text then
      return
    end
    local lines = vim.split(text, '\n', { plain = true })
    if lines[#lines] == '' then
      lines[#lines] = nil
    end
    if not vim.deep_equal(lines, api.nvim_buf_get_lines(buf, 0, -1, false)) then
      api.nvim_buf_set_lines(buf, 0, -1, false, lines)
      vim.bo[buf].modified = false
      expected[buf] = version(buf)
      gave(buf, 1)
    end
    return
  end
  local tick = api.nvim_buf_get_changedtick(buf)
  api.nvim_buf_call(buf, function()
    vim.cmd('setlocal autoread')
    pcall(vim.cmd, 'silent checktime ' .. buf)
    vim.cmd('set autoread<')
  end)
  M.note_reload(buf, api.nvim_buf_get_changedtick(buf) ~= tick)
end

-- editor/diagnostics {uris, fresh, timeoutMs}
local function diagnostics(params, respond)
  watch()
  params = type(params) == 'table' and params or {}
  local uris = type(params.uris) == 'table' and params.uris or {}
  local deadline = uv.now() + math.max(200, (tonumber(params.timeoutMs) or 3000) - 150)
  local files = {}
  for _, uri in ipairs(uris) do
    local path = abs_of(uri)
    local buf, loaded = nil, false
    if path then
      buf, loaded = buffer_for(path)
    end
    files[#files + 1] = { uri = uri, buf = buf, loaded = loaded }
  end
  local left = #files
  if left == 0 then
    return respond({ items = {} })
  end
  local items = {}
  local function finish(i, item)
    items[i] = item
    left = left - 1
    if left == 0 then
      respond({ items = items })
    end
  end
  for i, f in ipairs(files) do
    if not f.buf then
      finish(i, { uri = f.uri, diagnostics = {}, covered = false })
    else
      if f.loaded then
        -- loaded here: its servers are given its text once they attach
        watch()
        gen[f.buf], sent[f.buf] = gen[f.buf] or 0, gen[f.buf] or 0
        expected[f.buf] = version(f.buf)
        gave(f.buf, 1)
      elseif params.fresh then
        take_disk(f.buf)
      end
      when_ready(f.buf, f.loaded and M.ATTACH_MS or 0, deadline, function(cs)
        if #cs == 0 and attaching(f.buf) then
          -- its server is still starting: not "uncovered"
          return finish(i, { uri = f.uri, diagnostics = {}, pending = true })
        elseif #cs == 0 then
          return finish(i, diagnostics_of(f.uri, f.buf, false))
        end
        if not params.fresh and not f.loaded then
          return finish(i, diagnostics_of(f.uri, f.buf, false))
        end
        -- wait until the servers published for every state they were given
        local function wait()
          if caught_up(f.buf) then
            return finish(i, diagnostics_of(f.uri, f.buf, false))
          elseif uv.now() >= deadline then
            return finish(i, diagnostics_of(f.uri, f.buf, true))
          end
          vim.defer_fn(wait, 20)
        end
        wait()
      end)
    end
  end
end

-- --------------------------------------------------------- the editor

-- editor/readFile {uri}: a buffer's text, unsaved changes included; null
-- for a file not open here.
local function read_file(params)
  local path = type(params) == 'table' and abs_of(params.uri)
  local buf = path and M.buffer_of(path)
  if not buf or not vim.bo[buf].buflisted then
    return nil
  end
  local text = table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
  if vim.bo[buf].eol or vim.bo[buf].fixeol then
    text = text .. '\n'
  end
  return { text = text, version = api.nvim_buf_get_changedtick(buf), dirty = vim.bo[buf].modified }
end

-- editor/context {}: the open files, the file the user is in, and the
-- selection when Visual mode is on in it.
local function context()
  local documents = require('agentd.documents')
  local open = {}
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(b) and vim.bo[b].buflisted and documents.path(b) then
      open[#open + 1] = uri_of(documents.path(b))
    end
  end
  local out = { openFiles = open }
  local cur = api.nvim_get_current_buf()
  local active = documents.path(cur) and cur or S.last_file_buf
  if active and api.nvim_buf_is_valid(active) and documents.path(active) then
    out.activeFile = uri_of(documents.path(active))
  end
  local mode = api.nvim_get_mode().mode
  if documents.path(cur) and (mode == 'v' or mode == 'V' or mode == '\22') then
    local a, b = vim.fn.line('v'), vim.fn.line('.')
    if a > b then
      a, b = b, a
    end
    local lines = api.nvim_buf_get_lines(cur, a - 1, b, false)
    out.selection = { uri = uri_of(documents.path(cur)),
      range = { start = { line = a - 1, character = 0 }, ['end'] = { line = b, character = 0 } },
      text = table.concat(lines, '\n') .. '\n' }
  end
  return out
end

-- ---------------------------------------------------------- dispatch

--- Handlers of the daemon's requests: fn(params, respond) → ASYNC, or a
--- result at once.
M.handlers = {
  [R.editor_diagnostics] = function(params, respond)
    diagnostics(params, respond)
    return require('agentd.rpc').ASYNC
  end,
  [R.editor_workspace_symbols] = function(params, respond)
    workspace_symbols(params, respond)
    return require('agentd.rpc').ASYNC
  end,
  [R.editor_read_file] = function(params)
    return read_file(params)
  end,
  [R.editor_context] = function()
    return context()
  end,
}
for method in pairs(DOCUMENT) do
  M.handlers[method] = function(params, respond)
    document_request(method, params, respond)
    return require('agentd.rpc').ASYNC
  end
end

return M
