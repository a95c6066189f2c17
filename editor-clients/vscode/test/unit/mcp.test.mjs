import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { McpWatch } = require('../../out/extensions.js');
const { AgentController } = require('../../out/agent.js');
const { RunStore } = require('../../out/runStore.js');
const { RequestBook } = require('../../out/requests.js');

function fakeRpc(handlers) {
  const calls = [];
  return {
    calls,
    async request(method, params) {
      calls.push({ method, params });
      return handlers[method](params);
    },
    notify() {},
  };
}

const server = (name, state) => ({ name, origin: 'user', transport: 'stdio', state });

test('MCP: mcp/changed asks mcp/status again (a burst of changes, one request), so the status bar follows without the view', async () => {
  let states = ['starting', 'starting'];
  const rpc = fakeRpc({ 'mcp/status': () => ({ servers: [server('a', states[0]), server('b', states[1])] }) });
  const seen = [];
  const watch = new McpWatch(rpc, () => 's1', (w) => seen.push(w.list.map((s) => s.state).join(',')), 20);
  let mcpChanged = 0;
  const c = new AgentController(rpc, new RunStore(), new RequestBook(async () => ({})), { onMcpChanged: () => (mcpChanged++, watch.changed()) });
  await watch.refresh();
  assert.deepEqual(seen, ['starting,starting']);
  states = ['connected', 'failed'];
  c.handleNotification('mcp/changed', { name: 'a', state: 'connected' });
  c.handleNotification('mcp/changed', { name: 'b', state: 'failed' });
  assert.equal(mcpChanged, 2);
  await new Promise((r) => setTimeout(r, 80));
  assert.deepEqual(seen, ['starting,starting', 'connected,failed']);
  assert.equal(rpc.calls.filter((x) => x.method === 'mcp/status').length, 2, 'the two changes made one request');
  assert.deepEqual(rpc.calls[1].params, { sessionId: 's1' });
});

test('MCP: enable, disable and restart name the server (and the session shown); the list follows', async () => {
  const rpc = fakeRpc({
    'mcp/status': () => ({ servers: [server('a', 'disabled')] }),
    'mcp/disable': ({ name }) => ({ server: server(name, 'disabled') }),
    'mcp/enable': ({ name }) => ({ server: server(name, 'starting') }),
    'mcp/restart': ({ name }) => ({ server: server(name, 'starting') }),
  });
  const watch = new McpWatch(rpc, () => undefined, () => undefined, 10);
  await watch.refresh();
  const st = await watch.act('a', 'enable');
  assert.equal(st.state, 'starting');
  await watch.act('a', 'restart');
  await watch.act('a', 'disable');
  assert.deepEqual(
    rpc.calls.filter((x) => x.method !== 'mcp/status').map((x) => [x.method, x.params]),
    [['mcp/enable', { name: 'a' }], ['mcp/restart', { name: 'a' }], ['mcp/disable', { name: 'a' }]],
  );
});

test('MCP: an error asking for the servers is kept for the view, never thrown', async () => {
  const watch = new McpWatch(fakeRpc({ 'mcp/status': () => { throw new Error('gone'); } }), () => undefined, () => undefined);
  await watch.refresh();
  assert.match(watch.error, /gone/);
});
