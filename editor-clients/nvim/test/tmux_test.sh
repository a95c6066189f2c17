#!/usr/bin/env bash
# The real terminal UI under tmux, as a user types it:
#   1. a quiet start; a prompt composed over two lines in the chat and sent
#      with <C-s>; a choice shown in the float while the editor stays free
#      (a command typed meanwhile runs), answered with its number; a write
#      reviewed in the diff tab (its tab named "fruit.txt (proposed)") and
#      allowed with ga; the open buffer of that file reloaded, and a later
#      :w keeping the agent's text; a command: Esc in the reason field does
#      not reject, gx does; a follow-up in the same chat; :checkhealth and
#      :help agentd;
#   2. a question that expires in the daemon: its float closes by itself;
#   3. a question put aside with q, the daemon killed: "the daemon is back"
#      shows, the question is offered again and answered;
#   4. a two-run conversation (the reasoning folded, the instruction files,
#      a notice, cached tokens), the editor quit and started again:
#      :AgentdSessions lists it and brings it back whole; :AgentdModel
#      completes the endpoint's models, the status line shows the switch,
#      and the follow-up is sent to the new model;
#   5. the state directory made read-only while a run works: the run shows
#      paused with the reason, and R resumes it once it can be written;
#   6. undo: a command edits, deletes and creates files; gu on its change
#      in the chat opens the preview tab, ga restores, the open buffer
#      reloads; the undo undone; the user edits the file, gU on the turn
#      shows the conflict with its diff, gs restores the rest;
#   7. rewind: three runs, gW on the second: the preview names the runs it
#      cuts, ga rewinds, the cut runs are marked, the next prompt goes on
#      from the first;
#   8. custom commands: / in the compose window opens the menu, the
#      command is taken and sent, the model answers its expansion;
#      :AgentdCommands lists the broken one with why;
#   9. :AgentdMcp with a connected, a failed and a starting server;
#  10. a command's confirmation says where it runs; gF runs it without the
#      sandbox; with the sandbox off the chat says so and gF is not offered;
#  11. review: with auto_diff a write's diff tab opens by itself on its first
#      hunk; gy keeps a hunk, gh takes the current text back for the next,
#      ga writes what is left.
#  12. inline edit: lines selected, :AgentdEdit with what to change; the
#      change shows in the buffer (removed lines highlighted, added ones
#      under them), gy keeps a hunk, gh rejects one, ga writes the kept.
#  13. context: in the compose window @ completes the workspace's files,
#      narrowed by what is typed (@car finds src/cart.go), # the buffers and
#      #diff; the prompt goes with the files and the git diff.
#  14. rules: an "always" answer, :AgentdRules lists it with where it is kept,
#      gx revokes it; MCP controls (in 9): d disables a server, e enables it;
#  15. conversations: the context meter in the chat's status line,
#      :AgentdCompact, :AgentdSessions! (rename with r) and a search.
#  16. language: clangd attached to main.c as a user's configuration would;
#      the agent's edit of the open file: the daemon asks Neovim for its
#      diagnostics, the chat shows "⚑ 1 error" under the edit, <CR> shows
#      it, <CR> on it opens main.c at the error.
#  17. two conversations at once: a question waits in the first while
#      :AgentdChatTab opens a second in its own tab, which runs and asks too;
#      each tab's chat shows its own, and each question is answered there.
#  18. steer and queue: while a command runs, the compose window's status
#      line says <C-s> steers; the steer shows in the run and the model
#      answers it; <C-q> queues a follow-up that starts after.
# The screen is captured at each step and at each failure
# (AGENTD_TEST_CAPTURES=dir keeps them; a failed run keeps them anyway).
# Prints "N passed, N failed"; exits non-zero on failure.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
PLUGIN=$(dirname "$HERE")
BIN=${AGENTD_TEST_BIN:-/tmp/agentd-bin}
NVIM=${NVIM:-nvim}
T=$(mktemp -d "${TMPDIR:-/tmp}/agentd-tmux.XXXXXX")
CAPS=${AGENTD_TEST_CAPTURES:-$T/captures}
mkdir -p "$CAPS"
S=agentd-nvim-test-$$
# a tmux server of its own: a kill-server elsewhere on the default socket
# must not end this one
tmux() { command tmux -S "$T/tmux.sock" "$@"; }
MODEL_PID=
passed=0
failed=0
step=0

