// A stand-in for `agentd serve` with hand-written Content-Length framing (independent of
// vscode-jsonrpc), for the unit tests of the client against a process. It implements every
// method the extension calls (the contract test checks the list against the extension's and the
// daemon's), and decodes params as strictly as the daemon: no params, null, [] and [null] mean
// none; anything else must be an object whose fields have the daemon's types (a string where an
// int belongs is -32602 naming the field); required fields, modes, efforts, model names and
// limits are checked as the daemon checks them.
//
//   FAKE_LOG=FILE          every message received is appended, one JSON per line
//   FAKE_LIST=1            prints the handled methods as JSON and exits
//   FAKE_HISTORY_PAGE=N    agent/history pages hold at most N runs (as the daemon's byte budget
//                          ends a page early)
//   FAKE_HISTORY_EVENTS=N  runs of a page other than its newest carry their first N events only,
//                          with moreEvents (as the daemon's budget leaves them out)
//   FAKE_NO_REASONING=1    initialize offers no reasoningEfforts (a daemon without per-session settings)
//
// agent/run by prompt: "crash" exits(3); "ask" opens a question and "write" a confirm_write,
// answering them finishes the run; "say TEXT" answers TEXT at once (with the instruction files,
// a notice, the thinking and usage a real run sends); "pause" pauses as a run whose state could
// not be saved, and agent/resume finishes it; "edit" changes a.txt (checkpoint c<N>) and "edit
// conflict" does too, then the user changes it (so undoing it is a conflict); "mcp" opens the
// approval of a .mcp.json server (a confirm_command without toolCallId or cwd); "cmd" a command's
// confirmation with its sandbox profile and allow_full; "serve CMD" starts CMD in the background
// (run_cmd's background: process p<N> of the session, agent/stopProcess stops it); "delegate"
// starts a subagent (a task call) that reads a file and asks a question: the answer ends it,
// agent/cancel of its run id stops it alone; anything else stays running.
//
//   FAKE_COMMANDS=JSON     agent/commands answers these commands
//   FAKE_MCP=JSON          mcp/status answers these servers
import fs from 'node:fs';

const log = process.env.FAKE_LOG;
const historyPage = Number(process.env.FAKE_HISTORY_PAGE) || Infinity;
const historyEvents = process.env.FAKE_HISTORY_EVENTS === undefined ? Infinity : Number(process.env.FAKE_HISTORY_EVENTS);
let buf = Buffer.alloc(0);
let initialized = false;
let sessionCount = 0;
let runCount = 0;
let clock = Date.parse('2026-01-01T00:00:00Z');
const requests = new Map(); // requestId → { runId, sessionId, kind, params }
const runs = new Map(); // runId → run
const sessions = new Map(); // sessionId → session
let noticed = false; // the notice comes once per daemon, as agentd's window warning does

const POLICIES = ['read-only', 'ask', 'auto-edit', 'full-auto'];
const EFFORTS = ['low', 'medium', 'high'];
const DEFAULT_MODEL = 'fake-model';
const MODELS = [{ id: DEFAULT_MODEL, ownedBy: 'fake' }, { id: 'fake-model-large', ownedBy: 'fake', contextWindow: 32768 }];
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

const E = { invalid: -32602, unknownRun: -32010, unknownRequest: -32011, wrongKind: -32013, busy: -32016, unknownSession: -32017, notPaused: -32019, unknownCheckpoint: -32022, unknownRule: -32023, runFinished: -32024 };

// The rules agentd would list: built-in, the user's, one "always" answer; a session's come with
// its runs that said "allow for this session".
let ruleCount = 0;
const rules = [
  { id: 'rule_b1', tool: 'write', pattern: '**/.git/**', action: 'deny', scope: 'built-in' },
  { id: 'rule_u1', tool: 'run_cmd', pattern: 'make *', action: 'allow', scope: 'user' },
  { id: 'rule_a1', tool: 'run_cmd', pattern: 'go test ./...', action: 'allow', scope: 'always', revocable: true },
];
const sessionRules = new Map(); // sessionId → rules
let mcpServers; // mcp/status, as FAKE_MCP set it and the controls changed it
const images = new Map(); // id → {mimeType, data, width, height}
const ON_CONFLICT = ['stop', 'skip', 'overwrite'];

function send(msg) {
  const body = Buffer.from(JSON.stringify(msg), 'utf8');
  process.stdout.write(`Content-Length: ${body.length}\r\n\r\n`);
  process.stdout.write(body);
}

class RpcError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

// ---- decoding, as the daemon's encoding/json into its structs ----------------------------------

const str = 'string';
const int = 'int';
const bool = 'bool';
const strs = 'string[]';
const SCHEMAS = {
  'agent/run': { prompt: str, sessionId: str, context: { files: strs, selection: { path: str, startLine: int, endLine: int, text: str } }, approvalPolicy: str, model: str, reasoningEffort: str },
  'agent/reply': { requestId: str, text: str, optionId: str, answers: strs },
  'agent/confirm': { requestId: str, decision: str, reason: str, editedContent: str },
  'agent/cancel': { runId: str },
  'agent/resume': { runId: str },
  'agent/pending': { runId: str },
  'agent/events': { runId: str, afterSeq: int, limit: int },
  'agent/sessions': { query: str, limit: int },
  'agent/renameSession': { sessionId: str, title: str },
  'agent/deleteSession': { sessionId: str },
  'agent/context': { sessionId: str },
  'agent/compact': { sessionId: str },
  'rules/list': { sessionId: str },
  'rules/revoke': { id: str, sessionId: str },
  'rules/edit': { id: str, sessionId: str, tool: str, pattern: str, action: str },
  'mcp/enable': { name: str, sessionId: str },
  'mcp/disable': { name: str, sessionId: str },
  'mcp/restart': { name: str, sessionId: str },
  'agent/history': { sessionId: str, beforeRunId: str, limit: int },
  'agent/configure': { sessionId: str, model: str, reasoningEffort: str, approvalPolicy: str },
  'agent/models': {},
  'agent/commands': {},
  'agent/checkpoints': { sessionId: str },
  'agent/undo': { sessionId: str, checkpoint: str, runId: str, paths: strs, only: bool, onConflict: str, dryRun: bool },
  'agent/rewind': { sessionId: str, runId: str, keepFiles: bool, onConflict: str, dryRun: bool },
  'mcp/status': { sessionId: str },
  'agent/image': { id: str },
  'agent/steer': { runId: str, text: str },
  'agent/stopProcess': { sessionId: str, id: str },
  'index/status': {},
};

