// Undo, rewind, custom commands and MCP status over a real pipe: the controller and the undo flow
// against the fake daemon process (which decodes params as strictly as agentd: a bool where it
// belongs, onConflict among stop/skip/overwrite, checkpoint and runId exclusive), and what the
// panel renders of them.
import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { daemon, until } from '../support/harness.mjs';
const require = createRequire(import.meta.url);
const { AgentController } = require('../../out/agent.js');
const { RunStore } = require('../../out/runStore.js');
const { RequestBook } = require('../../out/requests.js');
const { UndoFlow, undoneMap } = require('../../out/undo.js');
const { listCommands, matchCommands, mcpStatus, slashName } = require('../../out/extensions.js');
const { renderConversation, renderUndo, renderMcp } = require('../../out/render.js');

function windowOn(c) {
  const book = new RequestBook((a) => c.request(a.method, a.params));
  const ctl = new AgentController(c, new RunStore(), book);
  let changes = 0;
  const undo = new UndoFlow({ rpc: c, sessionId: () => ctl.currentSessionId, changed: () => changes++, applied: (t) => (t.kind === 'rewind' ? ctl.reloadSession() : undefined) });
  c.onNotification((m, p) => ctl.handleNotification(m, p));
  return { ctl, book, undo, changes: () => changes };
}

const done = (ctl, runId) => until(() => ctl.store.get(runId)?.state === 'completed', `run ${runId} to end`);
const sent = (received, method) => received().filter((m) => m.method === method).map((m) => m.params);

test('undo a turn: the dry run first, then the undo with the choice; the checkpoint reads undone', async (t) => {
  const { c, received } = await daemon(t);
  const { ctl, undo } = windowOn(c);
  const r1 = await ctl.run({ prompt: 'edit' });
  await done(ctl, r1.runId);
  const tool = Object.values(ctl.store.get(r1.runId).tools)[0];
  assert.equal(tool.checkpoint, 'c1', 'the tool row knows its checkpoint');

  await undo.start({ kind: 'run', runId: r1.runId });
  assert.equal(undo.view.phase, 'preview');
  assert.equal(undo.view.preview.status, 'preview');
  assert.deepEqual(undo.view.preview.undone, ['c1']);
  assert.deepEqual(sent(received, 'agent/undo'), [{ sessionId: r1.sessionId, runId: r1.runId, dryRun: true }], 'nothing is written before the user says so');
  const html = renderUndo(undo.view);
  assert.match(html, /Undo this turn/);
  assert.match(html, /1 file would be put back/);
  assert.match(html, /<span class="add">\+old<\/span>/, 'the diff of what would change');
  assert.match(html, /data-action="undoApply" data-on-conflict="stop"[^>]*>Undo</);

  await undo.apply('stop');
  assert.equal(undo.view.phase, 'done');
  assert.equal(undo.view.result.checkpoint, 'c2');
  assert.deepEqual(sent(received, 'agent/undo')[1], { sessionId: r1.sessionId, runId: r1.runId, onConflict: 'stop' });
  assert.equal(undo.undoneBy('c1'), 'c2', 'agent/checkpoints says c1 was undone');
  assert.match(renderUndo(undo.view), /Done: 1 file put back[^]*data-action="undoCheckpoint"[^]*data-checkpoint="c2"[^]*Undo this restore/);
  const panel = renderConversation({ runs: [ctl.store.get(r1.runId)], open: [], daemon: { state: 'ready' }, canUndo: true, undone: { c1: 'c2' }, undo: undo.view });
  assert.match(panel, /<span class="undone"[^>]*>undone<\/span>/);
  assert.doesNotMatch(panel, /Undo this turn<\/button>/, 'nothing left to undo in the run');
  assert.match(panel, /Rewind to here/);
});

