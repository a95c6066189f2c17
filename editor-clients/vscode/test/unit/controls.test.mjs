// Issue 31's controls over a real pipe, against the fake daemon (which decodes as strictly as
// agentd): several conversations open at once in tabs, kept across a reload; sessions searched,
// renamed and deleted; the context meter and compact; the rules view.
import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { daemon, until } from '../support/harness.mjs';
const require = createRequire(import.meta.url);
const { AgentController } = require('../../out/agent.js');
const { RunStore } = require('../../out/runStore.js');
const { RequestBook } = require('../../out/requests.js');
const { RulesView } = require('../../out/rules.js');
const { renderConversation, renderRules, renderTabs } = require('../../out/render.js');

function windowOn(c) {
  const book = new RequestBook((a) => c.request(a.method, a.params));
  const ctl = new AgentController(c, new RunStore(), book);
  c.onNotification((m, p) => ctl.handleNotification(m, p));
  return ctl;
}

async function say(ctl, text) {
  const res = await ctl.run({ prompt: `say ${text}` });
  await until(() => ctl.store.get(res.runId)?.state === 'completed', text);
  return res;
}

test('several conversations at once: each in its tab, runs going on in the others, all back after a reload', async (t) => {
  const { c, received } = await daemon(t);
  const ctl = windowOn(c);
  await ctl.reconnected();
  assert.deepEqual(ctl.openTabs().map((x) => [x.title, x.active]), [['New conversation', true]]);
  const a = await say(ctl, 'first conversation');
  ctl.newSession();
  const b = await ctl.run({ prompt: 'ask' }); // waits on a question
  await until(() => ctl.requests.size === 1, 'the question');
  assert.notEqual(a.sessionId, b.sessionId);
  assert.deepEqual(ctl.openTabs().map((x) => [x.sessionId, x.title, x.active, x.busy, x.waiting]), [
    [a.sessionId, 'say first conversation', false, false, 0],
    [b.sessionId, 'ask', true, true, 1],
  ]);
  // Back to the first: the second goes on, its question waiting, its tab says so.
  await ctl.openSession(a.sessionId);
  assert.equal(ctl.currentSessionId, a.sessionId);
  assert.deepEqual(ctl.currentRuns().map((r) => r.prompt), ['say first conversation']);
  const c2 = await say(ctl, 'follow-up');
  assert.equal(c2.sessionId, a.sessionId, 'a follow-up goes to the conversation shown');
  assert.deepEqual(ctl.openTabs().map((x) => [x.active, x.waiting]), [[true, 0], [false, 1]]);
  const html = renderTabs(ctl.openTabs());
  assert.match(html, /class="tab active"[^]*say first conversation[^]*class="tab"[^]*tab-waiting[^]*>1<[^]*ask/);

  // A reload: the window keeps the ids; both conversations come back, the shown one in front.
  const snap = JSON.parse(JSON.stringify(ctl.snapshot()));
  assert.deepEqual(snap, { sessionId: a.sessionId, tabs: [a.sessionId, b.sessionId] });
  const before = received().length;
  const again = windowOn(c);
  again.restore(snap);
  await again.reconnected();
  assert.deepEqual(received().slice(before).filter((m) => m.method === 'agent/history').map((m) => m.params.sessionId).sort(), [a.sessionId, b.sessionId].sort());
  assert.deepEqual(again.openTabs().map((x) => [x.sessionId, x.active]), [[a.sessionId, true], [b.sessionId, false]]);
  assert.deepEqual(again.currentRuns().map((r) => r.prompt), ['say first conversation', 'say follow-up']);
  assert.equal(again.requests.size, 1, 'the other conversation\'s question is back too');

  // Closing the shown tab shows its neighbour; the closed session is still listed.
  again.closeTab(a.sessionId);
  assert.equal(again.currentSessionId, b.sessionId);
  assert.equal((await again.sessions()).length, 2);
});

