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

test('the status bar\'s tooltip says what waits, the runs going and the index', () => {
  const { statusTooltip } = require('../../out/words.js');
  const tip = statusTooltip({ ...base, waiting: 2, kinds: ['question', 'confirm_write'], activeRuns: 1, index: { active: false, state: 'ready', message: '285 files, 1134 chunks' } });
  assert.match(tip, /^\*\*agentd\*\*: 2 waiting for you/);
  assert.match(tip, /Waiting for you: 1 question, 1 change to approve\./);
  assert.match(tip, /Runs going: 1/);
  assert.match(tip, /Index: 285 files, 1,134 chunks/);
  assert.match(statusTooltip({ ...base, kinds: [], activeRuns: 0, index: { active: true, percentage: 40, message: '2400/6000 files' } }), /Index: building, 40% \(2,400\/6,000 files\)/);
  assert.match(statusTooltip({ ...base, kinds: [], activeRuns: 0, index: { active: false, state: 'failed', message: 'no space left' } }), /Index: failed: no space left/);
  assert.doesNotMatch(statusTooltip({ ...base, kinds: [], activeRuns: 0 }), /Index/);
});

test('the status bar counts queued prompts beside the work, and the tooltip the background processes', () => {
  const { statusTooltip } = require('../../out/words.js');
  const base = { daemon: 'ready', waiting: 0, running: true, paused: false, kinds: [], activeRuns: 1 };
  assert.equal(statusText({ ...base, queued: 2 }).text, 'agentd: working · 2 queued');
  assert.equal(statusText({ ...base, queued: 0 }).text, 'agentd: working');
  const tip = statusTooltip({ ...base, queued: 2, processes: 1 });
  assert.match(tip, /Runs going: 1; 2 queued/);
  assert.match(tip, /Background processes running: 1 \(listed in their conversation, with a stop button\)/);
  assert.doesNotMatch(statusTooltip(base), /Background processes/);
});