function goType(t) {
  return typeof t === 'object' ? 'struct' : t === int ? 'int' : t === strs ? '[]string' : t === bool ? 'bool' : t;
}

function jsonType(v) {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return 'number';
  return typeof v;
}

function check(value, schema, path) {
  if (value === null || value === undefined) return; // null leaves Go's zero value
  const bad = () => new RpcError(E.invalid, `invalid params: field "${path}" must be ${goType(schema)}, not ${jsonType(value)}`);
  if (typeof schema === 'object') {
    if (typeof value !== 'object' || Array.isArray(value)) throw bad();
    for (const [k, t] of Object.entries(schema)) check(value[k], t, path ? `${path}.${k}` : k);
    return;
  }
  if (schema === str && typeof value !== 'string') throw bad();
  if (schema === int && !Number.isInteger(value)) throw bad();
  if (schema === bool && typeof value !== 'boolean') throw bad();
  if (schema === strs) {
    if (!Array.isArray(value)) throw bad();
    value.forEach((x, i) => check(x, str, `${path}[${i}]`));
  }
}

/** The params as the daemon decodes them: none, null, [] and [null] are {}; else an object of the method's shape. */
function decode(method, params) {
  if (params === undefined || params === null || (Array.isArray(params) && (params.length === 0 || (params.length === 1 && params[0] === null)))) return {};
  if (typeof params !== 'object' || Array.isArray(params)) throw new RpcError(E.invalid, `invalid params: field "" must be struct {}, not ${jsonType(params)}`);
  check(params, SCHEMAS[method] ?? {}, '');
  return params;
}

function required(p, ...fields) {
  for (const f of fields) if (!p[f]) throw new RpcError(E.invalid, `invalid params: ${f} is required`);
}

function checkSettings({ model, reasoningEffort, approvalPolicy }) {
  if (model !== undefined && (model.length > 256 || /[\n\r\t]/.test(model))) throw new RpcError(E.invalid, `invalid params: model ${JSON.stringify(model.slice(0, 40))} is not a model name`);
  if (reasoningEffort !== undefined && reasoningEffort !== '' && !EFFORTS.includes(reasoningEffort)) throw new RpcError(E.invalid, `invalid params: reasoningEffort "${reasoningEffort}" is not one of low, medium, high`);
  if (approvalPolicy !== undefined && approvalPolicy !== '' && !POLICIES.includes(approvalPolicy)) throw new RpcError(E.invalid, `invalid params: approvalPolicy "${approvalPolicy}" is not one of ${POLICIES.join(', ')}`);
}

// ---- sessions and runs ------------------------------------------------------------------------

const now = () => new Date((clock += 1000)).toISOString();

function effective(s) {
  const out = { model: s.model || DEFAULT_MODEL, approvalPolicy: s.approvalPolicy || 'ask' };
  if (s.reasoningEffort) out.reasoningEffort = s.reasoningEffort;
  return out;
}

function sessionInfo(s) {
  const last = runs.get(s.runs[s.runs.length - 1]);
  const info = { sessionId: s.sessionId, title: s.title, createdAt: s.createdAt, updatedAt: last?.updatedAt ?? s.createdAt, state: last?.state ?? 'idle', runCount: s.runs.length, settings: effective(s.settings) };
  if (last) info.lastRunId = last.runId;
  return info;
}

function theRun(runId) {
  const r = runs.get(runId);
  if (!r) throw new RpcError(E.unknownRun, `unknown run ${runId}`);
  return r;
}

function theSession(sessionId) {
  const s = sessions.get(sessionId);
  if (!s) throw new RpcError(E.unknownSession, `unknown session ${sessionId}`);
  return s;
}

/** Sends a run notification and keeps it for agent/events and agent/history. */
function notifyRun(run, method, params) {
  const seq = run.events.length + 1;
  const full = { runId: run.runId, sessionId: run.sessionId, seq, ...params };
  run.events.push({ seq, method, params: full });
  run.updatedAt = now();
  if (method === 'agent/runState') {
    run.state = params.state;
    run.stopReason = params.stopReason;
    run.error = params.error;
  }
  send({ jsonrpc: '2.0', method, params: full });
  return seq;
}

function update(run, u) {
  return notifyRun(run, 'agent/update', { update: u });
}

function finish(run, text) {
  update(run, { kind: 'result', stopReason: 'end_turn', text });
  notifyRun(run, 'agent/runState', { state: 'completed', stopReason: 'end_turn' });
  startQueued(run.sessionId);
}

/** The session's next queued run starts once the one before it is over (agentd's queue). */
function startQueued(sessionId) {
  const s = sessions.get(sessionId);
  const next = s && s.runs.map((id) => runs.get(id)).find((r) => r?.state === 'queued');
  if (next) setImmediate(() => play(next));
}

