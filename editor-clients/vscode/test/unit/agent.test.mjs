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
  assert.deepEqual(rpc.calls.filter((x) => x.method === 'agent/events').map((x) => x.params), [{ runId: 'r1', afterSeq: 1, limit: 500 }]);
  assert.equal(c.store.get('r1').timeline[0].text, 'ab');
});

test('agent/events is asked a page at a time while the daemon says more follow', async () => {
  const all = Array.from({ length: 7 }, (_, i) => ev(i + 1, 'agent/update', { update: { kind: 'message_chunk', text: String(i + 1) } }));
  const { rpc, c } = setup({
    'agent/events': ({ afterSeq, limit }) => {
      const rest = all.filter((e) => e.seq > afterSeq);
      const page = rest.slice(0, Math.min(limit, 3));
      return { state: 'completed', events: page, ...(page.length < rest.length ? { more: true } : {}) };
    },
  });
  await c.catchUp('r1');
  assert.deepEqual(rpc.calls.map((x) => x.params.afterSeq), [0, 3, 6]);
  assert.equal(c.store.get('r1').timeline[0].text, '1234567');
  assert.equal(c.store.get('r1').state, 'completed');
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
  assert.deepEqual(rpc.calls.find((x) => x.method === 'agent/events').params, { runId: 'r1', afterSeq: 1, limit: 500 });
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

const hev = (runId, seq, method, params) => ({ seq, method, params: { runId, sessionId: 's1', seq, ...params } });
const SESSION = { sessionId: 's1', title: 'one', createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:01:00Z', state: 'requires_action', runCount: 2, settings: { model: 'm', approvalPolicy: 'ask' } };

function twoRuns() {
  const q2 = { runId: 'r2', sessionId: 's1', seq: 2, requestId: 'q2', kind: 'question', title: 'Question', message: 'Which?', createdAt: '2026-01-01T00:00:30Z', pendingCount: 1 };
  return {
    session: SESSION,
    earlierRuns: 0,
    runs: [
      {
        runId: 'r1',
        prompt: 'one\n\nProblems reported in the editor:\n```\nbroken.json:2: error: x\n```',
        context: { files: ['cart.go'] },
        state: 'completed',
        createdAt: '2026-01-01T00:00:00Z',
        updatedAt: '2026-01-01T00:00:10Z',
        settings: { model: 'm', approvalPolicy: 'ask' },
        events: [hev('r1', 1, 'agent/runState', { state: 'running' }), hev('r1', 2, 'agent/update', { update: { kind: 'message_chunk', text: 'first answer' } }), hev('r1', 3, 'agent/runState', { state: 'completed', stopReason: 'end_turn' })],
      },
      {
        runId: 'r2',
        prompt: 'two',
        state: 'requires_action',
        createdAt: '2026-01-01T00:00:20Z',
        updatedAt: '2026-01-01T00:00:30Z',
        settings: { model: 'm-large', reasoningEffort: 'high', approvalPolicy: 'ask' },
        events: [hev('r2', 1, 'agent/runState', { state: 'running' }), { seq: 2, method: 'agent/inputRequest', params: q2 }, hev('r2', 3, 'agent/runState', { state: 'requires_action' })],
      },
    ],
    pending: [q2],
  };
}

test('after a window reload the open session comes back whole from one agent/history', async () => {
  const { rpc, c, shown } = setup({
    'agent/history': () => twoRuns(),
    'agent/pending': () => ({ requests: [twoRuns().pending[0]] }),
    'agent/run': (p) => ({ runId: 'r3', sessionId: p.sessionId ?? 's_new' }),
  });
  c.restore({ sessionId: 's1' });
  assert.equal(c.session.loading, true, 'the panel says it is loading');
  await c.reconnected();
  const runs = c.currentRuns();
  assert.deepEqual(runs.map((r) => [r.runId, r.prompt, r.state, r.model]), [['r1', 'one', 'completed', 'm'], ['r2', 'two', 'requires_action', 'm-large']]);
  assert.deepEqual(runs[0].attached, ['cart.go', 'Problems (1)'], 'the Problems block sent with the prompt is a chip again');
  assert.equal(runs[0].timeline[0].text, 'first answer');
  assert.deepEqual(shown.ids, ['q2'], 'the open question is back');
  assert.deepEqual(rpc.calls.filter((x) => x.method === 'agent/history').map((x) => x.params), [{ sessionId: 's1' }]);
  assert.equal(rpc.calls.filter((x) => x.method === 'agent/events').length, 0, 'no run is fetched again');
  assert.ok(!rpc.calls.some((x) => x.method === 'agent/resume'), 'nothing to resume');
  assert.equal(c.session.loading, false);
  assert.deepEqual(c.session.settings, SESSION.settings);
  assert.deepEqual(c.snapshot(), { sessionId: 's1' }, 'the snapshot is the session id only');
  // A follow-up continues the session, after its runs.
  await c.run({ prompt: 'three' });
  assert.equal(rpc.calls.find((x) => x.method === 'agent/run').params.sessionId, 's1');
  assert.deepEqual(c.currentRuns().map((r) => r.prompt), ['one', 'two', 'three']);
});

test('opening a session pages back while earlier runs remain, and fetches the events a page left out', async () => {
  // Five runs, two per page; the older run of each page comes with its first event only.
  const mk = (n) => ({
    runId: `r${n}`,
    prompt: `prompt ${n}`,
    state: 'completed',
    createdAt: `2026-01-01T00:0${n}:00Z`,
    updatedAt: `2026-01-01T00:0${n}:30Z`,
    events: [hev(`r${n}`, 1, 'agent/runState', { state: 'running' }), hev(`r${n}`, 2, 'agent/update', { update: { kind: 'message_chunk', text: `answer ${n}` } }), hev(`r${n}`, 3, 'agent/runState', { state: 'completed', stopReason: 'end_turn' })],
  });
  const all = [1, 2, 3, 4, 5].map(mk);
  const { rpc, c } = setup({
    'agent/history': ({ beforeRunId }) => {
      const end = beforeRunId ? all.findIndex((r) => r.runId === beforeRunId) : all.length;
      const start = Math.max(0, end - 2);
      const runs = all.slice(start, end).map((r, i, page) => (i < page.length - 1 ? { ...r, events: r.events.slice(0, 1), moreEvents: true } : r));
      return { session: { ...SESSION, runCount: 5 }, runs, earlierRuns: start, pending: [] };
    },
    'agent/events': ({ runId, afterSeq }) => ({ state: 'completed', events: all.find((r) => r.runId === runId).events.filter((e) => e.seq > afterSeq) }),
  });
  await c.openSession('s1');
  assert.deepEqual(rpc.calls.filter((x) => x.method === 'agent/history').map((x) => x.params.beforeRunId), [undefined, 'r4', 'r2']);
  assert.deepEqual(c.currentRuns().map((r) => r.prompt), ['prompt 1', 'prompt 2', 'prompt 3', 'prompt 4', 'prompt 5']);
  assert.deepEqual(c.currentRuns().map((r) => r.timeline[0]?.text), ['answer 1', 'answer 2', 'answer 3', 'answer 4', 'answer 5']);
  assert.deepEqual(rpc.calls.filter((x) => x.method === 'agent/events').map((x) => [x.params.runId, x.params.afterSeq]).sort(), [['r2', 1], ['r4', 1]]);
  assert.equal(c.session.earlierRuns, 0);
});

test('a notification that arrives while agent/history is on its way is neither lost nor shown twice', async () => {
  let answer;
  const { c } = setup({
    'agent/history': () => new Promise((r) => (answer = r)),
    'agent/events': ({ afterSeq }) => ({ state: 'requires_action', events: twoRuns().runs[1].events.filter((e) => e.seq > afterSeq) }),
  });
  const opening = c.openSession('s1');
  // The run's next notification races ahead of the history that holds seq 1–3.
  c.handleNotification('agent/update', { runId: 'r2', sessionId: 's1', seq: 4, update: { kind: 'message_chunk', text: 'later' } });
  await tick();
  answer(twoRuns());
  await opening;
  const r2 = c.store.get('r2');
  assert.equal(r2.lastSeq, 4);
  assert.equal(r2.prompt, 'two');
  assert.deepEqual(r2.timeline.map((t) => t.type), ['request', 'text']);
  assert.equal(r2.timeline[1].text, 'later');
});

test('after a daemon restart the open session is refreshed from its history; a restart-paused run goes on, a run paused for want of disk waits for Resume', async () => {
  const h = twoRuns();
  // As agentd says it: paused by the restart, with why.
  h.runs[1].events = [
    hev('r2', 1, 'agent/runState', { state: 'running' }),
    hev('r2', 2, 'agent/runState', { state: 'paused', pauseReason: 'restart', error: 'interrupted by a daemon restart in the middle of a step' }),
  ];
  h.runs[1].state = 'paused';
  h.pending = [];
  const { rpc, c } = setup({ 'agent/history': () => h, 'agent/pending': () => ({ requests: [] }), 'agent/resume': () => ({}) });
  await c.openSession('s1');
  assert.equal(c.store.get('r2').state, 'paused');
  await c.reconnected();
  assert.deepEqual(rpc.calls.filter((x) => x.method === 'agent/resume').map((x) => x.params), [{ runId: 'r2' }]);

  const h2 = twoRuns();
  h2.runs[1].events = [hev('r2', 1, 'agent/runState', { state: 'running' }), hev('r2', 2, 'agent/runState', { state: 'paused', pauseReason: 'not_saved', error: 'state not saved: no space left on device' })];
  h2.pending = [];
  const d = setup({ 'agent/history': () => h2, 'agent/pending': () => ({ requests: [] }), 'agent/resume': () => ({}) });
  d.c.restore({ sessionId: 's1' });
  await d.c.reconnected();
  assert.equal(d.c.store.get('r2').error, 'state not saved: no space left on device');
  assert.ok(!d.rpc.calls.some((x) => x.method === 'agent/resume'), 'not resumed behind the user\'s back');
  await d.c.resume('r2');
  assert.deepEqual(d.rpc.calls.filter((x) => x.method === 'agent/resume').map((x) => x.params), [{ runId: 'r2' }]);
  d.c.handleNotification('agent/runState', { runId: 'r2', sessionId: 's1', seq: 3, state: 'running' });
  assert.equal(d.c.store.get('r2').error, undefined, 'going on clears the reason it stopped');
});

test('a session the daemon no longer knows says so instead of loading forever', async () => {
  const { c } = setup({ 'agent/history': () => Promise.reject(Object.assign(new Error('unknown session s1'), { code: -32017 })), 'agent/pending': () => ({ requests: [] }) });
  c.restore({ sessionId: 's1' });
  await c.reconnected();
  assert.equal(c.session.loading, false);
  assert.match(c.session.error, /no longer knows this session/);
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

test("a settings update (a plan approved) moves the session's mode; the session as agent/history says it wins over replayed ones", async () => {
  const settingsEv = (seq, approvalPolicy) => hev('r1', seq, 'agent/update', { update: { kind: 'settings', settings: { model: 'm', approvalPolicy } } });
  const { c } = setup({
    'agent/history': () => ({
      session: { ...SESSION, settings: { model: 'm', approvalPolicy: 'ask' } },
      earlierRuns: 0,
      pending: [],
      runs: [{ runId: 'r1', prompt: 'plan it', state: 'completed', createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:10Z', events: [settingsEv(1, 'auto-edit')] }],
    }),
    'agent/pending': () => ({ requests: [] }),
  });
  c.restore({ sessionId: 's1' });
  await c.reconnected();
  assert.equal(c.session.settings.approvalPolicy, 'ask', 'changed since (agent/configure): the session says so');
  c.handleNotification('agent/update', { runId: 'r1', sessionId: 's1', seq: 2, update: { kind: 'settings', settings: { model: 'm', approvalPolicy: 'auto-edit' } } });
  assert.equal(c.session.settings.approvalPolicy, 'auto-edit');
  assert.equal(c.session.info.settings.approvalPolicy, 'auto-edit');
});
