-- Undo and rewind (docs/undo.md): every change of the conversation (a
-- write, an edit, a command that changed files) is a checkpoint of the
-- session, and the user takes changes back from the chat: one change (and
-- every later one), a whole turn, or the conversation rewound to before a
-- run. Each starts with a preview (dryRun) in a tab (agentd.restore); what
-- the user picks there is the real request, with onConflict. Buffers of
-- the restored files are reloaded; rewound runs are marked in the chat.
local P = require('agentd.protocol')
local S = require('agentd.state')
local lifecycle = require('agentd.lifecycle')
local documents = require('agentd.documents')
local restore = require('agentd.restore')
local ui = require('agentd.ui')

local M = {}

local function chat()
  return require('agentd.chat')
end

local function err_text(e)
  return ('%s (%s)'):format(tostring(e.message), tostring(e.code))
end

-- What an error of agent/undo or agent/rewind means for the user.
local function refused(what, e)
  local C = P.error_codes
  if e.code == C.SessionBusy then
    return ui.notify(what .. ': the conversation has a run going on: wait for it or cancel it (:AgentdCancel) first',
      vim.log.levels.WARN)
  elseif e.code == C.UnknownCheckpoint then
    return ui.notify(what .. ': that change is no longer kept (the undo history is bounded): ' .. tostring(e.message),
      vim.log.levels.WARN)
  end
  ui.notify(what .. ' refused: ' .. err_text(e), vim.log.levels.ERROR)
end

--- Asks the daemon for a session's checkpoints and keeps them; cb(err, list).
---@param sid string
---@param cb fun(err: table|nil, list: table[])|nil
function M.refresh(sid, cb)
  lifecycle.request(P.request.checkpoints, { sessionId = sid }, function(e, res)
    local list = not e and type(res) == 'table' and type(res.checkpoints) == 'table' and res.checkpoints or nil
    if list then
      local by_id = {}
      for _, cp in ipairs(list) do
        if type(cp) == 'table' and type(cp.id) == 'string' then
          by_id[cp.id] = cp
        end
      end
      S.checkpoints[sid] = { list = list, by_id = by_id }
      if sid == S.session then
        chat().render()
      end
    end
    if cb then
      cb(e, list or {})
    end
  end)
end

--- What agent/checkpoints said of a checkpoint of the chat's session.
---@param id string
---@return table|nil
function M.info(id)
  local c = S.session and S.checkpoints[S.session]
  return c and c.by_id[id]
end

-- The paths of a restore's files, for the buffers to reload.
local function paths(res)
  return documents.paths_of(type(res) == 'table' and res.files or nil)
end

-- The prompts of the session's runs, to name the runs a rewind cuts.
local function prompts(sid)
  local out = {}
  for _, r in ipairs(S.runs:of_session(sid)) do
    out[r.id] = r.prompt
  end
  return out
end