function ask(run, kind) {
  const requestId = `q_${run.runId}`;
  const params = {
    requestId,
    kind,
    title: kind === 'question' ? 'Question' : 'Write a.txt',
    message: kind === 'question' ? 'Name?' : 'The agent wants to change 1 file(s).',
    createdAt: now(),
    pendingCount: requests.size + 1,
  };
  if (kind === 'confirm_write') params.diff = [{ path: 'a.txt', status: 'added', diff: '+x\n', newText: 'x\n' }];
  requests.set(requestId, { runId: run.runId, sessionId: run.sessionId, kind, params });
  params.seq = notifyRun(run, 'agent/inputRequest', params);
  notifyRun(run, 'agent/runState', { state: 'requires_action' });
}

// Subagents, as agentd reports them: everything in the parent run, under the task call.
const subagents = new Map(); // subagent runId → { run, call, description, state }

function subUpdate(sub, fields) {
  update(sub.run, { kind: 'subagent', toolCallId: sub.call, subagent: { runId: sub.runId, description: sub.description, ...fields } });
}

/** A task call whose subagent reads a file, then asks the user; the answer (or its stop) ends it. */
function delegate(run) {
  const sub = { runId: `${run.runId}_sub`, run, call: `task_${run.runId}`, description: 'Find the cart total', state: 'running' };
  subagents.set(sub.runId, sub);
  update(run, { kind: 'tool_call', toolCallId: sub.call, title: `Subagent: ${sub.description}`, toolKind: 'other', status: 'pending', input: { description: sub.description, prompt: 'Find where the **cart total** is computed.' }, subagent: { runId: sub.runId, description: sub.description } });
  update(run, { kind: 'tool_call_update', toolCallId: sub.call, status: 'in_progress', subagent: { runId: sub.runId, description: sub.description } });
  subUpdate(sub, { state: 'running' });
  subUpdate(sub, { update: { kind: 'tool_call', toolCallId: 'call_1', title: 'read cart.go', toolKind: 'read', status: 'pending', input: { path: 'cart.go' } } });
  subUpdate(sub, { update: { kind: 'tool_call_update', toolCallId: 'call_1', status: 'completed', output: 'func Total() int { return 4 }\n' } });
  subUpdate(sub, { update: { kind: 'tool_call', toolCallId: 'call_2', title: 'Ask the user', toolKind: 'think', status: 'pending', input: { question: 'Which currency?' } } });
  const requestId = `q_${sub.runId}`;
  const params = { requestId, toolCallId: sub.call, kind: 'question', title: 'Question', message: 'Which currency should totals use?', answerWith: 'reply', createdAt: now(), pendingCount: requests.size + 1, subagent: { runId: sub.runId, description: sub.description, toolCallId: 'call_2' } };
  requests.set(requestId, { runId: run.runId, sessionId: run.sessionId, kind: 'question', params, onAnswer: (text) => endSubagent(sub, 'completed', text) });
  params.seq = notifyRun(run, 'agent/inputRequest', params);
  subUpdate(sub, { state: 'requires_action' });
  notifyRun(run, 'agent/runState', { state: 'requires_action' });
}

/** The subagent ends (answered, or stopped by agent/cancel of its run id); its parent goes on to its answer. */
function endSubagent(sub, state, text) {
  const run = sub.run;
  sub.state = state;
  if (run.state === 'requires_action') notifyRun(run, 'agent/runState', { state: 'running' });
  const usage = { promptTokens: 1200, completionTokens: 34, totalTokens: 1234 };
  if (state === 'completed') {
    subUpdate(sub, { state: 'running' });
    subUpdate(sub, { update: { kind: 'tool_call_update', toolCallId: 'call_2', status: 'completed', output: text } });
    subUpdate(sub, { update: { kind: 'message_chunk', text: `Total() in cart.go, in ${text}.` } });
    subUpdate(sub, { state: 'completed', stopReason: 'end_turn' });
    update(run, { kind: 'tool_call_update', toolCallId: sub.call, status: 'completed', output: `Total() in cart.go, in ${text}.\n\nFiles the subagent read (1): cart.go.`, subagent: { runId: sub.runId, description: sub.description, state: 'completed', stopReason: 'end_turn', usage, read: ['cart.go'] } });
    finish(run, 'The cart total is computed by Total().');
  } else {
    subUpdate(sub, { state: 'cancelled', stopReason: 'cancelled' });
    update(run, { kind: 'tool_call_update', toolCallId: sub.call, status: 'failed', output: 'Stopped: the user stopped this subagent.', subagent: { runId: sub.runId, description: sub.description, state: 'cancelled', stopReason: 'cancelled', usage, read: ['cart.go'] } });
    finish(run, 'The subagent was stopped before it found the total.');
  }
}

