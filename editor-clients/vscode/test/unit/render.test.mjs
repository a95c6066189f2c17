import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { renderConversation, renderDiff } = require('../../out/render.js');
const { RunStore } = require('../../out/runStore.js');

function run() {
  const s = new RunStore();
  s.start('r1', 's1', 'Explain <cart>', { selection: { path: 'cart.go', startLine: 3, endLine: 9 } });
  const u = (seq, update) => s.apply('agent/update', { runId: 'r1', sessionId: 's1', seq, update });
  u(1, { kind: 'plan', entries: [{ content: 'Read cart.go', status: 'completed' }, { content: 'Explain', status: 'in_progress' }] });
  u(2, { kind: 'message_chunk', text: '**Total** sums <script>alert(1)</script> the `prices`.' });
  u(3, { kind: 'tool_call', toolCallId: 'c1', title: 'Write greeting.txt', toolKind: 'edit', status: 'pending', input: { path: 'greeting.txt' } });
  u(4, { kind: 'tool_call_update', toolCallId: 'c1', status: 'failed', output: 'rejected by the user', isError: true });
  u(5, { kind: 'usage', usage: { promptTokens: 100, completionTokens: 20, totalTokens: 120 } });
  u(6, { kind: 'files_changed', files: [{ path: 'a.txt', status: 'added', diff: '--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+hi\n' }] });
  s.apply('agent/runState', { runId: 'r1', sessionId: 's1', seq: 7, state: 'completed', stopReason: 'end_turn' });
  return s.get('r1');
}

test('renders prompt, markdown answer, plan, tool calls, files and usage', () => {
  const html = renderConversation({ runs: [run()], pending: [], daemon: { state: 'ready' } });
  assert.match(html, /Explain &lt;cart&gt;/, 'the prompt is escaped');
  assert.match(html, /Selection: cart\.go:3–9/);
  assert.match(html, /<strong>Total<\/strong>/, 'markdown is rendered');
  assert.match(html, /<code>prices<\/code>/);
  assert.doesNotMatch(html, /<script>/, 'raw HTML from the model is escaped');
  assert.match(html, /step-completed[^]*Read cart\.go/);
  assert.match(html, /step-in_progress[^]*Explain/);
  assert.match(html, /tool-failed tool-error[^]*Write greeting\.txt[^]*rejected by the user/);
  assert.match(html, /Files changed \(1\)/);
  assert.match(html, /<span class="add">\+hi<\/span>/);
  assert.match(html, /100 \+ 20 = 120 tokens/);
  assert.match(html, /run-state-completed/);
});

test('pending requests of other runs get an Answer button', () => {
  const req = { runId: 'r9', sessionId: 's9', seq: 1, requestId: 'q1', kind: 'question', title: 'Question', message: 'Which port?', createdAt: '', pendingCount: 1 };
  const html = renderConversation({ runs: [], pending: [{ req, state: 'deferred' }], daemon: { state: 'restarting', detail: 'exited with code 2' } });
  assert.match(html, /data-action="answer" data-request="q1"/);
  assert.match(html, /agentd restarting: exited with code 2/);
});

test('diff lines get classes', () => {
  const html = renderDiff('--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n same\n');
  assert.match(html, /<span class="meta">--- a\/x<\/span>/);
  assert.match(html, /<span class="hunk">@@ -1 \+1 @@<\/span>/);
  assert.match(html, /<span class="del">-old<\/span>/);
  assert.match(html, /<span class="add">\+new<\/span>/);
  assert.match(html, /<span class="ctx"> same<\/span>/);
});

test('a running command shows its streamed output, then the final output once', () => {
  const s = new RunStore();
  const u = (seq, update) => s.apply('agent/update', { runId: 'r1', sessionId: 's1', seq, update });
  const html = () => renderConversation({ runs: [s.get('r1')], pending: [], daemon: { state: 'ready' } });
  u(1, { kind: 'tool_call', toolCallId: 'c8', title: 'go test', toolKind: 'execute', status: 'pending', input: { command: 'go test' } });
  assert.doesNotMatch(html(), /data-live/, 'no output yet: not opened');
  u(2, { kind: 'tool_call_update', toolCallId: 'c8', status: 'in_progress', outputDelta: 'ok <cart>\n' });
  u(3, { kind: 'tool_call_update', toolCallId: 'c8', status: 'in_progress', outputDelta: 'ok tax\n' });
  let h = html();
  assert.match(h, /<details class="tool tool-in_progress" data-id="r1-c8" data-live open>/, 'a streaming call is open');
  assert.match(h, /Output \(running\)<\/div><pre class="tool-output tool-output-live" data-id="r1-c8-out">ok &lt;cart&gt;\nok tax\n<\/pre>/);
  u(4, { kind: 'tool_call_update', toolCallId: 'c8', status: 'completed', output: 'ok <cart>\nok tax\nPASS\n', exitCode: 0 });
  h = html();
  assert.doesNotMatch(h, /data-live|tool-output-live|Output \(running\)/);
  assert.match(h, /Result<\/div><pre class="tool-output">ok &lt;cart&gt;\nok tax\nPASS\n<\/pre>/);
  assert.equal(h.match(/ok tax/g).length, 1, 'the output is shown once');
});

test('the live output says how much was cut off', () => {
  const s = new RunStore();
  s.apply('agent/update', { runId: 'r1', sessionId: 's1', seq: 1, update: { kind: 'tool_call_update', toolCallId: 'c1', status: 'in_progress', outputDelta: 'x'.repeat(70000) } });
  const h = renderConversation({ runs: [s.get('r1')], pending: [], daemon: { state: 'ready' } });
  assert.match(h, /… 4,464 earlier characters not shown; the full output comes when the command ends/);
  assert.ok(h.length < 70000, 'only the kept tail is rendered');
});
