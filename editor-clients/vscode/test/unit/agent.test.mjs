import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { AgentController } = require('../../out/agent.js');
const { RunStore } = require('../../out/runStore.js');
const { RequestBook } = require('../../out/requests.js');

const tick = () => new Promise((r) => setImmediate(r));

function fakeRpc(handlers) {
  const calls = [];
  return {
    calls,
    async request(method, params) {
      calls.push({ method, params });
      const h = handlers[method];
      if (!h) throw Object.assign(new Error(`no ${method}`), { code: -32601 });
      return h(params);
    },
    notify(method, params) {
      calls.push({ method, params, notification: true });
    },
  };
}

function setup(handlers) {
  const rpc = fakeRpc(handlers);
  const queue = new RequestBook(async (a) => rpc.request(a.method, a.params));
  const c = new AgentController(rpc, new RunStore(), queue);
  const shown = { get ids() { return queue.list().map((o) => o.req.requestId); } };
  return { rpc, c, queue, shown };
}

const ev = (seq, method, params) => ({ seq, method, params: { runId: 'r1', sessionId: 's1', seq, ...params } });

test('a seq gap is filled with agent/events from the last seq seen', async () => {
  const { rpc, c } = setup({
    'agent/events': ({ afterSeq }) => ({
      state: 'running',
      events: [ev(2, 'agent/update', { update: { kind: 'message_chunk', text: 'a' } }), ev(3, 'agent/update', { update: { kind: 'message_chunk', text: 'b' } })].filter((e) => e.seq > afterSeq),
    }),
  });
  c.handleNotification('agent/runState', { runId: 'r1', sessionId: 's1', seq: 1, state: 'running' });
  c.handleNotification('agent/update', { runId: 'r1', sessionId: 's1', seq: 3, update: { kind: 'message_chunk', text: 'b' } });
  await c.catchUp('r1');
  assert.deepEqual(rpc.calls.filter((x) => x.method === 'agent/events').map((x) => x.params), [{ runId: 'r1', afterSeq: 1 }]);
  assert.equal(c.store.get('r1').timeline[0].text, 'ab');
});

test('inputRequest reaches the queue; inputResolved takes it away', async () => {
  const { c, queue, shown } = setup({});
  c.handleNotification('agent/inputRequest', { runId: 'r1', sessionId: 's1', seq: 1, requestId: 'q1', kind: 'question', title: 't', message: 'm', createdAt: '' });
  await tick();
  assert.deepEqual(shown.ids, ['q1']);
  c.handleNotification('agent/inputResolved', { runId: 'r1', sessionId: 's1', seq: 2, requestId: 'q1', outcome: 'cancelled', by: 'cancel' });
  assert.equal(queue.size, 0);
});

test('after a restart: prompts come back from agent/pending, runs catch up, paused runs resume', async () => {
  const { rpc, c, queue, shown } = setup({
    'agent/pending': () => ({ requests: [{ runId: 'r2', sessionId: 's2', seq: 4, requestId: 'q9', kind: 'choice', title: 'Pick', message: 'm', createdAt: '2026-01-01T00:00:00Z', pendingCount: 1 }] }),
    'agent/events': ({ runId, afterSeq }) =>
      runId === 'r1'
        ? { state: 'paused', events: [ev(2, 'agent/runState', { state: 'paused' })].filter((e) => e.seq > afterSeq) }
        : { state: 'requires_action', events: [] },
    'agent/resume': () => ({}),
  });
  c.handleNotification('agent/runState', { runId: 'r1', sessionId: 's1', seq: 1, state: 'running' });
  c.disconnected();
  await c.reconnected();
  await tick();
  const methods = rpc.calls.map((x) => x.method);
  assert.ok(methods.includes('agent/pending'));
  assert.deepEqual(rpc.calls.find((x) => x.method === 'agent/events').params, { runId: 'r1', afterSeq: 1 });
  assert.deepEqual(rpc.calls.find((x) => x.method === 'agent/resume').params, { runId: 'r1' });
  assert.deepEqual(queue.list().map((i) => i.req.requestId), ['q9']);
  assert.deepEqual(shown.ids, ['q9']);
});

test('a replayed request that was also resolved in the replay never shows', async () => {
  const { c, shown } = setup({
    'agent/events': () => ({
      state: 'running',
      events: [ev(1, 'agent/inputRequest', { requestId: 'q1', kind: 'question', title: 't', message: 'm', createdAt: '' }), ev(2, 'agent/inputResolved', { requestId: 'q1', outcome: 'timeout', by: 'timeout' })],
    }),
  });
  await c.catchUp('r1');
  await tick();
  assert.deepEqual(shown.ids, []);
  assert.equal(c.store.get('r1').requests.q1.outcome, 'timeout');
});