screen() { tmux capture-pane -p -t "$S" 2>/dev/null; }
capture() { # capture NAME: the screen as it is now (and with its colours, .ansi)
  step=$((step + 1))
  last_capture=$CAPS/$(printf '%02d' "$step")-$1.txt
  screen >"$last_capture"
  tmux capture-pane -e -p -t "$S" >"${last_capture%.txt}.ansi" 2>/dev/null
}
ok() { passed=$((passed + 1)); echo "ok   $1"; }
fail() { # the screen is printed and kept with the captures
  failed=$((failed + 1)); echo "FAIL $1"
  capture "FAIL-$(printf '%s' "${1%% (screen*}" | tr -cs 'A-Za-z0-9' '-' | cut -c1-50)"
  echo "--- screen (kept in $last_capture):"; screen | sed 's/^/  | /'
}
cleanup() {
  tmux kill-server 2>/dev/null # its own server (the socket in $T)
  chattr -R -i "$T" 2>/dev/null
  [ -n "$MODEL_PID" ] && kill "$MODEL_PID" 2>/dev/null
  if [ "$failed" -gt 0 ]; then
    echo "--- daemon log:"; tail -20 "$T/agentd.log" 2>/dev/null
    echo "(kept $T)"
  elif [ -z "${AGENTD_TEST_CAPTURES:-}" ]; then
    rm -rf "$T"
  fi
}
trap cleanup EXIT

# Waits are an idle machine's seconds, scaled to the load as the Go tests'
# are (internal/await): AGENTD_TEST_TIMEOUT_SCALE, else the 1-minute load
# average per CPU, between 1 and 20.
scaled() { # scaled SECONDS -> seconds for this machine, now
  awk -v s="$1" -v env="${AGENTD_TEST_TIMEOUT_SCALE:-}" -v cpus="$(nproc)" '
    BEGIN { f = env + 0
      if (f <= 0) {
        getline l < "/proc/loadavg"; split(l, a, " "); f = a[1] / cpus
        if (f < 1) f = 1; if (f > 20) f = 20
      }
      printf "%d", s * f + 0.5 }'
}
poll() { # poll SECONDS COMMAND...: until COMMAND succeeds, or the deadline
  local secs=$1; shift
  local end=$(( $(date +%s) + $(scaled "$secs") ))
  while :; do
    "$@" && return 0
    [ "$(date +%s)" -ge "$end" ] && return 1
    sleep 0.1
  done
}
shows() { screen | grep -qF -- "$1"; }
shows_re() { screen | grep -qE -- "$1"; }
hides() { ! screen | grep -qF -- "$1"; }
# waitfor TEXT [SECONDS]: until the screen shows TEXT
waitfor() { poll "${2:-15}" shows "$1"; }
# waitfor_re REGEX [SECONDS]
waitfor_re() { poll "${2:-15}" shows_re "$1"; }
# waitgone TEXT [SECONDS]: until the screen no longer shows TEXT
waitgone() { poll "${2:-15}" hides "$1"; }
check() { # check NAME TEXT [SECONDS]
  if waitfor "$2" "${3:-15}"; then ok "$1"; else fail "$1 (screen never showed \"$2\")"; fi
}
check_re() { # check_re NAME REGEX [SECONDS]
  if waitfor_re "$2" "${3:-15}"; then ok "$1"; else fail "$1 (screen never matched /$2/)"; fi
}
check_not() { # check_not NAME TEXT: the screen does not show TEXT now
  if screen | grep -qF -- "$2"; then fail "$1 (screen shows \"$2\")"; else ok "$1"; fi
}
keys() { tmux send-keys -t "$S" "$@"; }
# type TEXT: literally, as typed
type_text() { tmux send-keys -t "$S" -l -- "$1"; }

# start_session NAME SCRIPT [EXTRA_ENV_LUA]: a fake model, and nvim in tmux session $S
start_session() {
  local name=$1 script=$2 extra=${3:-}
  mkdir -p "$T/$name/ws" "$T/$name/state"
  WS=$T/$name/ws
  printf 'apple\n' >"$WS/fruit.txt"
  "$BIN/fakemodel" -script "$HERE/models/$script.json" >"$T/$name/model.out" 2>"$T/$name/model.err" &
  MODEL_PID=$!
  for _ in $(seq 100); do grep -q 'listening on' "$T/$name/model.out" 2>/dev/null && break; sleep 0.1; done
  URL=$(sed -n 's/^listening on //p' "$T/$name/model.out")
  if [ -z "$URL" ]; then fail "$name: fakemodel did not start"; cat "$T/$name/model.err"; return 1; fi
  cat >"$T/$name/init.lua" <<LUA
vim.cmd('runtime! plugin/agentd.lua')
vim.o.laststatus = 2
vim.o.statusline = "%f %= %{v:lua.require'agentd'.statusline()} "
vim.o.shortmess = vim.o.shortmess .. 'I'
vim.o.swapfile = false
${PRE_LUA:-}
require('agentd').setup({
  cmd = '$BIN/agentd',
  root = '$WS',
  env = { OPENAI_BASE_URL = '$URL', OPENAI_API_KEY = 'test', AGENTD_MODEL = 'fakemodel', AGENTD_STATE_DIR = '$T/$name/state', $extra },
  log_file = '$T/agentd.log',
  conversation = { width = 70 },
  ${SETUP_EXTRA:-}
})
require('agentd').start()
-- for the test only: a file that says when the index is built, so the
-- shell can look at the screen after the moment "index ready" used to echo
local timer = vim.loop.new_timer()
timer:start(100, 100, vim.schedule_wrap(function()
  local S = require('agentd')._state
  if not (S.ready and S.conn) then return end
  S.conn.rpc:request('index/status', vim.empty_dict(), function(_, r)
    if r and r.state == 'ready' and not timer:is_closing() then
      timer:stop(); timer:close()
      vim.fn.writefile({ 'ready' }, '$T/$name/index-ready')
    end
  end)
end))
LUA
  tmux new-session -d -s "$S" -x 160 -y 45 \
    "cd '$WS' && TERM=xterm-256color $NVIM -u NONE -i NONE -n --cmd 'set rtp^=$PLUGIN' -c 'luafile $T/$name/init.lua' fruit.txt"
}

# restart_editor NAME: quit nvim and start it again on the same workspace,
# state and model (the daemon restarts with it)
restart_editor() {
  keys Escape Escape ':qa!' Enter
  for _ in $(seq 30); do tmux has-session -t "$S" 2>/dev/null || break; sleep 0.1; done
  tmux kill-session -t "$S" 2>/dev/null
  tmux new-session -d -s "$S" -x 160 -y 45 \
    "cd '$WS' && TERM=xterm-256color $NVIM -u NONE -i NONE -n --cmd 'set rtp^=$PLUGIN' -c 'luafile $T/$1/init.lua' fruit.txt"
}

# model_requests: how many chat requests the model received
model_requests() { curl -s "$URL/_requests" | grep -o '"seq":' | wc -l; }

stop_session() {
  keys Escape Escape ':qa!' Enter
  for _ in $(seq 30); do tmux has-session -t "$S" 2>/dev/null || break; sleep 0.1; done
  if tmux has-session -t "$S" 2>/dev/null; then fail "$1: nvim quits"; else ok "$1: nvim quits"; fi
  tmux kill-session -t "$S" 2>/dev/null
  kill "$MODEL_PID" 2>/dev/null
  MODEL_PID=
}

finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit
}

