// Subagents over a real pipe, against the fake daemon (which reports them as agentd does: in the
// parent run, under the task call): the subagent's own calls and words nested under its task
// call, its question labelled with its task and answered in place, a stop of one subagent alone
// (agent/cancel of its run id), and the same after a reload from agent/history.
import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { daemon, until } from '../support/harness.mjs';
const require = createRequire(import.meta.url);
const { AgentController } = require('../../out/agent.js');
const { RunStore } = require('../../out/runStore.js');
const { RequestBook } = require('../../out/requests.js');
const { renderConversation } = require('../../out/render.js');

function windowOn(c) {
  const book = new RequestBook((a) => c.request(a.method, a.params));
  const ctl = new AgentController(c, new RunStore(), book);
  c.onNotification((m, p) => ctl.handleNotification(m, p));
  return ctl;
}

const html = (ctl) => renderConversation({ sessionId: ctl.currentSessionId, runs: ctl.currentRuns(), open: ctl.requests.list(), daemon: { state: 'ready' } });

/** The task card's HTML, from its opening tag to the run's footer. */
const taskCard = (page) => {
  const at = page.indexOf('<details class="tool task');
  assert.ok(at >= 0, 'a task card');
  return page.slice(at, page.indexOf('<div class="run-footer">', at));
};

test("a subagent's work is nested under its task call, its question labelled and answered there; a reload shows the same", async (t) => {
  const { c } = await daemon(t);
  const ctl = windowOn(c);
  await ctl.reconnected();
  const res = await ctl.run({ prompt: 'delegate' });
  await until(() => ctl.requests.size === 1, "the subagent's question");
  const [open] = ctl.requests.list();
  assert.deepEqual(open.req.subagent, { runId: `${res.runId}_sub`, description: 'Find the cart total', toolCallId: 'call_2' });

  const run = ctl.store.get(res.runId);
  const task = run.tools[`task_${res.runId}`];
  assert.equal(task.subagent.runId, `${res.runId}_sub`);
  assert.deepEqual(Object.keys(task.subagent.work.tools), ['call_1', 'call_2'], "the subagent's calls are its own, not the parent's");
  assert.deepEqual(run.timeline.map((i) => i.type), ['tool'], 'nothing of the subagent in the parent timeline but its card');
  assert.equal(task.subagent.work.tools.call_2.requestId, open.req.requestId);

  let card = taskCard(html(ctl));
  assert.match(card, /^<details class="tool task [^"]*" [^>]*data-subagent="r_\d+_sub" data-waiting open>/, 'open while its question waits');
  assert.match(card, /<span class="tool-title">Subagent<\/span> <span class="subagent-desc">Find the cart total<\/span> <span class="tool-status tone-waiting">waiting for you<\/span>/);
  assert.match(card, /data-action="cancelRun" data-run="r_\d+_sub"[^>]*>■ Stop</, 'a stop button for the subagent alone');
  assert.match(card, /Its task<\/summary><div class="md"><p>Find where the <strong>cart total<\/strong> is computed.<\/p>/);
  assert.match(card, /<div class="subagent-work">[^]*Read cart.go[^]*<div class="request request-open kind-question"[^>]*>\s*<div class="request-head"><span class="request-from"[^>]*>Subagent · Find the cart total<\/span> [^]*Which currency should totals use\?/);

  await c.request('agent/reply', { requestId: open.req.requestId, text: 'EUR' });
  await until(() => ctl.store.get(res.runId)?.state === 'completed', 'the parent run to end');
  card = taskCard(html(ctl));
  assert.match(card, /^<details class="tool task tool-completed tone-ok"/);
  assert.doesNotMatch(card.slice(0, card.indexOf('</summary>')), / open[ >]/, 'closed once it is done');
  assert.match(card, /<span class="tool-status tone-ok">done<\/span> <span class="tool-facts">1,234 tokens · read 1 file<\/span><\/summary>/);
  assert.doesNotMatch(card, /data-action="cancelRun"/);
  assert.match(card, /<div class="subagent-work">[^]*<div class="answer md"><p>Total\(\) in cart.go, in EUR.<\/p>/);
  assert.doesNotMatch(card, /Files the subagent read/, 'the words it said are not repeated as the output the model read');

  // A reload: the same, from agent/history (the subagent's events are its parent's).
  const again = windowOn(c);
  again.restore({ sessionId: res.sessionId });
  await again.reconnected();
  const task2 = again.store.get(res.runId).tools[`task_${res.runId}`];
  assert.deepEqual([task2.subagent.state, task2.subagent.usage.totalTokens, task2.subagent.read], ['completed', 1234, ['cart.go']]);
  assert.equal(taskCard(html(again)), card);
});

