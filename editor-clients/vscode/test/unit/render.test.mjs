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
  const html = renderConversation({ runs: [run()], open: [], daemon: { state: 'ready' } });
  assert.match(html, /Explain &lt;cart&gt;/, 'the prompt is escaped');
  assert.match(html, /<span class="chip">cart\.go:3–9<\/span>/);
  assert.match(html, /<strong>Total<\/strong>/, 'markdown is rendered');
  assert.match(html, /<code>prices<\/code>/);
  assert.doesNotMatch(html, /<script>/, 'raw HTML from the model is escaped');
  assert.match(html, /step-completed[^]*Read cart\.go/);
  assert.match(html, /step-in_progress[^]*Explain/);
  assert.match(html, /tool-failed tone-error[^]*Write greeting\.txt[^]*failed/);
  assert.match(html, /Files changed \(1\)/);
  assert.match(html, /<span class="add">\+hi<\/span>/);
  assert.match(html, /120 tokens/);
  assert.match(html, /run-state-completed">done/);
});

test('the model\'s reasoning is folded apart from the answer, escaped, and says when it is still thinking', () => {
  const s = new RunStore();
  s.start('r1', 's1', 'Why?', undefined);
  const u = (seq, update) => s.apply('agent/update', { runId: 'r1', sessionId: 's1', seq, update });
  s.apply('agent/runState', { runId: 'r1', sessionId: 's1', seq: 1, state: 'running' });
  u(2, { kind: 'thought_chunk', text: 'The test fails <because> ' });
  let html = renderConversation({ runs: [s.get('r1')], open: [], daemon: { state: 'ready' } });
  assert.match(html, /<details class="thinking" data-id="r1-think-0"><summary><span class="spinner"><\/span>Thinking… <span class="thinking-preview">The test fails &lt;because&gt;<\/span><\/summary>/, 'while it streams');
  u(3, { kind: 'thought_chunk', text: 'of x.\nThen more.' });
  u(4, { kind: 'message_chunk', text: 'Fixed it.' });
  html = renderConversation({ runs: [s.get('r1')], open: [], daemon: { state: 'ready' } });
  assert.match(html, /<summary>Thinking <span class="thinking-preview">The test fails &lt;because&gt; of x\.<\/span><\/summary><div class="thinking-text">The test fails &lt;because&gt; of x\.\nThen more\.<\/div><\/details>/);
  assert.match(html, /Fixed it\./);
});

test('instruction files: one quiet line per run, each a link that opens it', () => {
  const s = new RunStore();
  s.start('r1', 's1', 'Go', undefined);
  const u = (seq, update) => s.apply('agent/update', { runId: 'r1', sessionId: 's1', seq, update });
  u(1, { kind: 'instructions', instructions: [{ path: '/home/ada/.config/agentd/AGENTS.md', scope: 'user', bytes: 412 }, { path: 'AGENTS.md', scope: 'workspace', bytes: 1830 }] });
  u(2, { kind: 'message_chunk', text: 'Reading web/.' });
  u(3, { kind: 'instructions', instructions: [{ path: 'web/AGENTS.md', scope: 'directory', bytes: 96120, truncated: true }] });
  const html = renderConversation({ runs: [s.get('r1')], open: [], daemon: { state: 'ready' } });
  assert.equal(html.match(/class="instructions"/g).length, 1, 'one line');
  assert.match(html, /Instructions: <button class="link" data-action="openFile" data-path="\/home\/ada\/\.config\/agentd\/AGENTS\.md" title="your own instructions: [^"]+, 412 bytes">~\/\.config\/agentd\/AGENTS\.md<\/button> · <button class="link" data-action="openFile" data-path="AGENTS\.md"[^>]*>AGENTS\.md<\/button> · <button class="link" data-action="openFile" data-path="web\/AGENTS\.md" title="[^"]*the model got the first 32 KiB">web\/AGENTS\.md<\/button> <span class="truncated">\(first 32 KiB\)<\/span><\/div>/);
  assert.ok(html.indexOf('class="instructions"') < html.indexOf('Reading web/'), 'under the prompt, before the answer');
});

