-- LSP-style Content-Length framing, as pure Lua (no editor API), so it is
-- testable on its own.
--
--   local d = framing.decoder()
--   for _, item in ipairs(d:feed(chunk)) do
--     -- item.body (string) or item.err (a header problem, the decoder resyncs)
--   end
local M = {}

--- Frames one message body (a JSON string). Content-Length counts bytes, and
--- Lua's # is a byte count.
function M.encode(body)
  return ('Content-Length: %d\r\n\r\n%s'):format(#body, body)
end

local Decoder = {}
Decoder.__index = Decoder

function M.decoder()
  return setmetatable({ buf = '', want = nil }, Decoder)
end

-- Parses a header block; returns the content length or nil, err.
local function parse_headers(block)
  local len
  for line in (block .. '\r\n'):gmatch('(.-)\r\n') do
    if line ~= '' then
      local name, value = line:match('^([%w%-]+)%s*:%s*(.-)%s*$')
      if not name then
        return nil, 'broken header line: ' .. line
      end
      if name:lower() == 'content-length' then
        len = tonumber(value)
        if not len or len < 0 or len ~= math.floor(len) then
          return nil, 'bad Content-Length: ' .. value
        end
      end
    end
  end
  if not len then
    return nil, 'missing Content-Length'
  end
  return len
end

--- Feeds bytes; returns the complete items found so far.
function Decoder:feed(chunk)
  if chunk and chunk ~= '' then
    self.buf = self.buf .. chunk
  end
  local out = {}
  while true do
    if self.want then
      if #self.buf < self.want then
        break
      end
      out[#out + 1] = { body = self.buf:sub(1, self.want) }
      self.buf = self.buf:sub(self.want + 1)
      self.want = nil
    else
      local s, e = self.buf:find('\r\n\r\n', 1, true)
      if not s then
        -- guard against garbage that never ends a header block
        if #self.buf > 65536 then
          out[#out + 1] = { err = 'header block too long' }
          self:resync(2)
        end
        break
      end
      local len, err = parse_headers(self.buf:sub(1, s - 1))
      if len then
        self.want = len
        self.buf = self.buf:sub(e + 1)
      else
        out[#out + 1] = { err = err }
        -- skip to the next Content-Length header after the broken one
        if not self:resync(2) then
          self.buf = self.buf:sub(e + 1)
        end
      end
    end
  end
  return out
end

-- Drops bytes up to the next "Content-Length" header at or after position
-- from. Returns true if one was found.
function Decoder:resync(from)
  local lower = self.buf:lower()
  local i = lower:find('content%-length', from)
  if i then
    self.buf = self.buf:sub(i)
    return true
  end
  self.buf = ''
  return false
end

return M
