-- End-to-end tests: the plugin against the real agentd binary and the
-- scripted fake model (cmd/fakemodel). vim.ui.input/select are replaced by
-- recorders (they are the documented hooks dressing/telescope replace);
-- the diff tab is driven with real keys.
local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/'
package.path = here .. '?.lua;' .. package.path
local t = require('lib')
-- -u NONE skips plugin/: load ours as Neovim would
vim.cmd('runtime! plugin/agentd.lua')
local h = require('helpers')
local agentd = require('agentd')
local api = vim.api

t.on_failure = h.dump

local function tabs()
  return #api.nvim_list_tabpages()
end

t.test('question: vim.ui.input answers the model', function()
  local ws = h.fresh('question')
  vim.cmd('Agentd What is my favourite colour?')
  local inp = h.wait_input(1, 'the question prompt')
  t.ok(inp.prompt:find('Which colour do you like?', 1, true), 'prompt shows the question: ' .. inp.prompt)
  t.ok(agentd.statusline():find('1 pending', 1, true), 'statusline counts it: ' .. agentd.statusline())
  inp.cb('teal')
  h.wait_conversation('You like teal.')
  h.wait_state('completed')
  local conv = h.conversation()
  t.ok(conv:find('## > What is my favourite colour?', 1, true), 'the prompt heads the run')
  t.ok(conv:find('answered', 1, true), 'the request shows as answered')
  t.ok(conv:find('— completed', 1, true), 'the final state is shown')
  t.eq(agentd.statusline():find('pending', 1, true), nil, 'nothing pending any more')
end)

t.test('choice: vim.ui.select picks an option', function()
  h.fresh('choice')
  vim.cmd('Agentd pick a colour for me')
  local sel = h.wait_select(1, 'the choice prompt')
  t.ok(sel.prompt:find('Pick a colour', 1, true), 'prompt: ' .. sel.prompt)
  t.ok(vim.tbl_contains(sel.labels, 'red') and vim.tbl_contains(sel.labels, 'blue'), vim.inspect(sel.labels))
  h.pick(sel, 'blue')
  h.wait_conversation('You chose blue.')
  h.wait_state('completed')
end)