test('Stop on a subagent cancels its run id alone: its question closes, its card reads stopped, the parent goes on', async (t) => {
  const { c, received } = await daemon(t);
  const ctl = windowOn(c);
  await ctl.reconnected();
  const res = await ctl.run({ prompt: 'delegate' });
  await until(() => ctl.requests.size === 1, "the subagent's question");
  await ctl.cancel(`${res.runId}_sub`);
  assert.deepEqual(received().filter((m) => m.method === 'agent/cancel').map((m) => m.params), [{ runId: `${res.runId}_sub` }]);
  await until(() => ctl.store.get(res.runId)?.state === 'completed', 'the parent run to go on to its end');
  assert.equal(ctl.requests.size, 0);
  const page = html(ctl);
  assert.match(page, /The subagent was stopped before it found the total./);
  const card = taskCard(page);
  assert.match(card, /^<details class="tool task tool-failed tone-declined"/);
  assert.match(card, /<span class="tool-status tone-declined">stopped<\/span>/);
  assert.doesNotMatch(card, /data-action="cancelRun"/);
});

test("a subagent's plan shows in its card, not as its parent's", () => {
  const store = new RunStore();
  store.start('r1', 's1', 'go');
  const sub = { runId: 'r2', description: 'Map the API' };
  let seq = 0;
  const up = (u) => store.apply('agent/update', { runId: 'r1', sessionId: 's1', seq: ++seq, update: u });
  up({ kind: 'tool_call', toolCallId: 'call_t', title: 'Subagent: Map the API', toolKind: 'other', status: 'in_progress', subagent: sub });
  up({ kind: 'subagent', toolCallId: 'call_t', subagent: { ...sub, update: { kind: 'plan', entries: [{ content: 'List the handlers', status: 'completed' }, { content: 'Read each one', status: 'in_progress' }] } } });
  const run = store.get('r1');
  assert.equal(run.plan, undefined, "the parent's plan is its own");
  const page = renderConversation({ runs: [run], open: [], daemon: { state: 'ready' } });
  assert.match(page, /<div class="subagent-work"><div class="plan"><div class="label">Plan<\/div>[^]*✓<\/span> List the handlers[^]*◐<\/span> Read each one/);
});

test("a subagent's change can be restored from its card, and counts for Undo this turn: the change is its parent's turn's", () => {
  const store = new RunStore();
  store.start('r1', 's1', 'go');
  const sub = { runId: 'r2', description: 'Fix the typo' };
  let seq = 0;
  const up = (u) => store.apply('agent/update', { runId: 'r1', sessionId: 's1', seq: ++seq, update: u });
  up({ kind: 'tool_call', toolCallId: 'call_t', title: 'Subagent: Fix the typo', toolKind: 'other', status: 'in_progress', subagent: sub });
  up({ kind: 'subagent', toolCallId: 'call_t', subagent: { ...sub, update: { kind: 'tool_call', toolCallId: 'call_1', title: 'Write a.txt', toolKind: 'edit', status: 'pending', input: { path: 'a.txt' } } } });
  up({ kind: 'subagent', toolCallId: 'call_t', subagent: { ...sub, update: { kind: 'tool_call_update', toolCallId: 'call_1', status: 'completed', files: [{ path: 'a.txt', status: 'modified', diff: '-a\n+b\n' }], checkpoint: 'c7' } } });
  up({ kind: 'tool_call_update', toolCallId: 'call_t', status: 'completed', output: 'Fixed.', subagent: { ...sub, state: 'completed' } });
  store.apply('agent/runState', { runId: 'r1', sessionId: 's1', seq: ++seq, state: 'completed', stopReason: 'end_turn' });
  const page = renderConversation({ runs: [store.get('r1')], open: [], daemon: { state: 'ready' }, canUndo: true });
  assert.match(page, /<div class="subagent-work">[^]*Write a.txt[^]*data-action="undoCheckpoint" data-run="r1" data-checkpoint="c7"/);
  assert.match(page, /data-action="undoRun" data-run="r1"/, 'Undo this turn, for the change the subagent made');
  const undone = renderConversation({ runs: [store.get('r1')], open: [], daemon: { state: 'ready' }, canUndo: true, undone: { c7: 'c8' } });
  assert.doesNotMatch(undone, /data-action="undoRun"/);
  assert.match(undone, /Write a.txt[^]*<span class="undone"/);
});