function confirmCommand(run, p) {
  const requestId = `q_${run.runId}`;
  const params =
    p === 'mcp'
      ? {
          requestId,
          kind: 'confirm_command',
          title: 'Start MCP server lint',
          message: 'The workspace\'s .mcp.json configures the MCP server lint: npx -y @acme/lint-mcp (sandbox read, no network). Start it?',
          command: 'npx -y @acme/lint-mcp',
          cwd: '.',
          rule: 'workspace MCP server: ask',
          options: [
            { optionId: 'allow_once', label: 'Allow' },
            { optionId: 'allow_session', label: 'Allow for this session' },
            { optionId: 'allow_always', label: 'Always allow' },
            { optionId: 'reject_once', label: 'Reject' },
            { optionId: 'reject_always', label: 'Always reject' },
          ],
        }
      : {
          requestId,
          toolCallId: `x_${run.runId}`,
          kind: 'confirm_command',
          title: 'Run curl -fsS https://example.com',
          message: 'The agent wants to run a command. Allowed, it runs in the workspace-write sandbox, with the network. It uses the secret $TOKEN you gave.',
          command: 'curl -fsS -H "Authorization: $TOKEN" https://example.com',
          cwd: '.',
          profile: 'workspace-write',
          network: true,
          secrets: ['TOKEN'],
          rule: 'mode ask: commands ask; runs in workspace-write, with the network, uses $TOKEN',
          options: [
            { optionId: 'allow_once', label: 'Allow', description: 'in the workspace-write sandbox, with the network' },
            { optionId: 'allow_session', label: 'Allow for this session', description: 'in the workspace-write sandbox, with the network' },
            { optionId: 'reject_once', label: 'Reject' },
            { optionId: 'reject_always', label: 'Always reject' },
            { optionId: 'allow_full', label: 'Allow without the sandbox', description: 'once, with your full rights and the network' },
          ],
        };
  if (params.toolCallId) update(run, { kind: 'tool_call', toolCallId: params.toolCallId, title: params.command, toolKind: 'execute', status: 'pending', input: { command: params.command } });
  Object.assign(params, { createdAt: now(), pendingCount: requests.size + 1 });
  requests.set(requestId, { runId: run.runId, sessionId: run.sessionId, kind: 'confirm_command', params });
  params.seq = notifyRun(run, 'agent/inputRequest', params);
  notifyRun(run, 'agent/runState', { state: 'requires_action' });
}

