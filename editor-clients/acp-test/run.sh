#!/bin/sh
# End-to-end test of `agentd acp` with two real ACP clients from npm: the
# official TypeScript client library (test/acp.test.mjs) and acpx, typed into
# a terminal in tmux (test/acpx.test.mjs). Installs the npm dependencies if
# missing, builds agentd and fakemodel, runs the node tests; exits non-zero
# on failure.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cd "$here"
command -v tmux >/dev/null || { echo "run.sh: tmux is required (apt-get install tmux)" >&2; exit 1; }
if [ ! -d node_modules/@agentclientprotocol/sdk ] || [ ! -x node_modules/.bin/acpx ]; then
	# acpx declares node >= 22 but runs on node 20.
	npm install --no-audit --no-fund --engine-strict=false
fi
mkdir -p bin
(cd "$repo" && go build -o "$here/bin/agentd" ./cmd/agentd && go build -o "$here/bin/fakemodel" ./cmd/fakemodel &&
	go build -o "$here/bin/mcpserver" ./tools/mcp/testdata/mcpserver)
# node runs each file as one test, so --test-timeout bounds a whole file:
# acpx.test.mjs's terminal tests take minutes on a busy machine. It is a
# backstop; every wait inside a test has its own bound, scaled to the load
# (lib/scale.mjs).
exec node --test --test-concurrency=1 --test-timeout=1800000 --test-reporter=spec test/
