import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { inlinePrompt, inlineWrite } = require('../../out/inline.js');

test('inline edit: the model is asked for one edit of the selected lines, with the selection as context', () => {
  const { prompt, context } = inlinePrompt({ path: 'cart.go', startLine: 4, endLine: 9, text: 'func Total' }, ' rename Total to Sum ');
  assert.match(prompt, /^Edit lines 4–9 of cart\.go \(the selection\) as follows: rename Total to Sum\n/);
  assert.match(prompt, /one edit of that file/);
  assert.deepEqual(context, { files: ['cart.go'], selection: { path: 'cart.go', startLine: 4, endLine: 9, text: 'func Total' } });
  assert.match(inlinePrompt({ path: 'a', startLine: 2, endLine: 2, text: '' }, 'x').prompt, /^Edit line 2 of a /);
});

test('inline edit: only a single-file write of that file with its whole text is shown in the buffer', () => {
  const diff = (over) => [{ path: 'cart.go', status: 'modified', diff: '', newText: 'new\n', oldText: 'old\n', ...over }];
  assert.deepEqual(inlineWrite({ kind: 'confirm_write', diff: diff() }, 'cart.go'), { newText: 'new\n', oldText: 'old\n' });
  assert.equal(inlineWrite({ kind: 'confirm_write', diff: diff({ path: 'other.go' }) }, 'cart.go'), undefined);
  assert.equal(inlineWrite({ kind: 'confirm_write', diff: diff({ newText: undefined }) }, 'cart.go'), undefined);
  assert.equal(inlineWrite({ kind: 'confirm_write', diff: [...diff(), ...diff({ path: 'b' })] }, 'cart.go'), undefined);
  assert.equal(inlineWrite({ kind: 'confirm_command' }, 'cart.go'), undefined);
});