function play(run) {
  const p = run.prompt;
  notifyRun(run, 'agent/runState', { state: 'running' });
  if (p.startsWith('say ')) {
    update(run, { kind: 'instructions', instructions: [{ path: 'AGENTS.md', scope: 'workspace', bytes: 120 }] });
    if (!noticed) {
      noticed = true;
      update(run, { kind: 'notice', text: "The model's context window is 8192 tokens." });
    }
    update(run, { kind: 'thought_chunk', text: 'Thinking about it.' });
    update(run, { kind: 'message_chunk', text: p.slice(4) });
    update(run, { kind: 'usage', usage: { promptTokens: 100, completionTokens: 10, totalTokens: 110, cachedTokens: 80 } });
    update(run, { kind: 'context', context: contextOf(sessions.get(run.sessionId)) });
    finish(run, p.slice(4));
    return;
  }
  if (p.startsWith('serve ')) {
    // run_cmd with background: the call returns at once, the process goes on (agent/processChanged).
    const s = sessions.get(run.sessionId);
    const id = `p${s.processes.length + 1}`;
    const call = `bg_${run.runId}`;
    const command = p.slice(6);
    update(run, { kind: 'tool_call', toolCallId: call, title: command, toolKind: 'execute', status: 'pending', input: { command, background: true } });
    const proc = { id, sessionId: s.sessionId, command, cwd: '.', state: 'running', startedAt: now(), output: 12, toolCallId: call };
    s.processes.push(proc);
    send({ jsonrpc: '2.0', method: 'agent/processChanged', params: { process: proc } });
    update(run, { kind: 'tool_call_update', toolCallId: call, status: 'completed', output: `Started ${id} in the background.\nlistening on :8080\n` });
    finish(run, `${command} runs in the background as ${id}.`);
    return;
  }
  if (p === 'delegate') {
    delegate(run);
    return;
  }
  if (p === 'edit' || p === 'edit conflict') {
    const s = sessions.get(run.sessionId);
    const id = `c${s.checkpoints.length + 1}`;
    s.checkpoints.push({ id, runId: run.runId, tool: 'write_file', title: 'modified a.txt', time: now(), files: [{ path: 'a.txt', status: 'modified' }], conflict: p === 'edit conflict' });
    update(run, { kind: 'tool_call', toolCallId: `w_${run.runId}`, title: 'Write a.txt', toolKind: 'edit', status: 'pending', input: { path: 'a.txt' } });
    update(run, { kind: 'tool_call_update', toolCallId: `w_${run.runId}`, status: 'completed', files: [{ path: 'a.txt', status: 'modified', diff: '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n' }], checkpoint: id });
    finish(run, 'edited');
    return;
  }
  update(run, { kind: 'message_chunk', text: 'héllo ✓' });
  if (p === 'mcp' || p === 'cmd') {
    confirmCommand(run, p);
    return;
  }
  if (p === 'ask') ask(run, 'question');
  else if (p === 'write') ask(run, 'confirm_write');
  else if (p === 'pause') notifyRun(run, 'agent/runState', { state: 'paused', pauseReason: 'not_saved', error: 'state not saved: write runs/r.journal.jsonl: no space left on device' });
}
const handlers = {
  initialize: (p) => {
    decode('initialize', p);
    initialized = true;
    const agentd = { policies: POLICIES };
    if (!process.env.FAKE_NO_REASONING) agentd.reasoningEfforts = EFFORTS;
    return { serverInfo: { name: 'fake-agentd', version: '0' }, protocolVersion: 1, capabilities: { experimental: { agentd } } };
  },
  shutdown: () => null,
  'agent/run': (raw) => {
    const p = decode('agent/run', raw);
    if (!p.prompt) throw new RpcError(E.invalid, 'invalid params: prompt is required');
    checkSettings(p);
    if (p.prompt === 'crash') process.exit(3);
    let s;
    let queued = false;
    if (p.sessionId) {
      s = theSession(p.sessionId);
      const last = runs.get(s.runs[s.runs.length - 1]);
      queued = !!last && !TERMINAL.has(last.state);
    } else {
      const sessionId = `s_${++sessionCount}`;
      s = { sessionId, title: p.prompt.split('\n')[0].slice(0, 72), createdAt: now(), runs: [], settings: {}, checkpoints: [], rewound: new Set(), processes: [] };
      sessions.set(sessionId, s);
    }
    for (const k of ['model', 'reasoningEffort', 'approvalPolicy']) if (p[k]) s.settings[k] = p[k];
    const runId = `r_${++runCount}`;
    const run = { runId, sessionId: s.sessionId, prompt: p.prompt, context: p.context ?? undefined, createdAt: now(), state: 'running', events: [], settings: effective(s.settings) };
    // Images as agentd keeps them: by the hash of their bytes (here: a counter), with their size.
    if (Array.isArray(p.images) && p.images.length) {
      run.images = p.images.map((im, i) => {
        const id = `img_${runCount}_${i}`;
        images.set(id, { mimeType: im.mimeType ?? 'image/png', data: im.data ?? '', width: 40, height: 30 });
        return { id, mimeType: im.mimeType ?? 'image/png', width: 40, height: 30, bytes: Math.floor(((im.data ?? '').length * 3) / 4), name: im.name ?? im.path ?? 'pasted' };
      });
    }
    run.updatedAt = run.createdAt;
    runs.set(runId, run);
    s.runs.push(runId);
    const res = run.images ? { runId, sessionId: s.sessionId, images: run.images } : { runId, sessionId: s.sessionId };
    if (queued) {
      // The session has a run going: this one waits for it, as agentd's queue.
      setImmediate(() => notifyRun(run, 'agent/runState', { state: 'queued' }));
      return { ...res, queued: true };
    }
    setImmediate(() => play(run));
    return res;
  },
  'agent/reply': (p) => answer(decode('agent/reply', p), 'reply'),
  'agent/confirm': (p) => answer(decode('agent/confirm', p), 'confirm'),
  'agent/cancel': (raw) => {
    const p = decode('agent/cancel', raw);
    required(p, 'runId');
    const sub = subagents.get(p.runId);
    if (sub) {
      // A subagent alone: its question closes, its task call ends failed, the parent goes on.
      if (sub.state === 'running') {
        sub.state = 'cancelling';
        setImmediate(() => {
          for (const [id, r] of requests) {
            if (r.params.subagent?.runId !== sub.runId) continue;
            requests.delete(id);
            notifyRun(sub.run, 'agent/inputResolved', { requestId: id, outcome: 'cancelled', by: 'cancel' });
          }
          endSubagent(sub, 'cancelled');
        });
      }
      return {};
    }
    const run = theRun(p.runId);
    if (!TERMINAL.has(run.state)) {
      setImmediate(() => {
        for (const [id, r] of requests) if (r.runId === run.runId) requests.delete(id);
        notifyRun(run, 'agent/runState', { state: 'cancelled', stopReason: 'cancelled' });
        startQueued(run.sessionId);
      });
    }
    return {};
  },
  'agent/steer': (raw) => {
    const p = decode('agent/steer', raw);
    required(p, 'runId', 'text');
    const run = theRun(p.runId);
    if (TERMINAL.has(run.state)) throw new RpcError(E.runFinished, `run finished: run ${run.runId} is ${run.state}; send the words with agent/run`);
    // Images go with the words, kept as a prompt's are.
    const refs = (Array.isArray(p.images) ? p.images : []).map((im, i) => {
      const id = `img_${run.runId}_steer${run.events.length}_${i}`;
      images.set(id, { mimeType: im.mimeType ?? 'image/png', data: im.data ?? '', width: 40, height: 30 });
      return { id, mimeType: im.mimeType ?? 'image/png', width: 40, height: 30, bytes: Math.floor(((im.data ?? '').length * 3) / 4), name: im.name ?? im.path ?? 'pasted' };
    });
    setImmediate(() => update(run, { kind: 'steer', text: p.text, ...(refs.length ? { images: refs } : {}) }));
    return {};
  },
  'agent/resume': (raw) => {
    const p = decode('agent/resume', raw);
    const run = theRun(p.runId);
    if (run.state !== 'paused') throw new RpcError(E.notPaused, `run ${p.runId} is not paused`);
    setImmediate(() => {
      notifyRun(run, 'agent/runState', { state: 'running' });
      finish(run, 'resumed');
    });
    return {};
  },
  'agent/pending': (raw) => {
    const p = decode('agent/pending', raw);
    return { requests: [...requests.values()].filter((r) => !p.runId || r.runId === p.runId).map((r) => r.params) };
  },
  'agent/events': (raw) => {
    const p = decode('agent/events', raw);
    const run = theRun(p.runId);
    if ((p.limit ?? 0) < 0) throw new RpcError(E.invalid, 'invalid params: limit must not be negative');
    const after = run.events.filter((e) => e.seq > (p.afterSeq ?? 0));
    const page = p.limit ? after.slice(0, p.limit) : after;
    const res = { state: run.state, events: page };
    if (page.length < after.length) res.more = true;
    return res;
  },
  'agent/sessions': (raw) => {
    const p = decode('agent/sessions', raw);
    if ((p.limit ?? 0) < 0) throw new RpcError(E.invalid, 'invalid params: limit must not be negative');
    const words = (p.query ?? '').toLowerCase().split(/\s+/).filter(Boolean);
    const has = (t) => words.every((w) => t.toLowerCase().includes(w));
    const out = [];
    for (const info of [...sessions.values()].map(sessionInfo).sort((a, b) => b.updatedAt.localeCompare(a.updatedAt))) {
      if (!words.length || has(info.title)) out.push(info);
      else {
        const prompt = sessions.get(info.sessionId).runs.map((id) => runs.get(id).prompt).find(has);
        if (prompt) out.push({ ...info, match: prompt.split('\n').find(has) ?? prompt });
      }
    }
    return { sessions: p.limit ? out.slice(0, p.limit) : out };
  },
  'agent/renameSession': (raw) => {
    const p = decode('agent/renameSession', raw);
    const title = (p.title ?? '').split(/\s+/).filter(Boolean).join(' ');
    if (!title) throw new RpcError(E.invalid, 'invalid params: title is required');
    const s = theSession(p.sessionId);
    s.title = title;
    return { session: sessionInfo(s) };
  },
  'agent/deleteSession': (raw) => {
    const p = decode('agent/deleteSession', raw);
    required(p, 'sessionId');
    const s = theSession(p.sessionId);
    const last = runs.get(s.runs[s.runs.length - 1]);
    if (last && !TERMINAL.has(last.state)) throw new RpcError(E.busy, `session busy: session ${s.sessionId} has run ${last.runId} in state ${last.state}; cancel it before deleting the session`);
    for (const id of s.runs) runs.delete(id);
    sessions.delete(s.sessionId);
    return {};
  },
  'agent/context': (raw) => {
    const p = decode('agent/context', raw);
    required(p, 'sessionId');
    const s = theSession(p.sessionId);
    return contextOf(s);
  },
  'agent/compact': (raw) => {
    const p = decode('agent/compact', raw);
    required(p, 'sessionId');
    const s = theSession(p.sessionId);
    const last = runs.get(s.runs[s.runs.length - 1]);
    if (last && !TERMINAL.has(last.state)) throw new RpcError(E.busy, `session ${s.sessionId} has an unfinished run ${last.runId}`);
    const before = contextOf(s).used;
    const dropped = Math.max(0, 2 * (s.runs.length - (s.compactedAt ?? 0) - 1));
    if (dropped) s.compactedAt = s.runs.length - 1;
    const after = contextOf(s).used;
    return dropped ? { before, after, dropped, summary: '- The user asked: …' } : { before, after: before, dropped: 0 };
  },
  'rules/list': (raw) => {
    const p = decode('rules/list', raw);
    if (p.sessionId) theSession(p.sessionId);
    return { rules: [...rules, ...(p.sessionId ? sessionRules.get(p.sessionId) ?? [] : [])], files: { user: '/home/ada/.config/agentd/rules.json', workspace: '/w/.agentd/rules.json', grants: '/state/rules.json' } };
  },
  'rules/revoke': (raw) => {
    const p = decode('rules/revoke', raw);
    required(p, 'id');
    const { list, i } = findRule(p);
    if (!list[i].revocable) throw new RpcError(E.invalid, `rule not revocable: ${list[i].tool} \`${list[i].pattern}\` is a ${list[i].scope} rule; it lives in your rules.json (~/.config/agentd/rules.json)`);
    list.splice(i, 1);
    return {};
  },
  'rules/edit': (raw) => {
    const p = decode('rules/edit', raw);
    required(p, 'id');
    const { list, i } = findRule(p);
    if (!list[i].revocable) throw new RpcError(E.invalid, `rule not revocable: a ${list[i].scope} rule`);
    if (p.action !== undefined && p.action !== '' && !['allow', 'ask', 'deny'].includes(p.action)) throw new RpcError(E.invalid, `invalid rule: action "${p.action}" (want allow, ask or deny)`);
    const rule = { ...list[i], id: `rule_e${++ruleCount}` };
    if (p.tool) rule.tool = p.tool;
    if (p.pattern !== undefined) rule.pattern = p.pattern;
    if (p.action) rule.action = p.action;
    list[i] = rule;
    return { rule };
  },
  'agent/image': (raw) => {
    const p = decode('agent/image', raw);
    required(p, 'id');
    const im = images.get(p.id);
    if (!im) throw new RpcError(E.invalid, `invalid params: no image ${p.id}`);
    return im;
  },
  'mcp/enable': (raw) => mcpControl('mcp/enable', raw, (s) => ({ ...s, state: 'connected' })),
  'mcp/disable': (raw) => mcpControl('mcp/disable', raw, (s) => ({ ...s, state: 'disabled', tools: undefined })),
  'mcp/restart': (raw) => mcpControl('mcp/restart', raw, (s) => {
    if (s.state === 'disabled') throw new RpcError(E.invalid, `MCP server cannot start: ${s.name} is disabled; enable it to start it`);
    return { ...s, starts: (s.starts ?? 1) + 1 };
  }),
  'agent/history': (raw) => {
    const p = decode('agent/history', raw);
    required(p, 'sessionId');
    if ((p.limit ?? 0) < 0) throw new RpcError(E.invalid, 'invalid params: limit must not be negative');
    const s = theSession(p.sessionId);
    let end = s.runs.length;
    if (p.beforeRunId) {
      end = s.runs.indexOf(p.beforeRunId);
      if (end < 0) throw new RpcError(E.unknownRun, `run ${p.beforeRunId} is not a run of session ${s.sessionId}`);
    }
    const limit = Math.min(p.limit || 20, 100, historyPage);
    const start = Math.max(0, end - limit);
    const page = s.runs.slice(start, end).map((id, i, all) => {
      const r = runs.get(id);
      const out = { runId: r.runId, prompt: r.prompt, state: r.state, createdAt: r.createdAt, updatedAt: r.updatedAt, settings: r.settings, events: r.events };
      if (s.rewound.has(r.runId)) out.rewound = true;
      if (r.context) out.context = r.context;
      if (r.stopReason) out.stopReason = r.stopReason;
      if (r.images) out.images = r.images;
      if (r.error) out.error = r.error;
      if (i < all.length - 1 && r.events.length > historyEvents) {
        out.events = r.events.slice(0, historyEvents);
        out.moreEvents = true;
      }
      return out;
    });
    const pending = [...requests.values()].filter((r) => r.sessionId === s.sessionId).map((r) => r.params);
    return { session: sessionInfo(s), runs: page, earlierRuns: start, pending, processes: s.processes };
  },
  'agent/stopProcess': (raw) => {
    const p = decode('agent/stopProcess', raw);
    required(p, 'sessionId', 'id');
    const s = theSession(p.sessionId);
    const i = s.processes.findIndex((x) => x.id === p.id);
    if (i < 0) throw new RpcError(E.invalid, `invalid params: session ${s.sessionId} has no process ${p.id}`);
    if (s.processes[i].state !== 'running') return { process: s.processes[i] };
    const proc = (s.processes[i] = { ...s.processes[i], state: 'stopped', stoppedBy: 'user', exitCode: 143, endedAt: now(), output: 5230 });
    setImmediate(() => send({ jsonrpc: '2.0', method: 'agent/processChanged', params: { process: proc } }));
    return { process: proc };
  },
  'agent/configure': (raw) => {
    const p = decode('agent/configure', raw);
    required(p, 'sessionId');
    checkSettings(p);
    const s = theSession(p.sessionId);
    for (const k of ['model', 'reasoningEffort', 'approvalPolicy']) if (typeof p[k] === 'string') s.settings[k] = p[k].trim();
    const res = { settings: effective(s.settings) };
    const last = runs.get(s.runs[s.runs.length - 1]);
    if (last && !TERMINAL.has(last.state)) {
      res.runId = last.runId;
      last.settings = res.settings;
    }
    return res;
  },
  'agent/models': (raw) => {
    decode('agent/models', raw);
    return { default: DEFAULT_MODEL, listed: true, models: MODELS };
  },
  'agent/commands': (raw) => {
    decode('agent/commands', raw);
    return { commands: JSON.parse(process.env.FAKE_COMMANDS || '[]'), directories: [] };
  },
  'agent/checkpoints': (raw) => {
    const p = decode('agent/checkpoints', raw);
    required(p, 'sessionId');
    const s = theSession(p.sessionId);
    return { checkpoints: s.checkpoints.map(({ conflict: _c, undone: _u, ...c }) => c) };
  },
  'agent/undo': (raw) => {
    const p = decode('agent/undo', raw);
    required(p, 'sessionId');
    const s = theSession(p.sessionId);
    if (p.checkpoint && p.runId) throw new RpcError(E.invalid, 'invalid params: checkpoint and runId are exclusive');
    let from;
    if (p.checkpoint) {
      from = s.checkpoints.findIndex((c) => c.id === p.checkpoint);
      if (from < 0) throw new RpcError(E.unknownCheckpoint, `unknown checkpoint ${p.checkpoint}`);
    } else if (p.runId) {
      if (!s.runs.includes(p.runId)) throw new RpcError(E.unknownRun, `run ${p.runId} is not a run of session ${s.sessionId}`);
      from = s.checkpoints.findIndex((c) => c.runId === p.runId);
    } else from = s.checkpoints.findLastIndex((c) => !c.undone && !c.undoes);
    return restore(s, from, p, 'undo');
  },
  'agent/rewind': (raw) => {
    const p = decode('agent/rewind', raw);
    required(p, 'sessionId', 'runId');
    const s = theSession(p.sessionId);
    const at = s.runs.indexOf(p.runId);
    if (at < 0) throw new RpcError(E.unknownRun, `run ${p.runId} is not a run of session ${s.sessionId}`);
    if (s.rewound.has(p.runId)) throw new RpcError(E.invalid, `invalid params: run ${p.runId} was already rewound`);
    const cut = s.runs.slice(at).filter((id) => !s.rewound.has(id));
    const from = p.keepFiles ? -1 : s.checkpoints.findIndex((c) => cut.includes(c.runId));
    const res = restore(s, from, p, 'rewind');
    if (res.status === 'conflicts') return res;
    res.rewound = cut;
    res.messages = 2 * (at - [...s.rewound].filter((id) => s.runs.indexOf(id) < at).length);
    if (!p.dryRun) for (const id of cut) s.rewound.add(id);
    return res;
  },
  'mcp/status': (raw) => {
    decode('mcp/status', raw);
    mcpServers ??= JSON.parse(process.env.FAKE_MCP || '[]');
    return { servers: mcpServers };
  },
  'index/status': (raw) => {
    decode('index/status', raw);
    return { state: 'ready', files: 1, chunks: 1, progress: 1, embedder: 'fake' };
  },
};

