-- Applies a unified diff to a text, as pure Lua. Used to build the
-- "proposed" side of a write confirmation when the request carries only
-- the diff (no newText).
local M = {}

--- Splits text into lines; returns lines and whether it ended with "\n".
function M.lines(text)
  local lines = {}
  if text == nil or text == '' then
    return lines, false
  end
  local eol = text:sub(-1) == '\n'
  local body = eol and text:sub(1, -2) or text
  for line in (body .. '\n'):gmatch('(.-)\n') do
    lines[#lines + 1] = line
  end
  return lines, eol
end

--- Parses the hunks of a unified diff (one file).
function M.parse(diff)
  local hunks, cur = {}, nil
  local lines = M.lines(diff)
  for _, l in ipairs(lines) do
    local os, oc, ns, nc = l:match('^@@ %-(%d+),?(%d*) %+(%d+),?(%d*) @@')
    if os then
      cur = {
        old_start = tonumber(os),
        old_count = oc == '' and 1 or tonumber(oc),
        new_start = tonumber(ns),
        new_count = nc == '' and 1 or tonumber(nc),
        lines = {},
      }
      hunks[#hunks + 1] = cur
    elseif cur then
      local c = l:sub(1, 1)
      if c == ' ' or c == '-' or c == '+' then
        cur.lines[#cur.lines + 1] = { c, l:sub(2) }
      elseif l == '' then
        cur.lines[#cur.lines + 1] = { ' ', '' }
      elseif c == '\\' then
        cur.lines[#cur.lines].no_eol = true
      end
    end
  end
  return hunks
end

--- Counts the added and removed lines of a unified diff.
---@return integer added, integer removed
function M.stat(diff)
  local added, removed = 0, 0
  for _, h in ipairs(M.parse(diff or '')) do
    for _, hl in ipairs(h.lines) do
      if hl[1] == '+' then
        added = added + 1
      elseif hl[1] == '-' then
        removed = removed + 1
      end
    end
  end
  return added, removed
end

local function matches(lines, at, old)
  for i, l in ipairs(old) do
    if lines[at + i - 1] ~= l then
      return false
    end
  end
  return true
end

--- Returns the new text, or nil and an error.
function M.apply(text, diff)
  local lines, eol = M.lines(text)
  local hunks = M.parse(diff)
  if #hunks == 0 then
    return nil, 'no hunks'
  end
  local out, pos = {}, 1 -- pos: next line of `lines` not yet copied
  local new_eol = eol
  for _, h in ipairs(hunks) do
    local old, new = {}, {}
    for _, hl in ipairs(h.lines) do
      if hl[1] ~= '+' then
        old[#old + 1] = hl[2]
      end
      if hl[1] ~= '-' then
        new[#new + 1] = hl[2]
      end
    end
    local start = h.old_count == 0 and h.old_start + 1 or h.old_start
    if not matches(lines, start, old) then
      -- the file moved a little: look around
      local found
      for d = 1, 200 do
        if start - d >= pos and matches(lines, start - d, old) then
          found = start - d
          break
        end
        if start + d + #old - 1 <= #lines and matches(lines, start + d, old) then
          found = start + d
          break
        end
      end
      if not found then
        return nil, 'hunk @@ -' .. h.old_start .. ' does not apply'
      end
      start = found
    end
    for i = pos, start - 1 do
      out[#out + 1] = lines[i]
    end
    for _, l in ipairs(new) do
      out[#out + 1] = l
    end
    pos = start + #old
    local last = h.lines[#h.lines]
    if last and last.no_eol and last[1] ~= '-' then
      new_eol = false
    elseif last and pos > #lines then
      new_eol = true
    end
  end
  for i = pos, #lines do
    out[#out + 1] = lines[i]
  end
  if #out == 0 then
    return ''
  end
  return table.concat(out, '\n') .. (new_eol and '\n' or '')
end

return M
