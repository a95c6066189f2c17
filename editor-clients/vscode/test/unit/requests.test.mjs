import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { RequestBook, answerFor } = require('../../out/requests.js');

let n = 0;
const req = (id, kind = 'question', extra = {}) => ({ runId: 'r1', sessionId: 's1', seq: ++n, requestId: id, kind, title: id, message: `${id}?`, createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(), pendingCount: 1, ...extra });

test('several requests are open at once and answered in any order, each once', async () => {
  const sent = [];
  const book = new RequestBook(async (a) => sent.push(a.params));
  book.add(req('a'));
  book.add(req('b', 'choice', { options: [{ optionId: '1', label: 'red' }, { optionId: '2', label: 'blue' }] }));
  book.add(req('c', 'confirm_command', { command: 'make' }));
  assert.deepEqual(book.list().map((o) => o.req.requestId), ['a', 'b', 'c']);
  await book.answer(answerFor(book.get('c').req, { type: 'confirm', requestId: 'c', decision: 'allow_once' }));
  await book.answer(answerFor(book.get('b').req, { type: 'reply', requestId: 'b', optionId: '2' }));
  assert.deepEqual(book.list().map((o) => o.req.requestId), ['a'], 'the others are untouched');
  await book.answer(answerFor(book.get('a').req, { type: 'reply', requestId: 'a', text: 'Ada' }));
  await book.answer({ method: 'agent/reply', params: { requestId: 'a', text: 'again' } });
  assert.deepEqual(sent, [{ requestId: 'c', decision: 'allow_once' }, { requestId: 'b', optionId: '2' }, { requestId: 'a', text: 'Ada' }]);
  assert.equal(book.answerOf('b'), 'blue', 'a choice reads as its label');
  assert.equal(book.answerOf('a'), 'Ada');
});

test('a second click while the answer is on its way sends nothing', async () => {
  let release;
  const sent = [];
  const book = new RequestBook((a) => new Promise((r) => { sent.push(a); release = r; }));
  book.add(req('a'));
  const first = book.answer({ method: 'agent/reply', params: { requestId: 'a', text: 'x' } });
  assert.equal(book.get('a').sending, true);
  await book.answer({ method: 'agent/reply', params: { requestId: 'a', text: 'y' } });
  release();
  await first;
  assert.equal(sent.length, 1);
});

test('an answer the daemon refuses stays open with the error; a final refusal closes it', async () => {
  const book = new RequestBook(async (a) => {
    throw Object.assign(new Error(a.params.requestId === 'a' ? 'wrong kind' : 'already resolved'), { code: a.params.requestId === 'a' ? -32013 : -32012 });
  });
  book.add(req('a'));
  book.add(req('b'));
  await book.answer({ method: 'agent/reply', params: { requestId: 'a', text: 'x' } });
  await book.answer({ method: 'agent/reply', params: { requestId: 'b', text: 'x' } });
  assert.deepEqual(book.list().map((o) => [o.req.requestId, o.error, o.sending]), [['a', 'wrong kind', false]]);
});

test('while the daemon is away an answer is not sent and the request stays', async () => {
  const sent = [];
  const book = new RequestBook(async (a) => sent.push(a));
  book.add(req('a'));
  book.setConnected(false);
  await book.answer({ method: 'agent/reply', params: { requestId: 'a', text: 'x' } });
  assert.equal(sent.length, 0);
  assert.match(book.get('a').error, /restarting/);
});

test('resolved elsewhere, and synced with agent/pending after a reconnect', () => {
  const book = new RequestBook(async () => {});
  book.add(req('a'));
  book.add(req('b'));
  book.resolve('a');
  book.add(req('a'));
  assert.deepEqual(book.list().map((o) => o.req.requestId), ['b'], 'a resolved request does not come back from a late notification');
  book.sync([req('c')]);
  assert.deepEqual(book.list().map((o) => o.req.requestId), ['c']);
});