function findRule(p) {
  for (const list of [rules, ...(p.sessionId ? [sessionRules.get(p.sessionId) ?? []] : [])]) {
    const i = list.findIndex((r) => r.id === p.id);
    if (i >= 0) return { list, i };
  }
  throw new RpcError(E.unknownRule, `unknown rule: ${p.id}`);
}

/** An MCP control: the server as it is after, and mcp/changed. */
function mcpControl(method, raw, change) {
  const p = decode(method, raw);
  required(p, 'name');
  mcpServers ??= JSON.parse(process.env.FAKE_MCP || '[]');
  const i = mcpServers.findIndex((s) => s.name === p.name);
  if (i < 0) throw new RpcError(E.invalid, `unknown MCP server: "${p.name}"`);
  mcpServers[i] = change(mcpServers[i]);
  setImmediate(() => send({ jsonrpc: '2.0', method: 'mcp/changed', params: { name: p.name, state: mcpServers[i].state } }));
  return { server: mcpServers[i] };
}

/** The context meter of a session: 1000 tokens a run since the last compaction, and the system's 4000. */
function contextOf(s) {
  const kept = s.runs.length - (s.compactedAt ?? 0);
  const out = { used: 4000 + 1000 * kept, window: 128000, compactAt: 95000, messages: 2 * kept };
  if (s.compactedAt) out.compacted = true;
  return out;
}

