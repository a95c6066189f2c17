-- The queue of open input requests, as pure Lua (no editor API).
--
-- One prompt is shown at a time (vim.ui.input/select and inputsecret are
-- modal); the others wait in arrival order. A prompt the user dismisses is
-- "postponed": it stays open in the daemon and comes back with :AgentdPending
-- or after a restart. Resolving one request never touches another.
local Q = {}
Q.__index = Q

local M = {}

function M.new()
  return setmetatable({
    items = {}, -- waiting, in order
    postponed = {}, -- dismissed by the user, in order
    active = nil, -- the request being shown
    resolved = {}, -- requestId -> true, never shown again
  }, Q)
end

local function index_of(list, id)
  for i, r in ipairs(list) do
    if r.requestId == id then
      return i
    end
  end
end

--- Whether the queue knows this request (shown, waiting or postponed).
function Q:has(id)
  return (self.active and self.active.requestId == id) or index_of(self.items, id) ~= nil
    or index_of(self.postponed, id) ~= nil
end

--- Adds a request. Returns false if it is already known or was resolved.
function Q:add(req)
  if type(req) ~= 'table' or not req.requestId then
    return false
  end
  if self.resolved[req.requestId] or self:has(req.requestId) then
    return false
  end
  table.insert(self.items, req)
  return true
end

--- The request was resolved (answered here or elsewhere, timed out,
--- cancelled). Returns 'active' when it is the one being shown (the caller
--- closes its prompt), 'waiting' or 'postponed' when it was dropped from
--- there, nil when unknown.
function Q:resolve(id)
  self.resolved[id] = true
  if self.active and self.active.requestId == id then
    self.active = nil
    return 'active'
  end
  local i = index_of(self.items, id)
  if i then
    table.remove(self.items, i)
    return 'waiting'
  end
  i = index_of(self.postponed, id)
  if i then
    table.remove(self.postponed, i)
    return 'postponed'
  end
end

--- Takes the next request to show, or nil when one is already shown or none waits.
function Q:next()
  if self.active or #self.items == 0 then
    return nil
  end
  self.active = table.remove(self.items, 1)
  return self.active
end

--- The active prompt was dismissed without an answer.
function Q:postpone(id)
  if self.active and self.active.requestId == id then
    table.insert(self.postponed, self.active)
    self.active = nil
    return true
  end
  return false
end

--- The active prompt was answered (the reply is on its way).
function Q:answered(id)
  return self:resolve(id) ~= nil
end

--- A reply could not be delivered: the request is still open.
function Q:unresolve(req)
  self.resolved[req.requestId] = nil
  if not self:has(req.requestId) then
    table.insert(self.postponed, req)
  end
end

--- Puts the postponed requests back in the queue (in their order, before
--- those still waiting).
function Q:requeue_postponed()
  for i = #self.postponed, 1, -1 do
    table.insert(self.items, 1, self.postponed[i])
  end
  self.postponed = {}
end

--- Keeps only the requests whose ids are open according to the daemon.
--- Returns true if the active one was dropped.
function Q:sync(open_ids)
  local open = {}
  for _, id in ipairs(open_ids) do
    open[id] = true
  end
  local function keep(list)
    local out = {}
    for _, r in ipairs(list) do
      if open[r.requestId] then
        out[#out + 1] = r
      else
        self.resolved[r.requestId] = true
      end
    end
    return out
  end
  self.items = keep(self.items)
  self.postponed = keep(self.postponed)
  if self.active and not open[self.active.requestId] then
    self.resolved[self.active.requestId] = true
    self.active = nil
    return true
  end
  return false
end

--- How many requests are open: shown, waiting and postponed.
function Q:count()
  return (self.active and 1 or 0) + #self.items + #self.postponed
end

function Q:all()
  local out = {}
  if self.active then
    out[1] = self.active
  end
  vim.list_extend(out, self.items)
  vim.list_extend(out, self.postponed)
  return out
end

return M