test('sessions are searched by title and prompts, renamed and deleted; a busy one is not deleted', async (t) => {
  const { c, received } = await daemon(t);
  const ctl = windowOn(c);
  const a = await say(ctl, 'about the cart');
  await say(ctl, 'now explain the Checkout flow');
  ctl.newSession();
  const b = await say(ctl, 'fix the login test');
  const found = await ctl.sessions('checkout FLOW');
  assert.deepEqual(found.map((s) => [s.sessionId, s.match]), [[a.sessionId, 'say now explain the Checkout flow']]);
  assert.deepEqual(received().filter((m) => m.method === 'agent/sessions').map((m) => m.params), [{ query: 'checkout FLOW' }]);
  assert.deepEqual((await ctl.sessions('login')).map((s) => [s.sessionId, s.match]), [[b.sessionId, undefined]]);
  assert.equal((await ctl.sessions('  ')).length, 2, 'blank: all of them');

  const renamed = await ctl.renameSession(a.sessionId, 'Cart work');
  assert.equal(renamed.title, 'Cart work');
  assert.equal(ctl.openTabs().find((x) => x.sessionId === a.sessionId).title, 'Cart work', 'its tab says so at once');
  await assert.rejects(ctl.renameSession(a.sessionId, ' '), (e) => e.code === -32602);

  ctl.newSession();
  const busy = await ctl.run({ prompt: 'ask' });
  await until(() => ctl.requests.size === 1, 'the question');
  await assert.rejects(ctl.deleteSession(busy.sessionId), (e) => e.code === -32016 && /cancel it/.test(e.message));
  await ctl.deleteSession(a.sessionId);
  assert.equal(ctl.openTabs().some((x) => x.sessionId === a.sessionId), false, 'its tab closed');
  assert.equal(ctl.store.runsOfSession(a.sessionId).length, 0);
  assert.deepEqual((await ctl.sessions()).map((s) => s.sessionId).sort(), [b.sessionId, busy.sessionId].sort());
});

test('the context meter follows each model call and agent/context; compact shrinks it', async (t) => {
  const { c, received } = await daemon(t);
  const ctl = windowOn(c);
  await say(ctl, 'one');
  assert.deepEqual(ctl.session.context, { used: 5000, window: 128000, compactAt: 95000, messages: 2 }, 'from the run\'s context update');
  await say(ctl, 'two');
  await say(ctl, 'three');
  assert.equal(ctl.session.context.used, 7000);
  const res = await ctl.compact();
  assert.deepEqual(res, { before: 7000, after: 5000, dropped: 4, summary: '- The user asked: …' });
  assert.deepEqual(received().filter((m) => m.method === 'agent/compact').map((m) => m.params), [{ sessionId: ctl.currentSessionId }]);
  assert.deepEqual(ctl.session.context, { used: 5000, window: 128000, compactAt: 95000, messages: 2, compacted: true }, 'agent/context asked again');
  ctl.newSession();
  assert.equal(await ctl.compact(), undefined, 'a new conversation has nothing to compact');
});

test('the rules view lists by scope, revokes an "always" answer, edits one, and says why a user rule cannot be revoked', async (t) => {
  const { c, received } = await daemon(t);
  let changes = 0;
  const v = new RulesView(c, () => undefined, () => changes++);
  await v.load();
  assert.deepEqual(v.state.list.map((r) => [r.scope, r.pattern]), [['built-in', '**/.git/**'], ['user', 'make *'], ['always', 'go test ./...']]);
  let html = renderRules(v.state);
  assert.match(html, /Your &quot;always&quot; answers \(this workspace\)[^]*The command <code>go test \.\/\.\.\.<\/code><\/span> <span class="tool-status tone-ok">allowed<\/span>[^]*data-action="ruleRevoke" data-rule="rule_a1"/);
  assert.match(html, /Your rules\.json <button class="link" data-action="openFile" data-path="\/home\/ada\/\.config\/agentd\/rules\.json"/);
  assert.match(html, /Writing <code>\*\*\/\.git\/\*\*<\/code><\/span> <span class="tool-status tone-declined">refused/);
  assert.doesNotMatch(html, /data-rule="rule_u1">Revoke|data-action="ruleRevoke" data-rule="rule_b1"/, 'only the user\'s answers can be revoked');
  v.edit('rule_a1');
  assert.match(renderRules(v.state), /data-field="rule-rule_a1-pattern" value="go test \.\/\.\.\."/);
  await v.save('rule_a1', { pattern: 'go test *', action: 'ask' });
  assert.deepEqual(v.state.list.find((r) => r.scope === 'always'), { id: 'rule_e1', tool: 'run_cmd', pattern: 'go test *', action: 'ask', scope: 'always', revocable: true });
  assert.equal(v.state.editing, undefined);
  await v.revoke('rule_e1');
  assert.equal(v.state.list.some((r) => r.scope === 'always'), false);
  html = renderRules(v.state);
  assert.match(html, /None: "Always accept" or "Always reject" on a request stores one here\./);
  await v.revoke('rule_u1');
  assert.match(v.state.failed, /rule not revocable[^]*rules\.json/);
  assert.deepEqual(received().filter((m) => m.method?.startsWith('rules/')).map((m) => [m.method, m.params]), [
    ['rules/list', {}],
    ['rules/edit', { id: 'rule_a1', pattern: 'go test *', action: 'ask' }],
    ['rules/list', {}],
    ['rules/revoke', { id: 'rule_e1' }],
    ['rules/list', {}],
    ['rules/revoke', { id: 'rule_u1' }],
    ['rules/list', {}],
  ]);
  assert.ok(changes >= 4);
  // The panel shows it above the conversation.
  assert.match(renderConversation({ runs: [], open: [], daemon: { state: 'ready' }, rules: v.state }), /^<div class="rules">/);
});

