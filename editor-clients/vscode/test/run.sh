#!/usr/bin/env bash
# The VS Code client's test command: unit tests (node:test) and the end-to-end test in a real
# VS Code (code-server + Debian's Chromium + playwright-core) against the real agentd binary and
# the scripted fake model. Installs what it needs (Debian's chromium and ripgrep, the npm
# packages, code-server into .e2e-cache/); expects node 20 and go on the PATH. Exits non-zero on
# any failure.
set -uo pipefail
HERE="$(cd "$(dirname "$0")/.." && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
cd "$HERE"
CACHE="$HERE/.e2e-cache"
BIN="$CACHE/bin"
export CS_VERSION="${CS_VERSION:-4.100.3}"
export CS_DIR="$CACHE/code-server-$CS_VERSION"
export CHROMIUM="${CHROMIUM:-$(command -v chromium || echo /usr/bin/chromium)}"
export npm_config_nodedir="${npm_config_nodedir:-/usr}" npm_config_yes=true npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false
mkdir -p "$BIN" test/artifacts

step() { echo; echo "=== $* ($(date +%T))"; }
die() { echo "run.sh: $*" >&2; exit 1; }

for tool in node npm go; do command -v "$tool" >/dev/null || die "$tool is not installed"; done

need=()
[ -x "$CHROMIUM" ] || need+=(chromium)
command -v rg >/dev/null || need+=(ripgrep)
if ((${#need[@]})); then
  step "apt-get install ${need[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq &&
    DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${need[@]}" >/dev/null ||
    die "could not install ${need[*]}"
  CHROMIUM="$(command -v chromium || echo /usr/bin/chromium)"
fi

step "npm dependencies"
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-fund --no-audit || die "npm ci failed"
fi

step "code-server $CS_VERSION"
bash test/setup-code-server.sh || die "code-server setup failed"

step "go build agentd, fakemodel and the test MCP server"
(cd "$REPO" && go build -o "$BIN/agentd" ./cmd/agentd && go build -o "$BIN/fakemodel" ./cmd/fakemodel &&
  go build -o "$BIN/mcpserver" ./tools/mcp/testdata/mcpserver) || die "go build failed"

step "build and package the extension"
npm run --silent package >test/artifacts/package.log 2>&1 || { cat test/artifacts/package.log; die "build/package failed"; }
tail -1 test/artifacts/package.log

status=0
if [ -z "${SKIP_UNIT:-}" ]; then
  step "unit tests"
  t0=$SECONDS
  node --test test/unit/*.test.mjs || status=1
  echo "unit tests: $((SECONDS - t0)) s"
fi

step "end-to-end test (code-server + chromium)"
t0=$SECONDS
AGENTD_BIN="$BIN/agentd" FAKEMODEL_BIN="$BIN/fakemodel" MCPSERVER_BIN="$BIN/mcpserver" VSIX="$HERE/agentd-vscode.vsix" E2E_ARTIFACTS="$HERE/test/artifacts/e2e" E2E_ARTIFACTS_31="$HERE/test/artifacts/issue31" \
  node --test --test-concurrency=1 ${E2E_FILES:-test/e2e/e2e.test.mjs test/e2e/issue31.test.mjs} || status=1
echo "end-to-end: $((SECONDS - t0)) s"

step "done: $([ $status = 0 ] && echo PASS || echo FAIL); screenshots in test/artifacts/e2e/"
exit $status
