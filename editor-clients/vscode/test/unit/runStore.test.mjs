import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { RunStore, unstreamedResult, appendLiveOutput, LIVE_OUTPUT_MAX } = require('../../out/runStore.js');

const upd = (seq, update, runId = 'r1') => ['agent/update', { runId, sessionId: 's1', seq, update }];
const st = (seq, state, extra = {}) => ['agent/runState', { runId: 'r1', sessionId: 's1', seq, state, ...extra }];

test('applies notifications in seq order and builds the run view', () => {
  const s = new RunStore();
  s.start('r1', 's1', 'Rename Total');
  assert.equal(s.apply(...st(1, 'running')).kind, 'applied');
  s.apply(...upd(2, { kind: 'plan', entries: [{ content: 'Find Total', status: 'in_progress' }] }));
  s.apply(...upd(3, { kind: 'message_chunk', text: 'Let me ' }));
  s.apply(...upd(4, { kind: 'message_chunk', text: 'look.' }));
  s.apply(...upd(5, { kind: 'tool_call', toolCallId: 'c1', title: 'grep Total', toolKind: 'search', status: 'pending', input: { pattern: 'Total' } }));
  s.apply(...upd(6, { kind: 'tool_call_update', toolCallId: 'c1', status: 'completed', output: 'cart.go:12', durationMs: 4 }));
  s.apply(...upd(7, { kind: 'plan', entries: [{ content: 'Find Total', status: 'completed' }, { content: 'Rename', status: 'in_progress' }] }));
  s.apply(...upd(8, { kind: 'usage', usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 } }));
  s.apply(...upd(9, { kind: 'files_changed', files: [{ path: 'cart.go', status: 'modified', diff: '-a\n+b\n' }] }));
  s.apply(...upd(10, { kind: 'result', stopReason: 'end_turn', text: 'Renamed.' }));
  s.apply(...st(11, 'completed', { stopReason: 'end_turn' }));
  const r = s.get('r1');
  assert.equal(r.prompt, 'Rename Total');
  assert.equal(r.lastSeq, 11);
  assert.equal(r.state, 'completed');
  assert.deepEqual(r.timeline.map((i) => i.type), ['text', 'tool']);
  assert.equal(r.timeline[0].text, 'Let me look.');
  assert.equal(r.tools.c1.status, 'completed');
  assert.equal(r.tools.c1.output, 'cart.go:12');
  assert.equal(r.plan.entries.length, 2, 'a plan update replaces the plan');
  assert.equal(r.usage.totalTokens, 15);
  assert.equal(r.filesChanged[0].path, 'cart.go');
  assert.equal(unstreamedResult(r), 'Renamed.', 'the result is shown when no text followed the last tool');
  assert.equal(s.active().length, 0);
});

test('a streamed final answer is not shown twice', () => {
  const s = new RunStore();
  s.apply(...upd(1, { kind: 'message_chunk', text: 'Done.' }));
  s.apply(...upd(2, { kind: 'result', text: 'Done.' }));
  assert.equal(unstreamedResult(s.get('r1')), undefined);
});

test('drops duplicates and buffers after a gap until agent/events fills it', () => {
  const s = new RunStore();
  s.apply(...st(1, 'running'));
  assert.equal(s.apply(...st(1, 'running')).kind, 'duplicate');
  const gap = s.apply(...upd(4, { kind: 'message_chunk', text: 'C' }));
  assert.deepEqual(gap, { kind: 'gap', runId: 'r1', lastSeq: 1 });
  assert.equal(s.get('r1').timeline.length, 0, 'nothing after a gap is applied');
  assert.ok(s.hasBuffered('r1'));
  const applied = s.applyEvents('r1', [
    { seq: 2, method: 'agent/update', params: { runId: 'r1', sessionId: 's1', seq: 2, update: { kind: 'message_chunk', text: 'A' } } },
    { seq: 3, method: 'agent/update', params: { runId: 'r1', sessionId: 's1', seq: 3, update: { kind: 'message_chunk', text: 'B' } } },
    { seq: 4, method: 'agent/update', params: { runId: 'r1', sessionId: 's1', seq: 4, update: { kind: 'message_chunk', text: 'C' } } },
  ], 'running');
  assert.deepEqual(applied.map((n) => n.params.seq), [2, 3, 4]);
  assert.equal(s.get('r1').timeline[0].text, 'ABC', 'each chunk once, in order');
  assert.equal(s.hasBuffered('r1'), false);
});

