#!/usr/bin/env bash
# Runs every test of the Neovim client, on Debian's Neovim (0.7.2 on
# bookworm) and on a current Neovim unpacked from Debian sid
# (test/current_nvim.sh): the unit tests (the protocol contract, the pure
# modules), the headless end-to-end tests against the real agentd and the
# scripted model, and the tmux tests of the terminal UI. Prints one final
# line "N passed, N failed" and exits non-zero on failure.
#
# Needs go; installs neovim and tmux with apt-get when they are missing.
# Environment:
#   NVIM=path/to/nvim         test this Neovim only
#   AGENTD_NVIM_SUITE=trixie  the Debian suite of the current Neovim (default sid)
#   AGENTD_NVIM_CURRENT=0     skip the current Neovim
#   AGENTD_TEST_BIN=dir       where to build agentd and fakemodel (default: a temp dir)
#   AGENTD_SKIP_TMUX=1        skip the tmux tests
#   AGENTD_TEST_CAPTURES=dir  keep the tmux screen captures there
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
PLUGIN=$(dirname "$HERE")
REPO=$(cd "$PLUGIN/../.." && pwd)

total_passed=0
total_failed=0
summary=()
tally() { # tally LOGFILE EXITCODE NAME -> adds to the counts, sets last_p/last_f
  local line p f
  last_p=0 last_f=0
  line=$(grep -aE '(^|[^0-9])[0-9]+ passed, [0-9]+ failed$' "$1" | tail -1 | grep -oE '[0-9]+ passed, [0-9]+ failed$')
  if [ -z "$line" ]; then
    echo "FAIL $3: no result line (exit $2)"
    last_f=1
  else
    p=${line%% passed*}
    f=${line#*passed, }; f=${f%% failed}
    last_p=$p last_f=$f
    if [ "$f" -eq 0 ] && [ "$2" -ne 0 ]; then
      echo "FAIL $3: exit code $2"
      last_f=1
    fi
  fi
  total_passed=$((total_passed + last_p))
  total_failed=$((total_failed + last_f))
}
fail_setup() {
  echo "FAIL $1"
  total_failed=$((total_failed + 1))
}

apt_install() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "missing: $* (install them: apt-get install -y $*)"
    return 1
  fi
  apt-get -o DPkg::Lock::Timeout=600 install -y "$@" >/dev/null
}

command -v go >/dev/null 2>&1 || { echo "missing: go"; echo "0 passed, 1 failed"; exit 1; }
missing=()
[ -n "${NVIM:-}" ] || command -v nvim >/dev/null 2>&1 || missing+=(neovim)
[ -n "${AGENTD_SKIP_TMUX:-}" ] || command -v tmux >/dev/null 2>&1 || missing+=(tmux)
if [ ${#missing[@]} -gt 0 ]; then
  echo "== installing ${missing[*]}"
  apt_install "${missing[@]}" || { echo "0 passed, 1 failed"; exit 1; }
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/agentd-nvim-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
export AGENTD_TEST_BIN=${AGENTD_TEST_BIN:-$TMP/bin}
mkdir -p "$AGENTD_TEST_BIN"

echo "== building agentd, fakemodel and the test MCP server into $AGENTD_TEST_BIN"
if ! (cd "$REPO" && go build -o "$AGENTD_TEST_BIN/agentd" ./cmd/agentd && go build -o "$AGENTD_TEST_BIN/fakemodel" ./cmd/fakemodel \
    && go build -o "$AGENTD_TEST_BIN/mcpserver" ./tools/mcp/testdata/mcpserver); then
  echo "FAIL go build"
  echo "0 passed, 1 failed"
  exit 1
fi

# The Neovims to test.
NVIMS=()
if [ -n "${NVIM:-}" ]; then
  NVIMS=("$NVIM")
else
  NVIMS=("$(command -v nvim)")
  if [ "${AGENTD_NVIM_CURRENT:-1}" != 0 ]; then
    suite=${AGENTD_NVIM_SUITE:-sid}
    echo "== a current Neovim from Debian $suite"
    current=$("$HERE/current_nvim.sh" "$suite" 2>"$TMP/current.err")
    case $? in
      0) NVIMS+=("$current") ;;
      2) echo "SKIP the current Neovim: the Debian archive is unreachable, so only $("${NVIMS[0]}" --version | head -1) is tested:"
         sed 's/^/  /' "$TMP/current.err" ;;
      *) cat "$TMP/current.err"; fail_setup "current_nvim.sh $suite" ;;
    esac
  fi
fi

# A backstop for a test file that hangs: every wait inside the tests has a
# bound of its own, scaled to the machine's load (test/lib.lua t.scale,
# tmux_test.sh scaled), so a busy machine takes longer without failing.
BACKSTOP=${AGENTD_NVIM_BACKSTOP:-1800}

run_nvim_test() { # NVIM DIR NAME FILE
  local log=$2/$3.log
  echo "-- $3"
  (cd "$PLUGIN" && AGENTD_TEST_TMP=$2/$3 timeout "$BACKSTOP" "$1" --headless -u NONE -i NONE -n \
    --cmd "set rtp^=$PLUGIN" -c "luafile $HERE/$4" </dev/null) 2>&1 | tee "$log"
  tally "$log" "${PIPESTATUS[0]}" "$3"
}

for nv in "${NVIMS[@]}"; do
  version=$("$nv" --version | head -1)
  echo "== $version ($nv)"
  dir=$TMP/$(echo "$version" | tr -c 'A-Za-z0-9.\n' '_')
  mkdir -p "$dir"
  start=$(date +%s.%N)
  before_p=$total_passed before_f=$total_failed
  run_nvim_test "$nv" "$dir" unit unit_test.lua
  run_nvim_test "$nv" "$dir" e2e e2e_test.lua
  if [ -n "${AGENTD_SKIP_TMUX:-}" ]; then
    echo "-- tmux: skipped (AGENTD_SKIP_TMUX)"
  else
    echo "-- tmux"
    caps=
    [ -n "${AGENTD_TEST_CAPTURES:-}" ] && caps=$AGENTD_TEST_CAPTURES/$(basename "$dir")
    NVIM=$nv AGENTD_TEST_CAPTURES=$caps timeout "$BACKSTOP" "$HERE/tmux_test.sh" 2>&1 | tee "$dir/tmux.log"
    tally "$dir/tmux.log" "${PIPESTATUS[0]}" tmux
  fi
  secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  summary+=("$version: $((total_passed - before_p)) passed, $((total_failed - before_f)) failed in $secs s")
done

echo "== summary"
for line in "${summary[@]}"; do
  echo "$line"
done
echo "$total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ]
