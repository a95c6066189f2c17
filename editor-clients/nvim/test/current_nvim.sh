#!/usr/bin/env bash
# Prints the path of a current Neovim unpacked from Debian's SUITE (default
# sid: Neovim 0.12; trixie: 0.10) next to the system's, without installing
# anything: a private apt sources list and package lists, `apt-get
# download` of neovim, its runtime, its libraries (libc included: they need
# a newer glibc than bookworm's) and patchelf, `dpkg-deb -x` into a cache
# folder, then patchelf points nvim at the unpacked loader and libraries
# (its TUI re-execs itself, so running it through ld.so is not enough) and
# a wrapper sets VIMRUNTIME and LUA_CPATH.
#
#   current_nvim.sh [SUITE]     -> /path/to/nvim (the wrapper), exit 0
#
# AGENTD_DEBIAN_MIRROR overrides the mirror (default: the one apt uses).
# Exit 2, with the reason on stderr, when the archive cannot be reached;
# exit 1 on any other failure. The result is cached in
# ${AGENTD_NVIM_CACHE:-${XDG_CACHE_HOME:-~/.cache}/agentd-nvim-test}/SUITE.
set -euo pipefail
SUITE=${1:-sid}
BASE=${AGENTD_NVIM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agentd-nvim-test}
DIR=$BASE/$SUITE
WRAPPER=$DIR/nvim

# One unpacks, others (suites run at once, two checkouts) wait for it and use
# what it unpacked: the lock is held to the end.
mkdir -p "$BASE"
exec 9>"$BASE/$SUITE.lock"
flock 9

if [ -x "$WRAPPER" ] && "$WRAPPER" --version >/dev/null 2>&1; then
  echo "$WRAPPER"
  exit 0
fi

for tool in apt-get apt-cache dpkg-deb; do
  command -v "$tool" >/dev/null || { echo "current_nvim: $tool is missing (not a Debian system?)" >&2; exit 1; }
done

# The Debian mirror this machine already uses (deb822 or one-line format).
mirror() {
  local uri
  uri=$(sed -n 's/^URIs:[[:space:]]*\(http[^[:space:]]*\/debian\)\/*[[:space:]]*$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
  [ -n "$uri" ] || uri=$(sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\(http[^[:space:]]*\/debian\)\/*[[:space:]].*/\2/p' /etc/apt/sources.list 2>/dev/null | head -1)
  echo "${uri:-http://deb.debian.org/debian}"
}
MIRROR=${AGENTD_DEBIAN_MIRROR:-$(mirror)}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$KEYRING" ] || { echo "current_nvim: $KEYRING is missing (apt-get install debian-archive-keyring)" >&2; exit 1; }

rm -rf "$DIR"
mkdir -p "$DIR/apt/lists/partial" "$DIR/apt/cache/archives/partial" "$DIR/debs" "$DIR/root"
echo "deb [signed-by=$KEYRING] $MIRROR $SUITE main" >"$DIR/apt/sources.list"
A=(-o "Dir::Etc::sourcelist=$DIR/apt/sources.list" -o Dir::Etc::sourceparts=/nonexistent
  -o "Dir::State::Lists=$DIR/apt/lists" -o "Dir::Cache=$DIR/apt/cache"
  -o DPkg::Lock::Timeout=600 -o APT::Sandbox::User=root)
LOG=$DIR/apt.log

if ! apt-get "${A[@]}" update >"$LOG" 2>&1 || grep -q '^\(Err\|W: Failed\)' "$LOG"; then
  echo "current_nvim: cannot reach the Debian archive ($MIRROR, suite $SUITE):" >&2
  grep -E '^(Err|W:|E:)' "$LOG" | head -3 >&2
  exit 2
fi

# neovim, its runtime, patchelf, and everything they depend on (libc6 too)
mapfile -t PKGS < <(apt-cache "${A[@]}" depends --recurse --no-recommends --no-suggests --no-conflicts \
  --no-breaks --no-replaces --no-enhances neovim neovim-runtime patchelf | grep -v '^[ <]' | sort -u)
if ! (cd "$DIR/debs" && apt-get "${A[@]}" download "${PKGS[@]}") >>"$LOG" 2>&1; then
  echo "current_nvim: apt-get download failed; see $LOG" >&2
  exit 2
fi
for deb in "$DIR"/debs/*.deb; do
  dpkg-deb -x "$deb" "$DIR/root"
done

LD=$(find "$DIR/root/usr/lib" -path '*-linux-gnu/ld-linux*.so.*' | head -1)
[ -n "$LD" ] || { echo "current_nvim: no dynamic loader among the unpacked files" >&2; exit 1; }
LIB=$(dirname "$LD")
"$LD" --library-path "$LIB" "$DIR/root/usr/bin/patchelf" --set-interpreter "$LD" --set-rpath "$LIB" "$DIR/root/usr/bin/nvim"

cat >"$WRAPPER" <<EOF
#!/bin/sh
# Neovim from Debian $SUITE, unpacked by current_nvim.sh
export VIMRUNTIME='$DIR/root/usr/share/nvim/runtime'
export LUA_CPATH='$LIB/lua/5.1/?.so;;'
exec '$DIR/root/usr/bin/nvim' "\$@"
EOF
chmod +x "$WRAPPER"
if ! "$WRAPPER" --version >/dev/null 2>&1; then
  echo "current_nvim: the unpacked nvim does not start: $("$WRAPPER" --version 2>&1 | head -3)" >&2
  exit 1
fi
echo "$WRAPPER"