test('a conflict is shown with its diff and nothing is written until the user chooses to keep or overwrite', async (t) => {
  const { c, received } = await daemon(t);
  const { ctl, undo } = windowOn(c);
  const r1 = await ctl.run({ prompt: 'edit conflict' });
  await done(ctl, r1.runId);
  await undo.start({ kind: 'checkpoint', runId: r1.runId, checkpoint: 'c1' });
  assert.equal(undo.view.preview.conflicts.length, 1);
  const html = renderUndo(undo.view);
  assert.match(html, /Restore to before this change/);
  assert.match(html, /Changed since[^]*a\.txt[^]*it was changed after the checkpoint[^]*What the undo would do to it[^]*-new, and mine/);
  assert.match(html, /data-on-conflict="skip"[^>]*>Restore, keep my changes</);
  assert.match(html, /data-on-conflict="overwrite"[^>]*>Restore and overwrite them</);
  assert.doesNotMatch(html, /data-on-conflict="stop"/, 'with a conflict, the user picks what happens to it');
  await undo.apply('skip');
  assert.equal(undo.view.phase, 'done');
  assert.deepEqual(undo.view.result.notes, ['a.txt left as it is: it was changed after the checkpoint']);
  assert.match(renderUndo(undo.view), /a\.txt left as it is/);
  assert.deepEqual(
    sent(received, 'agent/undo').map((p) => [p.checkpoint, p.dryRun ?? false, p.onConflict ?? '']),
    [
      ['c1', true, ''],
      ['c1', false, 'skip'],
    ],
  );
});

test('rewind: the preview names the runs cut; after it the history marks them rewound and they offer nothing', async (t) => {
  const { c } = await daemon(t);
  const { ctl, undo } = windowOn(c);
  const r1 = await ctl.run({ prompt: 'say one' });
  await done(ctl, r1.runId);
  const r2 = await ctl.run({ prompt: 'edit' });
  await done(ctl, r2.runId);
  await undo.start({ kind: 'rewind', runId: r2.runId });
  assert.deepEqual(undo.view.preview.rewound, [r2.runId]);
  assert.match(renderUndo(undo.view), /The agent forgets this run and every later one \(1 run\)\. 1 file would be put back/);
  await undo.apply('stop');
  assert.equal(undo.view.phase, 'done');
  await until(() => ctl.store.get(r2.runId).rewound, 'the history to mark the run rewound');
  assert.equal(ctl.store.get(r1.runId).rewound, undefined);
  const html = renderConversation({ runs: ctl.currentRuns(), open: [], daemon: { state: 'ready' }, canUndo: true, undone: {} });
  assert.match(html, /class="run state-completed rewound"/);
  assert.match(html, /rewound<\/span>/);
  assert.equal((html.match(/Rewind to here/g) ?? []).length, 1, 'only the run that was kept can be rewound to');
});

test('undo refused while a run goes on says so in words; a dry run of an expired checkpoint too', async (t) => {
  const { c } = await daemon(t);
  const { ctl, undo } = windowOn(c);
  const r1 = await ctl.run({ prompt: 'edit' });
  await done(ctl, r1.runId);
  await ctl.run({ prompt: 'keep going' });
  await undo.start({ kind: 'run', runId: r1.runId });
  assert.equal(undo.view.phase, 'error');
  assert.match(undo.view.error, /has not finished: wait for it/);
  await undo.start({ kind: 'checkpoint', runId: r1.runId, checkpoint: 'c9' });
  assert.match(undo.view.error, /no longer in the undo history/);
  assert.match(renderUndo(undo.view), /request-error/);
});

test('no undo buttons while a run of the session goes on, or where the daemon has no undo', () => {
  const s = new RunStore();
  s.start('r1', 's1', 'go', undefined);
  s.apply('agent/update', { runId: 'r1', sessionId: 's1', seq: 1, update: { kind: 'tool_call_update', toolCallId: 't', status: 'completed', checkpoint: 'c1', files: [] } });
  s.apply('agent/runState', { runId: 'r1', sessionId: 's1', seq: 2, state: 'completed' });
  const base = { runs: [s.get('r1')], open: [], daemon: { state: 'ready' } };
  assert.doesNotMatch(renderConversation(base), /Undo this turn|Restore to here|Rewind/);
  const html = renderConversation({ ...base, canUndo: true });
  assert.match(html, /data-action="undoCheckpoint" data-run="r1" data-checkpoint="c1"[^>]*>Restore to here/);
  assert.match(html, /data-action="undoRun" data-run="r1"[^>]*>Undo this turn/);
});

