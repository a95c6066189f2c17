-- :AgentdRules: what the policy applies to the agent's calls (rules/list),
-- by where each rule comes from, and taking back what your answers stored:
-- gx revokes an "always" or "for this session" rule (rules/revoke), e
-- changes its pattern or action (rules/edit), gf opens the file that holds
-- a rule you write yourself (your rules.json, the workspace's). The
-- strictest matching rule decides, whatever its place.
local P = require('agentd.protocol')
local S = require('agentd.state')
local lifecycle = require('agentd.lifecycle')
local panel = require('agentd.panel')
local ui = require('agentd.ui')

local M = {}

M.NAME = 'rules'

--- The panel's keys (buffer-local in it).
M.KEYS = { revoke = 'gx', edit = 'e', open = 'gf', refresh = 'r' }

local MARK = { allow = '✓', ask = '?', deny = '✗' }
local ORDER = { 'always', 'session', 'user', 'workspace', 'built-in' }

local function str(v)
  return type(v) == 'string' and v or ''
end

local function short(path)
  return path ~= '' and vim.fn.fnamemodify(path, ':~') or ''
end

-- A scope's heading and the file that holds its rules.
local function heading(scope, files)
  files = type(files) == 'table' and files or {}
  if scope == 'always' then
    return 'Stored by your answers ("always"), for this workspace', str(files.grants)
  elseif scope == 'session' then
    return 'This conversation ("for this session", until the daemon stops)', ''
  elseif scope == 'user' then
    return 'Yours', str(files.user)
  elseif scope == 'workspace' then
    return "The workspace's (it may deny or ask, never allow)", str(files.workspace)
  end
  return "agentd's own (they protect .git and .agentd)", ''
end

--- One rule in a line: "✓ allow  run_cmd  go test ./...".
---@param r table a rules/list entry
---@return string
function M.label(r)
  local pattern = str(r.pattern) ~= '' and r.pattern or '(everything)'
  return ('%s %-5s  %-8s  %s'):format(MARK[r.action] or '•', str(r.action), str(r.tool), pattern)
end

--- The panel's lines, highlights and items (rules, and headings that name a file).
---@param res table rules/list's answer
---@param err string|nil
---@return table content
function M.content(res, err)
  local lines, hl, items = {}, {}, {}
  local function push(s, group, item)
    lines[#lines + 1] = s
    if group then
      hl[#hl + 1] = { #lines, group }
    end
    items[#lines] = item
  end
  local k = M.KEYS
  push('agentd rules · the strictest matching rule decides', 'Title')
  push(('%s revoke · %s edit · %s open its file · %s ask again · q close'):format(k.revoke, k.edit, k.open, k.refresh),
    'Comment')
  if err then
    push('')
    push('rules/list failed: ' .. err, 'ErrorMsg')
    return { lines = lines, hl = hl, items = items }
  end
  local by = {}
  for _, r in ipairs(type(res) == 'table' and type(res.rules) == 'table' and res.rules or {}) do
    if type(r) == 'table' then
      by[r.scope] = by[r.scope] or {}
      table.insert(by[r.scope], r)
    end
  end
  for _, scope in ipairs(ORDER) do
    local list = by[scope]
    local title, file = heading(scope, res.files)
    if list or (file ~= '' and scope ~= 'always') then
      push('')
      push(title .. (file ~= '' and (' · ' .. short(file)) or ''), 'Title', { scope = scope, file = file })
      if not list then
        push('  none yet (' .. k.open .. ' writes some)', 'Comment', { scope = scope, file = file })
      end
      for _, r in ipairs(list or {}) do
        push('  ' .. M.label(r), r.action == 'deny' and 'WarningMsg' or nil, { rule = r, file = file })
      end
    end
  end
  if not next(by) then
    push('')
    push('No rules: every call follows the mode (' .. k.refresh .. ' asks again).', 'Comment')
  end
  return { lines = lines, hl = hl, items = items }
end

local function err_text(e)
  return ('%s (%s)'):format(tostring(e.message), tostring(e.code))
end

local function params(extra)
  local p = extra or {}
  if S.session then
    p.sessionId = S.session
  end
  return next(p) and p or vim.empty_dict()
end

--- Asks the daemon and draws the panel (opening it when open is true).
---@param open boolean|nil
---@param then_do fun()|nil
function M.refresh(open, then_do)
  lifecycle.request(P.request.rules_list, params(), function(e, res)
    if e and e.code == P.DISCONNECTED then
      return ui.notify('the daemon is not running', vim.log.levels.WARN)
    end
    if not open and not panel.is_open(M.NAME) then
      return
    end
    panel.show(M.NAME, M.content(res, e and err_text(e)), M.keys(), { filetype = 'agentd_rules' })
    if then_do then
      then_do()
    end
  end)
end

local function refused(what, e)
  if e.code == P.error_codes.UnknownRule then
    ui.notify(what .. ': that rule is gone (revoked or changed since)', vim.log.levels.WARN)
  else
    ui.notify(what .. ': ' .. err_text(e), vim.log.levels.ERROR)
  end
  M.refresh()
end

-- Why a rule cannot be taken back from here.
local function not_revocable(it)
  local where = it.file ~= '' and (short(it.file) .. ' (' .. M.KEYS.open .. ' opens it)') or 'agentd itself'
  ui.notify(('a %s rule: it lives in %s'):format(str(it.rule.scope), where), vim.log.levels.WARN)
end

--- Revokes the rule (an "always" or "for this session" one).
function M.revoke(it)
  if not (it and it.rule) then
    return
  end
  if not it.rule.revocable then
    return not_revocable(it)
  end
  local r = it.rule
  lifecycle.request(P.request.rules_revoke, params({ id = r.id }), function(e)
    if e then
      return refused('revoke', e)
    end
    ui.notify(('revoked: %s; those calls ask again'):format(M.label(r)))
    M.refresh()
  end)
end

--- Changes a rule's pattern, then its action (vim.ui.input, vim.ui.select).
function M.edit(it)
  if not (it and it.rule) then
    return
  end
  if not it.rule.revocable then
    return not_revocable(it)
  end
  local r = it.rule
  vim.ui.input({ prompt = ('agentd: %s pattern (empty: everything): '):format(str(r.tool)), default = str(r.pattern) },
    function(pattern)
      if pattern == nil then
        return
      end
      local actions = { r.action }
      for _, a in ipairs(P.rule_actions) do
        if a ~= r.action then
          actions[#actions + 1] = a
        end
      end
      vim.ui.select(actions, { prompt = 'agentd: what the rule does', kind = 'agentd.rule_action' }, function(action)
        if not action then
          return
        end
        lifecycle.request(P.request.rules_edit, params({ id = r.id, pattern = pattern, action = action }),
          function(e, res)
            if e then
              return refused('edit', e)
            end
            local now = type(res) == 'table' and res.rule or {}
            ui.notify('the rule is now: ' .. M.label(now))
            M.refresh()
          end)
      end)
    end)
end

--- Opens the file that holds the rule (or the heading's), in a new tab.
function M.open_file(it)
  local file = it and it.file or ''
  if file == '' then
    return ui.notify('no file holds these rules', vim.log.levels.WARN)
  end
  panel.close(M.NAME)
  vim.fn.mkdir(vim.fn.fnamemodify(file, ':h'), 'p')
  vim.cmd('tabedit ' .. vim.fn.fnameescape(file))
end

function M.keys()
  local k = M.KEYS
  return {
    { k.revoke, M.revoke, 'revoke the rule' },
    { k.edit, M.edit, 'edit the rule' },
    { k.open, M.open_file, "open the rule's file" },
    { k.refresh, function()
      M.refresh()
    end, 'ask again' },
  }
end

--- :AgentdRules
function M.show()
  M.refresh(true)
end

--- The panel's text, for tests ('' when closed).
function M.text()
  return panel.text(M.NAME)
end

return M
