-- A small HTTP GET for :checkhealth (the model's /models): plain http over
-- a vim.loop TCP socket (local model servers need nothing more), https
-- through curl when it is installed. Works on Neovim 0.7 (no vim.system).
local uv = vim.uv or vim.loop

local M = {}

--- Splits a URL into scheme, host, port and path, or nil and an error.
---@param url string
function M.parse(url)
  local scheme, rest = url:match('^(https?)://(.*)$')
  if not scheme then
    return nil, 'not an http(s) URL: ' .. url
  end
  local hostport, path = rest:match('^([^/]*)(.*)$')
  local host, port = hostport:match('^%[(.+)%]:?(%d*)$')
  if not host then
    host, port = hostport:match('^([^:]+):?(%d*)$')
  end
  if not host or host == '' then
    return nil, 'no host in ' .. url
  end
  port = tonumber(port) or (scheme == 'https' and 443 or 80)
  return { scheme = scheme, host = host, port = port, path = path ~= '' and path or '/' }
end

--- The /models URL of an OpenAI-compatible base URL.
function M.models_url(base)
  return (base:gsub('/+$', '')) .. '/models'
end

local function dechunk(body)
  local out, pos = {}, 1
  while true do
    local size_hex, after = body:match('^(%x+)[^\r\n]*\r\n()', pos)
    if not size_hex then
      return nil
    end
    local size = tonumber(size_hex, 16)
    if size == 0 then
      return table.concat(out)
    end
    out[#out + 1] = body:sub(after, after + size - 1)
    pos = after + size + 2
  end
end

--- Parses a raw HTTP/1.1 response: status, body, or nil and an error.
function M.parse_response(raw)
  local head, body = raw:match('^(.-)\r\n\r\n(.*)$')
  if not head then
    return nil, 'no complete HTTP response'
  end
  local status = tonumber(head:match('^HTTP/%d[%.%d]* (%d%d%d)'))
  if not status then
    return nil, 'not an HTTP response: ' .. head:sub(1, 60)
  end
  if head:lower():find('\ntransfer%-encoding:%s*chunked') then
    body = dechunk(body) or body
  end
  return status, body
end

-- GET over a raw socket; done(status, body) or done(nil, err), called once
-- from a luv callback (no editor API there).
local function get_plain(u, headers, timeout, done)
  local finished = false
  local tcp, timer
  local function finish(a, b)
    if finished then
      return
    end
    finished = true
    if timer and not timer:is_closing() then
      timer:stop()
      timer:close()
    end
    if tcp and not tcp:is_closing() then
      tcp:close()
    end
    done(a, b)
  end
  timer = uv.new_timer()
  timer:start(timeout, 0, function()
    finish(nil, ('no answer within %d ms'):format(timeout))
  end)
  uv.getaddrinfo(u.host, tostring(u.port), { socktype = 'stream' }, function(err, addrs)
    if err or not addrs or not addrs[1] then
      return finish(nil, 'cannot resolve ' .. u.host .. ': ' .. tostring(err))
    end
    tcp = uv.new_tcp()
    tcp:connect(addrs[1].addr, addrs[1].port or u.port, function(cerr)
      if cerr then
        return finish(nil, ('cannot connect to %s:%d: %s'):format(u.host, u.port, cerr))
      end
      local lines = { ('GET %s HTTP/1.1'):format(u.path), 'Host: ' .. u.host, 'Accept: application/json', 'Connection: close' }
      for k, v in pairs(headers) do
        lines[#lines + 1] = k .. ': ' .. v
      end
      local chunks = {}
      tcp:read_start(function(rerr, data)
        if rerr then
          return finish(nil, 'read: ' .. rerr)
        end
        if data then
          chunks[#chunks + 1] = data
          return
        end
        finish(M.parse_response(table.concat(chunks)))
      end)
      tcp:write(table.concat(lines, '\r\n') .. '\r\n\r\n')
    end)
  end)
end

-- GET through curl (https); the headers go through stdin, so an API key
-- never shows in the process list.
local function get_curl(url, headers, timeout, done)
  local out = {}
  local ok, job = pcall(vim.fn.jobstart, {
    'curl', '-sS', '--max-time', tostring(math.max(1, math.ceil(timeout / 1000))), '--config', '-',
    '-w', '\n%{http_code}', url,
  }, {
    stdout_buffered = true,
    stderr_buffered = true,
    on_stdout = function(_, data)
      out.stdout = data
    end,
    on_stderr = function(_, data)
      out.stderr = data
    end,
    on_exit = function(_, code)
      if code ~= 0 then
        return done(nil, 'curl: ' .. vim.trim(table.concat(out.stderr or {}, '\n')))
      end
      local text = table.concat(out.stdout or {}, '\n')
      local body, status = text:match('^(.*)\n(%d%d%d)$')
      done(tonumber(status), body)
    end,
  })
  if not ok or job <= 0 then
    return done(nil, 'cannot run curl')
  end
  local cfg = {}
  for k, v in pairs(headers) do
    cfg[#cfg + 1] = ('header = "%s: %s"'):format(k, (v:gsub('["\\]', '\\%0')))
  end
  vim.fn.chansend(job, table.concat(cfg, '\n') .. '\n')
  vim.fn.chanclose(job, 'stdin')
end

--- GET url and wait (at most timeout ms): status, body — or nil, error.
--- opts: headers, timeout, via ('socket' or 'curl'; default: socket for
--- http, curl for https).
---@return integer|nil, string
function M.get(url, opts)
  opts = opts or {}
  local timeout = opts.timeout or 3000
  local u, err = M.parse(url)
  if not u then
    return nil, err
  end
  local via = opts.via or (u.scheme == 'https' and 'curl' or 'socket')
  if via == 'curl' and vim.fn.executable('curl') ~= 1 then
    return nil, 'https needs curl, which is not installed'
  end
  local result
  local function done(a, b)
    result = { a, b }
  end
  if via == 'curl' then
    get_curl(url, opts.headers or {}, timeout, done)
  else
    get_plain(u, opts.headers or {}, timeout, done)
  end
  vim.wait(timeout + 1000, function()
    return result ~= nil
  end, 10)
  if not result then
    return nil, 'no answer within ' .. timeout .. ' ms'
  end
  return result[1], result[2]
end

return M
