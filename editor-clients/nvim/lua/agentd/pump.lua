-- The request pump: open input requests in, answers out. It keeps the set
-- of open requests (agentd.requests) and the views of them (the chat, the
-- request float, the diff tabs) in step: a request that arrives shows up
-- in all of them, one answered or resolved anywhere leaves all of them.
-- Nothing here blocks: requests are answered in any order, from any view.
local P = require('agentd.protocol')
local S = require('agentd.state')
local lifecycle = require('agentd.lifecycle')
local ui = require('agentd.ui')
local float = require('agentd.float')
local diff = require('agentd.diff')
local kinds = require('agentd.kinds')

local M = {}

local function chat()
  return require('agentd.chat')
end

local function refresh()
  chat().render()
  ui.redraw_status()
end

--- A request arrived (agent/inputRequest, or agent/pending after a restart).
---@param req table
function M.add(req)
  if S.requests:add(req) then
    require('agentd.methods').adopt(S.runs:add_request(req))
    if require('agentd.inline').claim(req) then
      return refresh() -- shown in its buffer
    end
    refresh()
    float.offer()
    diff.offer()
  end
end

--- The daemon closed a request (agent/inputResolved, or gone from
--- agent/pending).
---@param id string
function M.resolved(id)
  S.requests:resolve(id)
  diff.on_resolved(id)
  float.on_resolved(id)
  require('agentd.inline').on_resolved(id)
  refresh()
  diff.offer()
end

local function failed(id, e)
  local C = P.error_codes
  if e.code == C.AlreadyResolved or e.code == C.UnknownRequest then
    ui.notify('that request was already resolved (' .. tostring(e.message) .. ')')
    return M.resolved(id)
  elseif e.code == C.Expired then
    ui.notify('the request expired before your answer arrived', vim.log.levels.WARN)
    return M.resolved(id)
  elseif e.code == C.NotSaved then
    ui.notify(('the daemon could not save your answer, so the request stays open: answer again once its state '
      .. 'directory can be written (%s)'):format(tostring(e.message)), vim.log.levels.ERROR)
  elseif e.code == P.DISCONNECTED then
    ui.notify('the daemon is not running; the request stays open (:AgentdPending)', vim.log.levels.WARN)
  else
    ui.notify(('answer refused: %s (%s)'):format(tostring(e.message), tostring(e.code)), vim.log.levels.ERROR)
  end
  S.requests:unsend(id)
  refresh()
  float.offer()
end