-- One sentence of what a restore did.
local function said(res, title)
  local files = type(res.files) == 'table' and #res.files or 0
  local s = ('%s: %d file%s restored'):format(title, files, files == 1 and '' or 's')
  local skipped = 0
  for _, c in ipairs(type(res.conflicts) == 'table' and res.conflicts or {}) do
    skipped = skipped + (type(c) == 'table' and 1 or 0)
  end
  if skipped > 0 then
    s = s .. (', %d left as %s'):format(skipped, skipped == 1 and 'it is' or 'they are')
  end
  if type(res.rewound) == 'table' and #res.rewound > 0 then
    s = s .. (', %d run%s rewound'):format(#res.rewound, #res.rewound == 1 and '' or 's')
  end
  if type(res.checkpoint) == 'string' and res.checkpoint ~= '' then
    s = s .. (' (:AgentdUndo %s takes it back)'):format(res.checkpoint)
  end
  return s
end

--- Previews a restore, then makes the one the user picks.
---@param op {method: string, params: table, title: string, rewind: boolean|nil, sid: string}
---@param again string|nil
local function preview(op, again)
  local params = vim.deepcopy(op.params)
  params.dryRun = true
  lifecycle.request(op.method, params, function(e, res)
    if e then
      return refused(op.title, e)
    end
    if type(res) ~= 'table' then
      return ui.notify(op.title .. ': no answer', vim.log.levels.ERROR)
    end
    if res.status == 'nothing' then
      restore.close()
      return ui.notify(op.title .. ': nothing to undo (no change of the workspace there)')
    end
    local view = { title = op.title, rewind = op.rewind, result = res, runs = prompts(op.sid), again = again }
    restore.show(view, function(action)
      M.apply(op, action)
    end)
  end)
end

--- Makes the restore after its preview: action is 'apply', 'skip',
--- 'overwrite' or 'conversation' (a rewind that keeps the files).
---@param op table
---@param action string
function M.apply(op, action)
  local params = vim.deepcopy(op.params)
  params.onConflict = ({ apply = 'stop', skip = 'skip', overwrite = 'overwrite', conversation = 'stop' })[action]
  if action == 'conversation' then
    params.keepFiles = true
  end
  lifecycle.request(op.method, params, function(e, res)
    if e then
      restore.close()
      return refused(op.title, e)
    end
    if type(res) ~= 'table' then
      return ui.notify(op.title .. ': no answer', vim.log.levels.ERROR)
    end
    if res.status == 'conflicts' then
      -- a file changed between the preview and now: nothing was written
      return preview(op, 'A file changed since the preview, so nothing was written: choose again.')
    end
    restore.close()
    if res.status == 'nothing' then
      return ui.notify(op.title .. ': nothing to undo')
    end
    documents.reload(paths(res))
    for _, id in ipairs(type(res.rewound) == 'table' and res.rewound or {}) do
      local run = S.runs:get(id)
      if run then
        run.rewound = true
      end
    end
    ui.notify(said(res, op.title))
    M.refresh(op.sid)
    chat().render()
  end)
end

-- The chat's session, or nil (and the user told why).
local function session()
  if not S.session then
    ui.notify('no conversation in the chat: :AgentdSessions picks one', vim.log.levels.WARN)
  end
  return S.session
end

local function short(prompt)
  prompt = type(prompt) == 'string' and prompt or ''
  prompt = prompt:gsub('\n.*', ' …')
  if vim.fn.strchars(prompt) > 50 then
    prompt = vim.fn.strcharpart(prompt, 0, 49) .. '…'
  end
  return prompt
end

--- Restores the files to before checkpoint id (that change and every
--- later one), after a preview.
---@param id string
function M.undo_change(id)
  local sid = session()
  if sid then
    preview({ method = P.request.undo, params = { sessionId = sid, checkpoint = id }, sid = sid,
      title = ('Undo %s and every later change'):format(id) })
  end
end

--- Undoes a run (a turn): from its first checkpoint on, after a preview.
---@param run_id string
function M.undo_turn(run_id)
  local sid = session()
  if sid then
    local run = S.runs:get(run_id)
    preview({ method = P.request.undo, params = { sessionId = sid, runId = run_id }, sid = sid,
      title = ('Undo the turn "%s"'):format(short(run and run.prompt or run_id)) })
  end
end

--- Undoes the session's last change not yet undone, after a preview.
function M.undo_last()
  local sid = session()
  if sid then
    preview({ method = P.request.undo, params = { sessionId = sid }, sid = sid, title = 'Undo the last change' })
  end
end

--- Rewinds the conversation to before run_id (the files too), after a
--- preview.
---@param run_id string
function M.rewind(run_id)
  local sid = session()
  if not sid then
    return
  end
  local run = S.runs:get(run_id)
  if run and run.rewound then
    return ui.notify('that run was already rewound', vim.log.levels.WARN)
  end
  preview({ method = P.request.rewind, params = { sessionId = sid, runId = run_id }, sid = sid, rewind = true,
    title = ('Rewind to before "%s"'):format(short(run and run.prompt or run_id)) })
end

-- The session's runs not rewound, oldest first.
local function live_runs(sid)
  return vim.tbl_filter(function(r)
    return not r.rewound
  end, S.runs:of_session(sid))
end

--- The latest run of the session that changed the workspace (not rewound).
local function last_turn(sid)
  local list = live_runs(sid)
  for i = #list, 1, -1 do
    if #require('agentd.runs').checkpoints_of(list[i]) > 0 then
      return list[i]
    end
  end
end

--- :AgentdUndo[!] [{arg}]: the last change; ! the last turn; cN a
--- checkpoint; a run id that run.
---@param arg string|nil
---@param bang boolean|nil
function M.command_undo(arg, bang)
  local sid = session()
  if not sid then
    return
  end
  arg = arg and vim.trim(arg) or ''
  if arg == '' and bang then
    local run = last_turn(sid)
    if not run then
      return ui.notify('no turn of this conversation changed the workspace')
    end
    return M.undo_turn(run.id)
  elseif arg == '' then
    return M.undo_last()
  elseif arg:match('^c%d+$') then
    return M.undo_change(arg)
  end
  M.undo_turn(arg)
end

--- :AgentdRewind [{N}|{runId}]: N runs back (1: the last run), a run, or
--- a picker of the session's runs.
---@param arg string|nil
function M.command_rewind(arg)
  local sid = session()
  if not sid then
    return
  end
  arg = arg and vim.trim(arg) or ''
  local list = live_runs(sid)
  local n = tonumber(arg)
  if n then
    if n < 1 or n > #list then
      return ui.notify(('the conversation has %d run%s to rewind'):format(#list, #list == 1 and '' or 's'),
        vim.log.levels.WARN)
    end
    return M.rewind(list[#list - n + 1].id)
  elseif arg ~= '' then
    return M.rewind(arg)
  end
  if #list == 0 then
    return ui.notify('nothing to rewind in this conversation')
  end
  local items = {}
  for i = #list, 1, -1 do
    items[#items + 1] = { run = list[i], cut = #list - i + 1 }
  end
  vim.ui.select(items, {
    prompt = 'agentd: rewind to before',
    kind = 'agentd.rewind',
    format_item = function(it)
      return ('%s  ·  %s'):format(short(it.run.prompt or it.run.id),
        it.cut == 1 and 'the last run' or (it.cut .. ' runs back'))
    end,
  }, function(it)
    if it then
      M.rewind(it.run.id)
    end
  end)
end

--- One line of the checkpoints list: id, what made it, files, who undid it.
---@param cp table an agent/checkpoints entry
---@return string
function M.label(cp)
  local marks = require('agentd.render').FILE_MARK
  local files = {}
  for i, f in ipairs(type(cp.files) == 'table' and cp.files or {}) do
    if i > 4 then
      files[#files + 1] = ('+%d'):format(#cp.files - 4)
      break
    end
    files[#files + 1] = (marks[f.status] or '?') .. ' ' .. tostring(f.path)
  end
  local what = tostring(cp.tool or '?')
  if type(cp.title) == 'string' and cp.title ~= '' then
    what = what .. ' ' .. short(cp.title)
  end
  local parts = { tostring(cp.id), what }
  if #files > 0 then
    parts[#parts + 1] = table.concat(files, ', ')
  end
  local sessions = require('agentd.sessions')
  local t = sessions.parse_time(cp.time)
  if t then
    parts[#parts + 1] = sessions.format_time(t)
  end
  if type(cp.undoneBy) == 'string' and cp.undoneBy ~= '' then
    parts[#parts + 1] = 'undone by ' .. cp.undoneBy
  end
  if type(cp.undoes) == 'table' and #cp.undoes > 0 then
    parts[#parts + 1] = 'undoes ' .. table.concat(cp.undoes, ', ')
  end
  return table.concat(parts, '  ·  ')
end

--- :AgentdCheckpoints: the session's checkpoints, newest first; the one
--- picked is undone (it and every later one), after a preview.
function M.pick()
  local sid = session()
  if not sid then
    return
  end
  M.refresh(sid, function(e, list)
    if e then
      return ui.notify('checkpoints: ' .. err_text(e), vim.log.levels.ERROR)
    end
    if #list == 0 then
      return ui.notify('no checkpoints: nothing in this conversation changed the workspace')
    end
    local items = {}
    for i = #list, 1, -1 do
      items[#items + 1] = list[i]
    end
    vim.ui.select(items, {
      prompt = 'agentd: checkpoints (the one picked is undone, with every later one)',
      kind = 'agentd.checkpoints',
      format_item = M.label,
    }, function(cp)
      if cp then
        M.undo_change(cp.id)
      end
    end)
  end)
end

--- Completion for :AgentdUndo: the chat session's checkpoints, newest
--- first, from what agent/checkpoints last said.
---@param lead string|nil
---@return string[]
function M.complete(lead)
  lead = lead or ''
  local c = S.session and S.checkpoints[S.session]
  local out = {}
  for i = #(c and c.list or {}), 1, -1 do
    local id = c.list[i].id
    if id:sub(1, #lead) == lead then
      out[#out + 1] = id
    end
  end
  return out
end

return M
