import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { PromptQueue } = require('../../out/promptQueue.js');

const tick = () => new Promise((r) => setImmediate(r));
let n = 0;
const req = (id, kind = 'question', extra = {}) => ({ runId: 'r1', sessionId: 's1', seq: ++n, requestId: id, kind, title: id, message: `${id}?`, createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(), pendingCount: 1, ...extra });

/** A renderer the test drives: each shown request waits for answer()/dismiss(). */
function fakeUI() {
  const shown = [];
  const open = new Map();
  const render = (r, signal) =>
    new Promise((resolve) => {
      shown.push(r.requestId);
      const entry = { resolve, aborted: false };
      open.set(r.requestId, entry);
      signal.addEventListener('abort', () => {
        entry.aborted = true;
        open.delete(r.requestId);
        resolve(undefined);
      });
    });
  return {
    shown,
    open,
    render,
    answer(id, text = 'yes') {
      const e = open.get(id);
      assert.ok(e, `${id} is on screen`);
      open.delete(id);
      e.resolve({ method: 'agent/reply', params: { requestId: id, text } });
    },
    dismiss(id) {
      const e = open.get(id);
      open.delete(id);
      e.resolve(undefined);
    },
  };
}

test('shows one prompt at a time, oldest first, and loses none', async () => {
  const ui = fakeUI();
  const sent = [];
  const q = new PromptQueue(ui.render, async (a) => sent.push(a.params.requestId));
  q.add(req('a'));
  q.add(req('b'));
  q.add(req('c'));
  await tick();
  assert.deepEqual(ui.shown, ['a'], 'only the first is on screen');
  ui.answer('a');
  await tick();
  await tick();
  assert.deepEqual(ui.shown, ['a', 'b']);
  ui.answer('b');
  await tick();
  await tick();
  ui.answer('c');
  await tick();
  await tick();
  assert.deepEqual(sent, ['a', 'b', 'c']);
  assert.equal(q.size, 0);
});

test('answering one request never cancels another', async () => {
  const ui = fakeUI();
  const sent = [];
  const q = new PromptQueue(ui.render, async (a) => sent.push(a));
  q.add(req('a'));
  q.add(req('b'));
  await tick();
  ui.answer('a', 'first');
  await tick();
  await tick();
  assert.deepEqual(sent.map((a) => a.params), [{ requestId: 'a', text: 'first' }], 'one reply, for a only');
  assert.ok(q.has('b'));
  assert.equal(ui.open.get('b')?.aborted ?? false, false);
});

test('a request resolved elsewhere closes its prompt and the next one shows', async () => {
  const ui = fakeUI();
  const sent = [];
  const q = new PromptQueue(ui.render, async (a) => sent.push(a));
  q.add(req('a'));
  q.add(req('b'));
  await tick();
  const a = ui.open.get('a');
  q.resolve('a'); // agent/inputResolved {outcome: cancelled}
  assert.equal(a.aborted, true, 'its prompt was closed');
  await tick();
  assert.deepEqual(ui.shown, ['a', 'b']);
  q.resolve('b');
  await tick();
  assert.equal(sent.length, 0, 'nothing was sent for either');
  q.add(req('a'));
  assert.equal(q.has('a'), false, 'a resolved request does not come back from a late replay');
});

test('a queued request resolved elsewhere is dropped without being shown', async () => {
  const ui = fakeUI();
  const q = new PromptQueue(ui.render, async () => {});
  q.add(req('a'));
  q.add(req('b'));
  await tick();
  q.resolve('b');
  ui.answer('a');
  await tick();
  await tick();
  assert.deepEqual(ui.shown, ['a']);
  assert.equal(q.size, 0);
});

test('dismissing defers; the request stays open and can be shown again', async () => {
  const ui = fakeUI();
  const sent = [];
  const q = new PromptQueue(ui.render, async (a) => sent.push(a.params.requestId));
  q.add(req('a'));
  q.add(req('b'));
  await tick();
  ui.dismiss('a');
  await tick();
  assert.deepEqual(ui.shown, ['a', 'b'], 'the next one shows');
  assert.equal(q.list().find((i) => i.req.requestId === 'a').state, 'deferred');
  q.show('a'); // from "Show Pending Requests": b goes back in line
  await tick();
  assert.deepEqual(ui.shown, ['a', 'b', 'a']);
  ui.answer('a');
  await tick();
  await tick();
  assert.deepEqual(ui.shown, ['a', 'b', 'a', 'b'], 'b comes back');
  ui.answer('b');
  await tick();
  await tick();
  assert.deepEqual(sent, ['a', 'b']);
});

test('AlreadyResolved drops the request; other errors keep it', async () => {
  const ui = fakeUI();
  const errors = [];
  const q = new PromptQueue(
    ui.render,
    async (a) => {
      const err = new Error(a.params.requestId === 'a' ? 'already resolved' : 'wrong kind');
      err.code = a.params.requestId === 'a' ? -32012 : -32013;
      throw err;
    },
    (m) => errors.push(m),
  );
  q.add(req('a'));
  q.add(req('b'));
  await tick();
  ui.answer('a');
  await tick();
  await tick();
  assert.equal(q.has('a'), false);
  ui.answer('b');
  await tick();
  await tick();
  assert.equal(q.list()[0].state, 'deferred');
  assert.deepEqual(errors, ['wrong kind']);
});

test('sync after a reconnect adds what is pending and drops what is not', async () => {
  const ui = fakeUI();
  const q = new PromptQueue(ui.render, async () => {});
  q.setConnected(false);
  q.add(req('a'));
  q.add(req('b'));
  await tick();
  assert.deepEqual(ui.shown, [], 'nothing is shown while disconnected');
  q.sync([req('b'), req('c')]);
  q.setConnected(true);
  await tick();
  assert.deepEqual(q.list().map((i) => i.req.requestId), ['b', 'c']);
  assert.deepEqual(ui.shown, ['b']);
});

test('a disconnect puts the prompt on screen back in line', async () => {
  const ui = fakeUI();
  const q = new PromptQueue(ui.render, async () => {});
  q.add(req('a'));
  await tick();
  const a = ui.open.get('a');
  q.setConnected(false);
  assert.equal(a.aborted, true);
  await tick();
  assert.equal(q.list()[0].state, 'queued');
  q.setConnected(true);
  await tick();
  assert.deepEqual(ui.shown, ['a', 'a']);
});
