-- The open input requests, as pure Lua (no editor API).
--
-- Any number are open at once and they are answered in any order: the
-- conversation shows each of them, the request float shows one, the picker
-- lists them all. A request the user closes without answering is
-- "dismissed": it stays open in the daemon, the float no longer offers it
-- by itself, and the picker (or a restart) brings it back. A resolved
-- request never comes back.
local M = {}

---@class agentd.OpenRequest
---@field req table          the agent/inputRequest params
---@field order integer      arrival order
---@field dismissed boolean  closed without an answer
---@field sending boolean    an answer is on its way

---@class agentd.RequestSet
---@field open table<string, agentd.OpenRequest>
---@field resolved table<string, boolean>
---@field arrivals integer
local Set = {}
Set.__index = Set

---@return agentd.RequestSet
function M.new()
  return setmetatable({ open = {}, resolved = {}, arrivals = 0 }, Set)
end

--- Adds a request. Returns false when it is already open or was resolved.
---@param req table
---@return boolean
function Set:add(req)
  if type(req) ~= 'table' or type(req.requestId) ~= 'string' then
    return false
  end
  local id = req.requestId
  if self.resolved[id] or self.open[id] then
    return false
  end
  self.arrivals = self.arrivals + 1
  self.open[id] = { req = req, order = self.arrivals, dismissed = false, sending = false }
  return true
end

---@param id string
---@return agentd.OpenRequest|nil
function Set:get(id)
  return self.open[id]
end

--- The request is closed (answered, timed out, cancelled, covered by a
--- rule). Returns the entry when it was open here.
---@param id string
---@return agentd.OpenRequest|nil
function Set:resolve(id)
  self.resolved[id] = true
  local o = self.open[id]
  self.open[id] = nil
  return o
end

---@param id string
---@return boolean
function Set:is_resolved(id)
  return self.resolved[id] == true
end

--- The open requests, oldest first (those being answered included).
---@return agentd.OpenRequest[]
function Set:list()
  local out = {}
  for _, o in pairs(self.open) do
    out[#out + 1] = o
  end
  table.sort(out, function(a, b)
    return a.order < b.order
  end)
  return out
end

--- How many requests wait for the user (not those being answered).
---@return integer
function Set:count()
  local n = 0
  for _, o in pairs(self.open) do
    if not o.sending then
      n = n + 1
    end
  end
  return n
end

--- The oldest request that waits for the user and was not dismissed.
---@return agentd.OpenRequest|nil
function Set:next()
  for _, o in ipairs(self:list()) do
    if not o.dismissed and not o.sending then
      return o
    end
  end
end

---@param id string
function Set:dismiss(id)
  local o = self.open[id]
  if o then
    o.dismissed = true
  end
end

--- Offers every dismissed request again (after a restart, or when asked).
function Set:undismiss_all()
  for _, o in pairs(self.open) do
    o.dismissed = false
  end
end

--- An answer to the request is on its way.
---@param id string
function Set:sending(id)
  local o = self.open[id]
  if o then
    o.sending = true
  end
end

--- The answer did not arrive: the request waits again.
---@param id string
function Set:unsend(id)
  local o = self.open[id]
  if o then
    o.sending = false
  end
end

--- Keeps only the requests the daemon reports open; returns the ids dropped.
---@param open_ids string[]
---@return string[]
function Set:sync(open_ids)
  local keep = {}
  for _, id in ipairs(open_ids) do
    keep[id] = true
  end
  local dropped = {}
  for id in pairs(self.open) do
    if not keep[id] then
      dropped[#dropped + 1] = id
    end
  end
  table.sort(dropped)
  for _, id in ipairs(dropped) do
    self:resolve(id)
  end
  return dropped
end

return M