t.test('write: the diff tab shows current vs proposed and `a` allows it', function()
  local ws = h.fresh('write', { files = { ['hello.txt'] = 'old line\n' } })
  vim.cmd('edit ' .. ws .. '/hello.txt')
  vim.cmd('Agentd write a greeting')
  t.wait(function()
    return tabs() == 2
  end, 'the diff tab')
  -- the tab has the current file on the left and the proposal on the right
  local wins = api.nvim_tabpage_list_wins(0)
  t.eq(#wins, 2, 'two windows in the diff tab')
  local left, right = api.nvim_win_get_buf(wins[1]), api.nvim_win_get_buf(wins[2])
  t.eq(api.nvim_buf_get_lines(left, 0, -1, false), { 'old line' })
  t.eq(api.nvim_buf_get_lines(right, 0, -1, false), { 'hello from agentd', 'second line' })
  t.ok(api.nvim_win_get_option(wins[1], 'diff') and api.nvim_win_get_option(wins[2], 'diff'), 'diff mode')
  t.ok(api.nvim_win_get_option(wins[2], 'statusline'):find('a allow', 1, true), 'keys shown')
  t.eq(h.read(ws .. '/hello.txt'), 'old line\n', 'nothing written before the approval')
  -- real keys
  api.nvim_feedkeys('a', 'xt', false)
  t.wait(function()
    return tabs() == 1
  end, 'the diff tab to close')
  t.wait(function()
    return h.read(ws .. '/hello.txt') == 'hello from agentd\nsecond line\n'
  end, 'hello.txt written on disk')
  h.wait_conversation('Wrote hello.txt.')
  h.wait_state('completed')
  local conv = h.conversation()
  t.ok(conv:find('Plan:', 1, true), 'the plan is shown')
  t.ok(conv:find('Write hello.txt', 1, true), 'plan entry shown')
  t.ok(conv:find('allow_once', 1, true), 'the decision is shown')
end)

t.test('write: an edit of the proposed side is what gets written', function()
  local ws = h.fresh('write', { files = { ['hello.txt'] = 'old line\n' } })
  vim.cmd('Agentd write a greeting')
  t.wait(function()
    return tabs() == 2
  end, 'the diff tab')
  local right = api.nvim_tabpage_list_wins(0)[2]
  api.nvim_set_current_win(right)
  -- the user changes the proposal before allowing it (real keys)
  api.nvim_feedkeys('ggcwgoodbye\27', 'xt', false)
  api.nvim_feedkeys('a', 'xt', false)
  t.wait(function()
    return tabs() == 1
  end, 'the diff tab to close')
  t.wait(function()
    return h.read(ws .. '/hello.txt') == 'goodbye from agentd\nsecond line\n'
  end, 'the edited text on disk')
  h.wait_state('completed')
end)

t.test('command: rejected, it does not run', function()
  local ws = h.fresh('command')
  vim.cmd('Agentd touch a file please')
  local sel = h.wait_select(1, 'the command confirmation')
  t.ok(sel.prompt:find('touch ran.txt', 1, true), 'shows the command: ' .. sel.prompt)
  t.ok(sel.prompt:find('(in .)', 1, true), 'shows the cwd: ' .. sel.prompt)
  local found
  for i, it in ipairs(sel.items) do
    if it.id == 'reject_once' and not it.reason then
      found = i
    end
  end
  t.ok(found, 'a reject entry: ' .. vim.inspect(sel.labels))
  sel.cb(sel.items[found], found)
  h.wait_conversation('Fine, I did not run it.')
  h.wait_state('completed')
  t.eq(vim.fn.filereadable(ws .. '/ran.txt'), 0, 'ran.txt must not exist')
end)

t.test('command output: streamed into the conversation while the command runs', function()
  h.fresh('stream', { setup = { approval_policy = 'full-auto' } })
  vim.cmd('Agentd build it')
  -- the output line (indented under the tool call; the title also says
  -- "compiling") shows up while the run and the command are still going
  local tool
  t.wait(function()
    return h.conversation():find('\n    compiling', 1, true)
  end, 'the streamed output line')
  local S = agentd._state
  tool = S.runs:get(S.run).tools['call_b1']
  t.eq(h.run_state(), 'running', 'the run is still going')
  t.eq(tool.status, 'in_progress', 'the command is still running')
  t.eq(h.conversation():find('\n    done', 1, true), nil, 'no "done" yet')
  h.wait_conversation('Built.')
  h.wait_state('completed')
  local conv = h.conversation()
  t.ok(conv:find('\n    done', 1, true), 'the final output is shown')
  local _, count = conv:gsub('\n    compiling', '')
  t.eq(count, 1, 'the output is shown once')
  t.eq(tool.live, nil, 'the live tail is gone')
end)

t.test('choice: "Other…" opens vim.ui.input when allowOther', function()
  h.fresh('other')
  vim.cmd('Agentd pick a flavour')
  local sel = h.wait_select(1, 'the choice prompt')
  t.ok(vim.tbl_contains(sel.labels, 'Other…'), vim.inspect(sel.labels))
  h.pick(sel, 'Other…')
  local inp = h.wait_input(1, 'the free-text answer')
  inp.cb('pistachio')
  h.wait_conversation('Pistachio it is.')
end)

t.test("selection: :'<,'>Agentd sends the selected lines as context", function()
  local ws = h.fresh('selection', { files = { ['calc.py'] = 'alpha = 1\nbeta = 2\ngamma = 3\n' } })
  vim.cmd('edit ' .. ws .. '/calc.py')
  vim.cmd('normal! 2GVj')
  api.nvim_feedkeys(':Agentd explain this\r', 'xt', false)
  h.wait_conversation('I saw the selection.')
  h.wait_state('completed')
end)

t.test('sessions: after a restart of the editor, :AgentdSessions brings a session back', function()
  local ws = h.fresh('question')
  vim.cmd('Agentd What is my favourite colour?')
  h.wait_input(1).cb('teal')
  h.wait_state('completed')
  local sid = agentd._state.session
  -- a new "editor": forget everything, same workspace and state dir
  local cfg = vim.deepcopy(require('agentd.config').values)
  agentd._reset()
  require('agentd.conversation').render_now()
  agentd.setup(cfg)
  h.ui_reset()
  vim.cmd('AgentdSessions')
  local sel = h.wait_select(1, 'the sessions list')
  t.ok(sel.labels[1]:find('favourite colour', 1, true), vim.inspect(sel.labels))
  sel.cb(sel.items[1], 1)
  h.wait_conversation('You like teal.')
  t.eq(agentd._state.session, sid)
  -- :checkhealth sees the running daemon
  vim.cmd('checkhealth agentd')
  local text = table.concat(api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  t.ok(text:find('OK: running', 1, true), text)
  vim.cmd('bwipeout!')
end)

t.test('cancel: :AgentdCancel stops a hanging model call', function()
  h.fresh('cancel')
  vim.cmd('Agentd be slow')
  h.wait_conversation('Thinking very slowly')
  vim.cmd('AgentdCancel')
  h.wait_state('cancelled', 5000)
  h.wait_conversation('— cancelled')
end)

t.test('cancel: an open diff tab closes when its request is resolved elsewhere', function()
  local ws = h.fresh('cancel')
  vim.cmd('Agentd cancel the write')
  t.wait(function()
    return tabs() == 2
  end, 'the diff tab')
  vim.cmd('AgentdCancel')
  t.wait(function()
    return tabs() == 1
  end, 'the diff tab to close on agent/inputResolved')
  h.wait_state('cancelled', 5000)
  t.eq(vim.fn.filereadable(ws .. '/never.txt'), 0, 'never.txt must not exist')
  t.eq(require('agentd')._state.queue:count(), 0, 'nothing pending')
end)

t.test('queue: two open requests are shown one after the other', function()
  h.fresh('queue')
  vim.cmd('Agentd first question')
  local first = h.wait_input(1, 'the first question')
  vim.cmd('Agentd! second question')
  t.wait(function()
    return require('agentd')._state.queue:count() == 2
  end, 'two pending requests')
  vim.wait(200)
  t.eq(#h.inputs, 1, 'the second waits while the first is shown')
  t.ok(first.prompt:find('First question?', 1, true))
  first.cb('one')
  local second = h.wait_input(2, 'the second question')
  t.ok(second.prompt:find('Second question?', 1, true), second.prompt)
  second.cb('two')
  h.wait_conversation('Got two.')
  t.wait(function()
    return require('agentd')._state.queue:count() == 0
  end, 'nothing pending')
end)

t.test('restart: the daemon dies, comes back, and the pending question is shown again', function()
  h.fresh('restart')
  vim.cmd('Agentd survive a restart')
  local inp = h.wait_input(1, 'the question')
  inp.cb(nil) -- dismissed: postponed
  t.wait(function()
    return require('agentd')._state.queue:count() == 1 and #require('agentd')._state.queue.postponed == 1
  end, 'the request postponed')
  local old = agentd.status().pid
  vim.loop.kill(old, 'sigkill')
  t.wait(function()
    local s = agentd.status()
    return s.ready and s.pid and s.pid ~= old
  end, 'the daemon restarted', 10000)
  local again = h.wait_input(2, 'the question shown again after the restart')
  t.ok(again.prompt:find('Still there?', 1, true), again.prompt)
  again.cb('yes')
  h.wait_conversation('Survived the restart.', 15000)
end)

t.test('secret: inputsecret() reads typed keys', function()
  local prompts = require('agentd.prompts')
  local got
  api.nvim_feedkeys('hunter2\r', 't', false)
  prompts.show({ requestId = 'x', kind = 'secret', title = 'Token', message = 'API token?' }, {
    reply = function(p)
      got = p
    end,
    confirm = function() end,
    postpone = function()
      got = 'postponed'
    end,
  })
  t.wait(function()
    return got
  end, 'the secret')
  t.log('')
  t.eq(got, { text = 'hunter2' })
end)

h.stop_models()
agentd._reset()
t.finish()