test('buffered notifications are applied once the gap closes', () => {
  const s = new RunStore();
  s.apply(...st(1, 'running'));
  s.apply(...upd(3, { kind: 'message_chunk', text: 'B' }));
  const out = s.applyEvents('r1', [{ seq: 2, method: 'agent/update', params: { runId: 'r1', sessionId: 's1', seq: 2, update: { kind: 'message_chunk', text: 'A' } } }]);
  assert.deepEqual(out.map((n) => n.params.seq), [2, 3]);
  assert.equal(s.get('r1').timeline[0].text, 'AB');
});

test('input requests and their resolution appear in the timeline', () => {
  const s = new RunStore();
  s.apply('agent/inputRequest', { runId: 'r1', sessionId: 's1', seq: 1, requestId: 'q1', kind: 'confirm_command', title: 'Run', message: 'm', command: 'make', cwd: '.', createdAt: '' });
  s.apply('agent/inputResolved', { runId: 'r1', sessionId: 's1', seq: 2, requestId: 'q1', outcome: 'reject_once', by: 'user' });
  const r = s.get('r1');
  assert.deepEqual(r.timeline, [{ type: 'request', requestId: 'q1' }]);
  assert.equal(r.requests.q1.command, 'make');
  assert.equal(r.requests.q1.outcome, 'reject_once');
});

test('runs interleave independently', () => {
  const s = new RunStore();
  s.apply(...st(1, 'running'));
  s.apply('agent/runState', { runId: 'r2', sessionId: 's2', seq: 1, state: 'running' });
  s.apply('agent/runState', { runId: 'r2', sessionId: 's2', seq: 2, state: 'cancelled', stopReason: 'cancelled' });
  assert.equal(s.get('r1').state, 'running');
  assert.equal(s.get('r2').state, 'cancelled');
  assert.deepEqual(s.active().map((r) => r.runId), ['r1']);
  assert.deepEqual(s.runsOfSession('s2').map((r) => r.runId), ['r2']);
});

test('a running command\'s output pieces accumulate in order; the final output replaces them', () => {
  const s = new RunStore();
  s.apply(...upd(1, { kind: 'tool_call', toolCallId: 'c8', title: 'go test ./...', toolKind: 'execute', status: 'pending', input: { command: 'go test ./...' } }));
  s.apply(...upd(2, { kind: 'tool_call_update', toolCallId: 'c8', status: 'in_progress', outputDelta: 'ok  \tshop/cart\t0.012s\n' }));
  s.apply(...upd(3, { kind: 'tool_call_update', toolCallId: 'c8', status: 'in_progress', outputDelta: 'ok  \tshop/' }));
  s.apply(...upd(4, { kind: 'tool_call_update', toolCallId: 'c8', status: 'in_progress', outputDelta: 'tax\t0.020s\n' }));
  let t = s.get('r1').tools.c8;
  assert.equal(t.status, 'in_progress');
  assert.equal(t.liveOutput, 'ok  \tshop/cart\t0.012s\nok  \tshop/tax\t0.020s\n');
  assert.equal(t.output, undefined);
  assert.equal(s.get('r1').activity, 'Running a command…', 'the command line is not repeated in the activity');
  assert.equal(s.apply(...upd(4, { kind: 'tool_call_update', toolCallId: 'c8', status: 'in_progress', outputDelta: 'tax\t0.020s\n' })).kind, 'duplicate');
  assert.equal(t.liveOutput, 'ok  \tshop/cart\t0.012s\nok  \tshop/tax\t0.020s\n', 'a duplicate piece is not appended twice');

  const full = 'ok  \tshop/cart\t0.012s\nok  \tshop/tax\t0.020s\nPASS\n';
  s.apply(...upd(5, { kind: 'tool_call_update', toolCallId: 'c8', status: 'completed', output: full, exitCode: 0, durationMs: 900 }));
  t = s.get('r1').tools.c8;
  assert.equal(t.status, 'completed');
  assert.equal(t.output, full, 'the full output replaces the streamed pieces');
  assert.equal(t.liveOutput, undefined);
  assert.equal(t.liveOutputOmitted, undefined);
  assert.equal(t.exitCode, 0);
});

