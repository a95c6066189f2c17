#!/usr/bin/env bash
# Installs code-server 4.100.3 (VS Code 1.100.3, node 20) into $CS_DIR without network access
# beyond the npm registry (recipe: shared/research/clients.md §b1). Idempotent: a marker file
# records a finished install.
set -euo pipefail
CS_VERSION="${CS_VERSION:-4.100.3}"
CS_DIR="${CS_DIR:-$(cd "$(dirname "$0")/.." && pwd)/.e2e-cache/code-server-$CS_VERSION}"
if [ -f "$CS_DIR/.installed" ]; then echo "code-server $CS_VERSION cached in $CS_DIR"; exit 0; fi
export npm_config_yes=true npm_config_nodedir="${npm_config_nodedir:-/usr}" npm_config_unsafe_perm=true
export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false
rm -rf "$CS_DIR"; mkdir -p "$CS_DIR"; cd "$CS_DIR"
echo '{"private":true}' > package.json
echo "[setup] npm install code-server@$CS_VERSION"
npm install --no-save --ignore-scripts --no-package-lock "code-server@$CS_VERSION"
cd node_modules/code-server/lib/vscode
echo "[setup] vscode deps"
npm install --omit=dev --ignore-scripts --no-package-lock
mkdir -p node_modules/@vscode/ripgrep/bin
ln -sf "$(command -v rg || echo /usr/bin/rg)" node_modules/@vscode/ripgrep/bin/rg
echo "[setup] npm rebuild (native modules)"
# Not a bare `npm rebuild`: kerberos (proxy auth only) needs libkrb5-dev, which we do not assume.
npm rebuild node-pty @vscode/spdlog native-watchdog @parcel/watcher
ln -sfn node_modules node_modules.asar
(cd bin/remote-cli && ln -sf code-linux.sh code-server)
(cd bin/helpers && ln -sf browser-linux.sh browser.sh)
echo "[setup] built-in extensions deps"
(cd extensions && npm install --omit=dev --no-package-lock)
cd ../../..
npm rebuild argon2 || echo "[setup] argon2 rebuild failed (only needed for password auth)"
touch "$CS_DIR/.installed"
echo "[setup] code-server $CS_VERSION installed in $CS_DIR"