test('custom commands: completion after /, shadowed left out, broken ones with the reason, hints and descriptions', async (t) => {
  const commands = [
    { name: 'deploy', description: 'My deploy', source: 'user', path: '/u/deploy.md' },
    { name: 'deploy', description: 'Deploy to staging', source: 'workspace', path: '/w/deploy.md', shadowed: true },
    { name: 'git:commit', description: 'Write a commit message', source: 'workspace', path: '/w/git/commit.md' },
    { name: 'release', source: 'workspace', path: '/w/release.md', error: 'the front matter has no closing --- line' },
    { name: 'review', description: 'Review a file', argumentHint: '<file>', source: 'workspace', path: '/w/review.md' },
  ];
  const { c, received } = await daemon(t, { FAKE_COMMANDS: JSON.stringify(commands) });
  const list = await listCommands(c);
  assert.deepEqual(sent(received, 'agent/commands'), [{}]);
  assert.deepEqual(matchCommands(list, '').map((x) => x.name), ['deploy', 'git:commit', 'release', 'review']);
  assert.deepEqual(matchCommands(list, 'de'), [{ name: 'deploy', description: 'My deploy', source: 'user' }]);
  assert.deepEqual(matchCommands(list, 'com').map((x) => x.name), ['git:commit'], 'a part after : matches');
  assert.deepEqual(matchCommands(list, 'rev'), [{ name: 'review', description: 'Review a file', argumentHint: '<file>', source: 'workspace' }]);
  assert.equal(matchCommands(list, 'rel')[0].error, 'the front matter has no closing --- line');
  assert.equal(slashName('/review cart.go'), 'review');
  assert.equal(slashName('  /git:commit'), 'git:commit');
  assert.equal(slashName('/usr/lib is missing'), undefined);
  assert.equal(slashName('no command'), undefined);
});

test('MCP status: asked for the session shown; servers with their state, tools, errors and approvals in words', async (t) => {
  const servers = [
    { name: 'github', origin: 'user', transport: 'stdio', command: 'npx -y @modelcontextprotocol/server-github', sandbox: 'read, network', state: 'connected', starts: 1, tools: [{ name: 'mcp__github__get_issue', tool: 'get_issue', title: 'Get issue', description: 'Get the details of an issue.', hints: { readOnly: true } }] },
    { name: 'lint', origin: 'workspace', transport: 'stdio', command: 'npx -y @acme/lint-mcp', sandbox: 'read, no network', state: 'needs_approval' },
    { name: 'notes', origin: 'user', transport: 'stdio', command: 'notes-mcp', sandbox: 'read, no network', state: 'failed', error: 'the server exited with status 1: no database at notes.sqlite', starts: 2 },
  ];
  const { c, received } = await daemon(t, { FAKE_MCP: JSON.stringify(servers) });
  const list = await mcpStatus(c, 's_1');
  await mcpStatus(c);
  assert.deepEqual(sent(received, 'mcp/status'), [{ sessionId: 's_1' }, {}]);
  const html = renderMcp({ list });
  assert.match(html, /github<\/span> <span class="tool-status tone-ok">connected<\/span> <span class="tool-facts">1 tool<\/span>/);
  assert.match(html, /get_issue<\/code> Get issue[^]*Get the details of an issue\.[^]*readOnly/);
  assert.match(html, /lint<\/span> <span class="tool-status tone-waiting">waiting for your approval/);
  assert.match(html, /\.mcp\.json · stdio · sandbox: read, no network/);
  assert.match(html, /notes<\/span> <span class="tool-status tone-error">failed[^]*started 2 times[^]*no database at notes\.sqlite/);
  assert.doesNotMatch(html, /needs_approval<|>needs approval/);
  assert.match(renderMcp({ list: [] }), /No MCP server is configured/);
});