test('answerFor turns the panel\'s answers into params and refuses what does not fit', () => {
  const choice = req('ch', 'choice', { options: [{ optionId: '1', label: 'red' }], allowOther: true });
  assert.deepEqual(answerFor(choice, { type: 'reply', requestId: 'ch', text: 'green' }).params, { requestId: 'ch', text: 'green' });
  assert.equal(answerFor({ ...choice, allowOther: false }, { type: 'reply', requestId: 'ch', text: 'green' }), 'pick one of the answers');
  assert.equal(answerFor(choice, { type: 'reply', requestId: 'ch', optionId: '9' }), 'that answer is not offered');
  const multi = req('m', 'choice', { options: [{ optionId: '1', label: 'a' }, { optionId: '2', label: 'b' }], multiple: true });
  assert.deepEqual(answerFor(multi, { type: 'reply', requestId: 'm', answers: ['1', '2'] }).params, { requestId: 'm', answers: ['1', '2'] });
  assert.equal(answerFor(req('q'), { type: 'reply', requestId: 'q', text: '  ' }), 'type an answer first');
  const write = req('w', 'confirm_write', { diff: [{ path: 'a', status: 'modified', diff: '' }] });
  assert.deepEqual(answerFor(write, { type: 'confirm', requestId: 'w', decision: 'reject_once', reason: ' too big ' }).params, { requestId: 'w', decision: 'reject_once', reason: 'too big' });
  assert.deepEqual(answerFor(write, { type: 'confirm', requestId: 'w', decision: 'allow_once', reason: 'ignored' }, 'mine\n').params, { requestId: 'w', decision: 'allow_once', editedContent: 'mine\n' });
  assert.deepEqual(answerFor(write, { type: 'confirm', requestId: 'w', decision: 'reject_once' }, 'mine\n').params, { requestId: 'w', decision: 'reject_once' }, 'a rejection carries no edit');
  assert.equal(answerFor(write, { type: 'confirm', requestId: 'w', decision: 'maybe' }), 'unknown decision maybe');
  assert.equal(answerFor(req('q'), { type: 'confirm', requestId: 'q', decision: 'allow_once' }), 'this request is not an approval');
});

test('a kind the panel has no view for is shown and answered by its generic form', () => {
  const { renderConversation } = require('../../out/render.js');
  const { answerFor } = require('../../out/requests.js');
  const req = {
    runId: 'r1', sessionId: 's1', seq: 3, requestId: 'q7', kind: 'confirm_plan', title: 'Approve the plan?',
    message: '1. **Read** cart.go\n2. Rename Total', answerWith: 'reply', createdAt: '', pendingCount: 1,
    options: [{ optionId: 'approve', label: 'Approve' }, { optionId: 'revise', label: 'Revise', description: 'say what to change' }],
    input: { label: 'What to change', multiline: true, required: true, with: ['revise'] },
  };
  const html = renderConversation({ runs: [], open: [{ req, sending: false }], daemon: { state: 'ready' } });
  assert.match(html, /Approve the plan\?/);
  assert.match(html, /<ol>\s*<li><strong>Read<\/strong> cart\.go<\/li>/, 'the message is markdown, whole');
  assert.match(html, /<textarea class="answer-text generic-text" data-field="q7-text"[^>]*placeholder="What to change"/);
  assert.match(html, /data-action="genericPick" data-request="q7" data-option="approve">Approve<[^]*data-option="revise" title="say what to change">Revise</);
  assert.deepEqual(answerFor(req, { type: 'generic', requestId: 'q7', optionId: 'approve' }), { method: 'agent/reply', params: { requestId: 'q7', optionId: 'approve' } });
  assert.equal(answerFor(req, { type: 'generic', requestId: 'q7', optionId: 'revise', text: ' ' }), 'What to change: type it first');
  assert.deepEqual(answerFor(req, { type: 'generic', requestId: 'q7', optionId: 'revise', text: 'tests first' }), { method: 'agent/reply', params: { requestId: 'q7', optionId: 'revise', text: 'tests first' } });
  assert.equal(answerFor(req, { type: 'generic', requestId: 'q7', optionId: 'nope' }), 'that answer is not offered');
  // A decision kind answers with agent/confirm, the text as the reason.
  const c = { ...req, answerWith: 'confirm', options: [{ optionId: 'allow_once', label: 'Allow' }, { optionId: 'reject_once', label: 'Reject' }], input: { label: 'Why not', with: ['reject_once'] } };
  assert.deepEqual(answerFor(c, { type: 'generic', requestId: 'q7', optionId: 'reject_once', text: 'not now' }), { method: 'agent/confirm', params: { requestId: 'q7', decision: 'reject_once', reason: 'not now' } });
});