test('a notice from agentd is shown apart, as a note, not an error', () => {
  const s = new RunStore();
  s.start('r1', 's1', 'Go', undefined);
  s.apply('agent/update', { runId: 'r1', sessionId: 's1', seq: 1, update: { kind: 'notice', text: "The model's context window is 8192 <tokens>." } });
  const html = renderConversation({ runs: [s.get('r1')], open: [], daemon: { state: 'ready' } });
  assert.match(html, /<div class="notice" role="note"><span class="icon">ⓘ<\/span> The model&#39;s context window is 8192 &lt;tokens&gt;\.<\/div>/);
  assert.doesNotMatch(html, /run-error|tone-error/);
});

test('the footer names the model and counts cached tokens', () => {
  const s = new RunStore();
  s.start('r1', 's1', 'Go', undefined).model = 'qwen2.5-coder:32b';
  s.apply('agent/update', { runId: 'r1', sessionId: 's1', seq: 1, update: { kind: 'usage', usage: { promptTokens: 5120, completionTokens: 96, totalTokens: 5216, cachedTokens: 4864, reasoningTokens: 40 } } });
  s.apply('agent/runState', { runId: 'r1', sessionId: 's1', seq: 2, state: 'completed', stopReason: 'end_turn' });
  const html = renderConversation({ runs: [s.get('r1')], open: [], daemon: { state: 'ready' } });
  assert.match(html, /done<\/span> · <span class="model"[^>]*>qwen2\.5-coder:32b<\/span> · <span class="usage" title="5,120 prompt \+ 96 completion tokens; 4,864 of the prompt tokens served from the provider&#39;s prompt cache; 40 of the completion tokens spent thinking">5,216 tokens \(4,864 cached\)<\/span>/);
});

test('a run paused because its state could not be saved says why, with Resume', () => {
  const s = new RunStore();
  s.start('r1', 's1', 'Go', undefined);
  s.apply('agent/runState', { runId: 'r1', sessionId: 's1', seq: 1, state: 'running' });
  s.apply('agent/runState', { runId: 'r1', sessionId: 's1', seq: 2, state: 'paused', error: 'state not saved: write r_1.journal.jsonl: no space left on device' });
  const html = renderConversation({ runs: [s.get('r1')], open: [], daemon: { state: 'ready' } });
  assert.match(html, /<div class="run-paused"><span class="paused-why">Paused: state not saved: write r_1\.journal\.jsonl: no space left on device<\/span> <button class="secondary" data-action="resume" data-run="r1">Resume<\/button><\/div>/);
  assert.doesNotMatch(html, /run-error/, 'a pause is not shown as a failure');
  s.apply('agent/runState', { runId: 'r1', sessionId: 's1', seq: 3, state: 'running' });
  assert.doesNotMatch(renderConversation({ runs: [s.get('r1')], open: [], daemon: { state: 'ready' } }), /run-paused|no space/);
});

test('a session loading, or with earlier runs left to fetch', () => {
  assert.match(renderConversation({ runs: [], open: [], daemon: { state: 'ready' }, session: { loading: true, earlierRuns: 0 } }), /Loading the conversation…/);
  const s = new RunStore();
  s.start('r9', 's1', 'Latest', undefined);
  const html = renderConversation({ runs: [s.get('r9')], open: [], daemon: { state: 'ready' }, session: { earlierRuns: 3 } });
  assert.match(html, /<button class="link" data-action="loadEarlier">Show 3 earlier runs<\/button>/);
  assert.ok(html.indexOf('loadEarlier') < html.indexOf('Latest'), 'above the runs');
  assert.match(renderConversation({ runs: [], open: [], daemon: { state: 'ready' }, session: { error: 'agentd no longer knows this session' } }), /session-error">agentd no longer knows this session/);
});

test('requests of other sessions are answerable inline', () => {
  const req = { runId: 'r9', sessionId: 's9', seq: 1, requestId: 'q1', kind: 'question', title: 'Question', message: 'Which port?', createdAt: '', pendingCount: 1 };
  const html = renderConversation({ runs: [], open: [{ req, sending: false }], daemon: { state: 'restarting', detail: 'exited with code 2' } });
  assert.match(html, /Waiting for you in other sessions[^]*Which port\?[^]*data-field="q1-text"[^]*data-action="reply" data-request="q1"/);
  assert.match(html, /agentd restarting…: exited with code 2/);
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
  const html = () => renderConversation({ runs: [s.get('r1')], open: [], daemon: { state: 'ready' } });
  u(1, { kind: 'tool_call', toolCallId: 'c8', title: 'go test', toolKind: 'execute', status: 'pending', input: { command: 'go test' } });
  assert.doesNotMatch(html(), /data-live/, 'no output yet: not opened');
  u(2, { kind: 'tool_call_update', toolCallId: 'c8', status: 'in_progress', outputDelta: 'ok <cart>\n' });
  u(3, { kind: 'tool_call_update', toolCallId: 'c8', status: 'in_progress', outputDelta: 'ok tax\n' });
  let h = html();
  assert.match(h, /<details class="tool tool-in_progress tone-neutral" data-tool="r1-c8" data-id="r1-c8" data-live open>/, 'a streaming call is open');
  assert.match(h, /<pre class="tool-output tool-output-live" data-id="r1-c8-out">ok &lt;cart&gt;\nok tax\n<\/pre>/);
  u(4, { kind: 'tool_call_update', toolCallId: 'c8', status: 'completed', output: 'ok <cart>\nok tax\nPASS\n', exitCode: 0 });
  h = html();
  assert.doesNotMatch(h, /data-live|tool-output-live/);
  assert.match(h, /<pre class="tool-output">ok &lt;cart&gt;\nok tax\nPASS\n<\/pre>/);
  assert.equal(h.match(/go test/g).length, 1, 'the command line is shown once');
  assert.match(h, /\$ go test<\/code> <span class="tool-status tone-ok">done<\/span> <span class="tool-facts">3 lines<\/span>/);
  assert.equal(h.match(/ok tax/g).length, 1, 'the output is shown once');
});

test('the live output says how much was cut off', () => {
  const s = new RunStore();
  s.apply('agent/update', { runId: 'r1', sessionId: 's1', seq: 1, update: { kind: 'tool_call_update', toolCallId: 'c1', status: 'in_progress', outputDelta: 'x'.repeat(70000) } });
  const h = renderConversation({ runs: [s.get('r1')], open: [], daemon: { state: 'ready' } });
  assert.match(h, /… 4,464 earlier characters not shown; the full output comes when the command ends/);
  assert.ok(h.length < 70000, 'only the kept tail is rendered');
});

const { RunStore: Store } = require('../../out/runStore.js');
function flow() {
  const s = new Store();
  let seq = 0;
  const n = (method, params) => s.apply(method, { runId: 'r1', sessionId: 's1', ...params, seq: ++seq });
  return { s, n };
}
const reqOf = (r) => ({ runId: 'r1', sessionId: 's1', seq: 0, createdAt: '2026-01-01T00:00:00Z', pendingCount: 1, ...r });

test('a command waiting for approval: in its tool row, the command line once, its folder and the rule', () => {
  const { s, n } = flow();
  n('agent/update', { update: { kind: 'tool_call', toolCallId: 'c1', title: 'touch ran.txt', toolKind: 'execute', status: 'pending', input: { command: 'touch ran.txt', cwd: '.' } } });
  const req = reqOf({ requestId: 'q1', toolCallId: 'c1', kind: 'confirm_command', title: 'Run touch ran.txt', message: 'The agent wants to run a command.', command: 'touch ran.txt', cwd: '.', rule: 'mode ask: commands ask', options: [{ optionId: 'allow_once' }, { optionId: 'allow_session' }, { optionId: 'reject_once' }, { optionId: 'reject_always' }] });
  n('agent/inputRequest', req);
  const html = renderConversation({ runs: [s.get('r1')], open: [{ req, sending: false }], daemon: { state: 'ready' } });
  assert.equal(html.match(/touch ran\.txt/g).length, 1, 'the command line once');
  assert.match(html, /data-waiting open>/);
  assert.match(html, /tone-waiting">waiting for you/);
  assert.match(html, /Run this command\?[^]*in <code>\.<\/code> \(the workspace folder\)[^]*Asked because: mode ask: commands ask/);
  assert.match(html, /data-decision="allow_once">Accept<[^]*data-decision="allow_session">Accept for this session<[^]*data-action="rejectForm"[^]*data-field="q1-reason"[^]*data-decision="reject_once">Reject<[^]*data-decision="reject_always">Always reject</);
  // Rejected by the user: a decision, not a failure.
  n('agent/inputResolved', { requestId: 'q1', outcome: 'reject_once', by: 'user' });
  n('agent/update', { update: { kind: 'tool_call_update', toolCallId: 'c1', status: 'failed', isError: true, output: 'The user rejected this command (reject_once). Reason: no.' } });
  const done = renderConversation({ runs: [s.get('r1')], open: [], daemon: { state: 'ready' } });
  assert.match(done, /tone-declined[^]*rejected by you/);
  assert.doesNotMatch(done, /tone-error|>failed</);
  assert.doesNotMatch(done, /The user rejected this command/, 'the message meant for the model is not shown');
});

test('questions and choices are answered inline; a cancelled one reads cancelled, not failed', () => {
  const { s, n } = flow();
  n('agent/update', { update: { kind: 'tool_call', toolCallId: 'a1', title: 'Ask the user', toolKind: 'other', status: 'pending', input: { question: 'Colour?' } } });
  const choice = reqOf({ requestId: 'q1', toolCallId: 'a1', kind: 'choice', title: 'Question', message: 'Colour?', options: [{ optionId: '1', label: 'red' }, { optionId: '2', label: 'blue' }], allowOther: true });
  n('agent/inputRequest', choice);
  const q = reqOf({ requestId: 'q2', kind: 'question', title: 'Question', message: 'Name?' });
  n('agent/inputRequest', q);
  const html = renderConversation({ runs: [s.get('r1')], open: [{ req: choice, sending: false }, { req: q, sending: false }], daemon: { state: 'ready' } });
  assert.doesNotMatch(html, /Ask the user/, 'the question is the row');
  assert.match(html, /Colour\?[^]*data-action="choose" data-request="q1" data-option="1">red<[^]*data-option="2">blue<[^]*placeholder="Other: type your own answer"/);
  assert.match(html, /Name\?[^]*data-field="q2-text"/);
  assert.doesNotMatch(html, /Escape/);
  n('agent/inputResolved', { requestId: 'q1', outcome: 'answered', by: 'user' });
  n('agent/inputResolved', { requestId: 'q2', outcome: 'cancelled', by: 'cancel' });
  n('agent/update', { update: { kind: 'tool_call_update', toolCallId: 'a1', status: 'completed' } });
  const done = renderConversation({ runs: [s.get('r1')], open: [], daemon: { state: 'ready' }, answers: { q1: 'blue' } });
  assert.match(done, /Colour\?<\/span> <span class="request-outcome">— answered: blue/);
  assert.match(done, /tone-neutral[^]*Name\?[^]*— cancelled/);
  assert.doesNotMatch(done, /failed/);
});

test('a write waiting: diff link, inline diff, edit before accepting, and the edited note', () => {
  const { s, n } = flow();
  n('agent/update', { update: { kind: 'tool_call', toolCallId: 'w1', title: 'write greeting.txt', toolKind: 'edit', status: 'pending', input: { path: 'greeting.txt', content: 'hi' } } });
  const req = reqOf({ requestId: 'q1', toolCallId: 'w1', kind: 'confirm_write', title: 'write greeting.txt', message: 'The agent wants to change 1 file(s).', rule: 'mode ask: writes ask', diff: [{ path: 'greeting.txt', status: 'added', diff: '--- /dev/null\n+++ b/greeting.txt\n@@ -0,0 +1 @@\n+hi\n', newText: 'hi\n' }] });
  n('agent/inputRequest', req);
  const html = renderConversation({ runs: [s.get('r1')], open: [{ req, sending: false }], daemon: { state: 'ready' }, edited: { q1: true } });
  assert.match(html, /data-action="openDiff" data-request="q1" data-index="0">Open diff</);
  assert.match(html, /data-action="edit" data-request="q1">Edit before accepting</);
  assert.match(html, /<span class="add">\+hi<\/span>/);
  assert.match(html, /You edited the proposed content/);
  assert.match(html, /data-decision="allow_once">Accept my version</);
  assert.doesNotMatch(html, /"content"/, 'no raw JSON arguments');
});

test('the session list shows title, time, a human state and the run count', () => {
  const now = new Date('2026-01-02T15:00:00');
  const list = [
    { sessionId: 's1', title: 'Fix <it>', createdAt: '2026-01-01T00:00:00Z', updatedAt: new Date('2026-01-02T14:03:27.123').toISOString(), state: 'requires_action', runCount: 2 },
    { sessionId: 's2', title: 'Older', createdAt: '2025-03-01T00:00:00Z', updatedAt: new Date('2025-03-01T09:05:00').toISOString(), state: 'completed', runCount: 1 },
    { sessionId: 's3', title: 'Empty', createdAt: '2026-01-02T00:00:00Z', updatedAt: new Date('2026-01-01T10:00:00').toISOString(), state: 'idle', runCount: 0 },
  ];
  const html = renderConversation({ runs: [], open: [], daemon: { state: 'ready' }, sessions: { list }, sessionId: 's2', now });
  assert.match(html, /data-action="openSession" data-session="s1"><span class="session-title">Fix &lt;it&gt;<\/span><span class="session-meta">today 14:03 · waiting for you · 2 runs<\/span>/);
  assert.match(html, /class="session current session-state-completed" data-action="openSession" data-session="s2"><span class="session-title">Older<\/span><span class="session-meta">1 Mar 2025 09:05 · done · 1 run</);
  assert.match(html, /<span class="session-meta">yesterday 10:00 · no runs<\/span>/);
  assert.doesNotMatch(html, /\d\d:\d\d:\d\d|\.123/, 'no seconds, no fractions');
});

test('a user\'s edit of a write shows in the panel: the inline change becomes theirs', () => {
  const { s, n } = flow();
  n('agent/update', { update: { kind: 'tool_call', toolCallId: 'w1', title: 'write notes.txt', toolKind: 'edit', status: 'pending', input: { path: 'notes.txt' } } });
  const req = reqOf({ requestId: 'q1', toolCallId: 'w1', kind: 'confirm_write', title: 'write notes.txt', message: 'm', diff: [{ path: 'notes.txt', status: 'added', diff: '--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1 @@\n+draft from the model\n', newText: 'draft from the model\n' }] });
  n('agent/inputRequest', req);
  const mine = '--- a/notes.txt\n+++ b/notes.txt\n@@ -0,0 +1 @@\n+notes edited by me\n';
  const html = renderConversation({ runs: [s.get('r1')], open: [{ req, sending: false }], daemon: { state: 'ready' }, edited: { q1: true }, editedDiffs: { q1: mine } });
  assert.match(html, /<summary>Your version <span class="stat">/);
  assert.match(html, /<span class="add">\+notes edited by me<\/span>/);
  assert.doesNotMatch(html, /draft from the model/, 'the model\'s text is no longer shown as the change');
  assert.match(html, /<input type="checkbox" data-action="autoDiff"> Open changes in the diff editor as they come/);
});

test('no protocol word reaches the screen: checkpoints, decisions, states and tool kinds in words', () => {
  const { s, n } = flow();
  n('agent/update', { update: { kind: 'tool_call', toolCallId: 't1', title: 'run_thing', toolKind: 'other', status: 'pending', input: { x: 1 } } });
  n('agent/update', { update: { kind: 'tool_call_update', toolCallId: 't1', status: 'completed', output: 'ok' } });
  n('agent/update', { update: { kind: 'tool_call', toolCallId: 'e1', title: 'Edit cart.go', toolKind: 'edit', status: 'pending', input: { path: 'cart.go' } } });
  n('agent/update', { update: { kind: 'tool_call_update', toolCallId: 'e1', status: 'completed', output: 'modified cart.go', checkpoint: 'c1', files: [{ path: 'cart.go', status: 'modified', diff: '--- a/cart.go\n+++ b/cart.go\n@@ -1 +1 @@\n-a\n+b\n' }] } });
  n('agent/update', { update: { kind: 'tool_call', toolCallId: 'e2', title: 'Edit b.go', toolKind: 'edit', status: 'pending', input: { path: 'b.go' } } });
  n('agent/update', { update: { kind: 'tool_call_update', toolCallId: 'e2', status: 'completed', output: 'modified b.go', checkpoint: 'c2' } });
  const req = reqOf({ requestId: 'q9', kind: 'confirm_command', toolCallId: 'x9', title: 'Run', message: 'm', command: 'make', cwd: '.', options: [{ optionId: 'allow_once', label: 'Allow' }, { optionId: 'reject_once', label: 'Reject' }] });
  n('agent/inputRequest', req);
  n('agent/inputResolved', { requestId: 'q9', outcome: 'allow_once', by: 'user' });
  n('agent/runState', { state: 'completed', stopReason: 'end_turn' });
  const undo = { phase: 'preview', target: { kind: 'run', runId: 'r1' }, preview: { status: 'preview', undone: ['c1', 'c2'], files: [{ path: 'cart.go', status: 'modified', diff: '' }] } };
  const html = renderConversation({ runs: [s.get('r1')], open: [], daemon: { state: 'ready' }, canUndo: true, undone: { c1: 'c3' }, undo });
  // What a person reads: the text and every tooltip.
  const visible = html.replace(/ data-[a-z-]+="[^"]*"/g, '').replace(/ class="[^"]*"/g, '');
  for (const word of [/\bc\d+\b/, /allow_once|reject_once|allow_always|requires_action|end_turn|tool_call|undo_patch/, /\[other\]|\bother\b/, /checkpoint/i]) {
    assert.doesNotMatch(visible, word);
  }
  assert.match(visible, /2 changes undone/);
});

test('a web fetch says where it ended and how much it read; a failed status shows', () => {
  const { s, n } = flow();
  n('agent/update', { update: { kind: 'tool_call', toolCallId: 'f1', title: 'Fetch https://go.dev/doc/effective_go', toolKind: 'fetch', status: 'pending', input: { url: 'https://go.dev/doc/effective_go' } } });
  n('agent/update', { update: { kind: 'tool_call_update', toolCallId: 'f1', status: 'completed', output: '# Effective Go', fetched: { url: 'https://go.dev/doc/effective_go', status: 200, contentType: 'text/html', bytes: 12800 } } });
  n('agent/update', { update: { kind: 'tool_call', toolCallId: 'f2', title: 'Fetch https://x.dev/missing', toolKind: 'fetch', status: 'pending', input: { url: 'https://x.dev/missing' } } });
  n('agent/update', { update: { kind: 'tool_call_update', toolCallId: 'f2', status: 'failed', isError: true, output: 'not found', fetched: { url: 'https://x.dev/missing', status: 404, bytes: 512 } } });
  const html = renderConversation({ runs: [s.get('r1')], open: [], daemon: { state: 'ready' } });
  assert.match(html, /<span class="icon">⇣<\/span>[^]*Fetch https:\/\/go\.dev\/doc\/effective_go[^]*tool-facts">go\.dev\/doc\/effective_go · 13 KB</);
  assert.match(html, /x\.dev\/missing · HTTP 404 · 512 B/);
});