# --- 1 -----------------------------------------------------------------------
start_session main tmux || finish

check 'the daemon starts (statusline)' 'agentd: idle'
for _ in $(seq 100); do [ -e "$T/main/index-ready" ] && break; sleep 0.1; done
if [ -e "$T/main/index-ready" ]; then ok 'the index is built'; else fail 'the index is built'; fi
check 'the statusline is idle again' 'agentd: idle'
capture start
if [ -z "$(screen | tail -1 | tr -d ' ')" ]; then ok 'quiet start: nothing echoed'; else fail 'quiet start: nothing echoed'; fi
check_not 'no "index ready" message' 'index ready'

keys ':AgentdChat' Enter
check 'the chat opens with the compose window' 'compose · <C-s> send'
type_text 'tmux test: pick a fruit'
keys Enter
type_text 'and write it'
capture compose
keys C-s
check 'the prompt is in the transcript, both lines' '## > tmux test: pick a fruit'
check 'its second line too' '   and write it'

check 'the choice shows in the float' 'agentd · choice · 1 of 1 open'
check 'the float lists the options' '2 banana'
capture choice-float
# the editor is free: a command typed now runs (the cursor is in the compose window)
keys Escape ':echo "not" . "-blocked"' Enter
check 'the editor is not blocked while a request waits' 'not-blocked'
check 'the float says how to answer it' ':AgentdPending (or <C-w>w) to answer here'
keys ':AgentdPending' Enter
check 'with the cursor in the float, its keys show' '1-9 pick · <CR> pick the line · q later'
keys 2

check 'the write shows in the float' 'agentd · write · 1 of 1 open'
check 'with its file and line counts' 'M fruit.txt  +1 -1'
capture write-float
keys ':AgentdPending' Enter
# "q later" is the float's own: the chat shows the other keys too
check 'with the cursor in the float, its keys show' 'gX never · q later'
keys Enter
check 'the diff tab opens' 'current → proposed: fruit.txt (modified)'
check 'the tab is named after the file' 'fruit.txt (proposed)'
check_not 'no URL-like tab name' 'a//'
check 'the diff tab shows the allow keys' 'ga allow · gs session · gA always'
check 'and the reject keys' 'gx reject · gR reject+why · gX never · q later'
capture diff-tab
keys g a

check 'the command shows in the float' 'agentd · command · 1 of 1 open'
check 'with its command line and directory' 'Run `touch ran.txt` in .'
capture command-float
keys ':AgentdPending' Enter
check 'with the cursor in the float, its keys show' 'gX never · gF no sandbox, once · q later'
keys g R
check 'gR opens the reason field' 'Why reject?'
type_text 'nope'
capture reason-field
keys Escape
check 'Esc goes back to the request' 'gR reject+why'
# nothing may happen now: a rejection would have reached the daemon and
# changed the run's state within this time
sleep 0.5
if [ ! -e "$WS/ran.txt" ] && screen | grep -qF 'waiting for you'; then
  ok 'Esc did not reject: the run still waits'
else
  fail 'Esc did not reject: the run still waits'
fi
capture after-esc
keys g x

check 'the answer streams into the chat' 'All done in tmux.' 20
check 'the command is shown rejected' '→ rejected'
check 'its tool call reads as rejected, not failed' '● $ touch ran.txt ✗ rejected'
check 'the files changed are listed' 'M fruit.txt'
check 'the statusline shows the run state' 'agentd: completed'
check 'the open buffer of fruit.txt shows the agent'"'"'s text' 'banana'
capture done
if [ "$(cat "$WS/fruit.txt" 2>/dev/null)" = "banana" ]; then ok 'fruit.txt is on disk'; else fail 'fruit.txt is on disk'; fi
if [ ! -e "$WS/ran.txt" ]; then ok 'the rejected command did not run'; else fail 'the rejected command did not run'; fi
keys ':1wincmd w | write' Enter
check ':w writes the buffer' 'fruit.txt" 1L, 7B written'
if [ "$(cat "$WS/fruit.txt" 2>/dev/null)" = "banana" ]; then ok ':w in the reloaded buffer keeps the agent'"'"'s text'; else fail ':w in the reloaded buffer keeps the agent'"'"'s text'; fi

# a follow-up in the same chat
keys ':AgentdChat' Enter
type_text 'tmux follow-up'
keys C-s
check 'the follow-up runs in the same conversation' 'Still the same chat.' 20
if screen | grep -qF 'All done in tmux.' && screen | grep -qF '## > tmux follow-up'; then
  ok 'both runs in one transcript'
else
  fail 'both runs in one transcript'
fi
capture follow-up

keys Escape ':checkhealth agentd' Enter
check_re ':checkhealth: the daemon lists the models (agent/models)' 'OK:? the endpoint answers: 1 model \(fakemodel\); default fakemodel'
check_re ':checkhealth: the daemon runs' 'OK:? running \(pid'
capture checkhealth
keys ':tabclose' Enter
keys ':help agentd' Enter
check ':help agentd opens' '|agentd-introduction|'
capture help
keys ':helpclose' Enter
stop_session main

# --- 2 -----------------------------------------------------------------------
start_session timeout timeout "AGENTD_QUESTION_TIMEOUT = '2s'" || finish
keys ':Agentd what is my favourite colour?' Enter
check 'the question shows in the float' 'agentd · question · 1 of 1 open'
check 'with its text' 'Which colour do you like?'
capture question-float
check 'the expired question is marked in the chat' '→ expired: no answer in time' 15
check 'the model goes on without the answer' 'No answer, so teal it is.' 15
if ! screen | grep -qF 'agentd · question'; then ok 'the float of the expired question closed'; else fail 'the float of the expired question closed'; fi
capture question-expired
stop_session timeout

