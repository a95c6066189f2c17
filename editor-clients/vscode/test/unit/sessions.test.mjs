// Sessions over a real pipe: the controller and the pickers against the fake daemon process, which
// decodes params as strictly as agentd. A conversation of two runs with the pickers' settings, a
// model changed mid-session, the session restored by one agent/history after a "reload", a long
// session paged back, a run paused for want of disk resumed.
import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { daemon, until } from '../support/harness.mjs';
const require = createRequire(import.meta.url);
const { AgentController } = require('../../out/agent.js');
const { RunStore } = require('../../out/runStore.js');
const { RequestBook } = require('../../out/requests.js');
const { SessionPickers } = require('../../out/settings.js');

/** A window: its controller, request book and pickers on the daemon connection. */
function windowOn(c) {
  const book = new RequestBook((a) => c.request(a.method, a.params));
  const ctl = new AgentController(c, new RunStore(), book);
  const pickers = new SessionPickers({
    rpc: c,
    current: () => ({ sessionId: ctl.currentSessionId, settings: ctl.session?.settings }),
    applied: (sid, res) => ctl.configured(sid, res),
    defaults: () => ({ approvalPolicy: 'ask' }),
  });
  c.onNotification((m, p) => ctl.handleNotification(m, p));
  pickers.setCapabilities(c.initializeResult.capabilities.experimental.agentd);
  return { ctl, book, pickers };
}

async function ask(w, prompt) {
  const fresh = !w.ctl.currentSessionId;
  const res = await w.ctl.run({ prompt, ...w.pickers.forRun(fresh) }, undefined, fresh ? w.pickers.startedWith() : undefined);
  return res;
}

test('a two-run conversation with the pickers\' settings, a model switch mid-session, and the session back whole after a reload', async (t) => {
  const { c, received } = await daemon(t);
  const w = windowOn(c);
  await w.ctl.reconnected();
  await w.pickers.refreshModels();
  await w.pickers.choose('model', 'fake-model-large');
  await w.pickers.choose('reasoningEffort', 'high');
  await w.pickers.choose('approvalPolicy', 'auto-edit');
  const one = await ask(w, 'say first answer');
  await until(() => w.ctl.store.get(one.runId)?.state === 'completed', 'the first run');
  const two = await ask(w, 'say second answer');
  assert.equal(two.sessionId, one.sessionId, 'the follow-up continues the session');
  await until(() => w.ctl.store.get(two.runId)?.state === 'completed', 'the second run');
  const runs = received().filter((m) => m.method === 'agent/run').map((m) => m.params);
  assert.deepEqual(runs, [
    { prompt: 'say first answer', approvalPolicy: 'auto-edit', model: 'fake-model-large', reasoningEffort: 'high' },
    { prompt: 'say second answer', sessionId: one.sessionId },
  ]);

  // Mid-session: back to the daemon's default model, at once.
  await w.pickers.choose('model', '');
  assert.deepEqual(received().filter((m) => m.method === 'agent/configure').map((m) => m.params), [{ sessionId: one.sessionId, model: '' }]);
  assert.deepEqual(w.ctl.session.settings, { model: 'fake-model', reasoningEffort: 'high', approvalPolicy: 'auto-edit' });
  assert.equal(w.pickers.view().model.value, '');

  // "Reload Window": a new window knows the session's id only, and asks agent/history once.
  const before = received().length;
  const r = windowOn(c);
  r.ctl.restore(JSON.parse(JSON.stringify(w.ctl.snapshot())));
  await Promise.all([r.ctl.reconnected(), r.pickers.refreshModels()]);
  const asked = received().slice(before).filter((m) => m.id !== undefined).map((m) => m.method);
  assert.deepEqual(asked.filter((m) => m === 'agent/history'), ['agent/history']);
  assert.ok(!asked.includes('agent/events'), 'no run is fetched again');
  const shown = r.ctl.currentRuns();
  assert.deepEqual(shown.map((x) => [x.prompt, x.state, x.model]), [
    ['say first answer', 'completed', 'fake-model-large'],
    ['say second answer', 'completed', 'fake-model-large'],
  ]);
  assert.deepEqual(shown.map((x) => x.timeline.filter((t) => t.type === 'text').map((t) => t.text).join('')), ['first answer', 'second answer']);
  assert.deepEqual(shown[0].timeline.map((t) => t.type), ['notice', 'thinking', 'text'], 'the notice once, the thinking, the answer');
  assert.deepEqual(shown[1].instructions, [{ path: 'AGENTS.md', scope: 'workspace', bytes: 120 }]);
  assert.equal(shown[1].usage.cachedTokens, 80);
  assert.deepEqual(r.pickers.view().model.value, '', 'the pickers show the session\'s settings');
  assert.equal(r.pickers.view().effort.value, 'high');
  assert.equal(r.pickers.view().mode.value, 'auto-edit');
  const listed = await r.ctl.sessions();
  assert.deepEqual(listed.map((s) => [s.title, s.runCount, s.state]), [['say first answer', 2, 'completed']]);
});

