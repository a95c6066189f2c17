-- End-to-end tests: the plugin against the real agentd binary and the
-- scripted fake model (cmd/fakemodel), with real keys (nvim_feedkeys with
-- mappings) in the chat, the request float and the diff tab. Only
-- vim.ui.select is replaced, by a recorder (it is the documented hook
-- dressing or telescope replace; the pickers use it).
local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/'
package.path = here .. '?.lua;' .. package.path
local t = require('lib')
-- -u NONE skips plugin/: load ours as Neovim would
vim.cmd('runtime! plugin/agentd.lua')
local h = require('helpers')
local agentd = require('agentd')
local S = agentd._state
local api = vim.api
local uv = vim.loop

t.on_failure = h.dump

local function tabs()
  return #api.nvim_list_tabpages()
end

local function float_state()
  return require('agentd.float')._state
end

local function wait_focus_in_float(what)
  t.wait(function()
    local F = float_state()
    local cur = api.nvim_get_current_win()
    return cur == F.card_win or cur == F.entry_win
  end, what or 'the cursor in the float')
end

-- A window with a file, so that "the cursor did not move" means something.
local function file_window(ws, name, text)
  h.write(ws .. '/' .. name, text or 'x\n')
  vim.cmd('edit ' .. ws .. '/' .. name)
  return api.nvim_get_current_win()
end

-- The line number of the first transcript line containing text.
local function transcript_line(text)
  for i, l in ipairs(require('agentd.chat').lines()) do
    if l:find(text, 1, true) then
      return i
    end
  end
end

local function go_to_transcript_line(text)
  local twin = require('agentd.chat').wins()
  t.ok(twin, 'the chat is open')
  api.nvim_set_current_win(twin)
  local line
  t.wait(function()
    line = transcript_line(text)
    return line
  end, 'the transcript to show "' .. text .. '"')
  api.nvim_win_set_cursor(twin, { line, 0 })
end

-- chat ----------------------------------------------------------------------

