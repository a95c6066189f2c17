// The model, effort and mode pickers: what a new conversation's agent/run carries, and a change
// in an open session sent at once with agent/configure.
import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { SessionPickers } = require('../../out/settings.js');

const MODELS = { default: 'fake-model', listed: true, models: [{ id: 'fake-model' }, { id: 'fake-model-large' }] };

function setup({ caps = { reasoningEfforts: ['low', 'medium', 'high'], policies: ['read-only', 'ask', 'auto-edit', 'full-auto'] }, configure } = {}) {
  const calls = [];
  const session = { sessionId: undefined, settings: undefined };
  const applied = [];
  const rpc = {
    async request(method, params) {
      calls.push({ method, params });
      if (method === 'agent/models') return MODELS;
      if (method === 'agent/configure') return configure ? configure(params) : { settings: { model: params.model || 'fake-model', approvalPolicy: 'ask' } };
      throw new Error(`unexpected ${method}`);
    },
  };
  const p = new SessionPickers({ rpc, current: () => session, applied: (sid, res) => { applied.push([sid, res]); session.settings = res.settings; }, defaults: () => ({ approvalPolicy: 'ask' }) });
  p.setCapabilities(caps);
  return { p, calls, session, applied };
}

test('a new conversation carries the pickers\' model, effort and mode in agent/run', async () => {
  const { p, calls } = setup();
  await p.refreshModels();
  assert.deepEqual(calls[0], { method: 'agent/models', params: {} });
  let v = p.view();
  assert.deepEqual(v.model.options.map((o) => [o.value, o.label]), [['', 'fake-model (default)'], ['fake-model-large', 'fake-model-large']]);
  assert.deepEqual(v.effort.options.map((o) => o.label), ['Default effort', 'Low effort', 'Medium effort', 'High effort']);
  assert.deepEqual(v.mode.options.map((o) => o.label), ['Read only', 'Ask before changes', 'Auto-accept edits', 'Full auto']);
  assert.deepEqual([v.model.value, v.effort.value, v.mode.value], ['', '', 'ask']);
  assert.deepEqual(p.forRun(true), { approvalPolicy: 'ask' }, 'the daemon\'s defaults are not spelled out');
  await p.choose('model', 'fake-model-large');
  await p.choose('reasoningEffort', 'high');
  await p.choose('approvalPolicy', 'auto-edit');
  assert.equal(calls.filter((c) => c.method === 'agent/configure').length, 0, 'no session yet: nothing to configure');
  assert.deepEqual(p.forRun(true), { approvalPolicy: 'auto-edit', model: 'fake-model-large', reasoningEffort: 'high' });
  assert.deepEqual(p.forRun(false), {}, 'a follow-up uses its session\'s settings');
  assert.deepEqual(p.startedWith(), { model: 'fake-model-large', reasoningEffort: 'high', approvalPolicy: 'auto-edit' });
  v = p.view();
  assert.deepEqual([v.model.value, v.effort.value, v.mode.value], ['fake-model-large', 'high', 'auto-edit']);
});

test('in an open session a change goes to agent/configure at once, "" for the daemon\'s default, and shows what the daemon says', async () => {
  const { p, calls, session, applied } = setup({ configure: (params) => ({ settings: { model: params.model === '' ? 'fake-model' : 'fake-model-large', approvalPolicy: 'ask' }, runId: 'r2' }) });
  await p.refreshModels();
  session.sessionId = 's1';
  session.settings = { model: 'fake-model-large', reasoningEffort: 'high', approvalPolicy: 'read-only' };
  let v = p.view();
  assert.deepEqual([v.model.value, v.effort.value, v.mode.value], ['fake-model-large', 'high', 'read-only'], 'the session\'s settings');
  await p.choose('model', '');
  assert.deepEqual(calls.at(-1), { method: 'agent/configure', params: { sessionId: 's1', model: '' } });
  assert.deepEqual(applied[0], ['s1', { settings: { model: 'fake-model', approvalPolicy: 'ask' }, runId: 'r2' }]);
  v = p.view();
  assert.equal(v.model.value, '', 'the default model shows as the default entry');
  assert.equal(v.effort.value, '', 'the daemon answered no effort');
  await p.choose('approvalPolicy', 'full-auto');
  assert.deepEqual(calls.at(-1).params, { sessionId: 's1', approvalPolicy: 'full-auto' });
});

test('a refused change says why and the picker shows the value in effect', async () => {
  const { p, session } = setup({ configure: () => Promise.reject(Object.assign(new Error('unknown session s1'), { code: -32017 })) });
  session.sessionId = 's1';
  session.settings = { model: 'fake-model', approvalPolicy: 'ask' };
  const going = p.choose('approvalPolicy', 'full-auto');
  assert.equal(p.view().mode.value, 'full-auto', 'shown while on its way');
  await going;
  assert.equal(p.view().mode.value, 'ask');
  assert.match(p.view().error, /Could not change the mode: unknown session s1/);
});

test('a model the list omits (an alias) is still shown; New Session keeps the session\'s choices', async () => {
  const { p, session } = setup();
  await p.refreshModels();
  session.sessionId = 's1';
  session.settings = { model: 'my-alias', approvalPolicy: 'full-auto', reasoningEffort: 'low' };
  assert.deepEqual(p.view().model.options.at(-1), { value: 'my-alias', label: 'my-alias' });
  p.newConversation(session.settings);
  session.sessionId = undefined;
  assert.deepEqual(p.forRun(true), { approvalPolicy: 'full-auto', model: 'my-alias', reasoningEffort: 'low' });
  p.defaultModelChanged('fake-model');
  assert.equal(p.forRun(true).model, undefined, 'the setting naming the daemon\'s default sends none');
  p.defaultModelChanged('fake-model-large');
  assert.equal(p.forRun(true).model, 'fake-model-large', 'the model setting applies to new conversations without a restart');
});

test('a daemon without per-session settings: no model or effort picker, the mode with every run', async () => {
  const { p, calls, session } = setup({ caps: { policies: ['read-only', 'ask', 'auto-edit', 'full-auto'] } });
  await p.refreshModels();
  assert.equal(calls.length, 0, 'agent/models is not asked');
  const v = p.view();
  assert.equal(v.model, undefined);
  assert.equal(v.effort, undefined);
  session.sessionId = 's1';
  await p.choose('approvalPolicy', 'read-only');
  assert.equal(calls.length, 0, 'no agent/configure');
  assert.deepEqual(p.forRun(false), { approvalPolicy: 'read-only' });
});
