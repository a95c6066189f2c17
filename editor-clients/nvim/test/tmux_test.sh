#!/usr/bin/env bash
# The real terminal UI under tmux, with Neovim's built-in vim.ui (input()
# and inputlist()):
#   1. a choice answered through inputlist(), a write approved in the diff tab
#      with a real `a`, a command rejected through inputlist(); the
#      conversation split and the statusline;
#   2. a question in input() that expires in the daemon: agent/inputResolved
#      closes the prompt.
# Prints "N passed, N failed"; exits non-zero on failure.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
PLUGIN=$(dirname "$HERE")
BIN=${AGENTD_TEST_BIN:-/tmp/agentd-bin}
NVIM=${NVIM:-nvim}
T=$(mktemp -d "${TMPDIR:-/tmp}/agentd-tmux.XXXXXX")
S=agentd-nvim-test-$$
MODEL_PID=
passed=0
failed=0

ok() { passed=$((passed + 1)); echo "ok   $1"; }
fail() {
  failed=$((failed + 1)); echo "FAIL $1"
  echo "--- screen:"; tmux capture-pane -p -t "$S" 2>/dev/null | sed 's/^/  | /'
}
cleanup() {
  tmux kill-session -t "$S" 2>/dev/null
  [ -n "$MODEL_PID" ] && kill "$MODEL_PID" 2>/dev/null
  if [ "$failed" -gt 0 ]; then
    echo "--- daemon log:"; tail -20 "$T/agentd.log" 2>/dev/null
    echo "(kept $T)"
  else
    rm -rf "$T"
  fi
}
trap cleanup EXIT

# waitfor TEXT [SECONDS]: until the screen shows TEXT
waitfor() {
  local n=$(( ${2:-15} * 10 ))
  for _ in $(seq "$n"); do
    tmux capture-pane -p -t "$S" 2>/dev/null | grep -qF -- "$1" && return 0
    sleep 0.1
  done
  return 1
}
check() { # check NAME TEXT [SECONDS]
  if waitfor "$2" "${3:-15}"; then ok "$1"; else fail "$1 (screen never showed \"$2\")"; fi
}

# start_session NAME SCRIPT [EXTRA_ENV_LUA]: a fake model, and nvim in tmux session $S
start_session() {
  local name=$1 script=$2 extra=${3:-}
  mkdir -p "$T/$name/ws" "$T/$name/state"
  WS=$T/$name/ws
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
require('agentd').setup({
  cmd = '$BIN/agentd',
  root = '$WS',
  env = { OPENAI_BASE_URL = '$URL', OPENAI_API_KEY = 'test', AGENTD_MODEL = 'fake', AGENTD_STATE_DIR = '$T/$name/state', $extra },
  log_file = '$T/agentd.log',
  conversation = { width = 70 },
})
LUA
  tmux new-session -d -s "$S" -x 160 -y 45 \
    "cd '$WS' && TERM=xterm-256color $NVIM -u NONE -i NONE --cmd 'set rtp^=$PLUGIN' -c 'luafile $T/$name/init.lua'"
  sleep 0.5
}

stop_session() {
  tmux send-keys -t "$S" Escape ':qa!' Enter
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

tmux send-keys -t "$S" ':Agentd tmux test: pick a fruit and write it' Enter
check 'choice shown through inputlist()' 'Pick a fruit'
num=$(tmux capture-pane -p -t "$S" | sed -n 's/^\([0-9]\+\): banana.*/\1/p' | head -1)
if [ -n "$num" ]; then ok 'choice lists banana'; else fail 'choice lists banana'; num=2; fi
tmux send-keys -t "$S" "$num" Enter

check 'write confirmation opens a diff tab' 'current → proposed: fruit.txt (added)'
check 'diff tab shows the keys' 'a allow · s session · A always · q reject'
check 'diff tab shows the proposed text' 'banana'
tmux send-keys -t "$S" a

check 'command confirmation shows the command and cwd' 'agentd wants to run: touch ran.txt   (in .)'
num=$(tmux capture-pane -p -t "$S" | sed -n 's/^\([0-9]\+\): Reject$/\1/p' | head -1)
if [ -n "$num" ]; then ok 'command confirmation offers Reject'; else fail 'command confirmation offers Reject'; num=4; fi
tmux send-keys -t "$S" "$num" Enter

check 'conversation streams the answer' 'All done in tmux.' 20
check 'conversation shows the files changed' 'A fruit.txt'
check 'statusline shows the run state' 'agentd: completed'
if [ "$(cat "$WS/fruit.txt" 2>/dev/null)" = "banana" ]; then ok 'fruit.txt is on disk'; else fail 'fruit.txt is on disk'; fi
if [ ! -e "$WS/ran.txt" ]; then ok 'the rejected command did not run'; else fail 'the rejected command did not run'; fi
if [ -n "${AGENTD_TEST_SHOW:-}" ]; then tmux capture-pane -p -t "$S"; fi
stop_session main

# --- 2 -----------------------------------------------------------------------
start_session timeout timeout "AGENTD_QUESTION_TIMEOUT = '2s'" || finish
tmux send-keys -t "$S" ':Agentd what is my favourite colour?' Enter
check 'question shown through input()' 'agentd: Which colour do you like?'
check 'the expired question is marked in the conversation' '→ timeout' 15
check 'the model goes on without the answer' 'No answer, so teal it is.' 15
# if input() were still open, this would be typed into it
tmux send-keys -t "$S" ':echo "prompt" . "-closed"' Enter
if waitfor 'prompt-closed' 5 && tmux capture-pane -p -t "$S" | grep -q '^prompt-closed *$'; then
  ok 'agent/inputResolved closed the input() prompt'
else
  fail 'agent/inputResolved closed the input() prompt'
fi
if [ -n "${AGENTD_TEST_SHOW:-}" ]; then tmux capture-pane -p -t "$S"; fi
stop_session timeout

finish
