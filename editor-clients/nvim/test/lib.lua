-- A tiny test harness: t.test(name, fn), assertions, t.finish() prints
-- "N passed, N failed" and quits nvim with a matching exit code.
local t = { passed = 0, failed = 0, failures = {} }

local out = io.stdout
function t.log(...)
  local parts = {}
  for i = 1, select('#', ...) do
    local v = select(i, ...)
    parts[#parts + 1] = type(v) == 'string' and v or vim.inspect(v)
  end
  out:write(table.concat(parts, ' ') .. '\n')
  out:flush()
end

-- AGENTD_TEST_ONLY=pattern runs only the tests whose name matches (a Lua
-- pattern; several separated by ;), while working on them.
local only = os.getenv('AGENTD_TEST_ONLY')

local function wanted(name)
  if not only or only == '' then
    return true
  end
  for p in only:gmatch('[^;]+') do
    if name:find(p) then
      return true
    end
  end
  return false
end

function t.test(name, fn)
  if not wanted(name) then
    return
  end
  local ok, err = xpcall(fn, debug.traceback)
  if ok then
    t.passed = t.passed + 1
    t.log('ok   ' .. name)
  else
    t.failed = t.failed + 1
    t.failures[#t.failures + 1] = name
    t.log('FAIL ' .. name .. '\n' .. tostring(err))
    if t.on_failure then
      pcall(t.on_failure, name)
    end
  end
end

function t.eq(got, want, msg)
  if not vim.deep_equal(got, want) then
    error(('%s\n  want: %s\n  got:  %s'):format(msg or 'not equal', vim.inspect(want), vim.inspect(got)), 2)
  end
end

function t.ok(v, msg)
  if not v then
    error(msg or 'expected a true value', 2)
  end
  return v
end

--- The factor every wait is multiplied by, now, as the Go tests' are
--- (internal/await): AGENTD_TEST_TIMEOUT_SCALE when set, else the 1-minute
--- load average per CPU, between 1 and 20. A wait that fails only on a busy
--- machine is a defect of the wait.
function t.scale()
  local env = tonumber(os.getenv('AGENTD_TEST_TIMEOUT_SCALE') or '')
  if env and env > 0 then
    return env
  end
  local f = io.open('/proc/loadavg', 'r')
  if not f then
    return 1
  end
  local load = tonumber(((f:read('*l') or ''):match('^(%S+)'))) or 0
  f:close()
  local cpus = math.max(#(vim.loop.cpu_info() or {}), 1)
  return math.min(math.max(load / cpus, 1), 20)
end

--- timeout ms (an idle machine's) for this machine, now.
function t.scaled(timeout)
  return math.floor((timeout or 10000) * t.scale())
end

--- Waits (pumping the event loop) until fn() is true; fails after timeout ms
--- (an idle machine's: t.scaled).
function t.wait(fn, msg, timeout)
  local ms = t.scaled(timeout)
  local ok = vim.wait(ms, function()
    local okc, v = pcall(fn)
    return okc and v
  end, 20)
  if not ok then
    error(('timed out after %d ms waiting for: %s'):format(ms, msg or '?'), 2)
  end
end

function t.finish()
  t.log(('%d passed, %d failed'):format(t.passed, t.failed))
  if t.failed > 0 then
    vim.cmd('cquit 1')
  else
    vim.cmd('qall!')
  end
end

return t