# --- 3 -----------------------------------------------------------------------
start_session restart restart || finish
keys ':Agentd survive a restart' Enter
check 'the question shows in the float' 'agentd · question · 1 of 1 open'
keys ':AgentdPending' Enter
check 'with the cursor in the float, its keys show' '<CR> answer · q later'
keys q
for _ in $(seq 50); do screen | grep -qF 'agentd · question' || break; sleep 0.1; done
check_not 'q puts the question aside: the float closes' 'agentd · question'
keys ':lua vim.loop.kill(require("agentd").status().pid, 9)' Enter
check 'the restart is told' 'the daemon is back · 1 open request'
check 'the question is offered again' 'agentd · question · 1 of 1 open'
capture restarted
keys ':AgentdPending' Enter
check 'with the cursor in the float, its keys show' '<CR> answer · q later'
keys Enter
check 'the answer field opens' 'Type your answer below'
type_text 'yes'
keys Enter
check 'the answer reaches the restarted daemon' 'Survived the restart.' 15
capture restart-answered
stop_session restart

# --- 4 -----------------------------------------------------------------------
start_session history history || finish
printf 'Answer briefly.\n' >"$WS/AGENTS.md"
printf 'remember teal\n' >"$WS/notes.txt"
check 'the daemon starts (statusline)' 'agentd: idle'
keys ':AgentdChat' Enter
check 'the chat shows its settings' 'model default · mode default'
type_text 'first question'
keys C-s
check 'the answer streams in' 'First answer: teal.' 20
check 'the reasoning, folded to its latest words' '▸ Thinking (40 characters): The user wants a colour. Teal fits best.'
check 'the instruction files, one quiet line' 'Instructions: AGENTS.md'
check "agentd's notice, as a warning" "⚠ The model's context window is 15000 tokens"
check 'the tokens the prompt cache served' 'tokens (512 cached)'
check 'the status line shows the model and mode' 'completed · fakemodel · ask'
capture new-kinds
if screen | grep -qF 'Press ENTER'; then fail 'the notice does not stop the screen'; else ok 'the notice does not stop the screen'; fi
keys i
type_text 'second question'
keys C-s
check 'the second run' 'Second answer: the notes say teal.' 20
capture two-runs
restart_editor history
check 'the editor is back' 'agentd: idle'
keys ':AgentdSessions' Enter
check_re 'the list: title, state, run count, time' '1: first question  ·  completed  ·  2 runs  ·  (just now|[0-9]+ min ago)'
capture sessions-list
keys 1 Enter
check 'the first prompt is back' '## > first question'
check 'the second prompt too' '## > second question'
check 'with its answer' 'Second answer: the notes say teal.'
check 'the restored session shows its model and mode' 'completed · fakemodel · ask'
capture restored
keys Escape ':AgentdModel ' Tab
check "<Tab> completes the endpoint's models" 'bigmodel'
capture model-completion
keys C-u Escape
keys ':AgentdModel bigmodel' Enter
check 'the status line shows the new model' 'completed · bigmodel · ask'
keys ':AgentdChat' Enter
type_text 'third question'
keys C-s
check 'the follow-up continues the whole session' 'Third answer: I remember the whole session.' 20
capture continued
if curl -s "$URL/_requests" | grep -o '"model":"[a-z]*"' | tail -1 | grep -qF '"model":"bigmodel"'; then
  ok 'the follow-up was sent to bigmodel'
else
  fail 'the follow-up was sent to bigmodel'
fi
stop_session history

# --- 5 -----------------------------------------------------------------------
if command -v chattr >/dev/null && mkdir -p "$T/probe" && touch "$T/probe/f" && chattr +i "$T/probe/f" 2>/dev/null; then
  chattr -i "$T/probe/f"
  start_session pause pause "AGENTD_POLICY = 'full-auto'" || finish
  printf 'alpha\n' >"$WS/a.txt"
  printf 'beta\n' >"$WS/b.txt"
  check 'the daemon starts (statusline)' 'agentd: idle'
  keys ':Agentd read the notes' Enter
  for _ in $(seq 100); do [ "$(model_requests)" -ge 2 ] && break; sleep 0.1; done
  chattr -R +i "$T/pause/state"
  check 'the run pauses' '— paused' 15
  check 'saying why' 'state not saved: write'
  check 'and how to go on' 'R resumes it (:AgentdResume)'
  capture paused
  if screen | grep -qF 'Press ENTER'; then fail 'the pause does not stop the screen'; else ok 'the pause does not stop the screen'; fi
  chattr -R -i "$T/pause/state"
  keys ':AgentdChat' Enter Escape C-w k
  keys R
  check 'R resumes it once the state can be saved' 'Read both.' 15
  check 'the run completes' 'agentd: completed'
  capture resumed
  stop_session pause
else
  echo "skip 5: chattr +i is not available here"
fi

