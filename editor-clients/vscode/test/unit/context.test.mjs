import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { Composer, buildRun, splitPrompt, mentionsIn, mentionAt, matchPaths, problemsText, attachmentLabel } = require('../../out/context.js');

const known = (p) => (['cart.go', 'src/a.ts'].includes(p) ? 'file' : p === 'src' ? 'folder' : undefined);

test('@ mentions name known files and folders only', () => {
  const m = mentionsIn('Look at @cart.go, and @src/ but not @nope or mail@example.com', known);
  assert.deepEqual(m, [{ kind: 'file', path: 'cart.go' }, { kind: 'folder', path: 'src' }]);
});

test('the mention being typed at the caret', () => {
  assert.deepEqual(mentionAt('see @sr', 7), { start: 4, query: 'sr' });
  assert.equal(mentionAt('a@b', 3), undefined, 'not inside a word');
  assert.deepEqual(mentionAt('@', 1), { start: 0, query: '' });
});

test('paths matching a mention, best first', () => {
  const paths = ['docs/cart.md', 'cart.go', 'src/cartography/x.go', 'src/', 'xcart.go'];
  assert.deepEqual(matchPaths(paths, 'cart'), ['cart.go', 'docs/cart.md', 'src/cartography/x.go', 'xcart.go']);
  assert.equal(matchPaths(paths, '').length, 5);
});

test('files, folders and a selection go in the context; Problems and terminal text in the prompt', () => {
  const sel = { kind: 'selection', selection: { path: 'cart.go', startLine: 3, endLine: 5, text: 'x' } };
  const r = buildRun('Fix it', [sel, { kind: 'folder', path: 'src' }, { kind: 'problems', text: 'cart.go:4: error: boom', count: 1 }, { kind: 'terminal', text: 'FAIL x' }], [{ kind: 'file', path: 'cart.go' }]);
  assert.deepEqual(r.context, { files: ['cart.go', 'src/'], selection: sel.selection });
  assert.match(r.prompt, /^Fix it\n\nProblems reported in the editor:\n```\ncart\.go:4: error: boom\n```\n\nSelected in the terminal:\n```\nFAIL x\n```$/);
  assert.deepEqual(buildRun('hi', [], []), { prompt: 'hi', context: undefined });
});

test('a prompt from agent/history is split back into what was typed and chips for what went along', () => {
  const sel = { kind: 'selection', selection: { path: 'cart.go', startLine: 3, endLine: 5, text: 'x' } };
  const problems = problemsText(Array.from({ length: 52 }, (_, i) => ({ path: 'a.go', line: i + 1, severity: 'error', message: 'boom' })));
  const sent = buildRun('Fix it\n\nplease', [sel, { kind: 'problems', ...problems }, { kind: 'terminal', text: 'FAIL x\nok y' }], []);
  assert.deepEqual(splitPrompt(sent.prompt, sent.context), { text: 'Fix it\n\nplease', attached: ['cart.go:3–5', 'Problems (52)', 'Terminal selection (2 lines)'] });
  assert.deepEqual(splitPrompt('Just text ```\ncode\n```', undefined), { text: 'Just text ```\ncode\n```' }, 'a prompt that only ends in a fence is left whole');
  assert.deepEqual(splitPrompt('hi', { files: ['a.go'] }), { text: 'hi' }, 'chips then come from the context alone');
});

test('the composer keeps one selection, one Problems, distinct files; take empties it', () => {
  const c = new Composer();
  let changes = 0;
  c.onDidChange(() => changes++);
  c.attach({ kind: 'file', path: 'a' }, { kind: 'file', path: 'a' }, { kind: 'file', path: 'b' });
  c.attach({ kind: 'selection', selection: { path: 'a', startLine: 1, endLine: 2 } });
  c.attach({ kind: 'selection', selection: { path: 'b', startLine: 3, endLine: 4 } });
  assert.deepEqual(c.chips().map((x) => x.label), ['a', 'b', 'b:3–4']);
  c.detach('file:a');
  const taken = c.take();
  assert.equal(taken.length, 2);
  assert.equal(c.chips().length, 0);
  c.restore(taken);
  assert.equal(c.chips().length, 2);
  assert.ok(changes >= 5);
});

test('the Problems list as text, errors first, bounded', () => {
  const items = Array.from({ length: 60 }, (_, i) => ({ path: 'a.go', line: i + 1, severity: i === 59 ? 'error' : 'warning', message: `m${i}\nmore` }));
  const { text, count } = problemsText(items);
  assert.equal(count, 60);
  assert.match(text.split('\n')[0], /^a\.go:60: error: m59 more$/);
  assert.match(text, /… and 10 more$/);
  assert.equal(attachmentLabel({ kind: 'problems', text, count }), 'Problems (60)');
});