-- Sends an answer; the request leaves the views at once and comes back if
-- the answer does not arrive.
local function send(id, params)
  local o = S.requests:get(id)
  if not o then
    return ui.notify('that request is no longer open')
  end
  -- a kind this plugin does not know says how it is answered (answerWith)
  local method = P.answer_method[o.req.kind] or (o.req.answerWith == 'confirm' and P.request.confirm)
    or (o.req.answerWith == 'reply' and P.request.reply) or nil
  if not method then
    return ui.notify('cannot answer a request of kind ' .. tostring(o.req.kind), vim.log.levels.WARN)
  end
  params.requestId = id
  if kinds.is_generic(o.req) and not (type(o.req.input) == 'table' and o.req.input.secret) then
    -- what the user answered, in the chat under the request: the daemon's
    -- inputResolved says only that it was answered
    local words = {}
    for _, opt in ipairs(kinds.options(o.req)) do
      if opt.id == (params.optionId or params.decision) then
        words[#words + 1] = opt.label
      end
    end
    local text = params.text or params.reason
    if type(text) == 'string' and text ~= '' then
      words[#words + 1] = text
    end
    S.runs:said(o.req.runId, id, table.concat(words, ': '))
  end
  S.requests:sending(id)
  diff.on_resolved(id)
  float.on_resolved(id)
  refresh()
  lifecycle.request(method, params, function(e)
    if e then
      return failed(id, e)
    end
    M.resolved(id)
  end)
end

--- Answers a question, choice or secret: params is {text} | {optionId} | {answers}.
function M.reply(id, params)
  send(id, params)
end

--- Picks option option_id of request id: a choice's answer; for a kind
--- known only from its generic form, its answer (agent/reply's optionId or
--- agent/confirm's decision), after the text its input asks for with it.
---@param id string
---@param option_id string
---@param back string|nil where Esc in a text field goes ('view' or 'close')
function M.pick_option(id, option_id, back)
  local o = S.requests:get(id)
  if not o then
    return ui.notify('that request is no longer open')
  end
  local req = o.req
  if not kinds.is_generic(req) then
    return M.reply(id, { optionId = option_id })
  end
  if kinds.input_with(req, option_id) then
    return float.show(id, { focus = true, mode = 'with', option = option_id, back = back or 'close' })
  end
  M.answer(id, option_id, nil)
end

--- Answers a kind known only from its generic form: an option (may be
--- nil) and the text its input took (may be nil).
---@param id string
---@param option_id string|nil
---@param text string|nil
function M.answer(id, option_id, text)
  local o = S.requests:get(id)
  if not o then
    return
  end
  if o.req.answerWith == 'confirm' then
    return send(id, { decision = option_id, reason = text })
  end
  send(id, { optionId = option_id, text = text })
end

--- Answers a confirmation.
---@param id string
---@param decision string
---@param reason string|nil
---@param edited string|nil the proposed text as the user edited it
function M.decide(id, decision, reason, edited)
  send(id, { decision = decision, reason = reason, editedContent = edited })
end

--- Reads a secret with inputsecret() (it blocks, but only once the user
--- asked to type it) and sends it.
function M.secret(id)
  local o = S.requests:get(id)
  if not o then
    return
  end
  local spec = kinds.of(o.req)
  local ok, text = pcall(vim.fn.inputsecret, 'agentd (secret): ' .. (spec and spec.summary(o.req) or '') .. ' ')
  if ok and type(text) == 'string' and text ~= '' and S.requests:get(id) then
    M.reply(id, { text = text })
  end
end

--- What the open key does for request id: answer a question in the float,
--- read a secret, open a write's diff, or show the request in the float.
---@param id string
---@param opts {back: string|nil}|nil
function M.open(id, opts)
  local o = S.requests:get(id)
  if not o then
    return ui.notify('that request is no longer open')
  end
  local how = kinds.open_of(o.req)
  if how == 'diff' then
    float.close()
    return diff.open(id)
  elseif how == 'secret' then
    return M.secret(id)
  elseif how == 'text' then
    return float.show(id, { focus = true, mode = 'text', back = (opts and opts.back) or 'close' })
  end
  float.show(id, { focus = true })
end

--- The open requests with a line each, for the picker.
function M.items()
  local out = {}
  for _, o in ipairs(S.requests:list()) do
    if not o.sending then
      local spec = kinds.of(o.req)
      out[#out + 1] = {
        id = o.req.requestId,
        label = ('%s: %s'):format(spec and spec.label or tostring(o.req.kind), spec and spec.summary(o.req) or ''),
      }
    end
  end
  return out
end

--- The picker of open requests (vim.ui.select): the one picked opens in
--- the float with the cursor in it. With a single request, no picker.
function M.pick()
  local items = M.items()
  S.requests:undismiss_all()
  if #items == 0 then
    return ui.notify('no open requests')
  elseif #items == 1 then
    return float.show(items[1].id, { focus = true })
  end
  vim.ui.select(items, {
    prompt = 'agentd: open requests',
    kind = 'agentd.requests',
    format_item = function(it)
      return it.label
    end,
  }, function(it)
    if it then
      float.show(it.id, { focus = true })
    end
  end)
end

--- Makes the open set match the daemon's (agent/pending's answer).
---@param list table[] the requests the daemon reports open
function M.sync(list)
  local ids = {}
  for _, r in ipairs(list) do
    ids[#ids + 1] = r.requestId
  end
  for _, id in ipairs(S.requests:sync(ids)) do
    M.resolved(id)
  end
  S.requests:undismiss_all()
  for _, r in ipairs(list) do
    M.add(r)
  end
  refresh()
  float.offer()
end

return M