# --- 6 -----------------------------------------------------------------------
start_session undo undo "AGENTD_POLICY = 'full-auto'" || finish
printf 'package main\n\nvar v = "old"\n' >"$WS/main.go"
printf 'remove me\n' >"$WS/notes.txt"
check 'the daemon starts (statusline)' 'agentd: idle'
keys ':e main.go' Enter
check 'main.go is open' 'var v = "old"'
keys ':Agentd tidy the project' Enter
check 'the command ran' 'Tidied.' 20
check 'its change has a line, with the key that undoes it' '↶ c1: '
check 'the turn says how to take it back' 'gU undo this turn · gW rewind to before it'
check 'the open buffer reloaded' 'var v = "new"'
capture undo-change
keys ':AgentdChat' Enter Escape C-w k
keys ':call search("c1: ")' Enter
keys g u
check 'gu opens the preview' 'Files to restore (3):'
check 'the preview says what each file becomes' 'A notes.txt comes back'
check 'with the keys' 'Keys: ga restore · q cancel'
check 'and the diffs' '+var v = "old"'
capture undo-preview
if [ -e "$WS/made.txt" ]; then ok 'the preview wrote nothing'; else fail 'the preview wrote nothing'; fi
keys g a
check 'ga restores, and says how to take it back' 'Undo c1 and every later change: 3 files restored'
check 'the buffer of main.go reloaded' 'var v = "old"'
check 'the change reads undone' '↶ c1 (undone by c2)'
capture undo-restored
if [ "$(cat "$WS/notes.txt" 2>/dev/null)" = "remove me" ] && [ ! -e "$WS/made.txt" ]; then ok 'the files are restored'; else fail 'the files are restored'; fi
keys ':AgentdUndo c2' Enter
check 'the undo can be undone (its preview)' 'Undo c2 and every later change'
keys g a
check 'the undo is undone' 'Undo c2 and every later change: 3 files restored'
check 'the command'"'"'s changes are back in the buffer' 'var v = "new"'
# the user edits main.go; undoing the turn now meets a conflict
keys ':1wincmd w' Enter ':%s/new/mine/ | w' Enter
check 'the user saved main.go' 'var v = "mine"'
keys ':AgentdChat' Enter Escape C-w k
keys ':call search("— completed")' Enter
keys g U
check 'gU on the turn: the conflict first' 'Conflicts (1): changed since, not written unless you say so'
check 'why' '! main.go: it was changed after the checkpoint'
check 'the diff of what the undo would do to it' '+var v = "old"'
check 'the choices' 'gs leave the changed files, restore the rest · gO restore the changed files too · q cancel'
capture undo-conflict
keys g s
check 'gs restores the rest' '2 files restored, 1 left as it is'
capture undo-skipped
if grep -qF 'var v = "mine"' "$WS/main.go" && [ "$(cat "$WS/notes.txt" 2>/dev/null)" = "remove me" ]; then
  ok "the user's edit is kept, the rest restored"
else
  fail "the user's edit is kept, the rest restored"
fi
stop_session undo

# --- 7 -----------------------------------------------------------------------
start_session rewind undo "AGENTD_POLICY = 'full-auto'" || finish
check 'the daemon starts (statusline)' 'agentd: idle'
keys ':Agentd step one' Enter
check 'the first run' 'One.' 20
keys ':Agentd step two' Enter
check 'the second run' 'Two.' 20
keys ':Agentd step three' Enter
check 'the third run' 'Three.' 20
keys ':AgentdChat' Enter Escape C-w k
keys ':call search("## > step two")' Enter
keys g W
check 'gW opens the rewind preview' 'Rewind to before "step two"'
check 'naming the runs it cuts' '2 runs cut ("step two", "step three")'
check 'with its keys' 'Keys: ga rewind and restore · gC rewind the conversation only, keep the files · q cancel'
capture rewind-preview
keys g a
check 'the cut runs are marked' '## > step three  (rewound)'
check 'the second too' '## > step two  (rewound)'
capture rewound
if [ "$(cat "$WS/f.txt" 2>/dev/null)" = "one" ] && [ ! -e "$WS/g.txt" ]; then ok 'the files are back to the first run'; else fail 'the files are back to the first run'; fi
keys ':Agentd step four' Enter
check 'the next prompt continues from the first run' 'Four, after one.' 20
capture rewind-continued
stop_session rewind

# --- 8 -----------------------------------------------------------------------
start_session commands commands || finish
mkdir -p "$WS/.agentd/commands"
printf -- '---\ndescription: Review a file\nargument-hint: <file>\n---\nReview $ARGUMENTS carefully and say REVIEWED.\n' >"$WS/.agentd/commands/review.md"
printf -- '---\ndescription: Release\nRelease it.\n' >"$WS/.agentd/commands/release.md"
printf 'package cart\n' >"$WS/cart.go"
check 'the daemon starts (statusline)' 'agentd: idle'
keys ':AgentdChat' Enter
check 'the chat opens with the compose window' 'compose · <C-s> send'
type_text '/'
check '/ opens the menu of the custom commands' '/review <file>'
check 'with their descriptions' 'Review a file'
capture commands-menu
if screen | grep -qF '/release'; then fail 'the broken command is not in the menu'; else ok 'the broken command is not in the menu'; fi
type_text 're'
keys C-y
type_text 'cart.go'
capture commands-typed
keys C-s
check 'the prompt as typed' '## > /review cart.go'
check 'the model answers the expansion' 'Reviewed cart.go as the command asked.' 20
keys Escape ':AgentdCommands' Enter
check ':AgentdCommands lists the broken one with why' '/release  ·  workspace  ·  broken: the front matter has no closing --- line'
capture commands-list
keys Enter
waitgone 'Type number and <Enter>' || fail 'the list is closed by an empty answer'
stop_session commands

# --- 9 -----------------------------------------------------------------------
mkdir -p "$T/mcp/config/agentd"
cat >"$T/mcp/config/agentd/config.json" <<JSON
{"mcpServers": {
  "test": {"command": "$BIN/mcpserver"},
  "broken": {"command": "$BIN/mcpserver", "args": ["-fail", "no database at notes.sqlite"]},
  "slow": {"command": "$BIN/mcpserver", "args": ["-start-delay", "60s"]}}}
