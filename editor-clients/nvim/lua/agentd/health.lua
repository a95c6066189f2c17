-- :checkhealth agentd
local M = {}

-- vim.health (0.8+: report_*, 0.9+: start/ok/...) or the 0.7 'health' module
local function reporter()
  local h = vim.health
  if h and h.start then
    return h
  end
  local old = (h and h.report_start) and h or require('health')
  return {
    start = old.report_start,
    ok = old.report_ok,
    warn = old.report_warn,
    error = old.report_error,
    info = old.report_info,
  }
end

function M.check()
  local h = reporter()
  local config = require('agentd.config').values
  local agentd = require('agentd')

  h.start('agentd: Neovim')
  if vim.fn.has('nvim-0.7') == 1 then
    local v = vim.version()
    h.ok(('Neovim %d.%d.%d'):format(v.major, v.minor, v.patch))
  else
    h.error('Neovim 0.7 or newer is needed')
  end

  h.start('agentd: daemon')
  local exe = config.cmd
  if vim.fn.executable(exe) == 1 then
    h.ok(('daemon: %s (%s %s)'):format(vim.fn.exepath(exe), exe, table.concat(config.args or {}, ' ')))
  else
    h.error(('"%s" is not executable or not on PATH'):format(exe), {
      'Build it: go build -o ~/.local/bin/agentd ./cmd/agentd',
      'or set cmd in require("agentd").setup{ cmd = "/path/to/agentd" }',
    })
  end
  local st = agentd.status()
  if st.ready and st.server then
    local info = st.server.serverInfo or {}
    h.ok(('running (pid %s): %s %s, protocol %s, workspace %s'):format(
      tostring(st.pid), tostring(info.name), tostring(info.version), tostring(st.server.protocolVersion), tostring(st.root)))
    if st.server.protocolVersion ~= 1 then
      h.warn('this plugin speaks protocol version 1')
    end
  elseif st.status == 'failed' then
    h.error('the daemon failed to start or kept dying; see the log: ' .. table.concat(vim.list_slice(st.stderr, math.max(1, #st.stderr - 5)), ' | '))
  else
    h.info('not started yet (it starts on the first :Agentd command, or with require("agentd").start())')
  end
  if st.restarts > 0 then
    h.warn(('restarted %d time(s) in a row'):format(st.restarts))
  end

  h.start('agentd: model')
  local m = config.model or {}
  local base = m.baseUrl or vim.env.OPENAI_BASE_URL
  local name = m.name or vim.env.AGENTD_MODEL
  if base or name then
    h.ok(('endpoint %s, model %s'):format(base or '(daemon default)', name or '(daemon default)'))
  elseif vim.fn.filereadable(vim.fn.expand('~/.config/agentd/config.json')) == 1 then
    h.ok('configured in ~/.config/agentd/config.json')
  else
    h.warn('no model configured', {
      'setup{ model = { baseUrl = "http://127.0.0.1:11434/v1", name = "qwen2.5-coder" } }',
      'or OPENAI_BASE_URL and AGENTD_MODEL in the environment, or ~/.config/agentd/config.json',
    })
  end
  if config.approval_policy then
    h.info('approval policy: ' .. config.approval_policy)
  end

  h.start('agentd: prompts')
  h.info('questions: vim.ui.input; choices and commands: vim.ui.select; secrets: inputsecret(); writes: a diff tab')
  local ok_sel = debug.getinfo(vim.ui.select, 'S')
  if ok_sel and ok_sel.source and not ok_sel.source:find('vim/ui.lua', 1, true) then
    h.ok('vim.ui.select is provided by ' .. ok_sel.source:gsub('^@', ''))
  else
    h.info('vim.ui.select is the built-in one (dressing.nvim, telescope-ui-select or fzf-lua can replace it)')
  end
end

return M