test('runs start in the current session and $/progress tracks indexing', async () => {
  const { rpc, c } = setup({ 'agent/run': (p) => ({ runId: 'r7', sessionId: p.sessionId ?? 's_new' }) });
  await c.run({ prompt: 'one' });
  await c.run({ prompt: 'two' });
  assert.equal(rpc.calls[1].params.sessionId, 's_new');
  c.newSession();
  await c.run({ prompt: 'three' });
  assert.equal(rpc.calls[2].params.sessionId, undefined);
  c.handleProgressCreate({ token: 'tok' });
  c.handleNotification('$/progress', { token: 'tok', value: { kind: 'begin', title: 'Indexing', percentage: 0 } });
  c.handleNotification('$/progress', { token: 'tok', value: { kind: 'report', message: '2/4 files', percentage: 50 } });
  assert.equal(c.index.active, true);
  assert.equal(c.index.percentage, 50);
  c.handleNotification('$/progress', { token: 'tok', value: { kind: 'end', message: '4 files' } });
  assert.equal(c.index.active, false);
});

test('sessions are listed with {} params (vscode-jsonrpc would send [null] for none)', async () => {
  const { rpc, c } = setup({ 'agent/sessions': (p) => ({ sessions: p && typeof p === 'object' && !Array.isArray(p) ? [{ sessionId: 's1' }] : [] }) });
  assert.deepEqual((await c.sessions()).map((s) => s.sessionId), ['s1']);
  assert.deepEqual(rpc.calls[0].params, {});
});

test('a snapshot brings a two-run conversation back after a window reload, prompts included', async () => {
  const events = {
    r1: [ev(1, 'agent/runState', { state: 'running' }), ev(2, 'agent/update', { update: { kind: 'message_chunk', text: 'first answer' } }), ev(3, 'agent/runState', { state: 'completed', stopReason: 'end_turn' })],
    r2: [
      { seq: 1, method: 'agent/runState', params: { runId: 'r2', sessionId: 's1', seq: 1, state: 'running' } },
      { seq: 2, method: 'agent/inputRequest', params: { runId: 'r2', sessionId: 's1', seq: 2, requestId: 'q2', kind: 'question', title: 'Question', message: 'Which?', createdAt: '2026-01-01T00:00:00Z' } },
      { seq: 3, method: 'agent/runState', params: { runId: 'r2', sessionId: 's1', seq: 3, state: 'requires_action' } },
    ],
  };
  const before = setup({ 'agent/run': (p) => ({ runId: p.prompt === 'one' ? 'r1' : 'r2', sessionId: 's1' }) });
  await before.c.run({ prompt: 'one' }, { prompt: 'one', attached: ['cart.go'] });
  await before.c.run({ prompt: 'two' });
  const snap = JSON.parse(JSON.stringify(before.c.snapshot()));
  assert.equal(snap.sessionId, 's1');
  assert.deepEqual(snap.runs.map((r) => [r.runId, r.prompt]), [['r1', 'one'], ['r2', 'two']]);

  const after = setup({
    'agent/events': ({ runId, afterSeq }) => ({ state: runId === 'r1' ? 'completed' : 'requires_action', events: events[runId].filter((e) => e.seq > afterSeq) }),
    'agent/pending': () => ({ requests: [events.r2[1].params] }),
  });
  after.c.restore(snap);
  await after.c.reconnected();
  const runs = after.c.currentRuns();
  assert.deepEqual(runs.map((r) => [r.runId, r.prompt, r.state]), [['r1', 'one', 'completed'], ['r2', 'two', 'requires_action']]);
  assert.deepEqual(runs[0].attached, ['cart.go']);
  assert.equal(runs[0].timeline[0].text, 'first answer');
  assert.deepEqual(after.rpc.calls.filter((x) => x.method === 'agent/events').map((x) => x.params), [{ runId: 'r1', afterSeq: 0 }, { runId: 'r2', afterSeq: 0 }]);
  assert.deepEqual(after.shown.ids, ['q2'], 'the open question is back');
  assert.ok(!after.rpc.calls.some((x) => x.method === 'agent/resume'), 'nothing to resume');
});

test('a restored run the daemon no longer knows is dropped', async () => {
  const { c } = setup({ 'agent/events': () => Promise.reject(Object.assign(new Error('unknown run'), { code: -32010 })), 'agent/pending': () => ({ requests: [] }) });
  c.restore({ sessionId: 's1', runs: [{ runId: 'gone', sessionId: 's1', prompt: 'x' }] });
  await c.reconnected();
  assert.equal(c.store.get('gone'), undefined);
});

test('index/status is asked with {} params, and $/progress that arrived meanwhile wins', async () => {
  let release;
  const { rpc, c } = setup({ 'index/status': () => new Promise((r) => (release = () => r({ state: 'ready', files: 3, chunks: 9, progress: 1 }))) });
  const first = c.refreshIndexStatus();
  await tick();
  release();
  await first;
  assert.deepEqual(rpc.calls[0].params, {});
  assert.equal(c.index.message, '3 files, 9 chunks');
  const second = c.refreshIndexStatus();
  await tick();
  c.handleNotification('$/progress', { token: 't', value: { kind: 'begin', title: 'Indexing', percentage: 5 } });
  release();
  await second;
  assert.equal(c.index.active, true, 'the newer progress is kept');
});