test('a long session is paged back with beforeRunId, and the events a page left out come from agent/events', async (t) => {
  const { c, received } = await daemon(t, { FAKE_HISTORY_PAGE: '1', FAKE_HISTORY_EVENTS: '2' });
  const w = windowOn(c);
  for (const n of [1, 2, 3]) {
    const res = await ask(w, `say answer ${n}`);
    await until(() => w.ctl.store.get(res.runId)?.state === 'completed', `run ${n}`);
  }
  const sid = w.ctl.currentSessionId;
  const before = received().length;
  const other = windowOn(c);
  await other.ctl.openSession(sid);
  const sent = received().slice(before).filter((m) => m.id !== undefined);
  assert.deepEqual(sent.filter((m) => m.method === 'agent/history').map((m) => m.params), [{ sessionId: sid }, { sessionId: sid, beforeRunId: 'r_3' }, { sessionId: sid, beforeRunId: 'r_2' }]);
  assert.deepEqual(other.ctl.currentRuns().map((r) => r.prompt), ['say answer 1', 'say answer 2', 'say answer 3']);
  assert.deepEqual(other.ctl.currentRuns().map((r) => [r.state, r.resultText]), [['completed', 'answer 1'], ['completed', 'answer 2'], ['completed', 'answer 3']]);
  assert.equal(other.ctl.session.earlierRuns, 0);
});

test('the fake daemon decodes as strictly as agentd: types named, no params accepted, bad settings refused', async (t) => {
  const { c } = await daemon(t);
  const w = windowOn(c);
  const res = await ask(w, 'say x');
  await assert.rejects(c.request('agent/events', { runId: res.runId, afterSeq: '1' }), (e) => e.code === -32602 && /field "afterSeq" must be int, not string/.test(e.message));
  await assert.rejects(c.request('agent/run', { prompt: 'x', context: { selection: { path: 'a', startLine: '3', endLine: 4 } } }), /field "context\.selection\.startLine" must be int/);
  await assert.rejects(c.request('agent/configure', { sessionId: res.sessionId, reasoningEffort: 'extreme' }), (e) => e.code === -32602);
  await assert.rejects(c.request('agent/history', { sessionId: 'nope' }), (e) => e.code === -32017);
  await assert.rejects(c.request('agent/history', { sessionId: res.sessionId, beforeRunId: 'r_9' }), (e) => e.code === -32010);
  assert.ok(Array.isArray((await c.request('agent/sessions')).sessions), 'no params (sent as [null]) is accepted');
  assert.equal((await c.request('agent/models', null)).default, 'fake-model');
});

test('a run paused because its state could not be saved waits for Resume, then goes on', async (t) => {
  const { c, received } = await daemon(t);
  const w = windowOn(c);
  const res = await ask(w, 'pause');
  await until(() => w.ctl.store.get(res.runId)?.state === 'paused', 'the pause');
  assert.match(w.ctl.store.get(res.runId).error, /no space left on device/);
  await w.ctl.reconnected();
  assert.ok(!received().some((m) => m.method === 'agent/resume'), 'not resumed behind the user\'s back');
  await w.ctl.resume(res.runId);
  await until(() => w.ctl.store.get(res.runId).state === 'completed', 'the run to go on');
  assert.equal(w.ctl.store.get(res.runId).error, undefined);
  await w.ctl.resume(res.runId); // not paused any more: nothing happens
});
