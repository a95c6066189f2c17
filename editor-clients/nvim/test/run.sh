#!/usr/bin/env bash
# Runs every test of the Neovim client: the unit tests (pure Lua modules),
# the headless end-to-end tests against the real agentd and the scripted
# model, and the tmux test of the terminal UI. Prints one final line
# "N passed, N failed" and exits non-zero on failure.
#
# Needs: nvim (0.7.2+, Debian's is fine), tmux, go. Environment:
#   NVIM=path/to/nvim      another Neovim (default: nvim on PATH)
#   AGENTD_TEST_BIN=dir    where to build agentd and fakemodel (default: a temp dir)
#   AGENTD_SKIP_TMUX=1     skip the tmux test
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
PLUGIN=$(dirname "$HERE")
REPO=$(cd "$PLUGIN/../.." && pwd)
NVIM=${NVIM:-nvim}
export NVIM

total_passed=0
total_failed=0
tally() { # tally LOGFILE EXITCODE NAME
  local line p f
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$1" | tail -1)
  if [ -z "$line" ]; then
    echo "FAIL $3: no result line (exit $2)"
    total_failed=$((total_failed + 1))
    return
  fi
  p=${line%% passed*}
  f=${line#*passed, }; f=${f%% failed}
  total_passed=$((total_passed + p))
  total_failed=$((total_failed + f))
  if [ "$f" -eq 0 ] && [ "$2" -ne 0 ]; then
    echo "FAIL $3: exit code $2"
    total_failed=$((total_failed + 1))
  fi
}

for tool in "$NVIM" go; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "missing: $tool"
    echo "0 passed, 1 failed"
    exit 1
  fi
done
echo "== $("$NVIM" --version | head -1)"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/agentd-nvim-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
export AGENTD_TEST_BIN=${AGENTD_TEST_BIN:-$TMP/bin}
mkdir -p "$AGENTD_TEST_BIN"

echo "== building agentd and fakemodel into $AGENTD_TEST_BIN"
if ! (cd "$REPO" && go build -o "$AGENTD_TEST_BIN/agentd" ./cmd/agentd && go build -o "$AGENTD_TEST_BIN/fakemodel" ./cmd/fakemodel); then
  echo "FAIL go build"
  echo "0 passed, 1 failed"
  exit 1
fi

run_nvim_test() { # NAME FILE
  echo "== $1"
  local log=$TMP/$1.log
  (cd "$PLUGIN" && AGENTD_TEST_TMP=$TMP/$1 timeout 300 "$NVIM" --headless -u NONE -i NONE \
    --cmd "set rtp^=$PLUGIN" -c "luafile $HERE/$2" </dev/null) 2>&1 | tee "$log"
  tally "$log" "${PIPESTATUS[0]}" "$1"
}

mkdir -p "$TMP/unit" "$TMP/e2e"
run_nvim_test unit unit_test.lua
run_nvim_test e2e e2e_test.lua

if [ -n "${AGENTD_SKIP_TMUX:-}" ]; then
  echo "== tmux: skipped (AGENTD_SKIP_TMUX)"
elif ! command -v tmux >/dev/null 2>&1; then
  echo "FAIL tmux: not installed"
  total_failed=$((total_failed + 1))
else
  echo "== tmux"
  log=$TMP/tmux.log
  timeout 180 "$HERE/tmux_test.sh" 2>&1 | tee "$log"
  tally "$log" "${PIPESTATUS[0]}" tmux
fi

echo "$total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ]