t.test('chat: a prompt composed over two lines is sent with <C-s>; a follow-up continues the session in place', function()
  h.fresh('chat')
  h.keys(':AgentdChat<CR>first line<CR>second line<C-s>')
  h.wait_conversation('Got two lines.')
  h.wait_state('completed')
  local _, cwin = require('agentd.chat').wins()
  t.ok(cwin, 'the compose window is open')
  t.eq(api.nvim_buf_get_lines(api.nvim_win_get_buf(cwin), 0, -1, false), { '' }, 'the compose window is empty again')
  local conv = h.conversation()
  t.ok(conv:find('## > first line\n   second line', 1, true), 'the prompt with both lines heads the run:\n' .. conv)
  local first_session = S.session
  -- the follow-up, sent from Normal mode with <CR>
  t.eq(api.nvim_get_current_win(), cwin, 'the cursor stayed in the compose window')
  h.keys('iand a follow-up<Esc><CR>')
  h.wait_conversation('Same conversation.')
  h.wait_state('completed')
  t.eq(S.session, first_session, 'the same session')
  t.eq(#S.runs:of_session(first_session), 2, 'two runs in the session')
  conv = h.conversation()
  local a = conv:find('## > first line', 1, true)
  local b = conv:find('## > and a follow-up', 1, true)
  t.ok(a and b and a < b, 'both runs in order in one transcript')
  local _, headers = conv:gsub('# agentd', '')
  t.eq(headers, 1, 'one conversation header')
end)

t.test('conversations: two at once, each in its own tab (:AgentdChatTab), each waiting for its own answer', function()
  h.fresh('queue')
  local chat = require('agentd.chat')
  vim.cmd('Agentd first question')
  h.wait_float('First question?')
  local first = S.session
  t.ok(first, 'the first conversation')
  vim.cmd('AgentdChatTab')
  t.eq(tabs(), 2, 'a tab of its own')
  t.eq(S.session, nil, 'a new conversation is current')
  vim.cmd('stopinsert')
  local _, cwin = chat.wins()
  api.nvim_buf_set_lines(api.nvim_win_get_buf(cwin), 0, -1, false, { 'second question' })
  chat.send()
  t.wait(function()
    return S.session and S.session ~= first
  end, 'the second conversation')
  local second = S.session
  h.wait_conversation('## > second question')
  t.eq(h.conversation():find('first question', 1, true), nil, 'this tab shows its own conversation only')
  t.eq(#chat.views(), 2)
  -- back to the first tab: its conversation is the current one again
  vim.cmd('tabprevious')
  local twin = chat.wins()
  api.nvim_set_current_win(twin)
  t.wait(function()
    return S.session == first
  end, 'the first conversation current in its tab')
  h.wait_conversation('## > first question')
  t.eq(h.conversation():find('second question', 1, true), nil, h.conversation())
  -- both requests are open; each is answered in its own conversation
  h.wait_requests(2)
  go_to_transcript_line('? First question?')
  h.keys('<CR>one<CR>')
  h.wait_conversation('Got one.')
  vim.cmd('tabnext')
  api.nvim_set_current_win((chat.wins()))
  t.wait(function()
    return S.session == second
  end, 'the second conversation current in its tab')
  go_to_transcript_line('? Second question?')
  h.keys('<CR>two<CR>')
  h.wait_conversation('Got two.')
  t.eq(h.conversation():find('Got one.', 1, true), nil, h.conversation())
end)

t.test('steer and queue: <C-s> while the run works steers it (the model reads it at its next step); <C-q> queues a follow-up, which starts after it', function()
  h.fresh('steer', { setup = { approval_policy = 'full-auto' } })
  h.keys(':AgentdChat<CR>build it<C-s>')
  t.wait(function()
    local r = S.run and S.runs:get(S.run)
    return r and r.tools.call_b and r.tools.call_b.status == 'in_progress'
  end, 'the command runs')
  t.ok(h.compose_status():find('<C-s> steers the run · <C-q> queues a follow-up', 1, true), h.compose_status())
  local first = S.run
  local chat = require('agentd.chat')
  local _, cwin = chat.wins()
  local cbuf = api.nvim_win_get_buf(cwin)
  api.nvim_set_current_win(cwin)
  api.nvim_buf_set_lines(cbuf, 0, -1, false, { 'also run the tests' })
  h.keys('<C-s>')
  h.wait_conversation('» you: also run the tests')
  t.wait(function()
    return vim.deep_equal(api.nvim_buf_get_lines(cbuf, 0, -1, false), { '' })
  end, 'the compose window is empty again once the daemon took the steer')
  t.eq(#S.runs:of_session(S.session), 1, 'a steer, not a new run')
  api.nvim_buf_set_lines(cbuf, 0, -1, false, { 'then write docs' })
  h.keys('<C-q>')
  h.wait_conversation('## > then write docs')
  h.wait_conversation('— queued: starts when the run before it ends · dd cancels it')
  h.wait_conversation('Will run the tests too.', 20000)
  h.wait_conversation('Docs written.', 20000)
  local runs = S.runs:of_session(S.session)
  t.eq(#runs, 2)
  t.eq(runs[1].id, first)
  t.wait(function()
    return runs[2].state == 'completed'
  end, 'the queued run completes')
  local conv = h.conversation()
  local a, b, c = conv:find('» you: also run the tests', 1, true), conv:find('Will run the tests too.', 1, true),
    conv:find('## > then write docs', 1, true)
  t.ok(a and b and c and a < b and b < c, 'the steer inside the first run, the queued run after it:\n' .. conv)
end)

t.test('queue: dd on a queued run cancels it before it starts', function()
  h.fresh('steer', { setup = { approval_policy = 'full-auto' } })
  h.keys(':AgentdChat<CR>build it<C-s>')
  t.wait(function()
    local r = S.run and S.runs:get(S.run)
    return r and r.tools.call_b and r.tools.call_b.status == 'in_progress'
  end, 'the command runs')
  local _, cwin = require('agentd.chat').wins()
  api.nvim_buf_set_lines(api.nvim_win_get_buf(cwin), 0, -1, false, { 'then write docs' })
  api.nvim_set_current_win(cwin)
  h.keys('<C-q>')
  h.wait_conversation('— queued: starts when the run before it ends')
  go_to_transcript_line('## > then write docs')
  h.keys('dd')
  h.wait_conversation('— cancelled')
  h.wait_conversation('Built.', 20000)
  vim.wait(300)
  t.eq(h.conversation():find('Docs written.', 1, true), nil, 'the cancelled run never ran')
end)

-- requests -----------------------------------------------------------------

t.test('question: the float opens without taking the cursor; :AgentdPending goes there; the answer is typed in it', function()
  local ws = h.fresh('question')
  local win = file_window(ws, 'notes.txt')
  vim.cmd('Agentd What is my favourite colour?')
  h.wait_float('Which colour do you like?')
  t.eq(api.nvim_get_current_win(), win, 'the cursor stays where it was')
  t.eq(api.nvim_get_mode().mode, 'n', 'no prompt on the command line')
  t.ok(agentd.statusline():find('1 open request', 1, true), agentd.statusline())
  h.keys(':AgentdPending<CR>')
  wait_focus_in_float()
  -- one stretch of typing: feedkeys() leaves Insert mode when its keys run out
  h.keys('<CR>teal<CR>')
  h.wait_conversation('You like teal.')
  h.wait_state('completed')
  t.eq(h.float_text(), '', 'the float closed')
  t.eq(api.nvim_get_current_win(), win, 'the cursor is back')
  local conv = h.conversation()
  t.ok(conv:find('? Which colour do you like?  → answered: teal\n', 1, true), conv)
  t.eq(conv:find('Ask the user', 1, true), nil, 'the question is said once, not as a call too:\n' .. conv)
  t.eq(conv:find('The user answered', 1, true), nil, conv)
end)

t.test('choice: answered in the chat, <CR> on the option line', function()
  h.fresh('choice')
  vim.cmd('Agentd pick a colour for me')
  h.wait_requests(1)
  go_to_transcript_line('  2 blue')
  h.keys('<CR>')
  h.wait_conversation('You chose blue.')
  h.wait_state('completed')
end)

t.test('choice: "other" answers in your own words', function()
  h.fresh('other')
  vim.cmd('Agentd pick a flavour')
  h.wait_float('Which flavour?')
  h.wait_float(':AgentdPending (or <C-w>w) to answer here', 'the float says how to reach it')
  vim.cmd('AgentdPending')
  wait_focus_in_float()
  h.wait_float('go other…', 'its keys once the cursor is there')
  h.keys('gopistachio<CR>')
  h.wait_conversation('Pistachio it is.')
end)

t.test('command: allowed from the chat with ga on the request', function()
  local ws = h.fresh('allow')
  vim.cmd('Agentd touch a file please')
  h.wait_requests(1)
  go_to_transcript_line('? Run `touch ran.txt` in .')
  t.ok(h.conversation():find('ga allow', 1, true), 'the keys are shown on the request')
  h.keys('ga')
  h.wait_conversation('Ran it.')
  t.eq(vim.fn.filereadable(ws .. '/ran.txt'), 1, 'ran.txt exists')
end)

t.test('command: Esc at "reject with a reason" does not reject; the reason reaches the model', function()
  local ws = h.fresh('reason')
  vim.cmd('Agentd touch a file please')
  h.wait_float('touch ran.txt')
  vim.cmd('AgentdPending')
  wait_focus_in_float()
  -- Esc in the reason field: back on the request, nothing sent
  h.keys('gRnot<Esc>')
  t.wait(function()
    return api.nvim_get_current_win() == float_state().card_win
  end, 'back on the request')
  -- the daemon would have answered within this time if anything was sent
  vim.wait(300)
  t.eq(S.requests:count(), 1, 'the request is still open')
  t.eq(h.run_state(), 'requires_action', 'the run still waits')
  h.wait_float('gR reject+why')
  h.keys('gRnot on my machine<CR>')
  h.wait_conversation('Understood: not on your machine.')
  t.ok(h.conversation():find('→ rejected', 1, true), h.conversation())
  t.eq(vim.fn.filereadable(ws .. '/ran.txt'), 0, 'ran.txt must not exist')
end)

t.test('cancel: :AgentdCancel typed while a request is shown cancels the run; it is not an answer', function()
  h.fresh('question')
  vim.cmd('Agentd What is my favourite colour?')
  h.wait_float('Which colour do you like?')
  vim.cmd('AgentdPending')
  wait_focus_in_float()
  h.keys(':AgentdCancel<CR>')
  h.wait_state('cancelled', 5000)
  h.wait_conversation('→ cancelled with the run')
  t.eq(h.float_text(), '', 'the float closed')
  t.eq(S.requests:count(), 0, 'nothing open')
end)

t.test('requests: two open at once, the newer answered first through the picker', function()
  h.fresh('queue')
  vim.cmd('Agentd first question')
  h.wait_requests(1)
  local first_run = S.run
  vim.cmd('Agentd! second question')
  h.wait_requests(2)
  h.wait_float('1 of 2 open')
  t.ok(h.float_text():find('First question?', 1, true), 'the float shows the older one')
  vim.cmd('AgentdPending')
  local sel = h.wait_select(1, 'the picker of open requests')
  t.eq(#sel.items, 2, vim.inspect(sel.labels))
  h.pick(sel, 'Second question?')
  wait_focus_in_float()
  h.wait_float('Second question?')
  h.keys('<CR>two<CR>')
  h.wait_conversation('Got two.')
  -- the float moves on to the first, keeping the cursor
  h.wait_float('First question?')
  wait_focus_in_float()
  h.keys('<CR>one<CR>')
  t.wait(function()
    return S.runs:get(first_run).state == 'completed'
  end, 'the first run completed')
  t.eq(S.requests:count(), 0, 'nothing open')
end)

-- A kind the plugin does not know is shown and answered from its generic
-- form: the plugin's own view of a kind is taken away for the test.
local function without_kind(kind, fn)
  local kinds = require('agentd.kinds')
  local saved = kinds.spec[kind]
  kinds.spec[kind] = nil
  local ok, err = pcall(fn)
  kinds.spec[kind] = saved
  assert(ok, err)
end

t.test('generic form: a kind unknown to the plugin (a choice here) is shown from its generic form and answered by its option', function()
  h.fresh('choice')
  without_kind('choice', function()
    vim.cmd('Agentd pick a colour for me')
    h.wait_float('agentd · request · 1 of 1 open')
    local text = h.float_text()
    t.ok(text:find('  2 blue', 1, true), text)
    vim.cmd('AgentdPending')
    wait_focus_in_float()
    h.wait_float('1-9 pick')
    h.keys('2')
    h.wait_conversation('You chose blue.')
  end)
end)

t.test('generic form: a confirmation unknown to the plugin asks for the text its input takes with "Reject", and sends it as the reason', function()
  local ws = h.fresh('reason')
  without_kind('confirm_command', function()
    vim.cmd('Agentd touch a file please')
    h.wait_float('agentd · request')
    vim.cmd('AgentdPending')
    wait_focus_in_float()
    local text = h.float_text()
    local n
    for i, l in ipairs(require('agentd.kinds').options(S.requests:list()[1].req)) do
      if l.id == 'reject_once' then
        n = i
      end
    end
    t.ok(n and text:find(('  %d Reject'):format(n), 1, true), text)
    h.keys(tostring(n))
    h.wait_float('Why not, or what to do instead (with "Reject", optional)')
    -- (the keys of one h.keys leave Insert mode when they run out: A goes on typing)
    h.keys('Anot on my machine<CR>')
    h.wait_conversation('Understood: not on your machine.')
    t.eq(vim.fn.filereadable(ws .. '/ran.txt'), 0)
  end)
end)

t.test('plan mode: chosen in the mode picker; the plan is answered in the float (keep planning with feedback, then approve into auto-edit), stays readable, and the mode follows', function()
  local ws = h.fresh('plan')
  vim.cmd('AgentdChat')
  vim.cmd('AgentdMode')
  local sel = h.wait_select(1, 'the mode picker')
  t.ok(vim.tbl_contains(sel.labels, 'plan — reads, then proposes a plan to approve'), vim.inspect(sel.labels))
  h.pick(sel, 'plan — reads, then proposes a plan to approve')
  t.wait(function()
    return h.chat_status():find('· plan', 1, true)
  end, 'the status line says plan')
  vim.cmd('Agentd add a greeting')
  h.wait_float('Approve the plan?')
  local text = h.float_text()
  t.ok(text:find('2. Read it back.', 1, true) and text:find('  4 Keep planning — say what should change', 1, true), text)
  t.eq(vim.fn.filereadable(ws .. '/greeting.txt'), 0, 'the write was refused without asking')
  vim.cmd('AgentdPending')
  wait_focus_in_float()
  h.keys('4')
  h.wait_float('What should change, or anything to add (with "Keep planning",')
  h.keys('Aalso in French<CR>')
  h.wait_conversation('3. Say hello in French too.')
  h.wait_conversation('? Approve the plan?  → Keep planning: also in French\n  │ 1. Write `greeting.txt` with one line.')
  vim.cmd('AgentdPending')
  wait_focus_in_float()
  h.keys('1')
  h.wait_float('(with "Approve, and edit files')
  h.keys('<CR>')
  h.wait_conversation('Wrote greeting.txt.')
  h.wait_conversation('? Approve the plan?  → Approve, and edit files without asking\n  │ 1.')
  h.wait_conversation('⇢ mode auto-edit from here on: edits files without asking; commands ask')
  h.wait_conversation('\nmodel fakemodel · mode auto-edit')
  t.ok(h.chat_status():find('· auto-edit', 1, true), h.chat_status())
  t.eq(vim.fn.readfile(ws .. '/greeting.txt'), { 'hello', 'bonjour' }, 'approved into auto-edit: written unasked')
  t.eq(S.requests.arrivals, 2, 'only the two plans were asked')
  t.eq(h.conversation():find('The user approved the plan', 1, true), nil, 'what the model read is not the chat\'s')
end)

t.test('grant: what allowing for the session or always would also allow is shown with the confirmation (grantCovers)', function()
  h.fresh('grant')
  vim.cmd('Agentd run the tests')
  h.wait_float('Run `go test ./...`')
  local text = h.float_text()
  t.ok(text:find('session / always would also allow:\n  · `go test` with any arguments', 1, true), text)
  t.ok(text:find('\n  · `go test` [^\n]*\n    %S'), 'the bullet hangs:\n' .. text)
  h.wait_conversation('session / always would also allow:\n    · `go test` with any arguments')
  require('agentd.pump').decide(S.requests:list()[1].req.requestId, 'reject_once')
  h.wait_conversation('Not run, then.')
end)

-- subagents and background processes --------------------------------------

t.test('subagents: each task call is a card with its work nested under it; a subagent\'s question is in its card (labelled in the float), answered there like any; the work folds once done', function()
  h.fresh('subagents', { files = { ['cart.go'] = 'package cart\n\nfunc Total() int { return 0 }\n' } })
  vim.cmd('Agentd survey the cart')
  h.wait_float('Subagent “Ask about the currency” asks:\nWhich currency should totals use?')
  h.wait_conversation('● Subagent: Find the cart total')
  h.wait_conversation('  ┊ task: Ask the user which currency totals use.')
  h.wait_conversation('  ┊ ? Which currency should totals use?')
  t.ok(h.conversation():find('● Subagent: Ask about the currency … waiting for you[^\n]*\n  ┊ task: Ask the user which currency totals use.\n  ┊ %? Which currency should totals use%?'), h.conversation())
  go_to_transcript_line('┊ ? Which currency should totals use?')
  h.keys('<CR>EUR<CR>')
  h.wait_conversation('Both done: the total is in cart.go, in EUR.')
  h.wait_state('completed')
  local conv = h.conversation()
  t.ok(conv:find('● Subagent: Find the cart total ✓', 1, true), conv)
  t.ok(conv:find('  ┊ ▸ 1 step (<CR> shows them)\n    Total is in cart.go, func Total.\n    read 1 file: cart.go', 1, true), conv)
  t.ok(conv:find('● Subagent: Ask about the currency ✓[^\n]*\n  ┊ task: [^\n]*\n  ┊ ▸ 1 step[^\n]*\n  ┊ %? Which currency should totals use%?  → answered: EUR\n'), conv)
  t.eq(conv:find('Files the subagent read', 1, true), nil, 'the model\'s list of files reads as a line of its own')
  go_to_transcript_line('┊ ▸ 1 step')
  h.keys('<CR>')
  h.wait_conversation('  ┊ ▾ 1 step (<CR> folds them)\n  ┊ ● read cart.go ✓')
end)

t.test('subagents: after an editor restart, a subagent\'s open question comes back in its card, with the cards and their work', function()
  h.fresh('subagents', { files = { ['cart.go'] = 'package cart\n\nfunc Total() int { return 0 }\n' } })
  vim.cmd('Agentd survey the cart')
  h.wait_float('Subagent “Ask about the currency” asks:\nWhich currency should totals use?')
  h.wait_conversation('    read 1 file: cart.go')
  -- a new "editor": it knows nothing; same workspace and state dir
  local cfg = vim.deepcopy(require('agentd.config').values)
  agentd._reset()
  require('agentd.chat').render_now()
  agentd.setup(cfg)
  h.ui_reset()
  agentd.start()
  h.wait_float('Subagent “Ask about the currency” asks:\nWhich currency should totals use?')
  require('agentd.chat').open({ focus = 'transcript' })
  h.wait_conversation('  ┊ ? Which currency should totals use?')
  local conv = h.conversation()
  t.ok(conv:find('● Subagent: Find the cart total ✓[^\n]*\n  ┊ task: [^\n]*\n  ┊ ▸ 1 step %(<CR> shows them%)\n    Total is in cart.go, func Total.'), conv)
  t.ok(conv:find('● Subagent: Ask about the currency … waiting for you[^\n]*\n  ┊ task: Ask the user which currency totals use.\n  ┊ %? Which currency should totals use%?'), conv)
  local _, n = conv:gsub('Which currency should totals use%?', '')
  t.eq(n, 1, 'the request once, in its card:\n' .. conv)
  go_to_transcript_line('┊ ? Which currency should totals use?')
  h.keys('<CR>EUR<CR>')
  h.wait_conversation('Both done: the total is in cart.go, in EUR.')
end)

t.test('subagents: dd on a working subagent\'s card stops it alone; the run goes on', function()
  h.fresh('substop', { setup = { approval_policy = 'full-auto' } })
  vim.cmd('Agentd watch it')
  h.wait_conversation('  ┊ ● $ sleep 30 …')
  go_to_transcript_line('● Subagent: Wait a while … running')
  t.ok(h.conversation():find('● Subagent: Wait a while … running[^\n]* · dd stops it'), h.conversation())
  h.keys('dd')
  h.wait_conversation('The subagent was stopped.', 15000)
  h.wait_conversation('● Subagent: Wait a while ✗ cancelled')
  h.wait_state('completed')
end)

t.test('background: a process the agent started shows under its call; dd stops it; :AgentdProcesses lists them', function()
  h.fresh('background', { setup = { approval_policy = 'full-auto' } })
  vim.cmd('Agentd start the server')
  h.wait_conversation('Started it.')
  h.wait_conversation('  ⚙ p1 running · echo serving; sleep 60')
  t.ok(h.chat_status():find('⚙ 1 running', 1, true), h.chat_status())
  go_to_transcript_line('⚙ p1 running')
  h.keys('dd')
  h.wait_conversation('  ⚙ p1 stopped by you · echo serving; sleep 60')
  t.eq(h.chat_status():find('running', 1, true) ~= nil and h.chat_status():find('⚙', 1, true) or nil, nil, h.chat_status())
  vim.cmd('AgentdProcesses')
  local sel = h.wait_select(1, 'the process picker')
  t.ok(sel.labels[1]:find('^p1 stopped by you · echo serving; sleep 60'), vim.inspect(sel.labels))
end)

t.test('background: after an editor restart (its daemon ended, and the process with it), :AgentdSessions shows the process under its call as ended by agentd', function()
  h.fresh('background', { setup = { approval_policy = 'full-auto' } })
  vim.cmd('Agentd start the server')
  h.wait_conversation('Started it.')
  h.wait_conversation('  ⚙ p1 running · echo serving; sleep 60')
  h.wait_state('completed')
  -- a new "editor": it knows nothing; same workspace and state dir
  local cfg = vim.deepcopy(require('agentd.config').values)
  agentd._reset()
  require('agentd.chat').render_now()
  agentd.setup(cfg)
  h.ui_reset()
  vim.cmd('AgentdSessions')
  local sel = h.wait_select(1, 'the sessions list')
  h.pick(sel, 'start the server')
  require('agentd.chat').open({ focus = 'transcript' })
  h.wait_conversation('● $ echo serving; sleep 60 ✓')
  h.wait_conversation('    serving\n  ⚙ p1 stopped by agentd · echo serving; sleep 60 · 8 B printed\n')
  t.eq(h.chat_status():find('⚙', 1, true), nil, 'nothing running: ' .. h.chat_status())
end)

-- writes -------------------------------------------------------------------

t.test('write: the diff tab (readable names) allows with ga, the open buffer reloads, a later :w keeps it', function()
  local ws = h.fresh('write', { files = { ['hello.txt'] = 'old line\n' } })
  vim.cmd('edit ' .. ws .. '/hello.txt')
  local file_buf = api.nvim_get_current_buf()
  vim.cmd('Agentd write a greeting')
  h.wait_float('hello.txt  +2 -1')
  t.eq(tabs(), 1, 'no tab opens by itself')
  vim.cmd('AgentdPending')
  wait_focus_in_float()
  h.keys('<CR>')
  t.wait(function()
    return tabs() == 2
  end, 'the diff tab')
  local wins = api.nvim_tabpage_list_wins(0)
  t.eq(#wins, 2, 'two windows in the diff tab')
  local left, right = api.nvim_win_get_buf(wins[1]), api.nvim_win_get_buf(wins[2])
  t.eq(api.nvim_buf_get_lines(left, 0, -1, false), { 'old line' })
  t.eq(api.nvim_buf_get_lines(right, 0, -1, false), { 'hello from agentd', 'second line' })
  t.eq(vim.fn.fnamemodify(api.nvim_buf_get_name(right), ':t'), 'hello.txt (proposed)')
  t.eq(vim.fn.bufname(right), 'hello.txt (proposed)', 'the name the tab line shows')
  t.eq(vim.fn.bufname(left), 'hello.txt (current)')
  t.ok(api.nvim_win_get_option(wins[1], 'diff') and api.nvim_win_get_option(wins[2], 'diff'), 'diff mode')
  t.ok(api.nvim_win_get_option(wins[1], 'statusline'):find('ga allow · gs session · gA always', 1, true), 'allow keys shown')
  t.ok(api.nvim_win_get_option(wins[2], 'statusline'):find('gx reject · gR reject+why · gX never · q later', 1, true),
    'reject keys shown')
  t.eq(h.read(ws .. '/hello.txt'), 'old line\n', 'nothing written before the approval')
  h.keys('ga')
  t.wait(function()
    return tabs() == 1
  end, 'the diff tab to close')
  t.wait(function()
    return h.read(ws .. '/hello.txt') == 'hello from agentd\nsecond line\n'
  end, 'hello.txt written on disk')
  h.wait_conversation('Wrote hello.txt.')
  t.wait(function()
    return vim.deep_equal(api.nvim_buf_get_lines(file_buf, 0, -1, false), { 'hello from agentd', 'second line' })
  end, 'the open buffer reloaded')
  t.eq(vim.bo[file_buf].modified, false, 'not modified')
  -- the reload is one undo step: u brings the old text back, <C-r> the agent's
  api.nvim_buf_call(file_buf, function()
    vim.cmd('silent normal! u')
  end)
  t.eq(api.nvim_buf_get_lines(file_buf, 0, -1, false), { 'old line' }, 'undo after the reload')
  api.nvim_buf_call(file_buf, function()
    vim.cmd('silent normal! \18')
  end)
  t.eq(api.nvim_buf_get_lines(file_buf, 0, -1, false), { 'hello from agentd', 'second line' }, 'redo')
  api.nvim_buf_call(file_buf, function()
    vim.cmd('write')
  end)
  t.eq(h.read(ws .. '/hello.txt'), 'hello from agentd\nsecond line\n', ':w keeps the agent\'s text')
  local conv = h.conversation()
  t.ok(conv:find('Plan:', 1, true), 'the plan is shown')
  t.ok(conv:find('→ allowed\n', 1, true), 'the decision is shown')
  t.eq(conv:find('undo_patch', 1, true), nil, 'no line meant for the model alone:\n' .. conv)
  t.ok(conv:find('  ↶ c1: M hello.txt · gd review · gu undo', 1, true), 'the checkpoint is shown once, in words:\n' .. conv)
end)

t.test('write: an edit of the proposed side is what gets written; a modified buffer is not reloaded over', function()
  local ws = h.fresh('write', { files = { ['hello.txt'] = 'old line\n' } })
  vim.cmd('edit ' .. ws .. '/hello.txt')
  local file_buf = api.nvim_get_current_buf()
  h.keys('Amine<Esc>') -- unsaved changes
  vim.cmd('Agentd write a greeting')
  h.wait_requests(1)
  go_to_transcript_line('? write hello.txt')
  h.keys('<CR>')
  t.wait(function()
    return tabs() == 2
  end, 'the diff tab')
  api.nvim_set_current_win(api.nvim_tabpage_list_wins(0)[2])
  -- the user changes the proposal before allowing it (real keys; editing keys are free)
  h.keys('ggcwgoodbye<Esc>Aa<Esc>')
  h.keys('ga')
  t.wait(function()
    return tabs() == 1
  end, 'the diff tab to close')
  t.wait(function()
    return h.read(ws .. '/hello.txt') == 'goodbye from agentda\nsecond line\n'
  end, 'the edited text on disk')
  h.wait_state('completed')
  t.eq(api.nvim_buf_get_lines(file_buf, 0, -1, false), { 'old linemine' }, 'the unsaved edit is kept')
  t.ok(table.concat(h.notes, '\n'):find('has unsaved changes here', 1, true), 'the user is told')
end)

local LIST = 'one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n'

-- The status line of the proposed side of the diff tab.
local function proposed_status()
  local wins = api.nvim_tabpage_list_wins(0)
  return api.nvim_win_get_option(wins[#wins], 'statusline')
end

t.test('review: with auto_diff the diff tab opens by itself; hunks are kept (gy) or rejected (gh); ga writes what is left', function()
  local ws = h.fresh('review', { files = { ['list.txt'] = LIST }, setup = { requests = { auto_diff = true } } })
  local win = file_window(ws, 'notes.txt')
  vim.cmd('Agentd shout the list')
  t.wait(function()
    return tabs() == 2
  end, 'the diff tab opens by itself')
  local wins = api.nvim_tabpage_list_wins(0)
  t.eq(api.nvim_get_current_win(), wins[2], 'the cursor on the proposed side')
  t.eq(api.nvim_win_get_cursor(0)[1], 2, 'on the first hunk')
  t.ok(proposed_status():find(' 3 hunks (gh reject, gy keep) │%< gx reject', 1, true), proposed_status())
  h.keys('gy')
  t.eq(api.nvim_win_get_cursor(0)[1], 5, 'gy keeps it and goes to the next hunk')
  h.keys('gh')
  t.eq(api.nvim_buf_get_lines(0, 4, 5, false), { 'five' }, 'gh took the current text back')
  t.eq(api.nvim_win_get_cursor(0)[1], 9, 'and went to the next hunk')
  t.ok(proposed_status():find('3 hunks, 1 rejected', 1, true), proposed_status())
  t.eq(h.read(ws .. '/list.txt'), LIST, 'nothing written during the review')
  h.keys('ga')
  t.wait(function()
    return h.read(ws .. '/list.txt') == 'one\nTWO\nthree\nfour\nfive\nsix\nseven\neight\nNINE\nten\n'
  end, 'the kept hunks written, not the rejected one')
  t.wait(function()
    return tabs() == 1
  end, 'the diff tab closes')
  h.wait_conversation('Wrote your version of list.txt.')
  t.eq(api.nvim_get_current_win(), win, 'the cursor is back where it was')
end)

t.test('review: every hunk rejected, ga rejects the write; the model is told why', function()
  local ws = h.fresh('review', { files = { ['list.txt'] = LIST }, setup = { requests = { auto_diff = true } } })
  vim.cmd('Agentd shout the list')
  t.wait(function()
    return tabs() == 2
  end, 'the diff tab opens by itself')
  h.keys('ghghgh')
  t.ok(proposed_status():find('3 hunks, 3 rejected', 1, true), proposed_status())
  h.keys('ga')
  h.wait_conversation('Left list.txt as it was.')
  t.eq(h.read(ws .. '/list.txt'), LIST)
  t.ok(h.conversation():find('→ rejected', 1, true), h.conversation())
end)

t.test('review: gd on a change already made (auto-edit) opens the file against its text before; gh takes a hunk back in the buffer, :w keeps the rest', function()
  local ws = h.fresh('review', { files = { ['list.txt'] = LIST }, setup = { approval_policy = 'auto-edit' } })
  vim.cmd('Agentd shout the list')
  h.wait_conversation('Wrote list.txt.')
  h.wait_state('completed')
  t.eq(h.read(ws .. '/list.txt'), 'one\nTWO\nthree\nfour\nFIVE\nsix\nseven\neight\nNINE\nten\n', 'written without asking')
  go_to_transcript_line('↶ c1: M list.txt · gd review · gu undo')
  h.keys('gd')
  t.wait(function()
    return tabs() == 2
  end, 'the review tab')
  local wins = api.nvim_tabpage_list_wins(0)
  local names = {}
  for _, w in ipairs(wins) do
    names[#names + 1] = vim.fn.bufname(api.nvim_win_get_buf(w))
  end
  t.eq(names[1], 'list.txt (before c1)', vim.inspect(names))
  t.eq(api.nvim_win_get_buf(wins[2]), vim.fn.bufnr(ws .. '/list.txt'), 'the file itself on the right')
  t.eq(api.nvim_get_current_win(), wins[2])
  t.eq(api.nvim_win_get_cursor(0)[1], 2, 'on the first hunk')
  h.keys('gh')
  t.eq(api.nvim_buf_get_lines(0, 1, 2, false), { 'two' }, 'the hunk taken back in the buffer')
  t.eq(vim.bo.modified, true)
  t.eq(api.nvim_win_get_cursor(0)[1], 5, 'on to the next hunk')
  vim.cmd('write')
  t.eq(h.read(ws .. '/list.txt'), 'one\ntwo\nthree\nfour\nFIVE\nsix\nseven\neight\nNINE\nten\n')
  h.keys('q')
  t.eq(tabs(), 1, 'q closes the review')
end)

t.test('write: a file that runs later outside any sandbox (.vscode/tasks.json) says so in the request, the diff tab and the files changed', function()
  h.fresh('runslater', { setup = { approval_policy = 'auto-edit' } })
  vim.cmd('Agentd add a build task')
  h.wait_float('.vscode/tasks.json')
  h.wait_float('⚠ runs later, outside any sandbox: VS Code runs its tasks')
  t.ok(h.conversation():find('\n      ⚠ runs later, outside any sandbox: VS Code runs its tasks', 1, true), h.conversation())
  vim.cmd('AgentdPending')
  wait_focus_in_float()
  h.keys('<CR>')
  t.wait(function()
    return tabs() == 2
  end, 'the diff tab')
  local st = api.nvim_win_get_option(api.nvim_tabpage_list_wins(0)[1], 'statusline')
  t.ok(st:find('⚠ runs later outside any sandbox', 1, true), st)
  h.keys('ga')
  h.wait_conversation('Added the task.')
  h.wait_conversation('\n  A .vscode/tasks.json\n    ⚠ runs later, outside any sandbox: VS Code runs its tasks')
end)

t.test('cancel: an open diff tab closes when its request is resolved elsewhere', function()
  local ws = h.fresh('cancel')
  vim.cmd('Agentd cancel the write')
  h.wait_requests(1)
  vim.cmd('AgentdPending')
  wait_focus_in_float()
  h.keys('<CR>')
  t.wait(function()
    return tabs() == 2
  end, 'the diff tab')
  vim.cmd('AgentdCancel')
  t.wait(function()
    return tabs() == 1
  end, 'the diff tab to close on agent/inputResolved')
  h.wait_state('cancelled', 5000)
  t.eq(vim.fn.filereadable(ws .. '/never.txt'), 0, 'never.txt must not exist')
  t.eq(S.requests:count(), 0, 'nothing open')
end)

-- inline edit ----------------------------------------------------------------

local CALC = 'alpha = 1\nbeta = 2\ngamma = 3\ndelta = 4\n'
local INLINE_NS = api.nvim_create_namespace('agentd.inline')

-- What the inline overlay shows: the added lines (virtual lines) and the
-- labels, by buffer line.
local function overlay(buf)
  local added, labels = {}, {}
  for _, m in ipairs(api.nvim_buf_get_extmarks(buf, INLINE_NS, 0, -1, { details = true })) do
    local row, d = m[2] + 1, m[4]
    for _, vl in ipairs(d.virt_lines or {}) do
      added[#added + 1] = row .. ': ' .. vl[1][1]
    end
    for _, vt in ipairs(d.virt_text or {}) do
      labels[row] = vim.trim(vt[1])
    end
  end
  return added, labels
end

t.test("inline: :'<,'>AgentdEdit shows the change in the buffer hunk by hunk; gy keeps, gh rejects, ga writes the kept ones", function()
  local ws = h.fresh('inline', { files = { ['calc.py'] = CALC } })
  vim.cmd('edit ' .. ws .. '/calc.py')
  local buf = api.nvim_get_current_buf()
  local win = api.nvim_get_current_win()
  h.keys('2GVjj:AgentdEdit make them uppercase<CR>')
  t.wait(function()
    return #api.nvim_buf_get_extmarks(buf, INLINE_NS, 0, -1, {}) > 0
  end, 'the change shown in the buffer')
  t.eq(tabs(), 1, 'no diff tab')
  t.eq(h.float_text(), '', 'no float')
  t.eq(require('agentd.chat').wins(), nil, 'the chat did not open')
  t.eq(api.nvim_get_current_win(), win, 'the cursor stayed in the buffer')
  t.eq(api.nvim_buf_get_lines(buf, 0, -1, false), { 'alpha = 1', 'beta = 2', 'gamma = 3', 'delta = 4' }, 'the text is not touched')
  t.eq(vim.bo[buf].modified, false)
  local added, labels = overlay(buf)
  t.eq(added, { '2: BETA = 2', '4: DELTA = 4' })
  t.eq(labels[2], 'agentd: hunk 1/2 · gy keep · gh reject · ga keep the rest and write · gx reject all')
  t.eq(labels[4], 'agentd: hunk 2/2 · gy keep · gh reject')
  t.eq(api.nvim_win_get_cursor(win)[1], 2, 'the cursor on the first hunk')
  h.keys('gy')
  t.eq(api.nvim_win_get_cursor(win)[1], 4, 'gy keeps it and goes to the next')
  h.keys('gh')
  added, labels = overlay(buf)
  t.eq(added, { '2: BETA = 2' }, 'a rejected hunk shows no more')
  t.eq(labels[2], 'agentd: hunk 1/2 kept (gh rejects it) · ga write · gx reject all')
  t.eq(labels[4], 'agentd: hunk 2/2 rejected (gy keeps it) · ga write · gx reject all')
  t.eq(h.read(ws .. '/calc.py'), CALC, 'nothing written before ga')
  h.keys('ga')
  t.wait(function()
    return h.read(ws .. '/calc.py') == 'alpha = 1\nBETA = 2\ngamma = 3\ndelta = 4\n'
  end, 'the kept hunk written, not the rejected one')
  t.wait(function()
    return vim.deep_equal(api.nvim_buf_get_lines(buf, 0, -1, false), { 'alpha = 1', 'BETA = 2', 'gamma = 3', 'delta = 4' })
  end, 'the buffer reloads')
  t.eq(#api.nvim_buf_get_extmarks(buf, INLINE_NS, 0, -1, {}), 0, 'the overlay is gone')
  t.eq(vim.fn.maparg('gy', 'n', false, true).buffer, nil, 'its keys are gone')
  -- the same run and undo as everything else: the change is the session's checkpoint
  local sid = S.runs:get(S.run).session
  local cps
  require('agentd.undo').refresh(sid, function(_, list)
    cps = list
  end)
  t.wait(function()
    return cps
  end, 'agent/checkpoints')
  t.eq(#cps, 1, vim.inspect(cps))
  t.eq(cps[1].files[1].path, 'calc.py')
  t.wait(function()
    return table.concat(h.notes, '\n'):find('run completed', 1, true)
  end, 'the run goes on and completes')
end)

t.test('inline: gx rejects the change; nothing is written and the model is told', function()
  local ws = h.fresh('inline', { files = { ['calc.py'] = CALC } })
  vim.cmd('edit ' .. ws .. '/calc.py')
  local buf = api.nvim_get_current_buf()
  vim.cmd('2,4AgentdEdit make them uppercase')
  t.wait(function()
    return #api.nvim_buf_get_extmarks(buf, INLINE_NS, 0, -1, {}) > 0
  end, 'the change shown in the buffer')
  h.keys('gx')
  t.eq(#api.nvim_buf_get_extmarks(buf, INLINE_NS, 0, -1, {}), 0, 'the overlay is gone')
  local run = S.runs:get(S.run)
  t.wait(function()
    return run.state == 'completed'
  end, 'the run completes')
  t.eq(h.read(ws .. '/calc.py'), CALC)
  local text = table.concat(require('agentd.render').chat({ runs = { run } }, function() end).lines, '\n')
  t.ok(text:find('Left the lines as they were.', 1, true), text)
end)

-- runs ---------------------------------------------------------------------

t.test('mode: :AgentdMode full-auto runs the next command without asking', function()
  local ws = h.fresh('allow')
  vim.cmd('AgentdMode full-auto')
  vim.cmd('Agentd touch a file please')
  h.wait_conversation('Ran it.')
  t.eq(vim.fn.filereadable(ws .. '/ran.txt'), 1, 'ran.txt exists')
  t.eq(S.requests.arrivals, 0, 'nothing was asked')
  t.ok(h.conversation():find('\nmodel fakemodel · mode full-auto · context ', 1, true), 'the chat shows the model, the mode, the context:\n' .. h.conversation())
end)

t.test('command output: streamed into the chat while the command runs', function()
  h.fresh('stream', { setup = { approval_policy = 'full-auto' } })
  vim.cmd('Agentd build it')
  t.wait(function()
    return h.conversation():find('\n    compiling', 1, true)
  end, 'the streamed output line')
  local tool = S.runs:get(S.run).tools['call_b1']
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

t.test('chat: a new conversation (:AgentdChat!) stays new while the previous run goes on', function()
  h.fresh('stream', { setup = { approval_policy = 'full-auto' } })
  vim.cmd('Agentd build it')
  t.wait(function()
    return h.conversation():find('\n    compiling', 1, true)
  end, 'the run streams')
  local old = S.session
  vim.cmd('AgentdChat!')
  t.wait(function()
    return S.runs:get(S.run).state == 'completed'
  end, 'the previous run completed')
  vim.cmd('stopinsert')
  t.eq(S.session, nil, 'the chat did not go back to the running session')
  t.eq(h.conversation():find('Built.', 1, true), nil, h.conversation())
  t.ok(old, 'there was a session')
end)

t.test("selection: :'<,'>Agentd sends the selected lines as context", function()
  local ws = h.fresh('selection', { files = { ['calc.py'] = 'alpha = 1\nbeta = 2\ngamma = 3\n' } })
  vim.cmd('edit ' .. ws .. '/calc.py')
  vim.cmd('normal! 2GVj')
  h.keys(':Agentd explain this<CR>')
  h.wait_conversation('I saw the selection.')
  t.ok(h.conversation():find('with calc.py, lines 2-3', 1, true), 'the context is shown under the prompt')
  h.wait_state('completed')
end)

t.test("selection: :'<,'>Agentd without a prompt opens the chat; the selection goes with what is written there", function()
  local ws = h.fresh('selection', { files = { ['calc.py'] = 'alpha = 1\nbeta = 2\ngamma = 3\n' } })
  vim.cmd('edit ' .. ws .. '/calc.py')
  vim.cmd('normal! 2GVj')
  h.keys(':Agentd<CR>explain this<C-s>')
  h.wait_conversation('I saw the selection.')
  h.wait_state('completed')
end)

t.test('restart: the daemon dies, "the daemon is back" is shown, the dismissed question is offered again', function()
  h.fresh('restart')
  vim.cmd('Agentd survive a restart')
  h.wait_float('Still there?')
  vim.cmd('AgentdPending')
  wait_focus_in_float()
  h.keys('q')
  t.eq(h.float_text(), '', 'dismissed: the float closed')
  t.eq(S.requests:count(), 1, 'the request is still open')
  local old = agentd.status().pid
  uv.kill(old, 'sigkill')
  t.wait(function()
    local s = agentd.status()
    return s.ready and s.pid and s.pid ~= old
  end, 'the daemon restarted', 10000)
  t.wait(function()
    return table.concat(h.notes, '\n'):find('the daemon is back · 1 open request', 1, true)
  end, 'the restart message')
  h.wait_float('Still there?')
  go_to_transcript_line('? Still there?')
  h.keys('<CR>yes<CR>')
  h.wait_conversation('Survived the restart.', 15000)
end)

t.test('restart: a run the daemon\'s crash paused in the middle of a step resumes by itself once the daemon is back', function()
  local _, m = h.fresh('crash')
  vim.cmd('Agentd think slowly')
  t.wait(function()
    return #h.model_requests(m) >= 1
  end, 'the model asked')
  local old = agentd.status().pid
  uv.kill(old, 'sigkill')
  t.wait(function()
    local s = agentd.status()
    return s.ready and s.pid and s.pid ~= old
  end, 'the daemon restarted', 10000)
  h.wait_conversation('Thought it through.', 30000)
  h.wait_state('completed')
  t.ok(#h.model_requests(m) >= 2, 'the step was asked again')
  t.eq(table.concat(h.notes, '\n'):find(':AgentdResume', 1, true), nil, 'nothing to do by hand:\n' .. table.concat(h.notes, '\n'))
end)

t.test('restore: a request open when the editor quits comes back after its restart with its whole conversation', function()
  h.fresh('question')
  vim.cmd('Agentd What is my favourite colour?')
  h.wait_float('Which colour do you like?')
  -- a new "editor": it knows nothing; same workspace and state dir
  local cfg = vim.deepcopy(require('agentd.config').values)
  agentd._reset()
  require('agentd.chat').render_now()
  agentd.setup(cfg)
  h.ui_reset()
  agentd.start()
  h.wait_float('Which colour do you like?')
  require('agentd.chat').open({ focus = 'transcript' })
  h.wait_conversation('## > What is my favourite colour?')
  h.wait_conversation('? Which colour do you like?')
  local conv = h.conversation()
  t.eq(conv:find('not sent from here', 1, true), nil, conv)
  t.ok(conv:find('— waiting for you', 1, true), conv)
  local _, n = conv:gsub('Which colour do you like%?', '')
  t.eq(n, 1, 'the request once, in its place:\n' .. conv)
  go_to_transcript_line('? Which colour do you like?')
  h.keys('<CR>teal<CR>')
  h.wait_conversation('You like teal.')
  h.wait_conversation('— completed')
end)

t.test('chat: a word with an underscore is no Markdown error (syntax on)', function()
  h.fresh('question')
  vim.cmd('syntax on')
  local ok, err = pcall(function()
    agentd.run({ prompt = 'What is my favourite colour?\nin my_colour' })
    h.wait_float('Which colour do you like?')
    require('agentd.chat').open({ focus = 'transcript' })
    h.wait_conversation('## > What is my favourite colour?\n   in my_colour')
    local twin = require('agentd.chat').wins()
    local marked = {}
    vim.api.nvim_win_call(twin, function()
      for i, l in ipairs(require('agentd.chat').lines()) do
        for col in l:gmatch('()_') do
          local name = vim.fn.synIDattr(vim.fn.synID(i, col, 1), 'name')
          if name == 'markdownError' then
            marked[#marked + 1] = l
          end
        end
      end
    end)
    t.eq(marked, {}, 'lines with a markdownError highlight')
  end)
  vim.cmd('syntax off')
  assert(ok, err)
end)

-- sessions, history and settings -------------------------------------------

local HISTORY_FILES = { ['AGENTS.md'] = 'Answer briefly.\n', ['notes.txt'] = 'remember teal\n' }

-- Two runs in one conversation, typed in the chat: the first thinks (and
-- its provider served part of the prompt from its cache), the second reads
-- a file. Returns the transcript as it was shown live, and the session.
local function two_runs()
  h.keys(':AgentdChat<CR>first question<C-s>')
  h.wait_conversation('First answer: teal.')
  h.wait_state('completed')
  h.keys('isecond question<Esc><CR>')
  h.wait_conversation('Second answer: the notes say teal.')
  h.wait_state('completed')
  local live = h.conversation()
  t.ok(live:find('\n▸ Thinking (40 characters): The user wants a colour. Teal fits best.\n', 1, true), live)
  t.ok(live:find('\nInstructions: AGENTS.md\n', 1, true), 'the instruction file, one quiet line per run:\n' .. live)
  local _, n = live:gsub('\nInstructions: ', '')
  t.eq(n, 2, 'one line in each run')
  t.ok(live:find("\n⚠ The model's context window is 15000 tokens", 1, true), 'the notice:\n' .. live)
  t.ok(live:find('tokens (512 cached)', 1, true), 'the cached tokens:\n' .. live)
  t.ok(table.concat(h.notes, '\n'):find("The model's context window is 15000 tokens", 1, true), 'the notice is told too')
  return live, S.session
end

-- The picked session's transcript, then a follow-up sent from the chat
-- that the model answers only if it was given the whole session.
local function follow_up_continues(sid)
  local _, cwin = require('agentd.chat').wins()
  t.ok(cwin, 'the compose window is open')
  -- the picker left the compose window in Insert mode (a real picker's keys
  -- would type there): the text goes in as typed, and is sent as <C-s> does
  api.nvim_buf_set_lines(api.nvim_win_get_buf(cwin), 0, -1, false, { 'third question' })
  require('agentd.chat').send()
  h.wait_conversation('Third answer: I remember the whole session.')
  h.wait_state('completed')
  t.eq(S.session, sid, 'the same session')
  local conv = h.conversation()
  local a = conv:find('## > first question', 1, true)
  local b = conv:find('## > second question', 1, true)
  local c = conv:find('## > third question', 1, true)
  t.ok(a and b and c and a < b and b < c, 'the three runs in order:\n' .. conv)
end

t.test('sessions: a two-run session comes back whole after a daemon restart and goes on', function()
  h.fresh('history', { files = HISTORY_FILES })
  local live, sid = two_runs()
  local old = agentd.status().pid
  uv.kill(old, 'sigkill')
  t.wait(function()
    local s = agentd.status()
    return s.ready and s.pid and s.pid ~= old
  end, 'the daemon restarted', 10000)
  vim.cmd('AgentdChat!')
  t.eq(h.conversation():find('first question', 1, true), nil, 'a new conversation')
  vim.cmd('AgentdSessions')
  local sel = h.wait_select(1, 'the sessions list')
  t.ok(sel.labels[1]:find('^first question  ·  completed  ·  2 runs  ·  '), sel.labels[1])
  h.pick(sel, 'first question')
  h.wait_conversation_equal(live, 'the conversation as it was shown')
  follow_up_continues(sid)
end)

t.test('sessions: after an editor restart, :AgentdSessions brings the whole two-run session back (agent/history)', function()
  h.fresh('history', { files = HISTORY_FILES })
  local live, sid = two_runs()
  -- a new "editor": it knows nothing; same workspace and state dir
  local cfg = vim.deepcopy(require('agentd.config').values)
  agentd._reset()
  require('agentd.chat').render_now()
  agentd.setup(cfg)
  h.ui_reset()
  t.eq(#S.runs.order, 0, 'nothing known')
  local asked = {}
  local lifecycle = require('agentd.lifecycle')
  local request = lifecycle.request
  lifecycle.request = function(method, params, cb)
    asked[#asked + 1] = method
    return request(method, params, cb)
  end
  local ok, err = pcall(function()
    vim.cmd('AgentdSessions')
    local sel = h.wait_select(1, 'the sessions list')
    local label = sel.labels[1]
    t.ok(label:find('^first question  ·  completed  ·  2 runs  ·  '), label)
    t.ok(label:match('just now$') or label:match('min ago$'), 'a readable time: ' .. label)
    t.eq(label:find('%d%d:%d%d:%d%d'), nil, 'no seconds, no nanoseconds: ' .. label)
    h.pick(sel, 'first question')
    h.wait_conversation_equal(live, 'the conversation as it was shown live')
  end)
  lifecycle.request = request
  assert(ok, err)
  t.eq(vim.tbl_filter(function(m)
    return m == 'agent/history' or m == 'agent/events'
  end, asked), { 'agent/history' }, 'one request brings it back')
  t.eq(S.session, sid)
  -- the reasoning unfolds and folds with <CR> on its line
  go_to_transcript_line('▸ Thinking')
  h.keys('<CR>')
  h.wait_conversation('▾ Thinking (40 characters; <CR> folds)\n  The user wants a colour.\n  Teal fits best.\n')
  h.keys('<CR>')
  h.wait_conversation('▸ Thinking (40 characters): The user wants a colour. Teal fits best.')
  follow_up_continues(sid)
end)

t.test('sessions: a long session comes back page by page; a run the page left without its events fetches them', function()
  h.fresh('long')
  vim.cmd('Agentd run one')
  h.wait_conversation('Answer one.')
  h.wait_state('completed')
  -- a prompt that quotes a big file: over the daemon's page budget alone
  local lines = { 'BIG PROMPT' }
  for i = 1, 3000 do
    lines[#lines + 1] = ('%04d %s'):format(i, string.rep('x', 100))
  end
  agentd.run({ prompt = table.concat(lines, '\n') })
  h.wait_conversation('Answer two.', 20000)
  h.wait_state('completed')
  vim.cmd('Agentd run three')
  h.wait_conversation('Answer three.')
  h.wait_state('completed')
  local live = h.conversation()
  t.ok(live:find('## > BIG PROMPT\n   0001 x', 1, true), live:sub(1, 2000))
  t.ok(live:find('   … 2989 more lines (<CR> unfolds)', 1, true), 'the long prompt is folded')
  local cfg = vim.deepcopy(require('agentd.config').values)
  agentd._reset()
  agentd.setup(cfg)
  h.ui_reset()
  local methods = require('agentd.methods')
  local page = methods.EVENTS_PAGE
  methods.EVENTS_PAGE = 2
  local asked = {}
  local lifecycle = require('agentd.lifecycle')
  local request = lifecycle.request
  lifecycle.request = function(method, params, cb)
    asked[#asked + 1] = { method = method, before = type(params) == 'table' and params.beforeRunId or nil,
      after = type(params) == 'table' and params.afterSeq or nil }
    return request(method, params, cb)
  end
  local ok, err = pcall(function()
    vim.cmd('AgentdSessions')
    h.pick(h.wait_select(1, 'the sessions list'), 'run one')
    h.wait_conversation_equal(live, 'the whole conversation', 20000)
  end)
  lifecycle.request = request
  methods.EVENTS_PAGE = page
  assert(ok, err)
  local order = S.runs:of_session(S.session)
  local histories, events = {}, {}
  for _, a in ipairs(asked) do
    if a.method == 'agent/history' then
      histories[#histories + 1] = a.before or 'latest'
    elseif a.method == 'agent/events' then
      events[#events + 1] = a.after
    end
  end
  t.eq(histories, { 'latest', order[3].id, order[2].id }, 'three pages: the latest, then the earlier ones')
  t.ok(#events >= 2 and events[1] == 0 and events[2] == 2, 'the big run\'s events fetched two at a time: ' .. vim.inspect(events))
end)

t.test('settings: model, effort and mode changed mid-run are used by its next step and kept by the daemon', function()
  local ws, m = h.fresh('model')
  vim.cmd('Agentd switch models')
  h.wait_requests(1)
  t.ok(h.chat_status():find('waiting for you · 1 open request · fakemodel · ask', 1, true), h.chat_status())
  -- the names come from the endpoint, through agent/models
  t.eq(vim.fn.getcompletion('AgentdModel ', 'cmdline'), { 'default', 'fakemodel', 'bigmodel' })
  t.eq(vim.fn.getcompletion('AgentdModel b', 'cmdline'), { 'bigmodel' })
  t.eq(vim.fn.getcompletion('AgentdEffort ', 'cmdline'), { 'default', 'low', 'medium', 'high' })
  t.eq(vim.fn.getcompletion('AgentdMode f', 'cmdline'), { 'full-auto' })
  vim.cmd('AgentdModel')
  local sel = h.wait_select(1, 'the model picker')
  t.eq(sel.labels, { 'default (fakemodel)', 'fakemodel  ✓', 'bigmodel' })
  h.pick(sel, 'bigmodel')
  t.wait(function()
    return table.concat(h.notes, '\n'):find('model bigmodel for this conversation (the run going on takes it from its next step)', 1, true)
  end, 'the change is told')
  vim.cmd('AgentdEffort high')
  h.keys(':AgentdMode full-auto<CR>')
  t.wait(function()
    return h.chat_status():find('bigmodel (high) · full-auto', 1, true)
  end, 'the status line shows the new settings')
  h.wait_conversation('\nmodel bigmodel · effort high · mode full-auto')
  -- the answer lets the run go on: its next model call and tool call use them
  local q = S.requests:list()[1].req.requestId
  require('agentd.pump').reply(q, { text = 'go' })
  h.wait_conversation('Switched and ran.')
  h.wait_state('completed')
  t.eq(vim.fn.filereadable(ws .. '/switched.txt'), 1, 'full-auto ran the command')
  t.eq(S.requests.arrivals, 1, 'without asking')
  local reqs = h.model_requests(m)
  t.eq(#reqs, 3)
  t.eq({ reqs[1].model, reqs[1].reasoningEffort }, { 'fakemodel', nil }, 'the first step')
  t.eq({ reqs[2].model, reqs[2].reasoningEffort }, { 'bigmodel', 'high' }, 'the step after the switch')
  t.eq({ reqs[3].model, reqs[3].reasoningEffort }, { 'bigmodel', 'high' })
  vim.cmd('Agentd and again')
  h.wait_conversation('Still on the big model.')
  h.wait_state('completed')
  t.eq(h.model_requests(m)[4].model, 'bigmodel', 'the next run of the session')
  -- an editor restart: the daemon kept them, not the plugin
  local sid = S.session
  local cfg = vim.deepcopy(require('agentd.config').values)
  agentd._reset()
  agentd.setup(cfg)
  h.ui_reset()
  vim.cmd('AgentdSessions')
  h.pick(h.wait_select(1, 'the sessions list'), 'switch models')
  h.wait_conversation('Still on the big model.')
  t.eq(S.session, sid)
  h.wait_conversation('\nmodel bigmodel · effort high · mode full-auto')
  t.ok(h.chat_status():find('bigmodel (high) · full-auto', 1, true), h.chat_status())
  vim.cmd('AgentdModel default')
  h.wait_conversation('\nmodel fakemodel · effort high · mode full-auto')
  -- a new conversation starts with what is chosen for it
  vim.cmd('AgentdChat!')
  vim.cmd('AgentdModel bigmodel')
  vim.cmd('AgentdEffort low')
  h.wait_conversation('\nmodel bigmodel · effort low · mode default')
  t.ok(h.chat_status():find('new · bigmodel (low) · default mode', 1, true), h.chat_status())
  vim.cmd('Agentd a new conversation')
  h.wait_conversation('New one started.')
  t.ok(S.session ~= sid, 'a new session')
  local last = h.model_requests(m)[5]
  t.eq({ last.model, last.reasoningEffort }, { 'bigmodel', 'low' }, 'agent/run carried them')
  h.wait_conversation('\nmodel bigmodel · effort low · mode ask')
end)

t.test('persistence: a run whose state cannot be saved pauses with the reason; R resumes it once it can', function()
  local ws, m, state = h.fresh('pause', { files = { ['a.txt'] = 'alpha\n', ['b.txt'] = 'beta\n' },
    setup = { approval_policy = 'full-auto' } })
  vim.cmd('Agentd read the notes')
  t.wait(function()
    return #h.model_requests(m) >= 2
  end, 'the slow step\'s model call')
  local thaw, why = h.freeze(state)
  if not thaw then
    t.log('     SKIP: ' .. why)
    return
  end
  h.wait_state('paused', 10000)
  h.wait_conversation('\n  state not saved: ')
  local conv = h.conversation()
  t.ok(conv:find('\n— paused · ', 1, true), conv)
  t.ok(conv:find('operation not permitted', 1, true), 'the cause:\n' .. conv)
  t.ok(conv:find(state, 1, true), 'the file:\n' .. conv)
  t.ok(conv:find('\n  R resumes it (:AgentdResume)\n', 1, true), 'the key:\n' .. conv)
  t.ok(table.concat(h.notes, '\n'):find('run paused: its state could not be saved', 1, true), 'told')
  t.eq(conv:find('Read both.', 1, true), nil)
  thaw()
  go_to_transcript_line('— paused')
  h.keys('R')
  h.wait_conversation('Read both.', 15000)
  h.wait_state('completed')
  t.eq(vim.fn.filereadable(ws .. '/b.txt'), 1)
end)

t.test('persistence: an answer the daemon cannot save is refused and its request stays open', function()
  local _, _, state = h.fresh('question')
  vim.cmd('Agentd What is my favourite colour?')
  h.wait_requests(1)
  local thaw, why = h.freeze(state)
  if not thaw then
    t.log('     SKIP: ' .. why)
    return
  end
  local id = S.requests:list()[1].req.requestId
  require('agentd.pump').reply(id, { text = 'teal' })
  t.wait(function()
    return table.concat(h.notes, '\n'):find('could not save your answer, so the request stays open', 1, true)
  end, 'the refusal is told')
  h.wait_requests(1, 'the request is open again')
  h.wait_float('Which colour do you like?')
  thaw()
  require('agentd.pump').reply(id, { text = 'teal' })
  h.wait_conversation('You like teal.')
  h.wait_state('completed')
end)

-- undo and rewind ----------------------------------------------------------

local UNDO_FILES = { ['main.go'] = 'package main\n\nvar v = "old"\n', ['notes.txt'] = 'remove me\n' }

local function restore_text()
  return require('agentd.restore').text()
end

local function wait_restore(text, msg)
  t.wait(function()
    return restore_text():find(text, 1, true)
  end, msg or ('the restore preview to show "' .. text .. '"'))
end

-- A run of the undo script whose command edits main.go, deletes notes.txt
-- and creates made.txt, in full-auto (no question).
local function tidy(ws)
  vim.cmd('Agentd tidy the project')
  h.wait_conversation('Tidied.')
  h.wait_state('completed')
  t.eq(h.read(ws .. '/main.go'), 'package main\n\nvar v = "new"\n')
  t.eq(h.read(ws .. '/notes.txt'), nil, 'notes.txt deleted')
  t.eq(h.read(ws .. '/made.txt'), 'fresh\n')
end

t.test('undo: a command that edited, deleted and created files is restored from the chat (gu, a preview, ga); its buffer reloads', function()
  local ws = h.fresh('undo', { files = UNDO_FILES, setup = { approval_policy = 'full-auto' } })
  vim.cmd('edit ' .. ws .. '/main.go')
  local buf = api.nvim_get_current_buf()
  tidy(ws)
  t.wait(function()
    return api.nvim_buf_get_lines(buf, 0, -1, false)[3] == 'var v = "new"'
  end, 'the buffer reloaded after the command')
  local conv = h.conversation()
  local change = conv:match('\n(  ↶ c1: [^\n]*)\n')
  t.ok(change, 'the change has its line:\n' .. conv)
  for _, part in ipairs({ 'M main.go', 'D notes.txt', 'A made.txt', ' · gd review · gu undo' }) do
    t.ok(change:find(part, 1, true), part .. ' in ' .. change)
  end
  t.ok(conv:find('\n  gU undo this turn · gW rewind to before it\n', 1, true), 'the turn says how to take it back:\n' .. conv)
  go_to_transcript_line('↶ c1')
  h.keys('gu')
  wait_restore('Files to restore (3):')
  local text = restore_text()
  t.ok(text:find('Undo c1 and every later change', 1, true), text)
  t.ok(text:find('Keys: ga restore · q cancel', 1, true), text)
  t.ok(text:find('  M main.go is restored', 1, true), text)
  t.ok(text:find('  A notes.txt comes back', 1, true), text)
  t.ok(text:find('  D made.txt is removed', 1, true), text)
  t.ok(text:find('\n-var v = "new"\n+var v = "old"\n', 1, true), 'the diff:\n' .. text)
  t.eq(tabs(), 2, 'the preview is a tab')
  t.eq(h.read(ws .. '/main.go'), 'package main\n\nvar v = "new"\n', 'the preview wrote nothing')
  h.keys('ga')
  t.wait(function()
    return tabs() == 1
  end, 'the preview closes')
  t.wait(function()
    return h.read(ws .. '/main.go') == UNDO_FILES['main.go']
  end, 'main.go restored')
  t.eq(h.read(ws .. '/notes.txt'), 'remove me\n', 'notes.txt is back')
  t.eq(h.read(ws .. '/made.txt'), nil, 'made.txt is gone')
  t.wait(function()
    return api.nvim_buf_get_lines(buf, 0, -1, false)[3] == 'var v = "old"'
  end, 'the buffer of main.go reloaded')
  t.eq(vim.bo[buf].modified, false)
  t.wait(function()
    return table.concat(h.notes, '\n'):find('Undo c1 and every later change: 3 files restored (:AgentdUndo c2 takes it back)', 1, true)
  end, 'the undo is told, with its own checkpoint')
  h.wait_conversation('  ↶ c1 (undone by c2): ')
  -- the undo is undone: the command's changes come back
  vim.cmd('AgentdUndo c2')
  wait_restore('Undo c2 and every later change')
  h.keys('ga')
  t.wait(function()
    return h.read(ws .. '/made.txt') == 'fresh\n'
  end, 'the redo brings made.txt back')
  t.wait(function()
    return api.nvim_buf_get_lines(buf, 0, -1, false)[3] == 'var v = "new"'
  end, 'the buffer reloaded again')
end)

t.test('undo: a file changed since is a conflict shown with its diff; q writes nothing, gs skips it and restores the rest', function()
  local ws = h.fresh('undo', { files = UNDO_FILES, setup = { approval_policy = 'full-auto' } })
  tidy(ws)
  -- the user edits main.go after the agent's command
  vim.cmd('tabnew ' .. ws .. '/main.go')
  api.nvim_buf_set_lines(0, 0, 1, false, { 'package main // mine' })
  vim.cmd('silent write')
  vim.cmd('tabclose')
  go_to_transcript_line('— completed')
  h.keys('gU')
  wait_restore('Conflicts (1): changed since, not written unless you say so')
  local text = restore_text()
  t.ok(text:find('Undo the turn "tidy the project"', 1, true), text)
  t.ok(text:find('! main.go: it was changed after the checkpoint', 1, true), text)
  t.ok(text:find('\n-package main // mine\n+package main\n', 1, true), 'the conflict\'s diff:\n' .. text)
  t.ok(text:find('Keys: gs leave the changed files, restore the rest · gO restore the changed files too · q cancel', 1, true), text)
  t.ok(text:find('Files to restore (2):', 1, true), 'the rest:\n' .. text)
  t.eq(tabs(), 2)
  h.keys('q')
  t.wait(function()
    return tabs() == 1
  end, 'q closes the preview')
  t.eq(h.read(ws .. '/made.txt'), 'fresh\n', 'nothing was written')
  go_to_transcript_line('— completed')
  h.keys('gU')
  wait_restore('Conflicts (1)')
  h.keys('gs')
  t.wait(function()
    return h.read(ws .. '/notes.txt') == 'remove me\n'
  end, 'the rest is restored')
  t.eq(h.read(ws .. '/made.txt'), nil)
  t.eq(h.read(ws .. '/main.go'), 'package main // mine\n\nvar v = "new"\n', 'the user\'s edit is kept')
  t.wait(function()
    return table.concat(h.notes, '\n'):find('2 files restored, 1 left as it is', 1, true)
  end, 'the skip is told')
end)

t.test('rewind: two runs back from :AgentdRewind 2; the cut runs are marked, the next prompt continues from the first, an editor restart keeps the marks', function()
  local ws, m = h.fresh('undo', { setup = { approval_policy = 'full-auto' } })
  for _, step in ipairs({ 'one', 'two', 'three' }) do
    vim.cmd('Agentd step ' .. step)
    h.wait_conversation(step:sub(1, 1):upper() .. step:sub(2) .. '.')
    h.wait_state('completed')
  end
  t.eq(h.read(ws .. '/f.txt'), 'one\ntwo\nthree\n')
  vim.cmd('AgentdRewind 2')
  wait_restore('Rewind to before "step two"')
  local text = restore_text()
  t.ok(text:find('The conversation goes back to before "step two": 2 runs cut ("step two", "step three")', 1, true), text)
  t.ok(text:find('Files to restore (2):', 1, true), text)
  t.ok(text:find('Keys: ga rewind and restore · gC rewind the conversation only, keep the files · q cancel', 1, true), text)
  t.eq(h.read(ws .. '/f.txt'), 'one\ntwo\nthree\n', 'the preview wrote nothing')
  h.keys('ga')
  t.wait(function()
    return h.read(ws .. '/f.txt') == 'one\n'
  end, 'f.txt back to the first run')
  t.eq(h.read(ws .. '/g.txt'), nil, 'g.txt is gone')
  h.wait_conversation('## > step two  (rewound)')
  h.wait_conversation('## > step three  (rewound)')
  local conv = h.conversation()
  local _, cut = conv:gsub('\n  ↶ rewound: cut from the conversation; the next prompt continues from before it\n', '')
  t.eq(cut, 2, conv)
  t.eq(conv:find('## > step one  (rewound)', 1, true), nil)
  -- the user reads higher up in the transcript, then sends a prompt: the
  -- transcript follows to it
  local chat = require('agentd.chat')
  chat.open({ focus = 'transcript' })
  local twin = chat.wins()
  vim.api.nvim_win_set_cursor(twin, { 1, 0 })
  vim.cmd('Agentd step four')
  h.wait_conversation('Four, after one.')
  t.wait(function()
    return vim.api.nvim_win_get_cursor(twin)[1] == vim.api.nvim_buf_line_count(vim.api.nvim_win_get_buf(twin))
  end, 'the transcript follows the prompt just sent')
  h.wait_state('completed')
  local reqs = h.model_requests(m)
  local users = {}
  for _, msg in ipairs(reqs[#reqs].messages) do
    if msg.role == 'user' then
      users[#users + 1] = msg.content
    end
  end
  t.eq(#users, 2, vim.inspect(users))
  t.ok(users[1]:find('step one', 1, true) and users[2]:find('step four', 1, true), vim.inspect(users))
  -- a new editor brings the conversation back with its marks
  local live = h.conversation()
  local cfg = vim.deepcopy(require('agentd.config').values)
  agentd._reset()
  agentd.setup(cfg)
  h.ui_reset()
  vim.cmd('AgentdSessions')
  h.pick(h.wait_select(1, 'the sessions list'), 'step one')
  h.wait_conversation('Four, after one.')
  h.wait_conversation('## > step three  (rewound)')
  t.wait(function()
    return h.conversation() == live
  end, 'the same transcript after the restart')
end)

-- custom commands -----------------------------------------------------------

local COMMAND_FILES = {
  ['cart.go'] = 'package cart\n',
  ['.agentd/commands/review.md'] = '---\ndescription: Review a file\nargument-hint: <file>\n---\nReview $ARGUMENTS carefully and say REVIEWED.\n',
  ['.agentd/commands/deploy.md'] = '---\ndescription: Deploy to staging\n---\nDeploy to staging.\n',
  ['.agentd/commands/release.md'] = '---\ndescription: Release\nRelease it.\n',
}

local function user_config(files)
  local dir = h.tmp .. '/config' .. tostring(vim.loop.hrtime())
  for path, text in pairs(files) do
    h.write(dir .. '/agentd/' .. path, text)
  end
  return dir
end

t.test('commands: / in the compose window completes the custom commands (not the shadowed or broken ones); the expansion reaches the model', function()
  local cfg = user_config({ ['commands/deploy.md'] = '---\ndescription: My deploy\n---\nDeploy mine.\n' })
  local _, m = h.fresh('commands', { files = COMMAND_FILES, setup = { env = { XDG_CONFIG_HOME = cfg } } })
  local completeopt = vim.o.completeopt
  agentd.start()
  t.wait(function()
    return S.ready
  end, 'the daemon ready')
  h.keys(':AgentdChat<CR><Esc>')
  t.wait(function()
    return S.commands ~= nil
  end, 'the commands listed when the compose window is entered')
  _G.agentd_test_menu = nil
  h.keys('i/<Cmd>lua _G.agentd_test_menu = { vim.fn.pumvisible(), vim.fn.complete_info({ "items" }).items }<CR>'
    .. 're<Cmd>lua _G.agentd_test_narrowed = vim.fn.complete_info({ "items", "selected" })<CR><C-y>cart.go<C-s>')
  local menu = _G.agentd_test_menu
  t.ok(menu, 'the menu was looked at')
  t.eq(menu[1], 1, 'the menu opened after /')
  local words = {}
  for _, it in ipairs(menu[2]) do
    words[#words + 1] = { it.word, it.abbr, it.menu, it.kind }
  end
  t.eq(words, { { '/deploy ', '/deploy', 'My deploy', 'user' }, { '/review ', '/review <file>', 'Review a file', 'workspace' },
    { '/file ', '/file', 'pick a file to attach', 'agentd' }, { '/buffer ', '/buffer', 'pick an open buffer to attach', 'agentd' },
    { '/diff ', '/diff', 'attach the uncommitted changes (#diff)', 'agentd' } },
    'the runnable commands, the user\'s deploy winning, then the context pickers')
  h.wait_conversation('Reviewed cart.go as the command asked.')
  h.wait_state('completed')
  t.ok(h.conversation():find('## > /review cart.go', 1, true), 'the prompt as typed')
  local reqs = h.model_requests(m)
  local last
  for _, msg in ipairs(reqs[#reqs].messages) do
    if msg.role == 'user' then
      last = msg.content
    end
  end
  t.ok(last:find('Review cart.go carefully and say REVIEWED.', 1, true), 'the model read the expansion: ' .. tostring(last))
  -- omnifunc: <C-x><C-o> in the first word
  h.keys('i/de<C-x><C-o><Cmd>lua _G.agentd_test_omni = vim.fn.complete_info({ "items" }).items<CR><C-e><Esc>')
  local omni = {}
  for _, it in ipairs(_G.agentd_test_omni or {}) do
    omni[#omni + 1] = it.word
  end
  t.eq(omni, { '/deploy ' }, 'omnifunc narrows to the name typed')
  t.eq(vim.o.completeopt, completeopt, "'completeopt' is the user's again out of Insert mode")
  -- :AgentdCommands lists them all, with why some cannot run
  vim.cmd('AgentdCommands')
  local sel = h.wait_select(1, 'the commands list')
  local labels = table.concat(sel.labels, '\n')
  t.ok(labels:find('/deploy  ·  My deploy  ·  user', 1, true), labels)
  t.ok(labels:find('/deploy  ·  Deploy to staging  ·  workspace  ·  shadowed: your own /deploy runs instead', 1, true), labels)
  t.ok(labels:find('/release  ·  workspace  ·  broken: the front matter has no closing --- line', 1, true), labels)
  t.ok(labels:find('/review <file>  ·  Review a file  ·  workspace', 1, true), labels)
  t.ok(sel.opts.prompt:find('.agentd/commands', 1, true), sel.opts.prompt)
  h.pick(sel, 'My deploy')
  local _, cwin = require('agentd.chat').wins()
  t.wait(function()
    return api.nvim_buf_get_lines(api.nvim_win_get_buf(cwin), 0, -1, false)[1] == '/deploy '
  end, 'the command goes into the compose window')
  require('agentd.chat').send()
  h.wait_conversation('Deployed with your own command.')
end)

-- context ------------------------------------------------------------------

-- The items of the completion menu, as typed so far (Insert mode).
local function menu_words()
  local out = {}
  for _, it in ipairs(vim.fn.complete_info({ 'items' }).items) do
    out[#out + 1] = it.word
  end
  return out
end

t.test('context: @file, #buffer (its unsaved text), #diff and /file complete in the compose window and reach the model', function()
  local ws, m = h.fresh('context', { files = { ['src/cart.go'] = 'package cart\n', ['notes.txt'] = 'remember teal\n',
    ['README.md'] = '# shop\n' } })
  vim.fn.system({ 'git', '-C', ws, 'init', '-q' })
  vim.fn.system({ 'git', '-C', ws, '-c', 'user.name=t', '-c', 'user.email=t@t', 'add', '.' })
  vim.fn.system({ 'git', '-C', ws, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'first' })
  h.write(ws .. '/src/cart.go', 'package cart\n\nfunc Sum() int { return 0 }\n')
  vim.cmd('edit ' .. ws .. '/notes.txt')
  h.keys('Aand blue<Esc>') -- unsaved
  h.keys(':AgentdChat<CR><Esc>')
  _G.agentd_menus = {}
  -- typed keys arrive here in one stretch, so Neovim fires no TextChangedP
  -- between them: it is fired as a terminal's keys would (the tmux test
  -- types them one by one)
  local function look(name)
    return "<Cmd>doautocmd <nomodeline> TextChangedP<CR>" .. ("<Cmd>lua _G.agentd_menus['%s'] = { vim.fn.pumvisible(), (function() local w = {} for _, it in ipairs(vim.fn.complete_info({ 'items' }).items) do w[#w + 1] = it.word end return w end)() }<CR>"):format(name)
  end
  h.keys('ireview @' .. look('at') .. 'car' .. look('car') .. '<C-y>with #' .. look('hash') .. 'di' .. look('di')
    .. '<C-y>and #not' .. look('not') .. '<C-y><Esc>')
  local menus = _G.agentd_menus
  t.eq(menus.at[1], 1, '@ opens the menu')
  t.ok(vim.tbl_contains(menus.at[2], '@src/cart.go ') and vim.tbl_contains(menus.at[2], '@README.md '), vim.inspect(menus.at))
  t.eq(menus.car[2], { '@src/cart.go ' }, 'narrowed by the file name, not only its path\'s start')
  t.eq(menus.hash[2][1], '#diff ', vim.inspect(menus.hash))
  t.ok(vim.tbl_contains(menus.hash[2], '#notes.txt '), vim.inspect(menus.hash))
  t.eq(menus.di[2], { '#diff ' })
  t.eq(menus['not'][2], { '#notes.txt ' })
  local _, cwin = require('agentd.chat').wins()
  local cbuf = api.nvim_win_get_buf(cwin)
  t.eq(api.nvim_buf_get_lines(cbuf, 0, -1, false), { 'review @src/cart.go with #diff and #notes.txt ' })
  -- /file: a picker, whose choice becomes @path
  h.keys('A/fi' .. look('slash') .. '<C-y>')
  t.eq(menus.slash[2], { '/file ' })
  local sel = h.wait_select(1, 'the file picker')
  t.ok(vim.tbl_contains(sel.labels, 'README.md'), vim.inspect(sel.labels))
  h.pick(sel, 'README.md')
  t.wait(function()
    return api.nvim_buf_get_lines(cbuf, 0, -1, false)[1] == 'review @src/cart.go with #diff and #notes.txt @README.md '
  end, 'the picked file in the prompt: ' .. vim.inspect(api.nvim_buf_get_lines(cbuf, 0, -1, false)))
  vim.cmd('stopinsert')
  require('agentd.chat').send()
  h.wait_conversation('Reviewed what you pointed at.')
  t.ok(h.conversation():find('\n   with src/cart.go; README.md; git diff; notes.txt (unsaved)\n', 1, true), h.conversation())
  local reqs = h.model_requests(m)
  local last
  for _, msg in ipairs(reqs[#reqs].messages) do
    if msg.role == 'user' then
      last = msg.content
    end
  end
  t.ok(last:find('Files the user points at: notes.txt, src/cart.go, README.md', 1, true), last)
  t.ok(last:find('Attached by the user, git diff:\n```\ndiff --git a/src/cart.go b/src/cart.go', 1, true), last)
  t.ok(last:find('+func Sum() int { return 0 }', 1, true), last)
  t.ok(last:find('Attached by the user, notes.txt (unsaved):\n```\nremember tealand blue\n```', 1, true), last)
end)

-- images ---------------------------------------------------------------------

-- A 12×8 PNG, red (decimal escapes: 0.7.2 has no vim.base64).
local PNG = '\137\80\78\71\13\10\26\10\0\0\0\13\73\72\68\82\0\0\0\12\0\0\0\8\8\2\0\0\0\66\134\137\166\0\0\0\17\73\68\65\84\120\156\99\56\97\100\68\16\49\140\42\2\0\71\55\112\129\21\150\79\161\0\0\0\0\73\69\78\68\174\66\96\130'

t.test('images: @shot.png in a prompt and a pasted image (:AgentdPaste) go to the model; the chat shows each under the prompt', function()
  local ws, m = h.fresh('images', { setup = { env = { AGENTD_MODEL_IMAGES = 'on' } } })
  h.write(ws .. '/shot.png', PNG)
  local clip = h.tmp .. '/clipboard.png'
  h.write(clip, PNG)
  require('agentd.config').values.images.paste = { 'cat', clip }
  vim.cmd('AgentdPaste')
  t.ok(table.concat(h.notes, '\n'):find('a pasted image goes with the next prompt (1 in all)', 1, true), table.concat(h.notes, '\n'))
  h.keys(':AgentdChat<CR><Esc>')
  t.ok(h.compose_status():find('1 pasted image', 1, true), h.compose_status())
  h.keys('iwhat is in the picture @shot.png<Esc>')
  require('agentd.chat').send()
  h.wait_conversation('A small red picture.')
  h.wait_conversation('\n   [image shot.png · PNG 12×8, ')
  h.wait_conversation('\n   [image clipboard.png · PNG 12×8, ')
  t.eq(S.draft_images, nil, 'the pasted image went with it')
  local reqs = h.model_requests(m)
  local parts = 0
  for _, msg in ipairs(reqs[#reqs].messages) do
    if msg.role == 'user' and type(msg.images) == 'table' then
      parts = parts + #msg.images -- the image_url parts, as the scripted model records them
    end
  end
  t.eq(parts, 2, 'two pictures in the model request: ' .. vim.inspect(reqs[#reqs].messages))
end)

t.test('images: a pasted image goes with a steer (agent/steer images); the chat shows it under the steer', function()
  local _, m = h.fresh('steerimage', { setup = { approval_policy = 'full-auto', env = { AGENTD_MODEL_IMAGES = 'on' } } })
  h.keys(':AgentdChat<CR>build it<C-s>')
  t.wait(function()
    local r = S.run and S.runs:get(S.run)
    return r and r.tools.call_b and r.tools.call_b.status == 'in_progress'
  end, 'the command runs')
  local clip = h.tmp .. '/clipboard.png'
  h.write(clip, PNG)
  require('agentd.config').values.images.paste = { 'cat', clip }
  vim.cmd('AgentdPaste')
  t.wait(function()
    return h.compose_status():find('1 pasted image', 1, true)
  end, 'the compose window says an image goes with the words')
  local _, cwin = require('agentd.chat').wins()
  api.nvim_set_current_win(cwin)
  api.nvim_buf_set_lines(api.nvim_win_get_buf(cwin), 0, -1, false, { 'look at this one' })
  h.keys('<C-s>')
  h.wait_conversation('» you: look at this one\n   [image clipboard.png · PNG 12×8, ')
  t.wait(function()
    return S.draft_images == nil and not h.compose_status():find('pasted image', 1, true)
  end, 'the pasted image went with the steer: the compose window no longer counts it')
  h.wait_conversation('I see the red picture.', 20000)
  t.eq(#S.runs:of_session(S.session), 1, 'a steer, not a new run')
  local reqs = h.model_requests(m)
  local last = reqs[#reqs].messages[#reqs[#reqs].messages]
  t.ok(last.role == 'user' and type(last.images) == 'table' and #last.images == 1,
    'the steer\'s words and picture in the model request: ' .. vim.inspect(last))
end)

-- MCP ------------------------------------------------------------------------

t.test('mcp: :AgentdMcp shows each server: connected with its tools, failed with why, starting; :checkhealth too', function()
  local server = h.bin .. '/mcpserver'
  t.ok(vim.fn.executable(server) == 1, server .. ' is built by run.sh')
  local cfg = user_config({ ['config.json'] = vim.json.encode({ mcpServers = {
    test = { command = server },
    broken = { command = server, args = { '-fail', 'no database at notes.sqlite' } },
    slow = { command = server, args = { '-start-delay', '60s' } },
  } }) })
  h.fresh('question', { setup = { env = { XDG_CONFIG_HOME = cfg } } })
  agentd.start()
  t.wait(function()
    return S.ready
  end, 'the daemon ready')
  vim.cmd('AgentdMcp')
  local mcp = require('agentd.mcp')
  t.wait(function()
    local text = mcp.text()
    return text:find('● test  connected · %d+ tools') and text:find('✗ broken  failed', 1, true)
  end, 'the connected and the failed server', 20000)
  local text = mcp.text()
  t.ok(text:find('◌ slow  starting…', 1, true), text)
  t.ok(text:find('✗ broken  failed: [^\n]*no database at notes%.sqlite'), text)
  t.ok(text:find('\n    echo — ', 1, true), 'the tools, one a line:\n' .. text)
  t.ok(text:find('(server says: read-only', 1, true), 'what the server claims:\n' .. text)
  t.ok(text:find('  user · stdio · ' .. server .. ' · sandbox read, no network', 1, true), text)
  t.eq(api.nvim_win_get_config(0).relative, 'editor', 'the cursor is in the float')
  h.keys('q')
  t.eq(mcp.text(), '', 'q closes it')
  vim.cmd('checkhealth agentd')
  local health = table.concat(api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  vim.cmd('bwipeout!')
  t.ok(health:match('OK:? test  connected · %d+ tools'), health)
  t.ok(health:match('ERROR:? broken  failed: [^\n]*no database at notes%.sqlite'), health)
  t.ok(health:match('WARNING:? slow  starting'), health)
  t.ok(health:match('OK:? commands run in the kernel sandbox') or health:match('WARNING:? [^\n]*sandbox'), health)
end)

-- rules, MCP controls, sessions, context ------------------------------------

t.test('rules: an "always" answer shows in :AgentdRules; e edits it, gx revokes it, and the command asks again', function()
  local ws = h.fresh('rules')
  vim.cmd('Agentd touch a file please')
  h.wait_float('touch ran.txt')
  vim.cmd('AgentdPending')
  wait_focus_in_float()
  h.keys('gA')
  h.wait_conversation('Ran it.')
  h.wait_state('completed')
  local rules = require('agentd.rules')
  vim.cmd('AgentdRules')
  t.wait(function()
    return rules.text():find('✓ allow  run_cmd   touch ran.txt', 1, true)
  end, 'the stored rule')
  local text = rules.text()
  t.ok(text:find('Stored by your answers ("always"), for this workspace · ', 1, true), text)
  t.ok(text:find("agentd's own (they protect .git and .agentd)", 1, true), text)
  t.ok(text:find('gx revoke · e edit · gf open its file · r ask again · q close', 1, true), text)
  -- a built-in rule cannot be revoked: it says where it lives
  h.keys('G')
  h.notes = {}
  h.keys('gx')
  t.ok(table.concat(h.notes, '\n'):find('a built-in rule: it lives in agentd itself', 1, true), table.concat(h.notes, '\n'))
  -- edit the stored one
  vim.fn.search('touch ran.txt')
  h.keys('e')
  local input = h.wait_input(1, 'the pattern')
  t.eq(input.opts.default, 'touch ran.txt')
  input.cb('touch *')
  local sel = h.wait_select(1, 'the action')
  t.eq(sel.items, { 'allow', 'ask', 'deny' })
  h.pick(sel, 'allow')
  t.wait(function()
    return rules.text():find('✓ allow  run_cmd   touch *', 1, true)
  end, 'the edited rule')
  -- revoke it: the same command asks again
  vim.fn.search('touch \\*')
  h.keys('gx')
  t.wait(function()
    return not rules.text():find('run_cmd   touch', 1, true)
  end, 'the rule gone')
  h.keys('q')
  t.eq(rules.text(), '')
  vim.fn.delete(ws .. '/ran.txt')
  vim.cmd('Agentd touch a file please')
  h.wait_float('touch ran.txt')
end)

t.test('mcp: on a server in :AgentdMcp, d disables it, e enables it, r restarts it; the view follows mcp/changed', function()
  local server = h.bin .. '/mcpserver'
  local cfg = user_config({ ['config.json'] = vim.json.encode({ mcpServers = { test = { command = server } } }) })
  h.fresh('question', { setup = { env = { XDG_CONFIG_HOME = cfg } } })
  agentd.start()
  t.wait(function()
    return S.ready
  end, 'the daemon ready')
  vim.cmd('AgentdMcp')
  local mcp = require('agentd.mcp')
  t.wait(function()
    return mcp.text():find('● test  connected', 1, true)
  end, 'connected', 20000)
  t.ok(mcp.text():find('on a server: e enable · d disable · r restart  ·  R asks again  ·  q closes', 1, true), mcp.text())
  vim.fn.search('test  connected')
  h.keys('d')
  t.wait(function()
    return mcp.text():find('- test  disabled (e enables it)', 1, true)
  end, 'disabled')
  h.keys('e')
  t.wait(function()
    return mcp.text():find('● test  connected', 1, true)
  end, 'enabled and connected again', 20000)
  h.keys('r')
  t.wait(function()
    return mcp.text():find('started 2 times', 1, true) or mcp.text():find('started 3 times', 1, true)
  end, 'restarted', 20000)
  t.wait(function()
    return mcp.text():find('● test  connected', 1, true)
  end, 'connected after the restart', 20000)
  h.keys('q')
end)

t.test('sessions: found by a word of a prompt, renamed and deleted from the panel (:AgentdSessions!)', function()
  h.fresh('sessions')
  vim.cmd('Agentd! a question on the checkout cart')
  h.wait_conversation('About the cart.')
  h.wait_state('completed')
  local cart = S.session
  vim.cmd('Agentd! why are the flaky tests flaky')
  h.wait_conversation('About the tests.')
  h.wait_state('completed')
  -- search: the picker lists what matches
  vim.cmd('AgentdSessions checkout')
  local sel = h.wait_select(1, 'the matching sessions')
  t.eq(#sel.items, 1, vim.inspect(sel.labels))
  t.ok(sel.labels[1]:find('^a question on the checkout cart'), sel.labels[1])
  sel.cb(nil)
  -- the panel: rename the cart one, delete the other
  local sessions = require('agentd.sessions')
  vim.cmd('AgentdSessions!')
  t.wait(function()
    return sessions.manager_text():find('a question on the checkout cart', 1, true)
  end, 'the panel')
  t.ok(sessions.manager_text():find('<CR> open · r rename · dd delete · / search · a all · q close', 1, true),
    sessions.manager_text())
  vim.fn.search('checkout cart')
  h.keys('r')
  local input = h.wait_input(1, 'the new title')
  input.cb('Cart work')
  t.wait(function()
    return sessions.manager_text():find('Cart work', 1, true)
  end, 'renamed')
  vim.fn.search('flaky tests')
  h.keys('dd')
  sel = h.wait_select(2, 'are you sure')
  t.ok(sel.opts.prompt:find('delete "why are the flaky tests flaky"', 1, true), sel.opts.prompt)
  h.pick(sel, 'Delete it')
  t.wait(function()
    return not sessions.manager_text():find('flaky', 1, true)
  end, 'deleted')
  -- / searches from the panel
  h.keys('/')
  input = h.wait_input(2, 'the search')
  input.cb('nothing like this')
  t.wait(function()
    return sessions.manager_text():find('No session mentions that.', 1, true)
  end, 'nothing found')
  h.keys('a')
  t.wait(function()
    return sessions.manager_text():find('Cart work', 1, true)
  end, 'all again')
  vim.fn.search('Cart work')
  h.keys('<CR>')
  t.wait(function()
    return S.session == cart
  end, 'opened in the chat')
  h.wait_conversation('About the cart.')
  t.ok(h.conversation():find('# agentd · Cart work', 1, true), h.conversation())
end)

t.test('context: the chat\'s status line shows how full the context window is; :AgentdCompact summarizes older turns', function()
  h.fresh('sessions')
  vim.cmd('Agentd a question on the checkout cart')
  h.wait_conversation('About the cart.')
  h.wait_state('completed')
  t.wait(function()
    return h.chat_status():find('%d+%%%% context')
  end, 'the meter: ' .. h.chat_status())
  vim.cmd('Agentd tell me more')
  h.wait_conversation('Here is more about it')
  h.wait_state('completed')
  local before = S.session_info(S.session).context.used
  h.notes = {}
  vim.cmd('AgentdCompact')
  t.wait(function()
    return table.concat(h.notes, '\n'):find('compacted: %d+ older messages? summarized')
  end, 'said: ' .. table.concat(h.notes, '\n'))
  h.wait_conversation('⇣ compacted: ')
  t.wait(function()
    return S.session_info(S.session).context.used < before
  end, 'the meter dropped')
  h.wait_conversation(' · compacted\n')
end)

-- language intelligence ------------------------------------------------------

local MAIN_C = 'int total(int a, int b) {\n  return a + b;\n}\n\nint main(void) {\n  return total(1, 2);\n}\n'

-- clangd for C files, attached as a user's configuration would (0.7.2 has
-- no vim.lsp.start: start_client and buf_attach_client).
local function clangd(ws)
  vim.cmd('filetype on')
  local id
  api.nvim_create_autocmd('FileType', {
    group = api.nvim_create_augroup('agentd-test-clangd', { clear = true }),
    pattern = 'c',
    callback = function(a)
      id = id or vim.lsp.start_client({ name = 'clangd', cmd = { 'clangd', '--log=error' }, root_dir = ws })
      vim.lsp.buf_attach_client(a.buf, id)
    end,
  })
  return function()
    api.nvim_create_augroup('agentd-test-clangd', { clear = true })
    if id then
      vim.lsp.stop_client(id, true)
    end
  end
end

t.test('language: after an edit, the daemon asks Neovim for diagnostics (clangd, the file loaded hidden); the chat shows them under the edit and <CR> opens one', function()
  if vim.fn.executable('clangd') ~= 1 then
    return t.log('     skipped: no clangd')
  end
  local ws, m = h.fresh('language', { files = { ['main.c'] = MAIN_C }, setup = { approval_policy = 'full-auto',
    env = { AGENTD_DIAGNOSTICS_TIMEOUT = '20s' } } })
  local stop = clangd(ws)
  -- what Neovim answers the daemon's editor/diagnostics (the real exchange, recorded)
  local answers = {}
  local methods = require('agentd.methods')
  local handler = methods.requests['editor/diagnostics']
  methods.requests['editor/diagnostics'] = function(params, respond)
    return handler(params, function(r, e)
      answers[#answers + 1] = { fresh = params.fresh, result = r }
      respond(r, e)
    end)
  end
  local ok, err = pcall(function()
    vim.cmd('Agentd break the build')
    h.wait_conversation('I see the error the editor reports.', 30000)
    h.wait_state('completed')
    local fresh
    for _, a in ipairs(answers) do
      if a.fresh then
        fresh = a.result
      end
    end
    local d = fresh and fresh.items and fresh.items[1] and fresh.items[1].diagnostics or {}
    t.eq(#d, 1, 'Neovim answered the diagnostics after the edit: ' .. vim.inspect(answers))
    t.eq(d[1].message, "Use of undeclared identifier 'two'")
    t.eq(d[1].range.start, { line = 5, character = 18 })
    local conv = h.conversation()
    -- "new" is the daemon's (the file's diagnostics before the edit were not in yet: clangd was starting);
    -- on a loaded machine the daemon may take its own clangd's answer when Neovim's is late
    t.ok(conv:find("\n  ⚑ 1 error %(%d new%) · the editor · <CR> shows them\n")
      or conv:find("\n  ⚑ 1 error %(%d new%) · clangd · <CR> shows them\n"), conv)
    local reqs = h.model_requests(m)
    local saw
    for _, msg in ipairs(reqs[#reqs].messages) do
      if msg.role == 'tool' and msg.content:find('Diagnostics after your edits (the editor)', 1, true) then
        saw = msg.content
      end
    end
    t.ok(saw and saw:find("main.c:6:19: error: Use of undeclared identifier 'two'", 1, true), tostring(saw))
    go_to_transcript_line('⚑ 1 error')
    h.keys('<CR>')
    h.wait_conversation("\n    main.c:6:19: error: Use of undeclared identifier 'two'")
    go_to_transcript_line("main.c:6:19: error")
    h.keys('<CR>')
    t.wait(function()
      return api.nvim_buf_get_name(0):match('main%.c$')
    end, 'main.c opens')
    t.eq(api.nvim_win_get_cursor(0), { 6, 18 }, 'at the line and column of the error')
  end)
  methods.requests['editor/diagnostics'] = handler
  stop()
  assert(ok, err)
end)

t.test('language: go_to_definition is answered by the editor\'s language server (editor/definition)', function()
  if vim.fn.executable('clangd') ~= 1 then
    return t.log('     skipped: no clangd')
  end
  local ws = h.fresh('language', { files = { ['main.c'] = MAIN_C }, setup = { approval_policy = 'full-auto' } })
  local stop = clangd(ws)
  local ok, err = pcall(function()
    vim.cmd('edit ' .. ws .. '/main.c')
    vim.cmd('Agentd where is total defined')
    h.wait_conversation('total is defined on line 1 of main.c.', 30000)
    t.ok(h.conversation():find('● definition of total ✓', 1, true), h.conversation())
  end)
  stop()
  assert(ok, err)
end)

t.test('language: the model reads an open buffer\'s unsaved text (editor/readFile)', function()
  local ws = h.fresh('language', { files = { ['main.c'] = MAIN_C } })
  vim.cmd('edit ' .. ws .. '/main.c')
  h.keys('Go// unsaved note<Esc>')
  t.eq(vim.bo.modified, true)
  vim.cmd('Agentd read my buffer')
  h.wait_conversation('I read your unsaved note.')
  t.eq(h.read(ws .. '/main.c'), MAIN_C, 'the disk was not touched')
end)

-- A one-page web server on loopback: GET / answers page. Returns its URL
-- and a function that stops it.
local function web_server(page)
  local server = uv.new_tcp()
  server:bind('127.0.0.1', 0)
  server:listen(8, function()
    local c = uv.new_tcp()
    server:accept(c)
    c:read_start(function(_, data)
      if data and data:find('\r\n\r\n', 1, true) then
        c:write(('HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s')
          :format(#page, page), function()
          c:close()
        end)
      end
    end)
  end)
  return ('http://127.0.0.1:%d/'):format(server:getsockname().port), function()
    server:close()
  end
end

t.test('fetch: a page the agent fetched shows with its address, size and type under the call, then its text (not the lines for the model)', function()
  local url, stop = web_server('<html><body><h1>Shop</h1><p>Opening hours: 9 to 5.</p></body></html>')
  local script = h.tmp .. '/fetch-model.json'
  h.write(script, vim.json.encode({ turns = {
    { name = 'read', match = { afterTool = 'web_fetch', lastTool = 'Opening hours' }, reply = { text = 'Open 9 to 5.' } },
    { name = 'fetch', match = { lastUser = 'opening hours' }, reply = { toolCalls = { { id = 'call_f', name = 'web_fetch',
      arguments = { url = url } } } } },
  } }))
  local ok, err = pcall(function()
    h.fresh(script)
    vim.cmd('Agentd what are the opening hours')
    h.wait_float('Fetch ' .. url)
    vim.cmd('AgentdPending')
    wait_focus_in_float()
    h.keys('ga')
    h.wait_conversation('Open 9 to 5.')
    t.ok(h.conversation():find('\n    ↳ ' .. url .. ' · %d+ B · text/html\n    # Shop\n'), h.conversation())
    t.ok(h.conversation():find('\n    Opening hours: 9 to 5.\n', 1, true), h.conversation())
    t.eq(h.conversation():find('untrusted', 1, true), nil, 'the page, not the lines for the model:\n' .. h.conversation())
    t.eq(h.conversation():find('web_content', 1, true), nil, h.conversation())
  end)
  stop()
  assert(ok, err)
end)

-- confirmations ----------------------------------------------------------------

t.test('command: the request says where it runs (profile, network) with the rule; gF runs it once without the sandbox', function()
  local ws = h.fresh('allow')
  vim.cmd('Agentd touch a file please')
  h.wait_float('runs in: the workspace-write sandbox, no network')
  t.ok(h.float_text():find('rule: mode ask: commands ask', 1, true), h.float_text())
  t.ok(h.conversation():find('\n  runs in: the workspace-write sandbox, no network\n', 1, true), h.conversation())
  vim.cmd('AgentdPending')
  wait_focus_in_float()
  h.wait_float('gF no sandbox, once')
  h.keys('gF')
  h.wait_conversation('Ran it.')
  t.eq(vim.fn.filereadable(ws .. '/ran.txt'), 1, 'ran.txt exists')
  t.ok(h.conversation():find('→ allowed once, without the sandbox\n', 1, true), h.conversation())
end)

t.test('command: with the sandbox off, the notice and the header say so; the request runs unconfined and offers no gF', function()
  local ws = h.fresh('allow', { setup = { env = { AGENTD_SANDBOX = 'off' } } })
  vim.cmd('Agentd touch a file please')
  h.wait_float('runs in: NO sandbox')
  h.wait_conversation('\n  runs in: NO sandbox (it cannot be confined here): your full rights, with the network\n')
  h.wait_conversation('\n⚠ The kernel sandbox is switched off: every command asks, and runs with your full rights.')
  h.wait_conversation('\n⚠ the kernel sandbox is switched off: every command asks, and runs with your full rights\n')
  t.ok(table.concat(h.notes, '\n'):find('The kernel sandbox is switched off', 1, true), 'the notice is told')
  local conv = h.conversation()
  t.ok(conv:find('ga allow unsandboxed', 1, true), conv)
  t.eq(conv:find('gF', 1, true), nil, 'no allow_full where the request does not offer it')
  t.eq(conv:find('gs session', 1, true), nil, 'nothing unconfined is granted for later')
  go_to_transcript_line('? Run `touch ran.txt` in .')
  h.keys('ga')
  h.wait_conversation('Ran it.')
  t.eq(vim.fn.filereadable(ws .. '/ran.txt'), 1)
end)

t.test('command: one that uses a secret you gave names it', function()
  h.fresh('secretcmd')
  vim.cmd('Agentd use my token')
  h.wait_float('Your API token?')
  require('agentd.pump').reply(S.requests:list()[1].req.requestId, { text = 's3cret-value' })
  h.wait_float('uses your secret: $API_TOKEN')
  t.ok(h.conversation():find('\n  uses your secret: $API_TOKEN\n', 1, true), h.conversation())
  t.eq(h.conversation():find('s3cret-value', 1, true), nil)
  vim.cmd('AgentdPending')
  wait_focus_in_float()
  h.keys('ga')
  h.wait_conversation('Used the token.')
end)

-- the editor around it -----------------------------------------------------

t.test('quiet start-up: nothing is echoed when the daemon starts and indexes', function()
  local ws = h.fresh('question', { files = { ['a.go'] = 'package a\n' } })
  vim.cmd('messages clear')
  h.notes = {}
  agentd.start()
  t.wait(function()
    return S.ready
  end, 'the daemon ready')
  local state
  t.wait(function()
    S.conn.rpc:request('index/status', vim.empty_dict(), function(_, res)
      state = res and res.state
    end)
    vim.wait(50)
    return state == 'ready' and S.index == nil
  end, 'the index ready')
  vim.wait(100)
  t.eq(h.notes, {}, 'no notification')
  t.eq(vim.trim(vim.fn.execute('messages')), '', 'no message')
  t.eq(vim.fn.filereadable(ws .. '/a.go'), 1)
end)

t.test(':help agentd works without running :helptags', function()
  vim.cmd('help agentd')
  t.ok(api.nvim_buf_get_name(0):find('doc/agentd.txt$'), api.nvim_buf_get_name(0))
  vim.cmd('help agentd-keymaps')
  t.ok(api.nvim_get_current_line():find('agentd-keymaps', 1, true), api.nvim_get_current_line())
  vim.cmd('helpclose')
end)

local function checkhealth_text()
  vim.cmd('checkhealth agentd')
  local text = table.concat(api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  vim.cmd('bwipeout!')
  return text
end

t.test(':checkhealth contacts the model: OK when it answers, ERROR when nobody listens', function()
  h.fresh('question')
  agentd.start()
  t.wait(function()
    return S.ready
  end, 'the daemon ready')
  local text = checkhealth_text()
  -- 0.7 prints "OK: text", 0.10 and later "- OK text"
  t.ok(text:match('OK:? running %(pid'), text)
  -- the running daemon is asked (agent/models)
  t.ok(text:match('OK:? the endpoint answers: 1 model %(fakemodel%); default fakemodel'), text)
  t.eq(text:find('ERROR', 1, true), nil, text)
  -- an endpoint nobody listens on, as the daemon sees it
  local tcp = uv.new_tcp()
  tcp:bind('127.0.0.1', 0)
  local port = tcp:getsockname().port
  tcp:close()
  local cfg = vim.deepcopy(require('agentd.config').values)
  cfg.env.OPENAI_BASE_URL = ('http://127.0.0.1:%d/v1'):format(port)
  require('agentd.config').set(cfg)
  agentd.restart()
  t.wait(function()
    return S.ready
  end, 'the daemon ready again')
  text = checkhealth_text()
  t.ok(text:match('ERROR:? nobody answers at the model endpoint: GET http://127%.0%.0%.1:' .. port .. '/v1/models'), text)
  -- and before the daemon starts, worked out from the configuration
  agentd.stop()
  text = checkhealth_text()
  t.ok(text:match('not started yet'), text)
  t.ok(text:match('ERROR:? nobody answers at http://127%.0%.0%.1:' .. port .. '/v1/models'), text)
end)

t.test('missing daemon: the prompt waits in the compose window; :checkhealth says why and where the log is', function()
  h.fresh('question', { setup = { cmd = h.tmp .. '/no/such/agentd' } })
  h.keys(':Agentd What is my favourite colour?<CR>')
  local chat = require('agentd.chat')
  t.wait(function()
    local _, cwin = chat.wins()
    return cwin and table.concat(api.nvim_buf_get_lines(api.nvim_win_get_buf(cwin), 0, -1, false), '\n')
      == 'What is my favourite colour?'
  end, 'the prompt in the compose window')
  t.ok(table.concat(h.notes, '\n'):find('cannot find the daemon "' .. h.tmp .. '/no/such/agentd"', 1, true),
    table.concat(h.notes, '\n'))
  t.ok(table.concat(h.notes, '\n'):find('your prompt is in the compose window', 1, true), table.concat(h.notes, '\n'))
  local text = checkhealth_text()
  t.ok(text:match('ERROR:? cannot find the daemon'), text)
  local log = require('agentd.config').values.log_file
  t.ok(text:find('its log: ' .. log, 1, true), text)
  t.eq(text:find('see the log:%s*\n'), nil, text)
  -- the daemon found: the prompt kept is sent as it is
  require('agentd.config').values.cmd = h.agentd
  local _, cwin = chat.wins()
  api.nvim_set_current_win(cwin)
  h.keys('<C-s>')
  h.wait_float('Which colour do you like?')
  h.wait_conversation('## > What is my favourite colour?')
end)

t.test('http: the same GET through curl (the https path), and its failure', function()
  local _, m = h.fresh('question')
  local http = require('agentd.http')
  local status, body = http.get(m.url .. '/models', { via = 'curl', headers = { Authorization = 'Bearer x"y' } })
  t.eq(status, 200, tostring(body))
  t.ok(body:find('"fakemodel"', 1, true), body)
  local tcp = uv.new_tcp()
  tcp:bind('127.0.0.1', 0)
  local port = tcp:getsockname().port
  tcp:close()
  status, body = http.get(('http://127.0.0.1:%d/v1/models'):format(port), { via = 'curl' })
  t.eq(status, nil)
  t.ok(body:find('curl', 1, true), body)
end)

t.test('secret: typed through inputsecret() once the user opens it, never shown', function()
  h.fresh('secret', { setup = { approval_policy = 'full-auto' } })
  vim.cmd('Agentd log in please')
  h.wait_float('Password')
  t.ok(h.float_text():find('a secret', 1, true), h.float_text())
  vim.cmd('AgentdPending')
  wait_focus_in_float()
  -- inputsecret() reads the keys typed after <CR>
  h.keys('<CR>hunter2<CR>')
  h.wait_conversation('Logged in.', 15000)
  t.eq(h.conversation():find('hunter2', 1, true), nil, 'the secret is not shown')
end)

h.stop_models()
agentd._reset()
h.thaw_all()
t.finish()
