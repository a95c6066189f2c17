-- Helpers for the end-to-end tests: the fake model, a workspace, recorders
-- for vim.ui.input/select, and reading the conversation buffer.
local t = require('lib')
local uv = vim.loop
local h = {}

h.here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/'
h.bin = os.getenv('AGENTD_TEST_BIN') or '/tmp/agentd-bin'
h.agentd = h.bin .. '/agentd'
h.fakemodel = h.bin .. '/fakemodel'
h.models = h.here .. 'models/'

local children = {}

--- Starts fakemodel with models/<name>.json (or the script at an absolute
--- path); returns it, with its base URL.
function h.start_model(name)
  local stdout = uv.new_pipe(false)
  local stdin = uv.new_pipe(false)
  local errlog = io.open(h.tmp .. '/fakemodel-' .. vim.fn.fnamemodify(name, ':t:r') .. '.log', 'w')
  local stderr = uv.new_pipe(false)
  local handle, pid = uv.spawn(h.fakemodel, {
    args = { '-script', name:sub(1, 1) == '/' and name or (h.models .. name .. '.json'), '-stdin-exit' },
    stdio = { stdin, stdout, stderr },
  }, function() end)
  assert(handle, 'cannot start fakemodel: ' .. tostring(pid))
  local m = { handle = handle, stdin = stdin, pid = pid, out = '' }
  stdout:read_start(function(_, data)
    if data then
      m.out = m.out .. data
    end
  end)
  stderr:read_start(function(_, data)
    if data then
      errlog:write(data)
      errlog:flush()
    end
  end)
  t.wait(function()
    return m.out:match('listening on (%S+)')
  end, 'fakemodel to listen', 10000)
  m.url = m.out:match('listening on (%S+)')
  children[#children + 1] = m
  return m
end

--- The conversation once it equals want (fails showing both otherwise).
function h.wait_conversation_equal(want, msg, timeout)
  local ok = vim.wait(t.scaled(timeout), function()
    return h.conversation() == want
  end, 20)
  if not ok then
    t.eq(h.conversation(), want, msg)
  end
end

--- The compose window's status line.
function h.compose_status()
  local _, cwin = require('agentd.chat').wins()
  return cwin and vim.api.nvim_win_get_option(cwin, 'statusline') or ''
end

--- The transcript window's status line.
function h.chat_status()
  local twin = require('agentd.chat').wins()
  return twin and vim.api.nvim_win_get_option(twin, 'statusline') or ''
end

function h.stop_models()
  for _, m in ipairs(children) do
    pcall(function()
      m.stdin:close()
      m.handle:kill('sigterm')
    end)
  end
  children = {}
end

function h.write(path, text)
  vim.fn.mkdir(vim.fn.fnamemodify(path, ':h'), 'p')
  local f = assert(io.open(path, 'wb'))
  f:write(text)
  f:close()
end

function h.read(path)
  local f = io.open(path, 'rb')
  if not f then
    return nil
  end
  local s = f:read('*a')
  f:close()
  return s
end

h.tmp = os.getenv('AGENTD_TEST_TMP') or vim.fn.tempname()
vim.fn.mkdir(h.tmp, 'p')

local n = 0
--- A fresh workspace and state dir, and the plugin set up against the model.
function h.fresh(model_name, opts)
  opts = opts or {}
  n = n + 1
  local agentd = require('agentd')
  agentd._reset()
  -- close everything but one window and tab
  pcall(vim.cmd, 'silent! tabonly!')
  pcall(vim.cmd, 'silent! only!')
  vim.cmd('enew!')
  local ws = h.tmp .. '/ws' .. n
  local state = h.tmp .. '/state' .. n
  vim.fn.mkdir(ws, 'p')
  vim.fn.mkdir(state, 'p')
  for path, text in pairs(opts.files or {}) do
    h.write(ws .. '/' .. path, text)
  end
  local m = h.start_model(model_name)
  vim.cmd('cd ' .. vim.fn.fnameescape(ws))
  agentd.setup(vim.tbl_deep_extend('force', {
    cmd = h.agentd,
    root = ws,
    env = {
      OPENAI_BASE_URL = m.url,
      OPENAI_API_KEY = 'test',
      AGENTD_MODEL = 'fakemodel',
      AGENTD_STATE_DIR = state,
    },
    log_file = h.tmp .. '/agentd-' .. n .. '.log',
    restart = { max_retries = 3, backoff_ms = 100 },
  }, opts.setup or {}))
  h.ui_reset()
  h.thaw_all()
  h.state = state
  return ws, m, state
end

--- What the scripted model received so far (GET /_requests), in order:
--- each with model, reasoningEffort, messages.
function h.model_requests(m)
  local status, body = require('agentd.http').get(m.url .. '/_requests', { timeout = 5000 })
  assert(status == 200, 'GET /_requests: ' .. tostring(status) .. ' ' .. tostring(body))
  return vim.json.decode(body)
end

local frozen = {}

--- Makes dir and everything in it immutable (chattr +i), so that the
--- daemon's writes there fail as on a read-only or full disk. Returns a
--- function that undoes it, or nil (and why) when chattr cannot do that
--- here.
function h.freeze(dir)
  local probe = dir .. '/.freeze-probe'
  h.write(probe, '')
  vim.fn.system({ 'chattr', '+i', probe })
  local ok = vim.v.shell_error == 0
  local f = ok and io.open(probe, 'ab')
  local blocked = ok and not f
  if f then
    f:close()
  end
  vim.fn.system({ 'chattr', '-i', probe })
  os.remove(probe)
  if not blocked then
    return nil, ok and 'chattr +i does not stop writes here' or 'chattr is not available'
  end
  vim.fn.system({ 'chattr', '-R', '+i', dir })
  assert(vim.v.shell_error == 0, 'chattr -R +i ' .. dir)
  local done = false
  local function thaw()
    if not done then
      done = true
      vim.fn.system({ 'chattr', '-R', '-i', dir })
    end
  end
  frozen[#frozen + 1] = thaw
  return thaw
end

--- Undoes every freeze (a failed test leaves none behind).
function h.thaw_all()
  for _, thaw in ipairs(frozen) do
    thaw()
  end
  frozen = {}
end

-- vim.notify goes to the test log (headless nvim would print it without a newline)
h.notes = {}
vim.notify = function(msg, level)
  table.insert(h.notes, msg)
  t.log('     notify: ' .. tostring(msg))
end

-- vim.ui recorders: every call is kept; the test answers it.
h.inputs, h.selects = {}, {}
function h.ui_reset()
  h.inputs, h.selects = {}, {}
end
vim.ui.input = function(opts, cb)
  table.insert(h.inputs, { opts = opts, cb = cb, prompt = opts.prompt })
end
vim.ui.select = function(items, opts, cb)
  local labels = {}
  for i, it in ipairs(items) do
    labels[i] = opts.format_item and opts.format_item(it) or tostring(it)
  end
  table.insert(h.selects, { items = items, opts = opts, cb = cb, labels = labels, prompt = opts.prompt })
end

--- Waits for the n-th vim.ui.input call.
function h.wait_input(i, msg)
  t.wait(function()
    return h.inputs[i]
  end, msg or ('vim.ui.input #' .. i))
  return h.inputs[i]
end

function h.wait_select(i, msg)
  t.wait(function()
    return h.selects[i]
  end, msg or ('vim.ui.select #' .. i))
  return h.selects[i]
end

--- Picks the item whose label contains text.
function h.pick(sel, text)
  for i, l in ipairs(sel.labels) do
    if l:find(text, 1, true) then
      return sel.cb(sel.items[i], i)
    end
  end
  error('no item "' .. text .. '" in ' .. vim.inspect(sel.labels))
end

function h.conversation()
  return table.concat(require('agentd.chat').lines(), '\n')
end

function h.wait_conversation(text, timeout)
  t.wait(function()
    return h.conversation():find(text, 1, true)
  end, 'conversation to show "' .. text .. '"', timeout)
end

function h.run_state()
  local S = require('agentd')._state
  local r = S.run and S.runs:get(S.run)
  return r and r.state
end

--- The open request entries, oldest first.
function h.open_requests()
  return require('agentd')._state.requests:list()
end

--- Waits until n requests are open (not being answered); returns them.
function h.wait_requests(n, msg)
  t.wait(function()
    return require('agentd')._state.requests:count() == n
  end, msg or (n .. ' open requests'))
  return h.open_requests()
end

--- Types keys as the user would (mappings apply), and runs them now.
function h.keys(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), 'mx', false)
end

--- The request float's lines ('' when it is closed).
function h.float_text()
  local F = require('agentd.float')._state
  if not (F.card_win and vim.api.nvim_win_is_valid(F.card_win)) then
    return ''
  end
  return table.concat(vim.api.nvim_buf_get_lines(F.card_buf, 0, -1, false), '\n')
end

function h.wait_float(text, msg)
  t.wait(function()
    return h.float_text():find(text, 1, true)
  end, msg or ('the float to show "' .. text .. '"'))
end

function h.wait_state(state, timeout)
  t.wait(function()
    return h.run_state() == state
  end, 'run state ' .. state, timeout)
end

--- Prints the daemon's stderr and the conversation (on failure).
function h.dump()
  local S = require('agentd')._state
  t.log('--- conversation:\n' .. h.conversation())
  t.log('--- daemon stderr (last lines):\n' .. table.concat(vim.list_slice(S.stderr, math.max(1, #S.stderr - 30)), '\n'))
  t.log('--- status: ' .. require('agentd').statusline())
  for id, o in pairs(S.requests.open) do
    t.log(('--- open request %s (%s) of run %s, session %s'):format(id, tostring(o.req.kind), tostring(o.req.runId),
      tostring(o.req.sessionId)))
  end
end

return h
