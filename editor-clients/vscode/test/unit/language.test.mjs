import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const L = require('../../out/lspShapes.js');
const { renderDiagnostics } = require('../../out/render.js');
const { RunStore } = require('../../out/runStore.js');

const r = (a, b, c, d) => ({ start: { line: a, character: b }, end: { line: c, character: d } });
const uri = (s) => ({ toString: () => s });

test('language: VS Code\'s diagnostics in LSP\'s shape (severity one up, the code\'s value)', () => {
  assert.deepEqual(L.diagnostic({ range: r(3, 8, 3, 12), message: "Cannot find name 'Totl'.", severity: 0, source: 'ts', code: 2304 }), {
    range: r(3, 8, 3, 12),
    severity: 1,
    message: "Cannot find name 'Totl'.",
    source: 'ts',
    code: 2304,
  });
  assert.equal(L.diagnostic({ range: r(0, 0, 0, 1), message: 'm', severity: 3, code: { value: 'no-unused', target: uri('https://x') } }).code, 'no-unused');
  assert.equal(L.diagnostic({ range: r(0, 0, 0, 1), message: 'm', severity: 1 }).severity, 2);
});

test('language: locations and links, hovers joined, symbols with LSP\'s kinds', () => {
  assert.deepEqual(L.locations([{ uri: uri('file:///w/a.ts'), range: r(1, 2, 1, 5) }]), [{ uri: 'file:///w/a.ts', range: r(1, 2, 1, 5) }]);
  assert.deepEqual(L.locations([{ targetUri: uri('file:///w/b.ts'), targetRange: r(0, 0, 9, 1), targetSelectionRange: r(0, 9, 0, 14) }]), [
    { targetUri: 'file:///w/b.ts', targetRange: r(0, 0, 9, 1), targetSelectionRange: r(0, 9, 0, 14) },
  ]);
  assert.deepEqual(L.hover([{ contents: [{ value: 'function total(): number', language: 'typescript' }, 'Sums the cart.'] }]), {
    contents: { kind: 'markdown', value: '```typescript\nfunction total(): number\n```\n\n---\n\nSums the cart.' },
  });
  assert.equal(L.hover([]), null, 'no hover: declined');
  // VS Code's SymbolKind.Function is 11, LSP's 12.
  assert.deepEqual(L.symbols([{ name: 'total', kind: 11, range: r(0, 0, 3, 1), selectionRange: r(0, 9, 0, 14), children: [{ name: 't', kind: 12, range: r(1, 2, 1, 9), selectionRange: r(1, 6, 1, 7) }] }]), [
    { name: 'total', kind: 12, range: r(0, 0, 3, 1), selectionRange: r(0, 9, 0, 14), children: [{ name: 't', kind: 13, range: r(1, 2, 1, 9), selectionRange: r(1, 6, 1, 7) }] },
  ]);
  assert.deepEqual(L.symbols([{ name: 'Total', kind: 11, containerName: 'cart', location: { uri: uri('file:///w/cart.ts'), range: r(3, 0, 9, 1) } }]), [
    { name: 'Total', kind: 12, location: { uri: 'file:///w/cart.ts', range: r(3, 0, 9, 1) }, containerName: 'cart' },
  ]);
  assert.equal(L.isPositionParams({ textDocument: { uri: 'file:///a' }, position: { line: 1, character: 2 } }), true);
  assert.equal(L.isPositionParams({ textDocument: {} }), false);
});

test('language: the diagnostics after an edit show under it, new ones first told, each a link to its place', () => {
  const s = new RunStore();
  const u = (seq, update) => s.apply('agent/update', { runId: 'r1', sessionId: 's1', seq, update });
  u(1, { kind: 'tool_call', toolCallId: 'e1', title: 'Edit app.ts', toolKind: 'edit', status: 'pending', input: { path: 'app.ts' } });
  u(2, { kind: 'tool_call_update', toolCallId: 'e1', status: 'completed', output: 'modified app.ts' });
  const report = {
    files: ['app.ts'],
    new: 1,
    servers: ['the editor'],
    items: [{ path: 'app.ts', line: 4, column: 9, severity: 'error', message: "Cannot find name 'Totl'.", source: 'ts', code: '2304', new: true }],
    text: "Diagnostics after your edits (the editor): 1 problem in the files you changed, 1 of them new.\napp.ts:4:9: error: Cannot find name 'Totl'. [ts 2304] (new)",
  };
  u(3, { kind: 'tool_call_update', toolCallId: 'e1', diagnostics: report });
  assert.deepEqual(s.get('r1').tools.e1.diagnostics, report);
  const html = renderDiagnostics(report, 'r1-e1');
  assert.match(html, /<details class="diagnostics tone-error" data-id="r1-e1-diag" open><summary><span class="icon">⨯<\/span> After the edits: 1 error \(1 new\) · the editor<\/summary>/);
  assert.match(html, /data-action="openFile" data-path="app\.ts" data-line="4" data-column="9">app\.ts:4:9<\/button> <span class="diag-sev">error<\/span> Cannot find name &#39;Totl&#39;\./);
  assert.match(html, /What the model read<\/summary><pre>Diagnostics after your edits/);
  assert.match(renderDiagnostics({ files: ['a.ts'], new: 0, items: [], text: 'ok' }, 'x'), /After the edits: no problems<\/summary>/);
});

test('diagnostics are taken once quiet for 400 ms, or for as long as the first report took when that was longer', () => {
  assert.equal(L.quietWindow(0), 400);
  assert.equal(L.quietWindow(120), 400, 'a warm server: the answer comes about half a second after the edit');
  assert.equal(L.quietWindow(2500), 2500, 'a loaded one: its types report comes later, as its first did');
});