JSON
start_session mcp question "XDG_CONFIG_HOME = '$T/mcp/config'" || finish
check 'the daemon starts (statusline)' 'agentd: idle'
keys ':AgentdMcp' Enter
check_re 'the connected server with its tools' '● test  connected · [0-9]+ tools' 20
check 'the failed one with why' 'no database at notes.sqlite'
check 'the starting one' '◌ slow  starting…'
check 'a tool with what its server says of it' '(server says: read-only'
# the failed server's command line is longer than the float: it wraps, whole
# (the float's rows joined, since where it wraps depends on the path's length)
float_text() { screen | grep '│.*│' | sed 's/^[^│]*│//; s/│[^│]*$//' | tr '\n' ' ' | tr -s ' '; }
if float_text | grep -qF -- "-fail 'no database at notes.sqlite' · sandbox read, no network"; then
  ok 'a long line wraps instead of being cut'
else
  fail 'a long line wraps instead of being cut'
fi
check 'the last tool is shown (the height counts wrapped rows)' 'write — Writes a file; says whether it could.'
check 'the keys that control a server' 'on a server: e enable · d disable · r restart'
capture mcp
keys ':call search("test  connected")' Enter
keys d
check 'd disables the server' '- test  disabled (e enables it)'
capture mcp-disabled
keys e
check_re 'e enables it: it starts and connects again' '● test  connected · [0-9]+ tools' 20
capture mcp-enabled
keys q
stop_session mcp

# --- 10 ----------------------------------------------------------------------
start_session confirm allow || finish
check 'the daemon starts (statusline)' 'agentd: idle'
keys ':Agentd touch a file please' Enter
check 'the command shows in the float' 'agentd · command · 1 of 1 open'
check 'where it would run' 'runs in: the workspace-write sandbox, no network'
check 'with the rule' 'rule: mode ask: commands ask'
keys ':AgentdPending' Enter
check 'gF is offered (the float has the cursor: its keys show)' 'gF no sandbox, once · q later'
capture confirm-profile
keys g F
check 'gF runs it without the sandbox' '→ allowed once, without the sandbox' 20
check 'and the run goes on' 'Ran it.' 20
if [ -e "$WS/ran.txt" ]; then ok 'ran.txt exists'; else fail 'ran.txt exists'; fi
capture confirm-allow-full
stop_session confirm

start_session sandboxoff allow "AGENTD_SANDBOX = 'off'" || finish
check 'the daemon starts (statusline)' 'agentd: idle'
keys ':Agentd touch a file please' Enter
check 'the notice is in the chat' '⚠ The kernel sandbox is switched off: every command asks'
check 'the chat header says so' '⚠ the kernel sandbox is switched off'
check 'the request runs unconfined' 'runs in: NO sandbox'
check 'ga says so' 'ga allow unsandboxed'
capture sandbox-off
if screen | grep -qF 'gF no sandbox'; then fail 'no gF where it is not offered'; else ok 'no gF where it is not offered'; fi
keys ':AgentdPending' Enter
check 'the float has the cursor (its keys show)' 'gX never · q later'
keys g a
check 'allowed, it runs' 'Ran it.' 20
stop_session sandboxoff

# --- 11 ----------------------------------------------------------------------
SETUP_EXTRA='requests = { auto_diff = true },' start_session review review || finish
printf 'one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n' >"$WS/list.txt"
check 'the daemon starts (statusline)' 'agentd: idle'
keys ':Agentd shout the list' Enter
check 'the diff tab opens by itself, with the review keys' '3 hunks (gh reject, gy keep) │ gx reject'
check 'the current side' 'current → proposed: list.txt (modified)'
capture review-diff
keys g y
keys g h
check 'gh takes a hunk back; the status counts it' '3 hunks, 1 rejected (gh reject, gy keep)'
capture review-hunk-rejected
keys g a
check 'ga writes what is left' 'Wrote your version of list.txt.' 20
capture review-written
if [ "$(tr '\n' ' ' <"$WS/list.txt")" = 'one TWO three four five six seven eight NINE ten ' ]; then
  ok 'the kept hunks are on disk, not the rejected one'
else
  fail 'the kept hunks are on disk, not the rejected one'
fi
stop_session review

# --- 12 ----------------------------------------------------------------------
start_session inline inline || finish
printf 'alpha = 1\nbeta = 2\ngamma = 3\ndelta = 4\n' >"$WS/calc.py"
check 'the daemon starts (statusline)' 'agentd: idle'
keys ':e calc.py' Enter
check 'calc.py is open' 'gamma = 3'
keys 2G V j j
keys ':AgentdEdit make them uppercase' Enter
check 'the change shows in the buffer, with its keys' 'agentd: hunk 1/2 · gy keep · gh reject'
check 'the added lines under the removed ones' 'BETA = 2'
check 'the second hunk' 'DELTA = 4'
check_not 'no diff tab' '(proposed)'
capture inline-overlay
keys g y
keys g h
check 'gy kept the first hunk' 'hunk 1/2 kept (gh rejects it)'
check 'gh rejected the second' 'hunk 2/2 rejected (gy keeps it)'
capture inline-decided
keys g a
check 'ga writes the kept hunk: the buffer reloads' 'BETA = 2'
waitgone 'agentd: hunk' || fail 'the overlay goes'
capture inline-written
if [ "$(tr '\n' ' ' <"$WS/calc.py")" = 'alpha = 1 BETA = 2 gamma = 3 delta = 4 ' ]; then
  ok 'the kept hunk is on disk, not the rejected one'
else
  fail 'the kept hunk is on disk, not the rejected one'
fi
stop_session inline

