import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const cfg = require('../../out/config.js');

test('daemon command: the setting, else agentd on the PATH', () => {
  assert.deepEqual(cfg.daemonCommand({ daemonPath: '' }), { command: 'agentd', args: ['serve'] });
  assert.deepEqual(cfg.daemonCommand({ daemonPath: ' /opt/agentd ' }), { command: '/opt/agentd', args: ['serve'] });
});

test('the API key goes only into initializationOptions, never the environment', () => {
  const s = { modelBaseUrl: 'http://127.0.0.1:1/v1', modelName: 'm', approvalPolicy: 'auto-edit', env: { AGENTD_STATE_DIR: '/tmp/x' } };
  const env = cfg.daemonEnv({ PATH: '/bin' }, s);
  assert.deepEqual(env, { PATH: '/bin', AGENTD_STATE_DIR: '/tmp/x' });
  const p = cfg.initializeParams({ settings: s, apiKey: 'sk-secret', folders: [{ uri: 'file:///w', name: 'w' }], clientVersion: '1.100.3', processId: 1 });
  assert.deepEqual(p.initializationOptions, { model: { baseUrl: 'http://127.0.0.1:1/v1', name: 'm', apiKey: 'sk-secret' }, approvalPolicy: 'auto-edit' });
  assert.equal(p.rootUri, 'file:///w');
  assert.equal(p.capabilities.window.workDoneProgress, true);
  // Every kind: those without a view of their own (confirm_plan) come through the generic form.
  assert.deepEqual(p.capabilities.experimental.agentd.promptKinds, [...require('../../out/protocol.js').PROMPT_KINDS]);
  assert.equal(p.capabilities.experimental.agentd.genericPrompts, true);
  assert.ok(!JSON.stringify(env).includes('sk-secret'));
});

test('empty settings send no model options; an unknown policy is left out', () => {
  assert.deepEqual(cfg.initializationOptions({ approvalPolicy: 'yolo' }), {});
});

test('changing the model name restarts nothing (models are per session); the endpoint, the path and the environment do', () => {
  const restarts = (section) => cfg.needsRestart((s) => s === section);
  assert.equal(restarts('agentd.model.name'), false);
  assert.equal(restarts('agentd.approvalPolicy'), false);
  for (const s of ['agentd.model.baseUrl', 'agentd.model.toolMode', 'agentd.daemonPath', 'agentd.env', 'agentd.trace']) assert.equal(restarts(s), true, s);
});