test('streamed pieces replayed by agent/events after a gap accumulate once, in seq order', () => {
  const s = new RunStore();
  const piece = (seq, text) => ({ seq, method: 'agent/update', params: { runId: 'r1', sessionId: 's1', seq, update: { kind: 'tool_call_update', toolCallId: 'c1', status: 'in_progress', outputDelta: text } } });
  s.apply(...upd(1, { kind: 'tool_call', toolCallId: 'c1', title: 'make', toolKind: 'execute', status: 'pending' }));
  s.apply(...upd(2, piece(2, 'a\n').params.update));
  assert.equal(s.apply(...upd(4, piece(4, 'c\n').params.update)).kind, 'gap');
  assert.equal(s.get('r1').tools.c1.liveOutput, 'a\n');
  s.applyEvents('r1', [piece(4, 'c\n'), piece(3, 'b\n'), piece(2, 'a\n')]);
  assert.equal(s.get('r1').tools.c1.liveOutput, 'a\nb\nc\n');
});

test('a final update without output keeps the streamed output', () => {
  const s = new RunStore();
  s.apply(...upd(1, { kind: 'tool_call_update', toolCallId: 'c1', status: 'in_progress', outputDelta: 'partial\n' }));
  s.apply(...upd(2, { kind: 'tool_call_update', toolCallId: 'c1', status: 'failed', isError: true }));
  const t = s.get('r1').tools.c1;
  assert.equal(t.status, 'failed');
  assert.equal(t.liveOutput, 'partial\n');
  assert.deepEqual(s.get('r1').timeline, [{ type: 'tool', toolCallId: 'c1' }], 'an update for an unknown call still gets one timeline entry');
});

test('the live output keeps only the tail, counting what it dropped', () => {
  assert.equal(LIVE_OUTPUT_MAX, 64 * 1024);
  const s = new RunStore();
  const line = (i) => `line ${String(i).padStart(5, '0')} ${'x'.repeat(50)}\n`; // 62 characters
  let all = '';
  let seq = 0;
  for (let chunk = 0; chunk < 40; chunk++) {
    let piece = '';
    for (let i = 0; i < 50; i++) piece += line(chunk * 50 + i);
    all += piece;
    s.apply(...upd(++seq, { kind: 'tool_call_update', toolCallId: 'c1', status: 'in_progress', outputDelta: piece }));
  }
  const t = s.get('r1').tools.c1;
  assert.ok(all.length > LIVE_OUTPUT_MAX);
  assert.ok(t.liveOutput.length <= LIVE_OUTPUT_MAX, `kept ${t.liveOutput.length}`);
  assert.ok(t.liveOutput.length > LIVE_OUTPUT_MAX - 1024, 'nearly the whole budget is used');
  assert.ok(all.endsWith(t.liveOutput), 'the kept text is the tail of the output');
  assert.equal(t.liveOutputOmitted + t.liveOutput.length, all.length, 'omitted counts every dropped character');
  assert.match(t.liveOutput, /^line \d{5} /, 'the kept text starts at a line');
  s.apply(...upd(++seq, { kind: 'tool_call_update', toolCallId: 'c1', status: 'completed', output: all }));
  assert.equal(t.output, all);
  assert.equal(t.liveOutput, undefined);
  assert.equal(t.liveOutputOmitted, undefined);
});

test('appendLiveOutput never splits a surrogate pair and copes with one huge piece', () => {
  const t = { toolCallId: 'c', title: 'c', status: 'in_progress' };
  appendLiveOutput(t, 'ab😀😀😀', 5); // 8 UTF-16 units, no newline: the cut falls inside the first emoji
  assert.equal(t.liveOutput, '😀😀', 'the half emoji is dropped');
  assert.equal(t.liveOutputOmitted, 4);
  const u = { toolCallId: 'u', title: 'u', status: 'in_progress' };
  appendLiveOutput(u, 'y'.repeat(1_000_000));
  assert.equal(u.liveOutput.length, LIVE_OUTPUT_MAX);
  assert.equal(u.liveOutputOmitted, 1_000_000 - LIVE_OUTPUT_MAX);
  appendLiveOutput(u, 'z');
  assert.equal(u.liveOutput.length, LIVE_OUTPUT_MAX);
  assert.ok(u.liveOutput.endsWith('yz'));
  assert.equal(u.liveOutputOmitted, 1_000_000 - LIVE_OUTPUT_MAX + 1);
});
