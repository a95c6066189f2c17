-- Unit tests: the protocol module against the daemon's contract file, the
-- pure modules (framing, open requests, run model, rendering, the kind
-- table, times, HTTP parsing, the unified-diff applier), the JSON-RPC
-- endpoint without a process, and the shipped help tags.
local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/'
package.path = here .. '?.lua;' .. package.path
local t = require('lib')
vim.cmd('runtime! plugin/agentd.lua')
local framing = require('agentd.framing')
local requests = require('agentd.requests')
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

-- requests ---------------------------------------------------------------

local function req(id, kind)
  return { requestId = id, kind = kind or 'question', runId = 'r1' }
end

t.test('requests: any number open, oldest first; a duplicate or a resolved one is refused', function()
  local set = requests.new()
  t.ok(set:add(req('a')))
  t.ok(set:add(req('b')))
  t.eq(set:add(req('a')), false, 'duplicate refused')
  t.eq(set:count(), 2)
  t.eq(set:next().req.requestId, 'a')
  -- answered in any order: b first
  t.ok(set:resolve('b'))
  t.eq(set:next().req.requestId, 'a', 'resolving one never touches another')
  t.eq(set:add(req('b')), false, 'a resolved request never comes back')
  t.eq(set:resolve('zz'), nil, 'an unknown one is nothing')
end)

t.test('requests: dismissed ones are not offered until asked again', function()
  local set = requests.new()
  set:add(req('a'))
  set:add(req('b'))
  set:dismiss('a')
  t.eq(set:next().req.requestId, 'b')
  set:dismiss('b')
  t.eq(set:next(), nil)
  t.eq(set:count(), 2, 'still open')
  set:undismiss_all()
  t.eq(set:next().req.requestId, 'a')
end)

t.test('requests: one being answered waits no more, and comes back if the answer fails', function()
  local set = requests.new()
  set:add(req('a'))
  set:add(req('b'))
  set:sending('a')
  t.eq(set:count(), 1)
  t.eq(set:next().req.requestId, 'b')
  set:unsend('a')
  t.eq(set:count(), 2)
  t.eq(set:next().req.requestId, 'a')
end)