/** Undoes the session's checkpoints from index `from` on, as agentd's restore: dry run, conflicts, onConflict. */
function restore(s, from, p, tool) {
  if (p.onConflict !== undefined && p.onConflict !== '' && !ON_CONFLICT.includes(p.onConflict)) throw new RpcError(E.invalid, `invalid params: onConflict "${p.onConflict}" is not one of stop, skip, overwrite`);
  const last = runs.get(s.runs[s.runs.length - 1]);
  if (last && !TERMINAL.has(last.state)) throw new RpcError(E.busy, `session ${s.sessionId} has an unfinished run ${last.runId}`);
  const covered = from < 0 ? [] : s.checkpoints.slice(from).filter((c) => !c.undone);
  if (!covered.length) return { status: tool === 'rewind' ? (p.dryRun ? 'preview' : 'restored') : 'nothing', undone: [], files: [] };
  const diff = { path: 'a.txt', status: 'modified', diff: '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-new\n+old\n' };
  const conflicted = covered.some((c) => c.conflict);
  const on = p.onConflict || 'stop';
  const res = { status: 'preview', undone: covered.map((c) => c.id), files: conflicted ? [] : [diff] };
  if (conflicted && on !== 'overwrite') {
    res.conflicts = [{ path: 'a.txt', kind: 'changed', reason: 'it was changed after the checkpoint', diff: { ...diff, diff: '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-new, and mine\n+old\n' } }];
  }
  if (conflicted && on === 'overwrite') res.files = [diff];
  if (p.dryRun) return res;
  if (conflicted && on === 'stop') return { ...res, status: 'conflicts', files: [] };
  const id = `c${s.checkpoints.length + 1}`;
  for (const c of covered) c.undone = true; // agentd lists it in the undo's `undoes`
  s.checkpoints.push({ id, runId: '', tool, title: `${tool} of ${res.undone.join(', ')}`, time: now(), files: res.files.map((f) => ({ path: f.path, status: f.status })), undoes: res.undone });
  delete res.conflicts;
  if (conflicted && on === 'skip') res.notes = ['a.txt left as it is: it was changed after the checkpoint'];
  return { ...res, status: 'restored', checkpoint: id };
}