# --- 13 ----------------------------------------------------------------------
start_session context context || finish
mkdir -p "$WS/src" && printf 'package cart\n' >"$WS/src/cart.go" && printf '# shop\n' >"$WS/README.md"
git -C "$WS" init -q && git -C "$WS" -c user.name=t -c user.email=t@t add . && git -C "$WS" -c user.name=t -c user.email=t@t commit -qm first
printf 'package cart\n\nfunc Sum() int { return 0 }\n' >"$WS/src/cart.go"
check 'the daemon starts (statusline)' 'agentd: idle'
keys ':AgentdChat' Enter
check 'the chat opens with the compose window' 'compose · <C-s> send'
type_text 'review @'
check '@ opens the menu of the files' '@README.md'
type_text 'car'
check 'the menu narrows to what is typed' '@src/cart.go'
if screen | grep -qF '@README.md'; then fail 'the other files leave the menu'; else ok 'the other files leave the menu'; fi
capture context-files
keys C-y
type_text 'with #di'
check '# offers the git diff' '#diff'
capture context-diff
keys C-y
keys C-s
check 'the prompt as typed' '## > review @src/cart.go with #diff'
check 'what went with it' 'with src/cart.go; git diff'
check 'the model answers' 'Reviewed what you pointed at.' 20
capture context-sent
if curl -s "$URL/_requests" | grep -qF 'Attached by the user, git diff:'; then ok 'the diff reached the model'; else fail 'the diff reached the model'; fi
stop_session context

# --- 14 ----------------------------------------------------------------------
start_session rules rules || finish
check 'the daemon starts (statusline)' 'agentd: idle'
keys ':Agentd touch a file please' Enter
check 'the command asks' 'agentd · command · 1 of 1 open'
keys ':AgentdPending' Enter
check 'with the cursor in the float' 'gX never · gF no sandbox, once · q later'
keys g A
check 'always allowed, it runs' 'Ran it.' 20
keys ':AgentdRules' Enter
check 'the rule the answer stored' '✓ allow  run_cmd   touch ran.txt'
check 'where it is kept' 'Stored by your answers ("always"), for this workspace'
check "agentd's own rules" "agentd's own (they protect .git and .agentd)"
capture rules
keys ':call search("touch ran")' Enter
keys g x
check 'gx revokes it' 'revoked: ✓ allow  run_cmd   touch ran.txt; those calls ask again'
capture rules-revoked
keys q
stop_session rules

# --- 15 ----------------------------------------------------------------------
start_session conversations sessions || finish
check 'the daemon starts (statusline)' 'agentd: idle'
keys ':Agentd a question on the checkout cart' Enter
check_re 'the first run' '— completed · [0-9]+ tokens' 20
check_re 'the context meter in the chat status line' '· [0-9]+% context'
keys ':Agentd tell me more' Enter
check 'the second run' 'Here is more about it.' 20
capture context-meter
keys ':AgentdCompact' Enter
check ':AgentdCompact says what it did' 'compacted: 2 older messages summarized'
check 'the chat marks where' '⇣ compacted: 2 older messages summarized for the model'
keys ':AgentdChat' Enter Escape C-w k g g
check_re 'the header says how full the context is, in tokens, and that it was compacted' 'mode ask · context [0-9.]+k/[0-9]+k \([0-9]+%\) · compacted'
capture compacted
keys ':AgentdSessions!' Enter
check 'the sessions panel' '<CR> open · r rename · dd delete · / search · a all · q close'
keys ':call search("checkout cart")' Enter
keys r
check 'r asks for the new title' 'rename the conversation to:'
keys C-u
type_text 'Cart work'
keys Enter
check 'renamed in the panel' '▸ Cart work  ·  completed  ·  2 runs'
capture sessions-panel
keys q
waitgone '<CR> open · r rename' || fail 'q closes the panel'
check "the chat's status line takes the new title" '· Cart work'
keys ':AgentdSessions nothing-like-this' Enter
check 'a search that finds nothing says so' 'no session mentions "nothing-like-this"'
stop_session conversations

# --- 16 ----------------------------------------------------------------------
if command -v clangd >/dev/null; then
  PRE_LUA="vim.cmd('filetype on')
local clangd
vim.api.nvim_create_autocmd('FileType', { pattern = 'c', callback = function(a)
  clangd = clangd or vim.lsp.start_client({ name = 'clangd', cmd = { 'clangd', '--log=error' }, root_dir = vim.fn.getcwd() })
  vim.lsp.buf_attach_client(a.buf, clangd)
end })" start_session language language "AGENTD_POLICY = 'full-auto', AGENTD_DIAGNOSTICS_TIMEOUT = '20s'" || finish
  printf 'int total(int a, int b) {\n  return a + b;\n}\n\nint main(void) {\n  return total(1, 2);\n}\n' >"$WS/main.c"
  check 'the daemon starts (statusline)' 'agentd: idle'
  keys ':e main.c' Enter
  check 'main.c is open' 'return total(1, 2);'
  sleep 1 # clangd's first look at it
  keys ':Agentd break the build' Enter
  check 'the edit reaches the open buffer' 'return total(1, two);' 20
  check_re 'the diagnostics of the editor under the edit' '⚑ 1 error \([0-9]+ new\) · the editor · <CR> shows them' 30
  check 'the model read them' 'I see the error the editor reports.' 30
  capture language-row
  keys ':AgentdChat' Enter Escape C-w k
  keys ':call search("⚑ 1 error")' Enter
  keys Enter
  check 'Enter shows the error' "main.c:6:19: error: Use of undeclared identifier 'two'"
  capture language-items
  keys ':call search("main.c:6:19")' Enter
  keys Enter
  keys ':echo "at " . expand("%:t") . ":" . line(".") . ":" . col(".")' Enter
  check 'Enter on it opens main.c at the error' 'at main.c:6:19'
  capture language-opened
  stop_session language
else
  echo "skip 16: clangd is not installed"
fi