t.test('requests: sync drops what the daemon no longer has open', function()
  local set = requests.new()
  set:add(req('a'))
  set:add(req('b'))
  t.eq(set:sync({ 'b', 'c' }), { 'a' })
  t.eq(set:count(), 1)
  t.ok(set:is_resolved('a'))
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

t.test('runs: reasoning is kept apart from the answer and shown folded', function()
  local s = runs.new()
  local function up(seq, u)
    s:apply('agent/update', { runId = 'r1', sessionId = 's1', seq = seq, update = u })
  end
  up(1, { kind = 'thought_chunk', text = 'The test fails ' })
  up(2, { kind = 'thought_chunk', text = 'because of x.' })
  up(3, { kind = 'message_chunk', text = 'Fixed.' })
  local r = s:get('r1')
  t.eq(#r.items, 2)
  t.eq(r.items[1].type, 'thinking')
  t.eq(r.items[1].text, 'The test fails because of x.')
  t.eq(r.items[2].text, 'Fixed.')
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

t.test('runs: a subagent\'s updates fold into its task call, its ids apart from the parent\'s; its requests are in its card', function()
  local render = require('agentd.render')
  local s = runs.new()
  local seq = 0
  local function up(u)
    seq = seq + 1
    s:apply('agent/update', { runId = 'r1', sessionId = 's1', seq = seq, update = u })
  end
  up({ kind = 'tool_call', toolCallId = 'call_1', title = 'read a.go', toolKind = 'read', status = 'completed' })
  up({ kind = 'tool_call', toolCallId = 'call_t', title = 'Subagent: Find it', toolKind = 'other', status = 'pending',
    input = { description = 'Find it', prompt = 'Find where it is.' }, subagent = { runId = 'r2', description = 'Find it' } })
  up({ kind = 'subagent', toolCallId = 'call_t', subagent = { runId = 'r2', description = 'Find it', state = 'running' } })
  up({ kind = 'subagent', toolCallId = 'call_t', subagent = { runId = 'r2', description = 'Find it',
    update = { kind = 'tool_call', toolCallId = 'call_1', title = 'read b.go', toolKind = 'read', status = 'in_progress' } } })
  up({ kind = 'subagent', toolCallId = 'call_t', subagent = { runId = 'r2', description = 'Find it',
    update = { kind = 'message_chunk', text = 'It is in b.go.' } } })
  local run = s:get('r1')
  t.eq(run.tools.call_1.title, 'read a.go', 'the parent\'s call_1 is its own')
  t.eq(run.tools.call_t.sub.tools.call_1.title, 'read b.go')
  t.eq(#run.items, 2, 'the subagent\'s work is not the run\'s')
  local out = render.new_lines()
  render.run(out, run, function() end)
  local text = table.concat(out.lines, '\n')
  t.ok(text:find('● Subagent: Find it … running · dd stops it\n  ┊ task: Find where it is.\n  ┊ ● read b.go …\n  ┊ It is in b.go.', 1, true), text)
  t.eq(out.stops[#vim.split(text:sub(1, text:find('● Subagent', 1, true)), '\n')], { run = 'r2' })
  up({ kind = 'tool_call_update', toolCallId = 'call_t', status = 'completed', output = 'It is in b.go.\n\nFiles the subagent read (1): b.go.',
    subagent = { runId = 'r2', description = 'Find it', state = 'completed', read = { 'b.go' },
      usage = { promptTokens = 100, completionTokens = 10, totalTokens = 110 } } })
  s:add_request({ runId = 'r1', sessionId = 's1', requestId = 'q1', toolCallId = 'call_t', kind = 'question',
    message = 'Which one?', answerWith = 'reply', subagent = { runId = 'r2', description = 'Find it', toolCallId = 'call_2' } }, true)
  out = render.new_lines()
  render.run(out, run, function(id)
    return { req = run.requests[id].req }
  end)
  text = table.concat(out.lines, '\n')
  t.ok(text:find('● Subagent: Find it ✓ · 110 tokens\n  ┊ task: Find where it is.\n  ┊ ▸ 1 step (<CR> shows them)\n  ┊ ? Which one?\n', 1, true), text)
  t.ok(text:find('\n    It is in b.go.\n    read 1 file: b.go', 1, true), text)
  t.eq(text:find('Subagent “Find it”', 1, true), nil, 'in its card, the card says whose it is:\n' .. text)
  local at = #vim.split(text:sub(1, text:find('┊ ? Which one?', 1, true)), '\n')
  t.eq(out.marks[at], { id = 'q1' }, 'its keys work on its line in the card')
end)

t.test('render: a running command shows its last lines, then the final output once', function()
  local render = require('agentd.render')
  local config = require('agentd.config')
  config.set({ conversation = { tool_output_lines = 3 } })
  local s = runs.new()
  local function up(seq, u)
    u.toolCallId = 'c1'
    s:apply('agent/update', { runId = 'r1', sessionId = 's1', seq = seq, update = u })
  end
  local function tool_lines()
    local out = { lines = {}, marks = {} }
    render.run(out, s:get('r1'), function() end)
    local lines = out.lines
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
  t.eq(tool_lines(), { '● $ make …', '    compiling' })
  up(3, { kind = 'tool_call_update', status = 'in_progress', outputDelta = 'a\nb\nc\n50%\r100%' })
  t.eq(tool_lines(), { '● $ make …', '    … 2 earlier lines', '    b', '    c', '    100%' })
  up(4, { kind = 'tool_call_update', status = 'completed', output = 'compiling\na\nb\nc\ndone\n', exitCode = 0 })
  t.eq(tool_lines(), {
    '● $ make ✓ exit 0',
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

-- contract -------------------------------------------------------------------

local plugin_root = vim.fn.fnamemodify(here, ':h:h')
local repo_root = vim.fn.fnamemodify(plugin_root, ':h:h')
local P = require('agentd.protocol')

local function read_json(path)
  local f = assert(io.open(path, 'r'), 'cannot read ' .. path)
  local text = f:read('*a')
  f:close()
  return vim.json.decode(text)
end

local function values(tbl)
  local out = {}
  for _, v in pairs(tbl) do
    out[#out + 1] = v
  end
  table.sort(out)
  return out
end

local function sorted(list)
  local out = vim.deepcopy(list)
  table.sort(out)
  return out
end

local function missing(want, have)
  local set = {}
  for _, v in ipairs(have) do
    set[v] = true
  end
  local out = {}
  for _, v in ipairs(want) do
    if not set[v] then
      out[#out + 1] = v
    end
  end
  return out
end

local contract = read_json(repo_root .. '/testdata/contract/protocol.json')

t.test('contract: the protocol version', function()
  t.eq(P.VERSION, contract.protocolVersion)
end)

t.test('contract: every method the plugin sends exists in the daemon', function()
  t.eq(missing(values(P.request), contract.requests), {}, 'requests the daemon does not know')
  t.eq(missing(values(P.notification), contract.notifications), {}, 'notifications the daemon does not know')
end)

t.test('contract: every method the daemon sends has a handler in the methods table', function()
  local methods = require('agentd.methods')
  t.eq(missing(contract.serverNotifications, values(P.server_notification)), {}, 'server notifications not in protocol.lua')
  t.eq(missing(contract.serverRequests, values(P.server_request)), {}, 'server requests not in protocol.lua')
  -- an opt-in method is sent only to an editor that declared it (initialize)
  local function required(list)
    return vim.tbl_filter(function(m)
      return not contract.methods[m].optIn
    end, list)
  end
  local handled = {}
  for m in pairs(methods.notifications) do
    handled[#handled + 1] = m
  end
  t.eq(missing(required(contract.serverNotifications), handled), {}, 'server notifications without a handler')
  t.eq(missing(handled, contract.serverNotifications), {}, 'handlers of notifications the daemon never sends')
  handled = {}
  for m in pairs(methods.requests) do
    handled[#handled + 1] = m
  end
  t.eq(missing(required(contract.serverRequests), handled), {}, 'server requests without a handler')
  t.eq(missing(handled, contract.serverRequests), {}, 'handlers of requests the daemon never sends')
end)

t.test('contract: the generated agentd.contract is the contract: every enumeration, method and kind', function()
  local C = require('agentd.contract')
  for _, e in pairs(contract.enums) do
    local key = e.list:gsub('%u', function(c)
      return '_' .. c:lower()
    end)
    t.eq(C[key], e.values, e.list)
  end
  local methods = {}
  for _, group in ipairs({ C.request, C.notification, C.server_notification, C.server_request }) do
    for _, m in pairs(group) do
      methods[#methods + 1] = m
    end
  end
  t.eq(sorted(methods), sorted(vim.tbl_keys(contract.methods)))
  local kinds = require('agentd.kinds')
  for _, k in ipairs(P.prompt_kinds) do
    t.eq(P.answer_method[k], contract.kinds[k].answer, 'the answer method of ' .. k)
    if kinds.spec[k] then -- a kind without a table of its own is shown from its generic form
      t.eq(kinds.spec[k].confirm, P.answer_method[k] == P.request.confirm, 'the kind table answers ' .. k .. ' as the daemon takes it')
    end
  end
  t.eq(sorted(vim.tbl_keys(P.terminal_states)), sorted(missing(P.run_states, { 'queued', 'running', 'requires_action', 'paused' })))
end)

t.test('contract: the error codes the plugin names are the daemon\'s', function()
  for name, code in pairs(P.error_codes) do
    t.eq(code, contract.errorCodes[name], name)
  end
  local used = {}
  for _, c in pairs(contract.errorCodes) do
    used[c] = true
  end
  t.eq(used[P.DISCONNECTED], nil, 'the plugin\'s own code is not a daemon code')
end)

t.test('contract: method names are spelled in protocol.lua only', function()
  local names = {}
  for _, group in ipairs({ P.request, P.notification, P.server_notification, P.server_request }) do
    for _, m in pairs(group) do
      if m:find('/', 1, true) then
        names[#names + 1] = m
      end
    end
  end
  local offenders = {}
  for _, file in ipairs(vim.fn.glob(plugin_root .. '/lua/agentd/*.lua', false, true)) do
    if not file:match('/protocol%.lua$') and not file:match('/contract%.lua$') then
      local f = assert(io.open(file, 'r'))
      local text = f:read('*a')
      f:close()
      for _, m in ipairs(names) do
        for _, q in ipairs({ "'", '"' }) do
          if text:find(q .. m .. q, 1, true) then
            offenders[#offenders + 1] = vim.fn.fnamemodify(file, ':t') .. ': ' .. m
          end
        end
      end
    end
  end
  t.eq(offenders, {})
end)

-- help -------------------------------------------------------------------------

t.test('help: doc/tags is shipped and matches doc/agentd.txt', function()
  local tmp = vim.fn.tempname()
  vim.fn.mkdir(tmp, 'p')
  vim.fn.writefile(vim.fn.readfile(plugin_root .. '/doc/agentd.txt'), tmp .. '/agentd.txt')
  vim.cmd('helptags ' .. vim.fn.fnameescape(tmp))
  t.eq(vim.fn.readfile(plugin_root .. '/doc/tags'), vim.fn.readfile(tmp .. '/tags'),
    'doc/tags is stale: run  nvim --headless -u NONE -c "helptags doc" -c q  in editor-clients/nvim')
  vim.fn.delete(tmp, 'rf')
end)

t.test('initialize: by default every kind, and new ones from their generic form; a list of kinds keeps to it', function()
  local config = require('agentd.config')
  local lifecycle = require('agentd.lifecycle')
  config.set({})
  local a = lifecycle._initialize_params().capabilities.experimental.agentd
  t.eq(a.genericPrompts, true)
  t.ok(vim.tbl_contains(a.promptKinds, 'confirm_plan'), vim.inspect(a.promptKinds))
  config.set({ prompt_kinds = { 'question', 'confirm_write' } })
  a = lifecycle._initialize_params().capabilities.experimental.agentd
  t.eq(a.genericPrompts, nil)
  t.eq(a.promptKinds, { 'question', 'confirm_write' })
  config.set({})
end)

t.test('help: every command and every default key is documented', function()
  local doc = table.concat(vim.fn.readfile(plugin_root .. '/doc/agentd.txt'), '\n')
  for _, c in ipairs(vim.fn.getcompletion('Agentd', 'command')) do
    t.ok(doc:find('*:' .. c .. '*', 1, true), ':' .. c .. ' has a help tag')
  end
  local config = require('agentd.config')
  for group, keys in pairs(config.defaults.keymaps) do
    for name, key in pairs(keys) do
      t.ok(doc:find(key, 1, true), ('keymaps.%s.%s (%s) is in the help'):format(group, name, key))
    end
  end
end)

t.test('keys: no default key is the start of a global mapping of this Neovim', function()
  -- a buffer-local key that begins a longer global mapping (gr and 0.11's
  -- grn) loses to it when the next key is already typed
  local config = require('agentd.config')
  local globals = {}
  for _, mode in ipairs({ 'n', 'i' }) do
    for _, m in ipairs(vim.api.nvim_get_keymap(mode)) do
      globals[#globals + 1] = vim.api.nvim_replace_termcodes(m.lhs, true, false, true)
    end
  end
  local clashes = {}
  for group, keys in pairs(config.defaults.keymaps) do
    for name, key in pairs(keys) do
      local k = vim.api.nvim_replace_termcodes(key, true, false, true)
      for _, g in ipairs(globals) do
        if #g > #k and g:sub(1, #k) == k then
          clashes[#clashes + 1] = ('keymaps.%s.%s %s starts %s'):format(group, name, key, vim.fn.keytrans and vim.fn.keytrans(g) or g)
        end
      end
    end
  end
  t.eq(clashes, {})
end)

-- sessions -------------------------------------------------------------------

local sessions = require('agentd.sessions')

t.test('sessions: RFC 3339 times with nanoseconds and offsets', function()
  t.eq(sessions.parse_time('1970-01-01T00:00:00Z'), 0)
  t.eq(sessions.parse_time('2026-11-22T10:01:02.123456789Z'), 1795341662)
  t.eq(sessions.parse_time('2026-11-22T12:01:02.5+02:00'), 1795341662)
  t.eq(sessions.parse_time('2000-02-29T00:00:00-01:30'), 951787800)
  t.eq(sessions.parse_time('yesterday'), nil)
end)

t.test('sessions: readable times, no nanoseconds', function()
  local now = os.time({ year = 2026, month = 11, day = 22, hour = 15, min = 30, sec = 0 })
  t.eq(sessions.format_time(now - 20, now), 'just now')
  t.eq(sessions.format_time(now - 5 * 60, now), '5 min ago')
  t.eq(sessions.format_time(now - 3 * 3600, now), 'today 12:30')
  t.eq(sessions.format_time(now - 86400, now), 'yesterday 15:30')
  t.eq(sessions.format_time(now - 10 * 86400, now), os.date('%b %d %H:%M', now - 10 * 86400))
  t.eq(sessions.format_time(now - 400 * 86400, now), os.date('%Y-%m-%d', now - 400 * 86400))
  local t0 = os.time()
  local label = sessions.label({ sessionId = 's_1', title = 'Rename Total\nto Sum', state = 'completed',
    updatedAt = os.date('!%Y-%m-%dT%H:%M:%S', t0 - 120) .. '.987654321Z' }, t0)
  t.eq(label, 'Rename Total …  ·  completed  ·  2 min ago')
  label = sessions.label({ sessionId = 's_1', title = 'Fix it', state = 'requires_action', runCount = 2,
    updatedAt = os.date('!%Y-%m-%dT%H:%M:%S', t0 - 120) .. 'Z' }, t0)
  t.eq(label, 'Fix it  ·  waiting for you  ·  2 runs  ·  2 min ago', 'the run count, and a state for people')
  t.eq(sessions.label({ sessionId = 's_2', title = 'New', state = 'idle', runCount = 1 }), 'New  ·  no runs yet  ·  1 run')
end)

-- http -----------------------------------------------------------------------

local http = require('agentd.http')

t.test('http: URLs and /models', function()
  t.eq(http.parse('http://127.0.0.1:11434/v1'), { scheme = 'http', host = '127.0.0.1', port = 11434, path = '/v1' })
  t.eq(http.parse('https://api.openai.com/v1').port, 443)
  t.eq(http.parse('http://[::1]:8080/').host, '::1')
  t.eq(http.parse('ftp://x'), nil)
  t.eq(http.models_url('http://h/v1/'), 'http://h/v1/models')
end)

t.test('http: responses, plain and chunked', function()
  t.eq({ http.parse_response('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}') }, { 200, '{}' })
  local chunked = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{"a"\r\n3\r\n:1}\r\n0\r\n\r\n'
  t.eq({ http.parse_response(chunked) }, { 200, '{"a":1}' })
  t.eq(http.parse_response('garbage'), nil)
end)

-- kinds and rendering ----------------------------------------------------------

local kinds = require('agentd.kinds')
local render = require('agentd.render')

t.test('kinds: a confirmation offers only the decisions in its options', function()
  local r = { requestId = 'q1', kind = 'confirm_command', command = 'make',
    options = { { optionId = 'allow_once', label = 'Allow' }, { optionId = 'reject_once', label = 'Reject' } } }
  local names = {}
  for _, a in ipairs(kinds.decisions(r)) do
    names[#names + 1] = a.name
  end
  t.eq(names, { 'allow_once', 'reject', 'reject_with_reason' })
  t.eq(kinds.hint(r, 'chat'), 'ga allow · gx reject · gR reject+why')
  local config = require('agentd.config')
  config.set({ keymaps = { request = { reject_with_reason = false } } })
  t.eq(kinds.hint(r, 'card'), 'ga allow · gx reject · q later', 'a key set to false is gone')
  config.set({})
end)

t.test('render: an open request has its keys on its lines; a resolved one shows its outcome', function()
  local s = runs.new()
  local q = { runId = 'r1', sessionId = 's1', seq = 1, requestId = 'q1', kind = 'choice', message = 'Pick one',
    options = { { optionId = '1', label = 'red' }, { optionId = '2', label = 'blue' } }, allowOther = true }
  s:apply('agent/inputRequest', q)
  local run = s:get('r1')
  run.prompt = 'first\nsecond'
  local open = { q1 = { req = q, sending = false } }
  local out = render.chat({ title = 'T', runs = { run } }, function(id)
    return open[id]
  end)
  local text = table.concat(out.lines, '\n')
  t.ok(text:find('## > first\n   second', 1, true), text)
  local blue
  for i, l in ipairs(out.lines) do
    if l == '  2 blue' then
      blue = i
    end
  end
  t.ok(blue, text)
  t.eq(out.marks[blue], { id = 'q1', option = 2 })
  t.ok(text:find('<CR> on an option picks it · go other…', 1, true), text)
  s:apply('agent/inputResolved', { runId = 'r1', seq = 2, requestId = 'q1', outcome = 'answered', by = 'user' })
  open.q1 = nil
  out = render.chat({ runs = { run } }, function(id)
    return open[id]
  end)
  text = table.concat(out.lines, '\n')
  t.ok(text:find('? Pick one  → answered', 1, true), text)
  t.eq(next(out.marks), nil, 'no keys on a resolved request')
end)

t.test('runs: a request from agent/pending and the same one replayed later appear once, in order', function()
  local s = runs.new()
  local q = { runId = 'r1', sessionId = 's1', seq = 2, requestId = 'q1', kind = 'question', message = 'Q?' }
  s:add_request(q)
  s:apply('agent/update', { runId = 'r1', seq = 1, update = { kind = 'message_chunk', text = 'before' } })
  s:apply('agent/inputRequest', q)
  local run = s:get('r1')
  t.eq(#run.items, 2)
  t.eq(run.items[1].type, 'text')
  t.eq(run.items[2].type, 'request')
end)

-- history, settings and the new update kinds ------------------------------------

t.test('runs: a history page takes its place among the session\'s runs, earlier pages above it', function()
  local s = runs.new()
  local function ids(sid)
    local out = {}
    for _, r in ipairs(s:of_session(sid)) do
      out[#out + 1] = r.id
    end
    return out
  end
  s:ensure('r2', 's1') -- known before the page was asked for: older than it
  local snap = s:mark()
  s:ensure('r9', 's1') -- started while the page was on its way: newer
  s:ensure('x1', 's2')
  s:ensure('r4', 's1')
  s:ensure('r5', 's1')
  s:place('s1', { 'r4', 'r5' }, nil, snap)
  t.eq(ids('s1'), { 'r2', 'r4', 'r5', 'r9' })
  -- the page before r4: r1 to r3, r2 among them
  s:ensure('r1', 's1')
  s:ensure('r3', 's1')
  s:place('s1', { 'r1', 'r2', 'r3' }, 'r4', s:mark())
  t.eq(ids('s1'), { 'r1', 'r2', 'r3', 'r4', 'r5', 'r9' })
  t.eq(ids('s2'), { 'x1' }, 'another session is untouched')
end)

t.test('runs: an open request from a history page is placed where the replayed stream puts it', function()
  local s = runs.new()
  local q = { runId = 'r1', sessionId = 's1', seq = 2, requestId = 'q1', kind = 'question', message = 'Q?' }
  -- replayed first (the page's events), then the page's pending list: it stays in place
  s:apply('agent/inputRequest', q)
  s:apply('agent/update', { runId = 'r1', seq = 3, update = { kind = 'message_chunk', text = 'after' } })
  s:add_request(q)
  local run = s:get('r1')
  t.eq(#run.items, 2)
  t.eq(run.items[1].type, 'request')
  t.eq(run.items[2].type, 'text')
end)

t.test('runs: instructions fold into one item per run; notices and cached tokens are kept', function()
  local s = runs.new()
  local function up(seq, u)
    s:apply('agent/update', { runId = 'r1', sessionId = 's1', seq = seq, update = u })
  end
  up(1, { kind = 'instructions', instructions = { { path = '/home/ada/.config/agentd/AGENTS.md', scope = 'user', bytes = 4 },
    { path = 'AGENTS.md', scope = 'workspace', bytes = 10 } } })
  up(2, { kind = 'notice', text = 'The context window is small.' })
  up(3, { kind = 'message_chunk', text = 'ok' })
  up(4, { kind = 'instructions', instructions = { { path = 'web/AGENTS.md', scope = 'directory', bytes = 96120, truncated = true },
    { path = 'AGENTS.md', scope = 'workspace', bytes = 10 } } })
  up(5, { kind = 'usage', usage = { promptTokens = 5120, completionTokens = 96, totalTokens = 5216, cachedTokens = 4864 } })
  up(6, { kind = 'notice', text = vim.NIL })
  local r = s:get('r1')
  t.eq(#r.items, 3, 'instructions, notice, text')
  t.eq(r.items[1].type, 'instructions')
  t.eq(#r.items[1].files, 3, 'the later file joins, the known one is not repeated')
  t.eq(r.items[2], { type = 'notice', text = 'The context window is small.' })
  t.eq(r.usage.cachedTokens, 4864)
end)

local function render_run(run)
  local out = render.new_lines()
  render.run(out, run, function() end)
  return out
end

local function line_with(out, text)
  for i, l in ipairs(out.lines) do
    if l:find(text, 1, true) then
      return i, l
    end
  end
end

t.test('render: instructions are one quiet line, a notice is a warning, cached tokens are counted', function()
  local s = runs.new()
  local function up(seq, u)
    s:apply('agent/update', { runId = 'r1', sessionId = 's1', seq = seq, update = u })
  end
  up(1, { kind = 'instructions', instructions = { { path = vim.env.HOME .. '/.config/agentd/AGENTS.md', scope = 'user', bytes = 4 },
    { path = 'AGENTS.md', scope = 'workspace', bytes = 10 } } })
  up(2, { kind = 'instructions', instructions = { { path = 'web/AGENTS.md', scope = 'directory', bytes = 96120, truncated = true } } })
  up(3, { kind = 'notice', text = "The model's context window is 8192 tokens.\nRaise it." })
  up(4, { kind = 'usage', usage = { promptTokens = 5120, completionTokens = 96, totalTokens = 5216, cachedTokens = 4864,
    reasoningTokens = 40 } })
  s:apply('agent/runState', { runId = 'r1', seq = 5, state = 'completed', stopReason = 'end_turn' })
  local run = s:get('r1')
  run.prompt = 'hi'
  local out = render_run(run)
  local i, l = line_with(out, 'Instructions: ')
  t.eq(l, 'Instructions: ~/.config/agentd/AGENTS.md · AGENTS.md · web/AGENTS.md (first 32 KiB)')
  t.eq(out.hl[i], 'Comment', 'a quiet line')
  i, l = line_with(out, '⚠ ')
  t.eq(l, "⚠ The model's context window is 8192 tokens.")
  t.eq(out.lines[i + 1], '  Raise it.')
  t.eq(out.hl[i], 'WarningMsg')
  t.eq(out.hl[i + 1], 'WarningMsg')
  local _, status = line_with(out, '— completed')
  t.eq(status, '— completed · 5216 tokens (4864 cached, 40 thinking)')
end)

t.test('render: reasoning is one folded line of its latest words; the open key unfolds it', function()
  local s = runs.new()
  local text = 'First I look at the tests.\nThen ' .. string.rep('é', 70) .. ' the fix is clear.'
  s:apply('agent/update', { runId = 'r1', seq = 1, update = { kind = 'thought_chunk', text = text } })
  local run = s:get('r1')
  run.prompt = 'fix it'
  local out = render_run(run)
  local i, l = line_with(out, 'Thinking')
  t.eq(l, ('▸ Thinking (%d characters): …%s'):format(vim.fn.strchars(text),
    vim.fn.strcharpart(string.rep('é', 70) .. ' the fix is clear.', 28)))
  t.ok(vim.fn.strchars(l) < 100, 'one short line')
  t.ok(out.toggles[i] == run.items[1], 'the line unfolds the reasoning')
  run.items[1].expanded = true
  out = render_run(run)
  i, l = line_with(out, 'Thinking')
  t.eq(l, ('▾ Thinking (%d characters; <CR> folds)'):format(vim.fn.strchars(text)))
  t.eq(out.lines[i + 1], '  First I look at the tests.')
  t.eq(out.hl[i + 1], 'Comment')
  t.ok(out.toggles[i] == run.items[1], 'and folds it back')
end)

t.test('render: a run paused because its state could not be saved says why and how to resume', function()
  local s = runs.new()
  s:apply('agent/runState', { runId = 'r1', seq = 1, state = 'running' })
  s:apply('agent/runState', { runId = 'r1', seq = 2, state = 'paused',
    error = 'state not saved: write /s/runs/r1.journal.jsonl: no space left on device (agent/resume goes on once the state directory can be written)' })
  local run = s:get('r1')
  run.prompt = 'read the files'
  local out = render_run(run)
  local i = line_with(out, '— paused')
  t.eq(out.lines[i], '— paused')
  t.eq(out.lines[i + 1], '  state not saved: write /s/runs/r1.journal.jsonl: no space left on device (agent/resume goes on once the state directory can be written)')
  t.eq(out.lines[i + 2], '  R resumes it (:AgentdResume)')
  t.eq(out.hl[i], 'WarningMsg')
end)

t.test('render: a long prompt is folded to its first lines', function()
  local s = runs.new()
  local run = s:ensure('r1', 's1')
  local lines = {}
  for n = 1, 40 do
    lines[n] = 'line ' .. n
  end
  run.prompt = table.concat(lines, '\n') .. '\n'
  local out = render_run(run)
  local i = line_with(out, '## > line 1')
  t.eq(out.lines[i + render.PROMPT_LINES - 1], '   line ' .. render.PROMPT_LINES)
  t.eq(out.lines[i + render.PROMPT_LINES], '   … 28 more lines (<CR> unfolds)')
  t.ok(out.toggles[i + render.PROMPT_LINES] == run.prompt_fold)
  run.prompt_fold.expanded = true
  out = render_run(run)
  t.ok(line_with(out, '   line 40'), 'unfolded')
  t.eq(line_with(out, 'more lines'), nil)
end)

t.test('render: the header says the model, effort and mode; defaults read "default"', function()
  local out = render.chat({ title = 'T', settings = { model = 'qwen', reasoningEffort = 'high', approvalPolicy = 'ask' },
    runs = {} }, function() end)
  t.eq(out.lines[2], 'model qwen · effort high · mode ask')
  out = render.chat({ settings = {}, runs = {}, loading = 'loading the conversation…' }, function() end)
  t.eq(out.lines[2], 'model default · mode default')
  t.ok(line_with(out, '… loading the conversation…'), 'what is still coming')
end)

t.test('settings: completion, checks, the draft of a new conversation', function()
  local settings = require('agentd.settings')
  local S = require('agentd')._state
  t.eq(settings.complete('mode', 'a'), { 'ask', 'auto-edit' })
  t.eq(settings.complete('mode', ''), { 'default', 'read-only', 'plan', 'ask', 'auto-edit', 'full-auto' })
  t.eq(settings.complete('effort', ''), { 'default', 'low', 'medium', 'high' }, 'before the daemon says')
  S.models = { default = 'qwen', listed = true, models = { { id = 'qwen' }, { id = 'qwen:32b' }, { id = 'gpt' } } }
  t.eq(settings.complete('model', 'qw'), { 'qwen', 'qwen:32b' })
  S.server = { capabilities = { experimental = { agentd = {} } } }
  t.eq(settings.complete('effort', ''), { 'default' }, 'a daemon without efforts')
  S.server = { capabilities = { experimental = { agentd = { reasoningEfforts = { 'low', 'high' } } } } }
  t.eq(settings.efforts(), { 'low', 'high' })
  local notes = {}
  local notify = vim.notify
  vim.notify = function(m)
    notes[#notes + 1] = m
  end
  settings.set('mode', 'sideways')
  settings.set('effort', 'medium')
  t.eq(S.draft, {}, 'refused values change nothing')
  settings.set('model', 'qwen:32b')
  settings.set('effort', 'high')
  settings.set('mode', 'auto-edit')
  t.eq(settings.for_new_run(), { model = 'qwen:32b', reasoningEffort = 'high', approvalPolicy = 'auto-edit' })
  settings.set('effort', 'default')
  t.eq(settings.for_new_run(), { model = 'qwen:32b', approvalPolicy = 'auto-edit' })
  vim.notify = notify
  t.ok(notes[1]:find('unknown mode "sideways"', 1, true), notes[1])
  t.ok(notes[2]:find('unknown effort "medium"', 1, true), notes[2])
  S.reset()
end)

t.test('health: the daemon\'s model list read as OK, a dead endpoint as ERROR, a 404 as a warning', function()
  local health = require('agentd.health')
  local got
  local h = {}
  for _, lvl in ipairs({ 'ok', 'warn', 'error', 'info' }) do
    h[lvl] = function(msg)
      got = { lvl, msg }
    end
  end
  health.report_models(h, nil, { default = 'qwen', listed = true, models = { { id = 'qwen' }, { id = 'qwen:32b' } } })
  t.eq(got, { 'ok', 'the endpoint answers: 2 models (qwen, qwen:32b); default qwen' })
  health.report_models(h, nil, { default = 'qwen', listed = false, models = { { id = 'qwen' } },
    error = 'GET http://127.0.0.1:9/v1/models: Get "http://127.0.0.1:9/v1/models": dial tcp 127.0.0.1:9: connect: connection refused' })
  t.eq(got[1], 'error')
  t.ok(got[2]:find('^nobody answers at the model endpoint: GET http://127.0.0.1:9/v1/models'), got[2])
  health.report_models(h, nil, { default = 'gpt', listed = false, models = { { id = 'gpt' } },
    error = 'GET https://proxy.example/v1/models: 404 Not Found' })
  t.eq(got, { 'warn', 'the endpoint does not list its models (GET https://proxy.example/v1/models: 404 Not Found); model gpt may still answer' })
  health.report_models(h, nil, { default = 'gpt', listed = false, models = { { id = 'gpt' } },
    error = 'GET https://api.example/v1/models: 401 Unauthorized' })
  t.eq(got[1], 'error')
  health.report_models(h, { code = -32018, message = 'no model configured: set baseUrl' })
  t.eq(got[1], 'warn')
end)

t.test('ui: a brief notification is one line that fits the command line', function()
  local ui = require('agentd.ui')
  local got
  local notify = vim.notify
  vim.notify = function(m)
    got = m
  end
  ui.notify_brief(string.rep('word ', 100) .. '\nsecond line')
  vim.notify = notify
  t.eq(got:find('\n', 1, true), nil, 'one line')
  t.ok(vim.fn.strdisplaywidth(got) <= vim.o.columns - 12, got)
  t.ok(got:match('…$'), got)
end)

-- undo, commands, MCP, confirmations ---------------------------------------------

-- A finished run whose command changed three files (checkpoint c1).
local function changed_run()
  local s = runs.new()
  local function u(seq, update)
    s:apply('agent/update', { runId = 'r1', sessionId = 's1', seq = seq, update = update })
  end
  u(1, { kind = 'tool_call', toolCallId = 'call_1', title = 'sed -i s/a/b/ x', toolKind = 'execute', status = 'pending' })
  u(2, { kind = 'tool_call_update', toolCallId = 'call_1', status = 'completed', exitCode = 0, checkpoint = 'c1',
    files = { { path = 'main.go', status = 'modified' }, { path = 'notes.txt', status = 'deleted' },
      { path = 'made.txt', status = 'added' } } })
  s:apply('agent/runState', { runId = 'r1', sessionId = 's1', seq = 3, state = 'completed', stopReason = 'end_turn' })
  local run = s:get('r1')
  run.prompt = 'tidy'
  return s, run
end

local function line_of(out, text)
  for i, l in ipairs(out.lines) do
    if l:find(text, 1, true) then
      return i
    end
  end
end

t.test('render: a change has its checkpoint, files and key; an undone one says by what; the turn says how to take it back', function()
  local _, run = changed_run()
  t.eq(runs.checkpoints_of(run), { 'c1' })
  local out = render.chat({ runs = { run } }, function() end)
  local text = table.concat(out.lines, '\n')
  local change = line_of(out, '  ↶ c1: M main.go, D notes.txt, A made.txt · gd review · gu undo')
  t.ok(change, text)
  t.eq(out.changes[change], 'c1')
  t.eq(out.changes[line_of(out, '● $ sed -i s/a/b/ x')], 'c1', 'the call\'s own line too')
  t.eq(out.hl[change], 'Comment')
  t.ok(text:find('\n— completed\n  gU undo this turn · gW rewind to before it\n', 1, true), text)
  t.eq(out.runs[line_of(out, '## > tidy')], 'r1')
  t.eq(out.runs[line_of(out, '— completed')], 'r1')
  out = render.chat({ runs = { run }, checkpoint = function(id)
    return id == 'c1' and { id = 'c1', undoneBy = 'c2' } or nil
  end }, function() end)
  text = table.concat(out.lines, '\n')
  t.ok(text:find('\n  ↶ c1 (undone by c2): M main.go, D notes.txt, A made.txt\n', 1, true), text)
end)

t.test('render: a rewound run is marked and reads as history; a warning heads the chat', function()
  local _, run = changed_run()
  run.rewound = true
  local out = render.chat({ runs = { run }, warning = 'the kernel sandbox is not available' }, function() end)
  local text = table.concat(out.lines, '\n')
  t.ok(text:find('## > tidy  (rewound)', 1, true), text)
  t.ok(text:find('\n  ↶ rewound: cut from the conversation; the next prompt continues from before it\n', 1, true), text)
  t.eq(text:find('gU undo this turn', 1, true), nil, 'no undo keys on a rewound run')
  t.eq(text:find(' · gd review · gu undo', 1, true), nil)
  t.eq(out.hl[line_of(out, '## > tidy')], 'Comment')
  t.eq(out.hl[line_of(out, '— completed')], 'Comment')
  t.eq(out.lines[3], '⚠ the kernel sandbox is not available')
  t.eq(out.hl[3], 'WarningMsg')
end)

local restore = require('agentd.restore')

local PREVIEW = { status = 'preview', undone = { 'c1' },
  files = { { path = 'main.go', status = 'modified', diff = '--- a/main.go\n+++ b/main.go\n@@ -1 +1 @@\n-new\n+old\n' },
    { path = 'notes.txt', status = 'added', diff = '--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1 @@\n+remove me\n' } } }

local function keys_of(v)
  local out = {}
  for _, a in ipairs(restore.actions(v)) do
    out[#out + 1] = a.name
  end
  return out
end

t.test('restore: a preview without conflicts lists the files with their diffs; ga restores, q cancels', function()
  local v = { title = 'Undo c1 and every later change', result = PREVIEW }
  t.eq(keys_of(v), { 'apply', 'close' })
  local lines = restore.lines(v)
  local text = table.concat(lines, '\n')
  t.eq(lines[1], 'Undo c1 and every later change')
  t.ok(text:find('Undoes change c1; nothing is written until you choose.', 1, true), text)
  t.ok(text:find('Keys: ga restore · q cancel', 1, true), text)
  t.ok(text:find('Files to restore (2):\n  M main.go is restored\n  A notes.txt comes back\n', 1, true), text)
  t.ok(text:find('\n-new\n+old\n\n--- /dev/null\n+++ b/notes.txt\n', 1, true), 'the diffs, apart:\n' .. text)
  t.eq(text:find('Conflicts', 1, true), nil)
end)

t.test('restore: conflicts come first with their diffs; skip or overwrite; a missing content is never overwritten', function()
  local res = vim.deepcopy(PREVIEW)
  res.conflicts = { { path = 'cart.go', kind = 'changed', reason = 'it was changed after the checkpoint',
    diff = { path = 'cart.go', status = 'modified', diff = '--- a/cart.go\n+++ b/cart.go\n@@ -1 +1 @@\n-mine\n+theirs\n' } },
    { path = 'big.bin', kind = 'missing', reason = 'its earlier content was not kept: over the size cap' } }
  local v = { title = 'Undo the turn "x"', result = res }
  t.eq(keys_of(v), { 'skip', 'overwrite', 'close' })
  local text = table.concat(restore.lines(v), '\n')
  t.ok(text:find('Keys: gs leave the changed files, restore the rest · gO restore the changed files too · q cancel', 1, true), text)
  local c = text:find('Conflicts (2): changed since, not written unless you say so', 1, true)
  local f = text:find('Files to restore (2):', 1, true)
  t.ok(c and f and c < f, 'conflicts first:\n' .. text)
  t.ok(text:find('! cart.go: it was changed after the checkpoint\n--- a/cart.go\n', 1, true), text)
  t.ok(text:find('✗ big.bin: cannot be restored: its earlier content was not kept: over the size cap', 1, true), text)
  res.conflicts = { res.conflicts[2] }
  t.eq(keys_of(v), { 'skip', 'close' }, 'only a missing content: nothing to overwrite')
end)

t.test('restore: a rewind names the runs it cuts; gC keeps the files', function()
  local res = vim.deepcopy(PREVIEW)
  res.rewound = { 'r2', 'r3' }
  local v = { title = 'Rewind to before "two"', rewind = true, result = res, runs = { r2 = 'two', r3 = 'three\nmore' } }
  t.eq(keys_of(v), { 'apply', 'conversation', 'close' })
  local text = table.concat(restore.lines(v), '\n')
  t.ok(text:find('The conversation goes back to before "two": 2 runs cut ("two", "three …"); they stay in the chat, marked rewound.', 1, true), text)
  t.ok(text:find('Keys: ga rewind and restore · gC rewind the conversation only, keep the files · q cancel', 1, true), text)
  res.files = {}
  res.undone = {}
  t.eq(keys_of(v), { 'apply', 'close' }, 'no files: the conversation only')
  t.ok(table.concat(restore.lines(v), '\n'):find('No files to restore: only the conversation goes back.', 1, true))
end)

t.test('undo: a checkpoint reads as id, tool, title, files and who undid it', function()
  local label = require('agentd.undo').label({ id = 'c2', tool = 'run_cmd', title = 'go mod tidy && rm -r old',
    files = { { path = 'go.mod', status = 'modified' }, { path = 'go.sum', status = 'modified' },
      { path = 'old/x.go', status = 'deleted' }, { path = 'a.go', status = 'renamed', oldPath = 'b.go' },
      { path = 'run.sh', status = 'mode' } }, undoneBy = 'c3' })
  t.eq(label, 'c2  ·  run_cmd go mod tidy && rm -r old  ·  M go.mod, M go.sum, D old/x.go, R a.go, +1  ·  undone by c3')
end)

local commands = require('agentd.commands')

local CMDS = {
  { name = 'deploy', description = 'My deploy', source = 'user', path = '/u/deploy.md' },
  { name = 'deploy', description = 'Deploy to staging', source = 'workspace', path = '/w/deploy.md', shadowed = true },
  { name = 'git:commit', description = 'Write a commit message', source = 'workspace', path = '/w/git/commit.md' },
  { name = 'release', source = 'workspace', path = '/w/release.md', error = 'the front matter has no closing --- line' },
  { name = 'review', description = 'Review a file', argumentHint = '<file>', source = 'workspace', path = '/w/review.md' },
}

t.test('commands: completion offers the runnable ones whose name starts with what is typed', function()
  local words = function(items)
    return vim.tbl_map(function(i)
      return i.word
    end, items)
  end
  t.eq(words(commands.items(CMDS, '')), { '/deploy ', '/git:commit ', '/review ' })
  t.eq(words(commands.items(CMDS, 'g')), { '/git:commit ' })
  local r = commands.items(CMDS, 're')[1]
  t.eq({ r.word, r.abbr, r.menu, r.kind, r.info }, { '/review ', '/review <file>', 'Review a file', 'workspace',
    'Review a file\n/w/review.md' })
  t.eq(commands.items(CMDS, 'release'), {}, 'a broken one is not offered')
  t.eq(commands.label(CMDS[2]), '/deploy  ·  Deploy to staging  ·  workspace  ·  shadowed: your own /deploy runs instead')
  t.eq(commands.label(CMDS[4]), '/release  ·  workspace  ·  broken: the front matter has no closing --- line')
  t.eq(commands.label(CMDS[5]), '/review <file>  ·  Review a file  ·  workspace')
end)

local mcp = require('agentd.mcp')

t.test('mcp: each server in a few lines: connected with its tools and their hints, failed with why, starting', function()
  local lines = mcp.lines({
    { name = 'github', origin = 'user', transport = 'stdio', command = 'npx -y server-github', sandbox = 'read, network',
      state = 'connected', starts = 1, tools = {
        { name = 'mcp__github__get_issue', tool = 'get_issue', title = 'Get issue', hints = { readOnly = true, openWorld = true } },
        { name = 'mcp__github__create_issue', tool = 'create_issue', description = 'Create an issue.\nMore.',
          hints = { destructive = false } } } },
    { name = 'notes', origin = 'user', transport = 'stdio', command = 'notes-mcp', sandbox = 'read, no network',
      state = 'failed', error = 'the server exited with status 1: no database at notes.sqlite', starts = 2 },
    { name = 'lint', origin = 'workspace', transport = 'stdio', command = 'lint-mcp', state = 'needs_approval' },
    { name = 'web', origin = 'session', transport = 'http', url = 'https://mcp.example/mcp', state = 'starting' },
  }, { session = 's1' })
  local text = table.concat(lines, '\n')
  t.ok(text:find('● github  connected · 2 tools\n  user · stdio · npx -y server-github · sandbox read, network\n'
    .. '    get_issue — Get issue  (server says: read-only, open world)\n'
    .. '    create_issue — Create an issue. …  (server says: not destructive)\n', 1, true), text)
  t.ok(text:find('✗ notes  failed: the server exited with status 1: no database at notes.sqlite\n'
    .. '  user · stdio · notes-mcp · sandbox read, no network · started 2 times', 1, true), text)
  t.ok(text:find('? lint  needs your approval (a workspace server: asked when a run starts)', 1, true), text)
  t.ok(text:find('◌ web  starting…\n  session · http · https://mcp.example/mcp', 1, true), text)
  t.ok(lines[1]:find('MCP servers of this conversation', 1, true), lines[1])
  t.ok(table.concat(mcp.lines({}), '\n'):find('None configured', 1, true))
end)

t.test('kinds: a command says where it runs (profile, network, secrets); allow_full only where offered', function()
  local r = { requestId = 'q1', kind = 'confirm_command', command = 'go test ./...', cwd = '.', profile = 'workspace-write',
    network = true, secrets = { 'API_TOKEN' }, rule = 'mode ask: commands ask',
    options = { { optionId = 'allow_once' }, { optionId = 'allow_session' }, { optionId = 'allow_always' },
      { optionId = 'reject_once' }, { optionId = 'reject_always' }, { optionId = 'allow_full' } } }
  local spec = kinds.of(r)
  t.eq(spec.summary(r), 'Run `go test ./...` in .')
  t.eq(spec.details(r), { 'runs in: the workspace-write sandbox, with the network', 'uses your secret: $API_TOKEN',
    'rule: mode ask: commands ask' })
  t.eq(kinds.hint(r, 'chat'), 'ga allow · gs session · gA always · gx reject · gR reject+why · gX never · gF no sandbox, once')
  r.options[6] = nil
  t.eq(kinds.hint(r, 'chat'), 'ga allow · gs session · gA always · gx reject · gR reject+why · gX never')
  r.options = nil
  t.eq(kinds.hint(r, 'chat'), 'ga allow · gs session · gA always · gx reject · gR reject+why · gX never',
    'no options listed: every decision but allow_full')
  -- where the sandbox cannot confine it
  r = { kind = 'confirm_command', command = 'make', cwd = 'sub', profile = 'full',
    options = { { optionId = 'allow_once' }, { optionId = 'reject_once' }, { optionId = 'reject_always' } } }
  t.eq(kinds.of(r).details(r), { 'runs in: NO sandbox (it cannot be confined here): your full rights, no network' })
  t.ok(kinds.is_warning(kinds.of(r).details(r)[1]))
  t.eq(kinds.hint(r, 'chat'), 'ga allow unsandboxed · gx reject · gR reject+why · gX never')
  -- an MCP tool's call: no directory, no profile; the daemon's message says what it is
  r = { kind = 'confirm_command', title = 'Call test: echo', command = 'mcp__test__echo {"text":"hi"}',
    message = 'The agent wants to call a tool whose effect agentd cannot check.', rule = 'mode ask: calls of unknown effect ask' }
  t.eq(kinds.of(r).summary(r), 'Call test: echo')
  t.eq(kinds.of(r).details(r), { 'command:', '  mcp__test__echo {"text":"hi"}',
    'The agent wants to call a tool whose effect agentd cannot check.', 'rule: mode ask: calls of unknown effect ask' })
end)

t.test('render: the chat says what happened in words, never in the protocol\'s (requires_action, end_turn, allow_once, [other])', function()
  local render = require('agentd.render')
  local P = require('agentd.protocol')
  local function transcript(state, stop, outcome, by)
    local s = runs.new()
    local function up(seq, u)
      s:apply('agent/update', { runId = 'r1', sessionId = 's1', seq = seq, update = u })
    end
    up(1, { kind = 'tool_call', toolCallId = 'c_ask', title = 'Ask the user', toolKind = 'other', status = 'pending' })
    up(2, { kind = 'tool_call', toolCallId = 'c_cmd', title = 'touch ran.txt', toolKind = 'execute', status = 'pending' })
    s:apply('agent/inputRequest', { runId = 'r1', sessionId = 's1', seq = 3, requestId = 'q1', toolCallId = 'c_cmd',
      kind = 'confirm_command', command = 'touch ran.txt', cwd = '.' })
    s:apply('agent/inputResolved', { runId = 'r1', sessionId = 's1', seq = 4, requestId = 'q1', outcome = outcome, by = by })
    up(5, { kind = 'tool_call_update', toolCallId = 'c_cmd', status = 'completed', exitCode = 0 })
    s:apply('agent/runState', { runId = 'r1', sessionId = 's1', seq = 6, state = state, stopReason = stop })
    local run = s:get('r1')
    run.prompt = 'go'
    return table.concat(render.chat({ runs = { run } }, function() end).lines, '\n')
  end
  local words = {}
  for _, list in ipairs({ P.run_states, P.decisions, P.stop_reasons, P.resolved_by }) do
    for _, w in ipairs(list) do
      if w:find('_', 1, true) then
        words[#words + 1] = w
      end
    end
  end
  for _, k in ipairs(P.tool_kinds) do
    words[#words + 1] = '[' .. k .. ']'
  end
  local cases = {
    { 'requires_action', nil, 'allow_once', 'user', '— waiting for you', '→ allowed' },
    { 'completed', 'end_turn', 'allow_session', 'user', '— completed\n', '→ allowed for this session' },
    { 'completed', 'max_steps', 'allow_always', 'policy', '— completed (stopped at the step limit)', '→ always allowed (by a rule)' },
    { 'completed', 'end_turn', 'allow_full', 'user', '— completed', '→ allowed once, without the sandbox' },
    { 'failed', 'tool_errors', 'reject_always', 'user', '— failed (too many failed tool calls)', '→ always rejected' },
    { 'failed', 'repetition', 'reject_once', 'user', '— failed (the model kept repeating itself)', '→ rejected' },
    { 'cancelled', 'cancelled', 'cancelled', 'cancel', '— cancelled\n', '→ cancelled with the run' },
    { 'completed', 'end_turn', 'timeout', 'timeout', '— completed', '→ expired: no answer in time' },
  }
  for _, c in ipairs(cases) do
    local text = transcript(c[1], c[2], c[3], c[4])
    for _, w in ipairs(words) do
      t.eq(text:find(w, 1, true), nil, ('"%s" in the chat:\n%s'):format(w, text))
    end
    t.ok(text:find(c[5], 1, true), c[5] .. ' in:\n' .. text)
    t.ok(text:find(c[6], 1, true), c[6] .. ' in:\n' .. text)
    t.ok(text:find('\n● Ask the user\n', 1, true) or text:find('\n● Ask the user …\n', 1, true), text)
    t.ok(text:find('\n● $ touch ran.txt ✓ exit 0\n', 1, true), text)
  end
end)

t.test('render: a question the model asked (ask_user) reads once, with its answer; a command\'s prompt keeps its call', function()
  local render = require('agentd.render')
  local s = runs.new()
  local function up(seq, u)
    s:apply('agent/update', { runId = 'r1', sessionId = 's1', seq = seq, update = u })
  end
  up(1, { kind = 'tool_call', toolCallId = 'c_ask', title = 'Ask the user', toolKind = 'other', status = 'pending',
    input = { question = 'Which colour?', options = { 'red', 'blue' } } })
  s:apply('agent/inputRequest', { runId = 'r1', sessionId = 's1', seq = 2, requestId = 'q1', toolCallId = 'c_ask',
    kind = 'choice', message = 'Which colour?', options = { { optionId = '1', label = 'red' }, { optionId = '2', label = 'blue' } } })
  s:apply('agent/inputResolved', { runId = 'r1', sessionId = 's1', seq = 3, requestId = 'q1', outcome = 'answered', by = 'user' })
  up(4, { kind = 'tool_call_update', toolCallId = 'c_ask', status = 'completed', output = 'The user chose: blue' })
  up(5, { kind = 'tool_call', toolCallId = 'c_cmd', title = 'npm init', toolKind = 'execute', status = 'pending',
    input = { command = 'npm init', interactive = true } })
  s:apply('agent/inputRequest', { runId = 'r1', sessionId = 's1', seq = 6, requestId = 'q2', toolCallId = 'c_cmd',
    kind = 'question', message = 'package name:', command = 'npm init' })
  s:apply('agent/inputResolved', { runId = 'r1', sessionId = 's1', seq = 7, requestId = 'q2', outcome = 'answered', by = 'user' })
  local run = s:get('r1')
  run.prompt = 'go'
  local text = table.concat(render.chat({ runs = { run } }, function() end).lines, '\n')
  t.ok(text:find('\n? Which colour?  → answered: blue\n', 1, true), text)
  t.eq(text:find('Ask the user', 1, true), nil, text)
  t.eq(text:find('The user chose', 1, true), nil, text)
  t.ok(text:find('\n● $ npm init …\n', 1, true), 'a command\'s call stays:\n' .. text)
  t.ok(text:find('\n? package name:  → answered\n', 1, true), text)
end)

t.finish()
