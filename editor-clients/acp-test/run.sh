#!/bin/sh
# End-to-end test of `agentd acp` with the official ACP TypeScript client.
# Installs the npm dependencies if missing, builds agentd and fakemodel, runs
# the node tests; exits non-zero on failure.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cd "$here"
if [ ! -d node_modules/@agentclientprotocol/sdk ]; then
	npm install --no-audit --no-fund
fi
mkdir -p bin
(cd "$repo" && go build -o "$here/bin/agentd" ./cmd/agentd && go build -o "$here/bin/fakemodel" ./cmd/fakemodel)
exec node --test --test-concurrency=1 --test-reporter=spec test/