function answer(p, how) {
  required(p, 'requestId');
  if (how === 'confirm') required(p, 'decision');
  const r = requests.get(p.requestId);
  if (!r) throw new RpcError(E.unknownRequest, `unknown request ${p.requestId}`);
  const confirm = r.kind === 'confirm_write' || r.kind === 'confirm_command';
  if (how === 'confirm' && !(r.params.options ?? [{ optionId: 'allow_once' }, { optionId: 'allow_session' }, { optionId: 'allow_always' }, { optionId: 'reject_once' }, { optionId: 'reject_always' }]).some((o) => o.optionId === p.decision))
    throw new RpcError(E.wrongKind, `wrong kind: decision ${p.decision} is not offered`);
  if (confirm !== (how === 'confirm')) throw new RpcError(E.wrongKind, `wrong kind: request ${p.requestId} is a ${r.kind}`);
  requests.delete(p.requestId);
  const run = runs.get(r.runId);
  setImmediate(() => {
    notifyRun(run, 'agent/inputResolved', { requestId: p.requestId, outcome: confirm ? p.decision : 'answered', by: 'user' });
    if (r.onAnswer) return r.onAnswer(p.text ?? '');
    notifyRun(run, 'agent/runState', { state: 'completed', stopReason: 'end_turn' });
    startQueued(run.sessionId);
  });
  return {};
}

const notifications = {
  initialized: () => {
    send({ jsonrpc: '2.0', method: '$/progress', params: { token: 'agentd-index-1', value: { kind: 'begin', title: 'Indexing workspace', percentage: 0 } } });
    send({ jsonrpc: '2.0', method: '$/progress', params: { token: 'agentd-index-1', value: { kind: 'end', message: '1 files' } } });
  },
  exit: () => process.exit(0),
  'textDocument/didOpen': () => undefined,
  'textDocument/didChange': () => undefined,
  'textDocument/didSave': () => undefined,
  'textDocument/didClose': () => undefined,
};

if (process.env.FAKE_LIST) {
  process.stdout.write(JSON.stringify({ requests: Object.keys(handlers), notifications: Object.keys(notifications) }));
  process.exit(0);
}

function handle(msg) {
  if (log) fs.appendFileSync(log, JSON.stringify(msg) + '\n');
  const { id, method, params } = msg;
  if (id === undefined) {
    notifications[method]?.(params);
    return;
  }
  const h = handlers[method];
  if (!h) {
    send({ jsonrpc: '2.0', id, error: { code: initialized ? -32601 : -32002, message: `unknown method ${method}` } });
    return;
  }
  try {
    send({ jsonrpc: '2.0', id, result: h(params) ?? null });
  } catch (e) {
    send({ jsonrpc: '2.0', id, error: { code: e.code ?? -32603, message: e.message } });
  }
}

process.stdin.on('data', (chunk) => {
  buf = Buffer.concat([buf, chunk]);
  for (;;) {
    const end = buf.indexOf('\r\n\r\n');
    if (end < 0) return;
    const header = buf.subarray(0, end).toString('ascii');
    const m = header.match(/Content-Length: (\d+)/i);
    const len = Number(m[1]);
    if (buf.length < end + 4 + len) return;
    const body = buf.subarray(end + 4, end + 4 + len).toString('utf8');
    buf = buf.subarray(end + 4 + len);
    handle(JSON.parse(body));
  }
});
process.stdin.on('end', () => process.exit(1));
