-- Unit tests of the pure modules: framing, the request queue, the run model,
-- the unified-diff applier, and the JSON-RPC endpoint without a process.
local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/'
package.path = here .. '?.lua;' .. package.path
local t = require('lib')
local framing = require('agentd.framing')
local queue = require('agentd.queue')
local runs = require('agentd.runs')
local udiff = require('agentd.udiff')
local rpc = require('agentd.rpc')

-- framing ------------------------------------------------------------------

t.test('framing: encode counts bytes', function()
  t.eq(framing.encode('{"a":"é"}'), 'Content-Length: 10\r\n\r\n{"a":"é"}')
end)

t.test('framing: one message split at every byte', function()
  local msg = framing.encode('{"jsonrpc":"2.0","method":"x","params":{"t":"héllo ✓"}}')
  local d = framing.decoder()
  local got = {}
  for i = 1, #msg do
    for _, it in ipairs(d:feed(msg:sub(i, i))) do
      got[#got + 1] = it
    end
  end
  t.eq(#got, 1)
  t.eq(got[1].body, '{"jsonrpc":"2.0","method":"x","params":{"t":"héllo ✓"}}')
end)

t.test('framing: two messages in one read, with Content-Type', function()
  local d = framing.decoder()
  local a = 'Content-Length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}'
  local items = d:feed(a .. framing.encode('[1]'))
  t.eq(#items, 2)
  t.eq(items[1].body, '{}')
  t.eq(items[2].body, '[1]')
end)

t.test('framing: header name is case-insensitive', function()
  local items = framing.decoder():feed('content-length: 3\r\n\r\nabc')
  t.eq(items[1].body, 'abc')
end)

t.test('framing: a broken header is reported and the next frame is read', function()
  local d = framing.decoder()
  local items = d:feed('garbage line\r\n\r\n' .. framing.encode('{"ok":1}'))
  t.eq(#items, 2)
  t.ok(items[1].err, 'an error item first')
  t.eq(items[2].body, '{"ok":1}')
end)

t.test('framing: missing Content-Length', function()
  local items = framing.decoder():feed('Content-Type: x\r\n\r\n' .. framing.encode('1'))
  t.ok(items[1].err)
  t.eq(items[#items].body, '1')
end)

-- queue --------------------------------------------------------------------

local function req(id, kind)
  return { requestId = id, kind = kind or 'question', runId = 'r1' }
end

t.test('queue: one shown at a time, in order', function()
  local q = queue.new()
  t.ok(q:add(req('a')))
  t.ok(q:add(req('b')))
  t.eq(q:add(req('a')), false, 'duplicate refused')
  t.eq(q:next().requestId, 'a')
  t.eq(q:next(), nil, 'nothing while one is active')
  t.eq(q:count(), 2)
  q:answered('a')
  t.eq(q:next().requestId, 'b')
end)

t.test('queue: resolving a waiting request never touches the active one', function()
  local q = queue.new()
  q:add(req('a'))
  q:add(req('b'))
  q:add(req('c'))
  q:next()
  t.eq(q:resolve('b'), 'waiting')
  t.eq(q.active.requestId, 'a')
  t.eq(q:resolve('a'), 'active')
  t.eq(q:next().requestId, 'c')
  t.eq(q:add(req('b')), false, 'a resolved request never comes back')
end)

t.test('queue: postponed requests come back in order', function()
  local q = queue.new()
  q:add(req('a'))
  q:add(req('b'))
  q:add(req('c'))
  q:next()
  q:postpone('a')
  q:next()
  q:postpone('b')
  t.eq(q:count(), 3)
  t.eq(q:next().requestId, 'c')
  q:requeue_postponed()
  q:answered('c')
  t.eq(q:next().requestId, 'a')
  q:answered('a')
  t.eq(q:next().requestId, 'b')
end)

t.test('queue: sync drops what the daemon no longer has open', function()
  local q = queue.new()
  q:add(req('a'))
  q:add(req('b'))
  q:next()
  t.eq(q:sync({ 'b' }), true, 'the active one was dropped')
  t.eq(q:count(), 1)
  t.eq(q:next().requestId, 'b')
end)

t.test('queue: an undelivered answer goes back to postponed', function()
  local q = queue.new()
  q:add(req('a'))
  local r = q:next()
  q:answered('a')
  q:unresolve(r)
  t.eq(q:count(), 1)
  q:requeue_postponed()
  t.eq(q:next().requestId, 'a')
end)

-- runs ---------------------------------------------------------------------

t.test('runs: seq check', function()
  local s = runs.new()
  local r = s:ensure('r1', 's1')
  t.eq(s:check(r, 1), 'apply')
  s:apply('agent/runState', { runId = 'r1', sessionId = 's1', seq = 1, state = 'running' })
  t.eq(s:check(r, 1), 'dup')
  t.eq(s:check(r, 3), 'gap')
  t.eq(s:check(r, 2), 'apply')
end)

t.test('runs: folds updates into items', function()
  local s = runs.new()
  local function up(seq, u)
    s:apply('agent/update', { runId = 'r1', sessionId = 's1', seq = seq, update = u })
  end
  up(1, { kind = 'message_chunk', text = 'Hel' })
  up(2, { kind = 'message_chunk', text = 'lo' })
  up(3, { kind = 'plan', entries = { { content = 'a', status = 'pending' } } })
  up(4, { kind = 'tool_call', toolCallId = 'c1', title = 'read x', toolKind = 'read', status = 'pending' })
  up(5, { kind = 'tool_call_update', toolCallId = 'c1', status = 'completed', output = 'data' })
  up(6, { kind = 'plan', entries = { { content = 'a', status = 'completed' } } })
  up(7, { kind = 'result', text = 'Hello', stopReason = 'end_turn' })
  local r = s:get('r1')
  t.eq(#r.items, 3)
  t.eq(r.items[1].text, 'Hello')
  t.eq(r.items[2].entries[1].status, 'completed')
  t.eq(r.items[3].output, 'data')
  t.eq(r.last_seq, 7)
end)

t.test('runs: result text shown when nothing streamed', function()
  local s = runs.new()
  s:apply('agent/update', { runId = 'r1', seq = 1, update = { kind = 'result', text = 'Done.' } })
  t.eq(s:get('r1').items[1].text, 'Done.')
end)

t.test('runs: streamed command output is a bounded tail, replaced by the final output', function()
  local s = runs.new()
  local function up(seq, u)
    u.toolCallId = 'c1'
    s:apply('agent/update', { runId = 'r1', sessionId = 's1', seq = seq, update = u })
  end
  up(1, { kind = 'tool_call', title = 'run make', toolKind = 'execute', status = 'pending' })
  up(2, { kind = 'tool_call_update', status = 'in_progress' })
  up(3, { kind = 'tool_call_update', status = 'in_progress', outputDelta = 'compil' })
  up(4, { kind = 'tool_call_update', status = 'in_progress', outputDelta = 'ing\nstep 1\n' })
  local tool = s:get('r1').items[1]
  t.eq(tool.live, 'compiling\nstep 1\n')
  t.eq(tool.live_dropped, 0)
  t.eq(tool.output, nil)
  local big = {}
  for i = 1, runs.LIVE_LINES + 5 do
    big[#big + 1] = 'line ' .. i
  end
  up(5, { kind = 'tool_call_update', status = 'in_progress', outputDelta = table.concat(big, '\n') })
  local kept = vim.split(tool.live, '\n', true)
  t.eq(#kept, runs.LIVE_LINES, 'at most LIVE_LINES lines kept')
  t.eq(kept[#kept], 'line ' .. (runs.LIVE_LINES + 5), 'the partial last line is kept')
  t.eq(tool.live_dropped, 7, 'compiling, step 1 and 5 of the new lines dropped')
  up(6, { kind = 'tool_call_update', status = 'in_progress', outputDelta = string.rep('x', runs.LIVE_BYTES * 2) })
  t.ok(#tool.live <= runs.LIVE_BYTES, 'bytes bounded')
  up(7, { kind = 'tool_call_update', status = 'completed', output = 'compiling\ndone\n', exitCode = 0 })
  t.eq(tool.live, nil, 'the final update replaces the live tail')
  t.eq(tool.output, 'compiling\ndone\n')
  -- a stray piece after the final update changes nothing
  up(8, { kind = 'tool_call_update', status = 'in_progress', outputDelta = 'late\n' })
  t.eq(tool.status, 'completed')
  t.eq(tool.live, nil)
end)

t.test('conversation: a running command shows its last lines, then the final output once', function()
  local conversation = require('agentd.conversation')
  local config = require('agentd.config')
  config.set({ conversation = { tool_output_lines = 3 } })
  local s = runs.new()
  local function up(seq, u)
    u.toolCallId = 'c1'
    s:apply('agent/update', { runId = 'r1', sessionId = 's1', seq = seq, update = u })
  end
  local function tool_lines()
    local lines = conversation.render_run(s:get('r1'))
    local out = {}
    for i = 3, #lines do
      if lines[i] == '' then
        break
      end
      out[#out + 1] = lines[i]
    end
    return out
  end
  up(1, { kind = 'tool_call', title = 'make', toolKind = 'execute', status = 'pending' })
  up(2, { kind = 'tool_call_update', status = 'in_progress', outputDelta = 'compiling\n' })
  t.eq(tool_lines(), { '● make [execute] …', '    compiling' })
  up(3, { kind = 'tool_call_update', status = 'in_progress', outputDelta = 'a\nb\nc\n50%\r100%' })
  t.eq(tool_lines(), { '● make [execute] …', '    … 2 earlier lines', '    b', '    c', '    100%' })
  up(4, { kind = 'tool_call_update', status = 'completed', output = 'compiling\na\nb\nc\ndone\n', exitCode = 0 })
  t.eq(tool_lines(), {
    '● make [execute] ✓ exit 0',
    '    compiling',
    '    a',
    '    b',
    '    … 2 more lines',
  })
  config.set({})
end)

-- udiff --------------------------------------------------------------------

t.test('udiff: modifies a line', function()
  local old = 'a\nb\nc\n'
  local d = '--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n'
  t.eq(udiff.apply(old, d), 'a\nB\nc\n')
end)

t.test('udiff: new file', function()
  t.eq(udiff.apply('', '--- /dev/null\n+++ b/x\n@@ -0,0 +1,2 @@\n+hello\n+world\n'), 'hello\nworld\n')
end)

t.test('udiff: offset hunk and two hunks', function()
  local old = 'x\n1\n2\n3\n4\n5\n6\n7\n8\n9\n'
  local d = '@@ -1,2 +1,2 @@\n 1\n-2\n+two\n@@ -8,2 +8,2 @@\n 8\n-9\n+nine\n'
  t.eq(udiff.apply(old, d), 'x\n1\ntwo\n3\n4\n5\n6\n7\n8\nnine\n')
end)

t.test('udiff: no newline at end', function()
  t.eq(udiff.apply('a\n', '@@ -1 +1 @@\n-a\n+b\n\\ No newline at end of file\n'), 'b')
end)

t.test('udiff: refuses a hunk that does not apply', function()
  local out, err = udiff.apply('q\n', '@@ -1 +1 @@\n-a\n+b\n')
  t.eq(out, nil)
  t.ok(err)
end)

-- rpc endpoint ---------------------------------------------------------------

t.test('rpc: request/response, server request, notification, errors', function()
  local sent = {}
  local notes = {}
  local ep = rpc.endpoint(function(data)
    sent[#sent + 1] = data
    return true
  end, {
    on_notification = function(m, p)
      notes[#notes + 1] = { m, p }
    end,
    on_request = function(m, p)
      if m == 'window/workDoneProgress/create' then
        return vim.NIL
      end
      return nil, { code = -32601, message = 'nope' }
    end,
  })
  local got
  ep:request('agent/pending', vim.empty_dict(), function(e, r)
    got = { e = e, r = r }
  end)
  local d = framing.decoder()
  local first = vim.json.decode(d:feed(sent[1])[1].body)
  t.eq(first.method, 'agent/pending')
  t.eq(first.jsonrpc, '2.0')
  t.ok(sent[1]:find('"params":{}', 1, true), 'empty params encode as an object')
  ep:receive(framing.encode('{"jsonrpc":"2.0","id":' .. first.id .. ',"result":{"requests":[]}}'))
  ep:receive(framing.encode('{"jsonrpc":"2.0","id":7,"method":"window/workDoneProgress/create","params":{"token":"t"}}'))
  ep:receive(framing.encode('{"jsonrpc":"2.0","method":"agent/runState","params":{"runId":"r","seq":1}}'))
  t.wait(function()
    return got and #notes == 1 and #sent == 2
  end, 'dispatch')
  t.eq(got.r, { requests = {} })
  local reply = vim.json.decode(d:feed(sent[2])[1].body)
  t.eq(reply.id, 7)
  t.eq(reply.result, vim.NIL)
  t.ok(sent[2]:find('"result":null', 1, true), 'null result present')
  t.eq(notes[1][1], 'agent/runState')
  -- close fails outstanding requests
  local failed
  ep:request('x', nil, function(e)
    failed = e
  end)
  ep:close('gone')
  t.wait(function()
    return failed
  end, 'failure callback')
  t.eq(failed.code, rpc.DISCONNECTED)
end)

t.finish()
