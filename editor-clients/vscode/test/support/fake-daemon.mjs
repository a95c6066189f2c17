// A stand-in for `agentd serve` with hand-written Content-Length framing (independent of
// vscode-jsonrpc), for the unit tests of the client against a process. It implements every
// method the extension calls (the contract test checks the list against the extension's and the
// daemon's), and decodes params as strictly as the daemon: a request whose params are not an
// object gets -32602, so a client that sends none (vscode-jsonrpc turns that into `[null]`) fails
// here as it did against the real daemon.
//
//   FAKE_LOG=FILE   every message received is appended, one JSON per line
//   FAKE_LIST=1     prints the handled methods as JSON and exits
//
// agent/run with prompt "crash" exits(3); with prompt "ask" the run opens a question, with
// "write" a confirm_write, and answering them finishes the run.
import fs from 'node:fs';

const log = process.env.FAKE_LOG;
let buf = Buffer.alloc(0);
let initialized = false;
let runs = 0;
const requests = new Map(); // requestId → { runId, sessionId, kind, seq }
const runSeq = new Map();
const sessions = [];

const INVALID = -32602;

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

/** params must be a JSON object (the daemon decodes into a struct). */
function obj(params, ...required) {
  if (params === null || typeof params !== 'object' || Array.isArray(params)) {
    throw new RpcError(INVALID, `invalid params: field "" must be struct {}, not ${Array.isArray(params) ? 'array' : typeof params}`);
  }
  for (const f of required) if (params[f] === undefined || params[f] === '') throw new RpcError(INVALID, `invalid params: ${f} is required`);
  return params;
}

function notifyRun(runId, sessionId, method, params) {
  const seq = (runSeq.get(runId) ?? 0) + 1;
  runSeq.set(runId, seq);
  send({ jsonrpc: '2.0', method, params: { runId, sessionId, seq, ...params } });
  return seq;
}

const handlers = {
  initialize: (p) => {
    obj(p);
    initialized = true;
    return { serverInfo: { name: 'fake-agentd', version: '0' }, protocolVersion: 1, capabilities: {} };
  },
  shutdown: () => null,
  'agent/run': (p) => {
    obj(p, 'prompt');
    if (p.prompt === 'crash') process.exit(3);
    const runId = `r_${++runs}`;
    const sessionId = p.sessionId ?? `s_${runs}`;
    if (!sessions.some((s) => s.sessionId === sessionId)) sessions.unshift({ sessionId, title: p.prompt, createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:00Z', state: 'running', lastRunId: runId });
    setImmediate(() => {
      notifyRun(runId, sessionId, 'agent/runState', { state: 'running' });
      notifyRun(runId, sessionId, 'agent/update', { update: { kind: 'message_chunk', text: 'héllo ✓' } });
      if (p.prompt === 'ask' || p.prompt === 'write') {
        const requestId = `q_${runId}`;
        const kind = p.prompt === 'ask' ? 'question' : 'confirm_write';
        const seq = notifyRun(runId, sessionId, 'agent/inputRequest', {
          requestId,
          kind,
          title: kind === 'question' ? 'Question' : 'Write a.txt',
          message: kind === 'question' ? 'Name?' : 'The agent wants to change 1 file(s).',
          diff: kind === 'confirm_write' ? [{ path: 'a.txt', status: 'added', diff: '+x\n', newText: 'x\n' }] : undefined,
          createdAt: new Date().toISOString(),
          pendingCount: 1,
        });
        requests.set(requestId, { runId, sessionId, kind, seq, prompt: p.prompt });
        notifyRun(runId, sessionId, 'agent/runState', { state: 'requires_action' });
      }
    });
    return { runId, sessionId };
  },
  'agent/reply': (p) => answer(obj(p, 'requestId'), 'reply'),
  'agent/confirm': (p) => answer(obj(p, 'requestId', 'decision'), 'confirm'),
  'agent/cancel': (p) => {
    obj(p, 'runId');
    return {};
  },
  'agent/resume': (p) => {
    obj(p, 'runId');
    throw new RpcError(-32019, 'run is not paused');
  },
  'agent/pending': (p) => {
    obj(p);
    return { requests: [] };
  },
  'agent/events': (p) => {
    obj(p, 'runId');
    return { state: 'completed', events: [] };
  },
  'agent/sessions': (p) => {
    obj(p);
    return { sessions };
  },
  'index/status': (p) => {
    obj(p);
    return { state: 'ready', files: 1, chunks: 1, progress: 1, embedder: 'fake' };
  },
};

function answer(p, how) {
  const r = requests.get(p.requestId);
  if (!r) throw new RpcError(-32011, `unknown request ${p.requestId}`);
  const confirm = r.kind === 'confirm_write';
  if (confirm !== (how === 'confirm')) throw new RpcError(-32013, `wrong kind: request ${p.requestId} is a ${r.kind}`);
  requests.delete(p.requestId);
  setImmediate(() => {
    notifyRun(r.runId, r.sessionId, 'agent/inputResolved', { requestId: p.requestId, outcome: confirm ? p.decision : 'answered', by: 'user' });
    notifyRun(r.runId, r.sessionId, 'agent/runState', { state: 'completed', stopReason: 'end_turn' });
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