test('images go with the prompt; the run shows them, and a reloaded window asks agent/image for their bytes', async (t) => {
  const { c, received } = await daemon(t);
  const ctl = windowOn(c);
  const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
  const res = await ctl.run({ prompt: 'say a red square', images: [{ mimeType: 'image/png', data: png, name: 'red.png' }] });
  assert.deepEqual(received().find((m) => m.method === 'agent/run').params.images, [{ mimeType: 'image/png', data: png, name: 'red.png' }]);
  assert.deepEqual(ctl.store.get(res.runId).images.map((i) => [i.name, i.width, i.height]), [['red.png', 40, 30]]);
  const html = renderConversation({ runs: ctl.currentRuns(), open: [], daemon: { state: 'ready' } });
  assert.match(html, /<figure class="prompt-image"><img data-image-id="img_1_0" alt="red\.png" title="red\.png · 40×30, 72 B"><figcaption>red\.png · 40×30<\/figcaption><\/figure>/);
  // After a reload, the history names the images, and their bytes come from agent/image.
  const again = windowOn(c);
  again.restore({ sessionId: res.sessionId });
  await again.reconnected();
  const id = again.store.get(res.runId).images[0].id;
  assert.equal((await again.image(id)).data, png);
});

test('steer and queue: words for the running turn show inside it; a prompt sent meanwhile waits its turn, cancellable', async (t) => {
  const { c, received } = await daemon(t);
  const ctl = windowOn(c);
  const first = await ctl.run({ prompt: 'ask' }); // waits on a question
  await until(() => ctl.requests.size === 1, 'the question');
  assert.equal(ctl.unfinishedRun().runId, first.runId);
  assert.equal(await ctl.steer('use port 8080'), 'steered');
  await until(() => ctl.store.get(first.runId).timeline.some((x) => x.type === 'steer'), 'the steer shown');
  assert.deepEqual(received().find((m) => m.method === 'agent/steer').params, { runId: first.runId, text: 'use port 8080' });
  const html = renderConversation({ runs: ctl.currentRuns(), open: [], daemon: { state: 'ready' } });
  assert.match(html, /<div class="steer" title="Your words, given to the model at its next step"><span class="icon">›<\/span> use port 8080<\/div>/);

  const next = await ctl.run({ prompt: 'say then the tests' });
  assert.equal(next.sessionId, first.sessionId);
  await until(() => ctl.store.get(next.runId)?.state === 'queued', 'queued');
  let shown = renderConversation({ runs: ctl.currentRuns(), open: [], daemon: { state: 'ready' } });
  assert.match(shown, /Queued: starts when the run before it ends\.<\/span> <button class="link" data-action="cancelRun" data-run="r_2"/);
  assert.match(shown, /run-state-queued">queued</);
  // Answering the question ends the first run: the queued one starts and finishes.
  await ctl.requests.answer({ method: 'agent/reply', params: { requestId: `q_${first.runId}`, text: 'Ada' } });
  await until(() => ctl.store.get(next.runId)?.state === 'completed', 'the queued run to run');
  // A steer that comes too late is asked as the next prompt.
  assert.equal(await ctl.steer('say one more'), 'asked');
  assert.equal(received().filter((m) => m.method === 'agent/run').pop().params.prompt, 'say one more');
  // A queued run can be taken out of the queue.
  const busy = await ctl.run({ prompt: 'ask' });
  const later = await ctl.run({ prompt: 'say never' });
  await until(() => ctl.store.get(later.runId)?.state === 'queued', 'queued again');
  await ctl.cancel(later.runId);
  await until(() => ctl.store.get(later.runId)?.state === 'cancelled', 'cancelled');
  assert.notEqual(ctl.store.get(busy.runId).state, 'cancelled');
  shown = renderConversation({ runs: ctl.currentRuns(), open: [], daemon: { state: 'ready' } });
  assert.doesNotMatch(shown, /data-action="cancelRun" data-run="r_5"/);
});

test('files that run later outside the sandbox are said so, in the confirmation and in the run\'s files', () => {
  const { RunStore } = require('../../out/runStore.js');
  const s = new RunStore();
  s.start('r1', 's1', 'x');
  const why = 'VS Code runs .vscode/tasks.json when you run a task, outside the sandbox';
  s.apply('agent/update', { runId: 'r1', sessionId: 's1', seq: 1, update: { kind: 'files_changed', files: [{ path: '.vscode/tasks.json', status: 'added', diff: '+{}\n', runsLater: why }, { path: 'a.go', status: 'modified', diff: '' }] } });
  const html = renderConversation({ runs: [s.get('r1')], open: [], daemon: { state: 'ready' } });
  assert.match(html, /Runs later, outside the sandbox: <span title="VS Code runs[^"]*">\.vscode\/tasks\.json<\/span>/);
  assert.match(html, /\.vscode\/tasks\.json <span class="stat">[^]*<span class="runs-later" title="VS Code runs/);
  const req = { runId: 'r1', sessionId: 's1', seq: 2, requestId: 'q1', kind: 'confirm_write', title: 'write .vscode/tasks.json', message: 'm', answerWith: 'confirm', createdAt: '', pendingCount: 1, diff: [{ path: '.vscode/tasks.json', status: 'added', diff: '+{}\n', newText: '{}\n', runsLater: why }] };
  assert.match(renderConversation({ runs: [], open: [{ req, sending: false }], daemon: { state: 'ready' } }), /<div class="request-facts runs-later-why">⚠ VS Code runs \.vscode\/tasks\.json when you run a task, outside the sandbox<\/div>/);
});

test('a steer takes pictures along: sent with agent/steer, shown with the words inside the turn; too late, they go with the next prompt', async (t) => {
  const { c, received } = await daemon(t);
  const ctl = windowOn(c);
  const first = await ctl.run({ prompt: 'ask' }); // waits on a question
  await until(() => ctl.requests.size === 1, 'the question');
  const shot = { mimeType: 'image/png', data: 'iVBORw0KGgo=', name: 'layout.png' };
  assert.equal(await ctl.steer('the layout is off, see', [shot]), 'steered');
  assert.deepEqual(received().find((m) => m.method === 'agent/steer').params, { runId: first.runId, text: 'the layout is off, see', images: [shot] });
  await until(() => ctl.store.get(first.runId).timeline.some((x) => x.type === 'steer'), 'the steer shown');
  const html = renderConversation({ runs: ctl.currentRuns(), open: [], daemon: { state: 'ready' } });
  assert.match(html, /<div class="steer"[^>]*><span class="icon">›<\/span> the layout is off, see<div class="prompt-images"><figure class="prompt-image"><img data-image-id="img_[^"]+" alt="layout.png"[^>]*><figcaption>layout.png · 40×30<\/figcaption><\/figure><\/div><\/div>/);
  await ctl.requests.answer({ method: 'agent/reply', params: { requestId: `q_${first.runId}`, text: 'Ada' } });
  await until(() => ctl.store.get(first.runId)?.state === 'completed', 'the run to end');
  assert.equal(await ctl.steer('say and this one', [shot]), 'asked');
  assert.deepEqual(received().filter((m) => m.method === 'agent/run').pop().params, { prompt: 'say and this one', images: [shot], sessionId: first.sessionId });
});