test('command confirmations show the sandbox profile, the network and the secrets; allow_full apart, with what it means', async (t) => {
  const { c, received } = await daemon(t);
  const { ctl, book } = windowOn(c);
  const r = await ctl.run({ prompt: 'cmd' });
  await until(() => book.size === 1, 'the confirmation');
  const open = book.list()[0];
  assert.equal(open.req.profile, 'workspace-write');
  const html = renderConversation({ runs: [ctl.store.get(r.runId)], open: book.list(), daemon: { state: 'ready' } });
  assert.match(html, /Runs in the workspace-write sandbox \(it can change the workspace only\), with the network\./);
  assert.match(html, /Uses the secret you gave: <code>\$TOKEN<\/code>/);
  assert.match(html, /data-decision="allow_once" title="in the workspace-write sandbox, with the network">Accept</);
  assert.match(html, /<div class="full-access"><button class="warning"[^>]*data-decision="allow_full">Allow without the sandbox<\/button> <span class="full-why">once, with your full rights and the network: /);
  assert.doesNotMatch(html, /data-decision="allow_always"/, 'only the decisions offered');
  // allow_full goes as the decision; on a write it is refused as agentd refuses it.
  await book.answer({ method: 'agent/confirm', params: { requestId: open.req.requestId, decision: 'allow_full' } });
  assert.deepEqual(sent(received, 'agent/confirm').at(-1), { requestId: open.req.requestId, decision: 'allow_full' });
  assert.equal(book.size, 0);
});

test('a command the sandbox cannot confine says so, and allowing it reads "Run without the sandbox"', () => {
  const s = new RunStore();
  s.start('r1', 's1', 'go', undefined);
  const req = {
    runId: 'r1', sessionId: 's1', seq: 1, requestId: 'q1', kind: 'confirm_command', title: 'Run make', message: 'The agent wants to run a command. The kernel sandbox cannot confine it here', command: 'make', cwd: '.', profile: 'full', network: false,
    options: [{ optionId: 'allow_once', label: 'Run without the sandbox', description: 'once, with your full rights' }, { optionId: 'reject_once', label: 'Reject' }, { optionId: 'reject_always', label: 'Always reject' }],
    createdAt: '2026-01-01T00:00:00Z', pendingCount: 1,
  };
  s.apply('agent/inputRequest', req);
  const html = renderConversation({ runs: [s.get('r1')], open: [{ req, sending: false }], daemon: { state: 'ready' } });
  assert.match(html, /⚠<\/span> Not confined: the kernel sandbox cannot confine it here, so it runs with your full rights, without the network\./);
  assert.match(html, /<button class="warning" data-action="confirm" data-request="q1" data-decision="allow_once" title="once, with your full rights">Run without the sandbox<\/button>/);
  assert.doesNotMatch(html, /full-access/, 'no separate allow_full where it is not offered');
});

test('an MCP server\'s approval (no tool call, no folder) reads as what it is, with agentd\'s words', async (t) => {
  const { c } = await daemon(t);
  const { ctl, book } = windowOn(c);
  const r = await ctl.run({ prompt: 'mcp' });
  await until(() => book.size === 1, 'the approval');
  const html = renderConversation({ runs: [ctl.store.get(r.runId)], open: book.list(), daemon: { state: 'ready' } });
  assert.match(html, /<span class="request-title">Start MCP server lint\?<\/span>/);
  assert.match(html, /configures the MCP server lint/);
  assert.match(html, /<pre class="cmdline">npx -y @acme\/lint-mcp<\/pre>/);
  assert.match(html, /Asked because: workspace MCP server: ask/);
  assert.doesNotMatch(html, /Run a command\?|the workspace folder/);
  assert.match(html, /data-decision="allow_always">Always accept/);
});

