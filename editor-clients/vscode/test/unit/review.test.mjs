import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { Review } = require('../../out/review.js');

const original = 'package cart\n\n// Total sums the cart.\nfunc Total(prices []int) int {\n\tt := 0\n\tfor _, p := range prices {\n\t\tt += p\n\t}\n\treturn t\n}\n';
const proposal = original.replace('// Total sums the cart.\nfunc Total(', '// Sum adds up the prices.\nfunc Sum(').replace('\treturn t\n', '\treturn t // the sum\n');

test('review: accepting every hunk accepts the model\'s change as it is', () => {
  const r = new Review('q1', 'cart.go', original, proposal);
  const [h1, h2] = r.pending();
  assert.ok(r.accept(Review.key(h1)));
  assert.equal(r.outcome(), undefined, 'one hunk still to decide');
  r.accept(Review.key(h2));
  assert.deepEqual(r.outcome(), { decision: 'allow_once' });
  assert.equal(r.edited, false);
});

test('review: a rejected hunk goes back into the text; accepting the rest sends the user\'s version', () => {
  const r = new Review('q1', 'cart.go', original, proposal);
  const [h1, h2] = r.pending();
  const text = r.rejected(Review.key(h2));
  assert.match(text, /\treturn t\n/);
  assert.match(text, /func Sum\(/);
  r.update(text);
  assert.equal(r.pending().length, 1, 'the rejected hunk is gone from the diff');
  assert.equal(r.outcome(), undefined);
  r.accept(Review.key(h1));
  assert.deepEqual(r.outcome(), { decision: 'allow_once', editedContent: text });
  assert.match(r.diff(), /^--- a\/cart\.go\n\+\+\+ b\/cart\.go\n@@ [^]*\+func Sum\(/);
  assert.doesNotMatch(r.diff(), /the sum/);
});

test('review: rejecting every hunk rejects the change', () => {
  const r = new Review('q1', 'cart.go', original, proposal);
  for (const h of r.pending()) r.update(r.rejected(Review.key(h)));
  assert.equal(r.current, original);
  assert.equal(r.outcome().decision, 'reject_once');
});

test('review: the user\'s own edit of an accepted hunk makes it undecided again; Accept takes their text', () => {
  const r = new Review('q1', 'cart.go', original, proposal);
  r.acceptAll();
  r.update(r.current.replace('// Sum adds up the prices.', '// Sum adds the prices up.'));
  assert.equal(r.outcome(), undefined);
  assert.deepEqual(r.accepting(), { decision: 'allow_once', editedContent: r.current });
  assert.equal(r.rejected('no such hunk'), undefined);
});