# --- 17 ----------------------------------------------------------------------
start_session tabs queue || finish
check 'the daemon starts (statusline)' 'agentd: idle'
keys ':Agentd first question' Enter
check 'the first conversation asks' 'First question?'
keys ':AgentdChatTab' Enter
check 'a second chat, in its own tab' 'agentd chat 2 · new'
type_text 'second question'
keys C-s
check 'the second conversation runs and asks' 'Second question?' 20
check 'two requests are open' '2 open requests'
if screen | grep -qF '## > first question'; then fail "the second tab shows its own conversation only"; else ok "the second tab shows its own conversation only"; fi
capture tabs-second
keys Escape ':AgentdChat' Enter Escape C-w k
keys ':call search("? Second question")' Enter
keys Enter
check 'the answer field of the second question' 'Type your answer below'
type_text 'two'
keys Enter
check 'the second conversation goes on' 'Got two.' 20
keys Escape ':tabprevious' Enter
check 'the first tab shows the first conversation' '## > first question'
keys ':AgentdChat' Enter Escape C-w k
keys ':call search("? First question")' Enter
keys Enter
type_text 'one'
keys Enter
check 'the first conversation goes on' 'Got one.' 20
capture tabs-first
stop_session tabs

# --- 18 ----------------------------------------------------------------------
start_session steer steer "AGENTD_POLICY = 'full-auto'" || finish
check 'the daemon starts (statusline)' 'agentd: idle'
keys ':AgentdChat' Enter
type_text 'build it'
keys C-s
check 'the command runs' '$ sleep 3; echo built …'
check 'the compose window says what sending does now' '<C-s> steers the run · <C-q> queues a follow-up'
keys i
type_text 'also run the tests'
keys C-s
check 'the steer shows in the run' '» you: also run the tests'
keys i
type_text 'then write docs'
keys C-q
check 'the follow-up is queued' '— queued: starts when the run before it ends · dd cancels it'
capture steer-queued
check 'the model read the steer' 'Will run the tests too.' 20
check 'the queued run starts after it' 'Docs written.' 20
capture steer-done
stop_session steer

# --- 19 ----------------------------------------------------------------------
start_session plan plan || finish
check 'the daemon starts (statusline)' 'agentd: idle'
keys ':AgentdChat' Enter Escape ':AgentdMode' Enter
check 'the mode picker offers plan' 'plan — reads, then proposes a plan to approve'
capture plan-picker
n=$(screen | sed -n 's/^\([0-9]\): plan — .*/\1/p' | head -1)
keys "$n" Enter Enter
check 'the chat says plan' 'model · plan'
keys ':Agentd add a greeting' Enter
check 'the plan is put to the user' 'Approve the plan?' 20
check 'with its options' '4 Keep planning — say what should change'
keys ':AgentdPending' Enter
check 'the cursor in the float' '1-9 pick'
keys 4
check 'keep planning asks what should change' 'What should change, or anything to add'
type_text 'also in French'
keys Enter
check 'the revised plan' '3. Say hello in French too.' 20
check 'the first plan says what was answered' '→ Keep planning: also in French'
check 'the float shows the revised plan' '│3. Say hello in French too.'
keys ':AgentdPending' Enter
check 'the cursor in the float' '1-9 pick'
keys 1
check 'the approval may take words too' 'with "Approve, and edit files'
keys Enter
check 'the plan is carried out' 'Wrote greeting.txt.' 20
check 'the mode follows the approval' '⇢ mode auto-edit from here on'
check 'the approved plan stays readable' '│ 3. Say hello in French too.'
capture plan-done
stop_session plan
start_session grant grant || finish
check 'the daemon starts (statusline)' 'agentd: idle'
keys ':Agentd run the tests' Enter
check 'a command to confirm' 'Run `go test ./...`' 20
check 'what a lasting answer would allow' 'session / always would also allow:'
capture grant-float
keys ':AgentdPending' Enter
check 'the cursor in the float' 'q later'
keys gx
check 'rejected, the run goes on' 'Not run, then.' 20
stop_session grant

# --- 20 ----------------------------------------------------------------------
start_session sub subagents || finish
printf 'package cart\n\nfunc Total() int { return 0 }\n' >"$WS/cart.go"
check 'the daemon starts (statusline)' 'agentd: idle'
keys ':Agentd survey the cart' Enter
check 'a card for each subagent' '● Subagent: Find the cart total' 20
check 'the work nested in its card' '┊ task: Ask the user which currency totals use.'
check "the subagent's question says whose it is" 'Subagent “Ask about the currency” asks:'
capture sub-asking
keys ':AgentdPending' Enter
check 'the cursor in the float' 'q later'
keys Enter
check 'the answer field' 'Type your answer below'
type_text 'EUR'
keys Enter
check 'the run goes on with both answers' 'Both done: the total is in cart.go, in EUR.' 20
check 'the work folds once done' '┊ ▸ 1 step (<CR> shows them)'
check 'the question says what was answered' '→ answered: EUR'
capture sub-done
stop_session sub
start_session bg background "AGENTD_POLICY = 'full-auto'" || finish
check 'the daemon starts (statusline)' 'agentd: idle'
keys ':Agentd start the server' Enter
check 'the process under its call' '⚙ p1 running · echo serving; sleep 60' 20
check 'the call returned, the process goes on' 'Started it.' 20
check 'the status line counts it' '⚙ 1 running'
capture bg-running
keys ':AgentdChat' Enter Escape C-w k
keys ':call search("⚙ p1")' Enter
keys dd
check 'dd stops it' '⚙ p1 stopped by you · echo serving; sleep 60' 20
keys ':AgentdProcesses' Enter
check ':AgentdProcesses lists it' '1: p1 stopped by you · echo serving; sleep 60'
capture bg-list
keys Enter
stop_session bg

finish
