// A stand-in for `agentd serve` with hand-written Content-Length framing (independent of
// vscode-jsonrpc), for the DaemonClient unit tests. Behaviour is chosen by FAKE_MODE:
//   normal   answers initialize/shutdown, echoes agent/run, sends notifications on request
//   crash    like normal, but exits(3) when it receives agent/run with prompt "crash"
// Every message received is appended (one JSON per line) to FAKE_LOG.
import fs from 'node:fs';

const log = process.env.FAKE_LOG;
let buf = Buffer.alloc(0);
let initialized = false;

function send(msg) {
  const body = Buffer.from(JSON.stringify(msg), 'utf8');
  process.stdout.write(`Content-Length: ${body.length}\r\n\r\n`);
  process.stdout.write(body);
}

function handle(msg) {
  if (log) fs.appendFileSync(log, JSON.stringify(msg) + '\n');
  const { id, method, params } = msg;
  if (method === 'initialize') {
    initialized = true;
    send({ jsonrpc: '2.0', id, result: { serverInfo: { name: 'fake-agentd', version: '0' }, protocolVersion: 1, capabilities: {} } });
  } else if (method === 'initialized') {
    send({ jsonrpc: '2.0', method: '$/progress', params: { token: 'agentd-index-1', value: { kind: 'begin', title: 'Indexing workspace', percentage: 0 } } });
    send({ jsonrpc: '2.0', method: '$/progress', params: { token: 'agentd-index-1', value: { kind: 'end', message: '1 files' } } });
  } else if (method === 'shutdown') {
    send({ jsonrpc: '2.0', id, result: null });
  } else if (method === 'exit') {
    process.exit(0);
  } else if (method === 'agent/run') {
    if (params.prompt === 'crash') process.exit(3);
    send({ jsonrpc: '2.0', id, result: { runId: 'r_1', sessionId: 's_1' } });
    // Two notifications, with a multi-byte character to check Content-Length counts bytes.
    send({ jsonrpc: '2.0', method: 'agent/runState', params: { runId: 'r_1', sessionId: 's_1', seq: 1, state: 'running' } });
    send({ jsonrpc: '2.0', method: 'agent/update', params: { runId: 'r_1', sessionId: 's_1', seq: 2, update: { kind: 'message_chunk', text: 'héllo ✓' } } });
  } else if (method === 'agent/pending') {
    send({ jsonrpc: '2.0', id, result: { requests: [] } });
  } else if (id !== undefined) {
    send({ jsonrpc: '2.0', id, error: { code: initialized ? -32601 : -32002, message: `unknown ${method}` } });
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