test('which checkpoints are undone: an undo lists what it undoes, and undoing the undo brings them back', () => {
  const cp = (id, extra = {}) => ({ id, runId: 'r', tool: 'edit_file', title: id, time: '', files: [], ...extra });
  assert.deepEqual([...undoneMap([cp('c1'), cp('c2'), cp('c3', { tool: 'undo', undoes: ['c1', 'c2'] })])], [['c1', 'c3'], ['c2', 'c3']]);
  assert.deepEqual([...undoneMap([cp('c1'), cp('c2', { tool: 'undo', undoes: ['c1'] }), cp('c3', { tool: 'undo', undoes: ['c2'] })])], [['c2', 'c3']], 'a redo');
  assert.deepEqual([...undoneMap([cp('c1', { undoneBy: 'c2' }), cp('c2', { tool: 'undo' })])], [['c1', 'c2']]);
});

test('an MCP tool\'s call is asked as what it is (its tool and arguments shown once), and an MCP question renders as a choice with its decline', () => {
  const s = new RunStore();
  s.start('r1', 's1', 'go', undefined);
  s.apply('agent/update', { runId: 'r1', sessionId: 's1', seq: 1, update: { kind: 'tool_call', toolCallId: 'call_11', title: 'github: create_issue', toolKind: 'other', status: 'pending', input: { owner: 'ada' } } });
  const call = {
    runId: 'r1', sessionId: 's1', seq: 2, requestId: 'q1', toolCallId: 'call_11', kind: 'confirm_command', title: 'Call github: create_issue',
    message: 'The agent wants to call a tool whose effect agentd cannot check. The tool create_issue of the MCP server github.',
    command: 'mcp__github__create_issue {"owner":"ada"}', rule: 'mode ask: calls of unknown effect ask', createdAt: '2026-01-01T00:00:00Z', pendingCount: 2,
  };
  const elicit = {
    runId: 'r1', sessionId: 's1', seq: 3, requestId: 'q2', toolCallId: 'call_12', kind: 'choice', title: 'test asks', message: 'The MCP server test asks, while running ask:\nWho is asking?\n\nColor',
    options: [{ optionId: 'red', label: 'red' }, { optionId: 'blue', label: 'blue' }, { optionId: 'decline', label: 'Decline (answer nothing)' }], createdAt: '2026-01-01T00:00:01Z', pendingCount: 2,
  };
  s.apply('agent/inputRequest', call);
  s.apply('agent/inputRequest', elicit);
  const html = renderConversation({ runs: [s.get('r1')], open: [{ req: call, sending: false }, { req: elicit, sending: false }], daemon: { state: 'ready' } });
  assert.match(html, /<span class="request-title">Call github: create_issue\?<\/span>/);
  assert.match(html, /MCP server github/);
  assert.equal(html.split('mcp__github__create_issue {&quot;owner&quot;:&quot;ada&quot;}').length - 1, 1, 'the call is shown once');
  assert.doesNotMatch(html, /Run this command\?|the workspace folder/);
  assert.match(html, /Who is asking\?[^]*data-option="decline"[^>]*>Decline \(answer nothing\)</);
  assert.doesNotMatch(html, /Other: type your own answer/, 'an MCP question takes only its answers');
});

test('the MCP status bar item: connected of all, and what needs a look', () => {
  const { mcpSummary } = require('../../out/words.js');
  assert.equal(mcpSummary([]), undefined, 'no item without servers');
  assert.deepEqual(mcpSummary([{ name: 'a', state: 'connected' }]), { text: 'MCP 1/1', tooltip: "agentd's MCP servers (click for their tools and errors)\na: connected", attention: false });
  const s = mcpSummary([{ name: 'a', state: 'connected' }, { name: 'b', state: 'failed' }, { name: 'c', state: 'needs_approval' }]);
  assert.equal(s.text, 'MCP 1/3 · 1 failed');
  assert.equal(s.attention, true);
  assert.match(s.tooltip, /c: waiting for your approval/);
  assert.equal(mcpSummary([{ name: 'c', state: 'needs_approval' }]).text, 'MCP 0/1 · 1 to approve');
});
