import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { diffLines, applyHunks, unifiedDiff, hunkStat } = require('../../out/diff.js');

const a = 'package cart\n\n// Total sums the cart.\nfunc Total(prices []int) int {\n\tt := 0\n\tfor _, p := range prices {\n\t\tt += p\n\t}\n\treturn t\n}\n';

test('diff: the hunks of a change, each apart, in order', () => {
  const b = a.replace('// Total sums the cart.', '// Sum adds up the prices.').replace('func Total(', 'func Sum(').replace('\treturn t\n', '\t// done\n\treturn t\n');
  const hunks = diffLines(a, b);
  assert.deepEqual(hunks, [
    { oldStart: 2, oldLines: ['// Total sums the cart.', 'func Total(prices []int) int {'], newStart: 2, newLines: ['// Sum adds up the prices.', 'func Sum(prices []int) int {'] },
    { oldStart: 8, oldLines: [], newStart: 8, newLines: ['\t// done'] },
  ]);
  assert.deepEqual(hunkStat(hunks), { added: 3, removed: 2 });
  assert.deepEqual(diffLines(a, a), []);
});

test('diff: keeping every hunk gives the new text, none the old, some a mix', () => {
  const b = a.replace('func Total(', 'func Sum(').replace('\t\tt += p\n', '').replace('\treturn t\n', '\treturn t // sum\n');
  const hunks = diffLines(a, b);
  assert.equal(hunks.length, 3);
  assert.equal(applyHunks(a, hunks, () => true), b);
  assert.equal(applyHunks(a, hunks, () => false), a);
  const mixed = applyHunks(a, hunks, (i) => i !== 1);
  assert.match(mixed, /func Sum\(/);
  assert.match(mixed, /\t\tt \+= p\n/, 'the rejected deletion is undone');
  assert.match(mixed, /return t \/\/ sum/);
});

test('diff: a unified diff as agentd writes them', () => {
  const b = a.replace('func Total(', 'func Sum(');
  assert.equal(
    unifiedDiff('cart.go', a, b),
    '--- a/cart.go\n+++ b/cart.go\n@@ -1,7 +1,7 @@\n package cart\n \n // Total sums the cart.\n-func Total(prices []int) int {\n+func Sum(prices []int) int {\n \tt := 0\n \tfor _, p := range prices {\n \t\tt += p\n',
  );
  assert.equal(unifiedDiff('x', 'a\n', 'a\n'), '');
  assert.equal(unifiedDiff('new.txt', '', 'hello\n'), '--- a/new.txt\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello\n');
});

test('diff: random texts round-trip through their hunks', () => {
  let seed = 7;
  const rnd = (n) => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
  const words = ['a', 'b', 'c', 'd', ''];
  for (let t = 0; t < 500; t++) {
    const mk = () => Array.from({ length: rnd(12) }, () => words[rnd(words.length)]).join('\n');
    const x = mk();
    const y = mk();
    const hunks = diffLines(x, y);
    assert.equal(applyHunks(x, hunks, () => true), y, JSON.stringify([x, y]));
    assert.equal(applyHunks(x, hunks, () => false), x);
  }
});
