#!/usr/bin/env bash
# The real terminal UI under tmux: the default vim.ui.select (inputlist()),
# the diff tab answered with a real `a`, a command rejected through the
# inputlist, the conversation split and the statusline.
# Prints "N passed, N failed"; exits non-zero on failure.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
PLUGIN=$(dirname "$HERE")
BIN=${AGENTD_TEST_BIN:-/tmp/agentd-bin}
NVIM=${NVIM:-nvim}
T=$(mktemp -d "${TMPDIR:-/tmp}/agentd-tmux.XXXXXX")
S=agentd-nvim-test-$$
WS=$T/ws
mkdir -p "$WS" "$T/state"
passed=0
failed=0

ok() { passed=$((passed + 1)); echo "ok   $1"; }
fail() {
  failed=$((failed + 1)); echo "FAIL $1"
  echo "--- screen:"; tmux capture-pane -p -t "$S" 2>/dev/null | sed 's/^/  | /'
}
cleanup() {
  tmux kill-session -t "$S" 2>/dev/null
  [ -n "${MODEL_PID:-}" ] && kill "$MODEL_PID" 2>/dev/null
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

# the fake model
"$BIN/fakemodel" -script "$HERE/models/tmux.json" >"$T/model.out" 2>"$T/model.err" &
MODEL_PID=$!
for _ in $(seq 100); do grep -q 'listening on' "$T/model.out" 2>/dev/null && break; sleep 0.1; done
URL=$(sed -n 's/^listening on //p' "$T/model.out")
if [ -z "$URL" ]; then echo "FAIL fakemodel did not start"; cat "$T/model.err"; echo "0 passed, 1 failed"; exit 1; fi

cat >"$T/init.lua" <<LUA
vim.cmd('runtime! plugin/agentd.lua')
vim.o.laststatus = 2
vim.o.statusline = "%f %= %{v:lua.require'agentd'.statusline()} "
vim.o.shortmess = vim.o.shortmess .. 'I'
require('agentd').setup({
  cmd = '$BIN/agentd',
  root = '$WS',
  env = { OPENAI_BASE_URL = '$URL', OPENAI_API_KEY = 'test', AGENTD_MODEL = 'fake', AGENTD_STATE_DIR = '$T/state' },
  log_file = '$T/agentd.log',
  conversation = { width = 70 },
})
LUA

tmux new-session -d -s "$S" -x 160 -y 45 \
  "cd '$WS' && TERM=xterm-256color $NVIM -u NONE -i NONE --cmd 'set rtp^=$PLUGIN' -c 'luafile $T/init.lua'"
sleep 0.5

tmux send-keys -t "$S" ':Agentd tmux test: pick a fruit and write it' Enter
check 'choice shown through inputlist()' 'Pick a fruit'
screen=$(tmux capture-pane -p -t "$S")
num=$(echo "$screen" | sed -n 's/^\([0-9]\+\): banana.*/\1/p' | head -1)
if [ -n "$num" ]; then ok 'choice lists banana'; else fail 'choice lists banana'; num=2; fi
tmux send-keys -t "$S" "$num" Enter

check 'write confirmation opens a diff tab' 'current → proposed: fruit.txt (added)'
check 'diff tab shows the keys' 'a allow · s session · A always · q reject'
check 'diff tab shows the proposed text' 'banana'
tmux send-keys -t "$S" a

check 'command confirmation shows the command and cwd' 'agentd wants to run: touch ran.txt'
screen=$(tmux capture-pane -p -t "$S")
num=$(echo "$screen" | sed -n 's/^\([0-9]\+\): Reject$/\1/p' | head -1)
if [ -n "$num" ]; then ok 'command confirmation offers Reject'; else fail 'command confirmation offers Reject'; num=4; fi
tmux send-keys -t "$S" "$num" Enter

check 'conversation streams the answer' 'All done in tmux.' 20
check 'conversation shows the files changed' 'A fruit.txt'
check 'statusline shows the run state' 'agentd: completed'

if [ "$(cat "$WS/fruit.txt" 2>/dev/null)" = "banana" ]; then ok 'fruit.txt is on disk'; else fail 'fruit.txt is on disk'; fi
if [ ! -e "$WS/ran.txt" ]; then ok 'the rejected command did not run'; else fail 'the rejected command did not run'; fi

tmux capture-pane -p -t "$S" >"$T/final-screen.txt"
if [ -n "${AGENTD_TEST_SHOW:-}" ]; then cat "$T/final-screen.txt"; fi
tmux send-keys -t "$S" Escape ':qa!' Enter
for _ in $(seq 30); do tmux has-session -t "$S" 2>/dev/null || break; sleep 0.1; done
if tmux has-session -t "$S" 2>/dev/null; then fail 'nvim quits'; else ok 'nvim quits'; fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
