import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { statusText, outcomeText, decisionsOf } = require('../../out/words.js');

const base = { daemon: 'ready', waiting: 0, running: false, paused: false };

test('the status bar speaks human: never requires_action, waiting requests first', () => {
  assert.equal(statusText({ ...base, lastState: 'requires_action' }).text, 'agentd: ready');
  assert.equal(statusText({ ...base, waiting: 2, running: true }).text, 'agentd: 2 waiting for you');
  assert.equal(statusText({ ...base, waiting: 2 }).severity, 'warning');
  assert.equal(statusText({ ...base, running: true }).text, 'agentd: working');
  assert.equal(statusText({ ...base, lastState: 'completed' }).text, 'agentd: done');
  assert.equal(statusText({ ...base, daemon: 'failed' }).severity, 'error');
});

test('a user\'s rejection and a cancelled question are decisions, not failures', () => {
  assert.deepEqual(outcomeText('reject_once', 'user', 'confirm_write'), { text: 'rejected by you', tone: 'declined' });
  assert.deepEqual(outcomeText('cancelled', 'cancel', 'question'), { text: 'cancelled', tone: 'neutral' });
  assert.deepEqual(outcomeText('timeout', 'timeout', 'question'), { text: 'not answered in time', tone: 'neutral' });
  assert.deepEqual(outcomeText('allow_session', 'policy', 'confirm_command'), { text: 'accepted by a rule', tone: 'ok' });
});

test('decisions offered follow the request\'s options', () => {
  assert.deepEqual(decisionsOf({ options: [{ optionId: 'allow_once' }, { optionId: 'reject_once' }] }).map((d) => d.label), ['Accept', 'Reject']);
  assert.equal(decisionsOf({}).length, 5);
});
