import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { DaemonClient } = require('../../out/daemon.js');

const fake = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../support/fake-daemon.mjs');
const until = async (pred, ms = 5000) => {
  const t0 = Date.now();
  while (!pred()) {
    if (Date.now() - t0 > ms) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
};

function client(extra = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentd-fake-'));
  const logFile = path.join(dir, 'log.jsonl');
  const lines = [];
  const c = new DaemonClient({
    command: process.execPath,
    args: [fake],
    env: { ...process.env, FAKE_LOG: logFile },
    initializeParams: () => ({ processId: 1, capabilities: {}, initializationOptions: { model: { apiKey: 'k' } } }),
    log: (l) => lines.push(l),
    backoffMs: [50],
    ...extra,
  });
  const received = () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []);
  return { c, received, lines };
}

test('initialize handshake, a request, and notifications with multi-byte text', async () => {
  const { c, received } = client();
  const notes = [];
  c.onNotification((m, p) => notes.push([m, p]));
  await c.start();
  assert.equal(c.state, 'ready');
  assert.equal(c.initializeResult.serverInfo.name, 'fake-agentd');
  const res = await c.request('agent/run', { prompt: 'hi' });
  assert.deepEqual(res, { runId: 'r_1', sessionId: 's_1' });
  await until(() => notes.length === 4);
  assert.deepEqual(notes.slice(0, 2).map((n) => [n[0], n[1].value.kind]), [['$/progress', 'begin'], ['$/progress', 'end']], '$/progress reaches the handler');
  assert.equal(notes[3][1].update.text, 'héllo ✓');
  const methods = received().map((m) => m.method);
  assert.deepEqual(methods.slice(0, 3), ['initialize', 'initialized', 'agent/run']);
  assert.equal(received()[0].params.initializationOptions.model.apiKey, 'k');
  await c.stop();
  assert.deepEqual(received().map((m) => m.method).slice(-2), ['shutdown', 'exit']);
  assert.equal(c.state, 'stopped');
});

test('restarts the daemon when it dies and reports the reconnect', async () => {
  const { c } = client();
  const ready = [];
  c.onReady((_r, restarted) => ready.push(restarted));
  await c.start();
  await assert.rejects(c.request('agent/run', { prompt: 'crash' }));
  await until(() => ready.length === 2);
  assert.deepEqual(ready, [false, true]);
  assert.equal(c.state, 'ready');
  const res = await c.request('agent/run', { prompt: 'again' });
  assert.equal(res.runId, 'r_1');
  await c.stop();
});

test('a missing binary fails with a message naming the setting', async () => {
  const c = new DaemonClient({ command: '/nonexistent/agentd', initializeParams: () => ({}), backoffMs: [10] });
  const states = [];
  c.onStateChange((s, d) => states.push([s, d]));
  await assert.rejects(c.start(), /not found \(set agentd\.daemonPath/);
  assert.equal(c.state, 'failed');
  // What the user reads afterwards says the same, never the connection's own words.
  const lines = [];
  c.onStateChange((s, d) => lines.push(`${s}: ${d}`));
  await new Promise((r) => setTimeout(r, 50));
  await assert.rejects(c.request('agent/sessions', {}), (e) => {
    assert.match(e.message, /not found \(set agentd\.daemonPath/);
    assert.doesNotMatch(e.message, /Pending response|disposed/);
    return true;
  });
  for (const [, d] of states) assert.doesNotMatch(d ?? '', /Pending response|disposed/);
  assert.doesNotMatch(c.lastError, /Pending response|disposed/);
});

test('gives up after repeated crashes', async () => {
  const c = new DaemonClient({ command: process.execPath, args: ['-e', 'process.exit(2)'], initializeParams: () => ({}), backoffMs: [10], maxCrashes: 2 });
  const states = [];
  c.onStateChange((s) => states.push(s));
  await assert.rejects(c.start(), /keeps dying/);
  assert.equal(c.state, 'failed');
  assert.ok(states.filter((s) => s === 'restarting').length >= 2);
});

test('the controller over a real pipe: sessions, a question answered, a write rejected with a reason', async () => {
  const { AgentController } = require('../../out/agent.js');
  const { RunStore } = require('../../out/runStore.js');
  const { RequestBook, answerFor } = require('../../out/requests.js');
  const { c, received } = client();
  const book = new RequestBook((a) => c.request(a.method, a.params));
  const ctl = new AgentController(c, new RunStore(), book);
  c.onNotification((m, p) => ctl.handleNotification(m, p));
  await c.start();
  await ctl.reconnected();
  assert.deepEqual(await ctl.sessions(), []);
  const run = await ctl.run({ prompt: 'ask' });
  await until(() => book.size === 1);
  await book.answer(answerFor(book.list()[0].req, { type: 'reply', requestId: book.list()[0].req.requestId, text: 'Ada' }));
  await until(() => ctl.store.get(run.runId).state === 'completed');
  assert.equal(book.answerOf(`q_${run.runId}`), 'Ada');
  ctl.newSession();
  const w = await ctl.run({ prompt: 'write' });
  await until(() => book.size === 1);
  const req = book.list()[0].req;
  assert.equal(typeof answerFor(req, { type: 'reply', requestId: req.requestId, text: 'x' }), 'string', 'a reply to a write is refused before it is sent');
  await book.answer(answerFor(req, { type: 'confirm', requestId: req.requestId, decision: 'reject_once', reason: 'not now' }));
  await until(() => ctl.store.get(w.runId).state === 'completed');
  assert.equal(ctl.store.get(w.runId).requests[req.requestId].outcome, 'reject_once');
  assert.equal((await ctl.sessions()).length, 2);
  const sent = received().filter((m) => m.method === 'agent/confirm' || m.method === 'agent/sessions');
  assert.deepEqual(sent.map((m) => m.params), [{}, { requestId: req.requestId, decision: 'reject_once', reason: 'not now' }, {}]);
  await c.stop();
});
