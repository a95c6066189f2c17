// Background processes (run_cmd's background) over a real pipe, against the fake daemon: the
// conversation lists its session's processes from agent/processChanged and agent/history, each
// running one with a stop button (agent/stopProcess), and the run_cmd call that started one says
// so under it.
import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { daemon, until } from '../support/harness.mjs';
const require = createRequire(import.meta.url);
const { AgentController } = require('../../out/agent.js');
const { RunStore } = require('../../out/runStore.js');
const { RequestBook } = require('../../out/requests.js');
const { renderConversation, processStateText } = require('../../out/render.js');

function windowOn(c) {
  const book = new RequestBook((a) => c.request(a.method, a.params));
  const ctl = new AgentController(c, new RunStore(), book);
  c.onNotification((m, p) => ctl.handleNotification(m, p));
  return ctl;
}

const html = (ctl) =>
  renderConversation({ sessionId: ctl.currentSessionId, runs: ctl.currentRuns(), open: ctl.requests.list(), daemon: { state: 'ready' }, processes: ctl.processesOf(ctl.currentSessionId) });

test('a background process is listed with a stop button and a badge under its call; Stop stops it, and a reload shows it stopped', async (t) => {
  const { c, received } = await daemon(t);
  const ctl = windowOn(c);
  await ctl.reconnected();
  const res = await ctl.run({ prompt: 'serve npm run dev' });
  await until(() => ctl.store.get(res.runId)?.state === 'completed' && ctl.processesOf(res.sessionId).length === 1, 'the run and its process');
  const [p] = ctl.processesOf(res.sessionId);
  assert.deepEqual([p.id, p.command, p.state, p.toolCallId], ['p1', 'npm run dev', 'running', `bg_${res.runId}`]);
  assert.equal(ctl.runningProcesses(), 1, 'the status bar counts it');

  let page = html(ctl);
  assert.match(page, /Background processes \(1 running\)/);
  assert.match(page, /<li class="proc proc-running" data-proc="p1">[^]*npm run dev[^]*running · started [^]*data-action="stopProcess" data-session="[^"]+" data-process="p1"/);
  // Under the run_cmd call that started it, right after the call's row.
  assert.match(page, /data-tool="[^"]*bg_[^"]*"[^]*?<\/details><div class="proc-badge proc-running" data-proc="p1">[^<]*<span class="proc-dot">●<\/span> running in the background \(p1\)[^]*?■ Stop/);

  const stopped = await ctl.stopProcess(res.sessionId, 'p1');
  assert.equal(stopped.state, 'stopped');
  assert.equal(ctl.runningProcesses(), 0);
  assert.deepEqual(received().filter((m) => m.method === 'agent/stopProcess').map((m) => m.params), [{ sessionId: res.sessionId, id: 'p1' }]);
  page = html(ctl);
  assert.match(page, /<summary>Background processes<\/summary>/);
  assert.match(page, /<li class="proc proc-stopped" data-proc="p1">[^]*stopped by you · started [^·]* · ended [^·]* · 5 KB of output<\/span><\/li>/);
  assert.doesNotMatch(page, /data-action="stopProcess"/, 'no stop button once it is over');
  assert.match(page, /background process p1: stopped by you/);

  // Another window (a reload): the list comes from agent/history.
  const again = windowOn(c);
  again.restore({ sessionId: res.sessionId });
  await again.reconnected();
  assert.deepEqual(again.processesOf(res.sessionId).map((x) => [x.id, x.state, x.stoppedBy]), [['p1', 'stopped', 'user']]);
});

test("another session's process is not listed in the conversation shown", async (t) => {
  const { c } = await daemon(t);
  const ctl = windowOn(c);
  await ctl.reconnected();
  const a = await ctl.run({ prompt: 'serve make watch' });
  await until(() => ctl.processesOf(a.sessionId).length === 1, 'the process');
  ctl.newSession();
  const b = await ctl.run({ prompt: 'say hi' });
  await until(() => ctl.store.get(b.runId)?.state === 'completed', 'the second run');
  assert.deepEqual(ctl.processesOf(b.sessionId), []);
  assert.doesNotMatch(html(ctl), /Background processes/);
});

test('a process list asked before a process ended does not bring it back to life', () => {
  const rpc = {
    async request(method) {
      if (method === 'agent/history')
        return { session: { sessionId: 's1' }, runs: [], earlierRuns: 0, pending: [], processes: [{ id: 'p1', sessionId: 's1', command: 'sleep 100', cwd: '.', state: 'running', startedAt: '2026-01-01T00:00:00Z', output: 0 }] };
      if (method === 'agent/pending') return { requests: [] };
      throw new Error(method);
    },
  };
  const ctl = new AgentController(rpc, new RunStore(), new RequestBook(async () => ({})));
  ctl.restore({ sessionId: 's1' });
  ctl.handleNotification('agent/processChanged', { process: { id: 'p1', sessionId: 's1', command: 'sleep 100', cwd: '.', state: 'exited', exitCode: 2, startedAt: '2026-01-01T00:00:00Z', endedAt: '2026-01-01T00:01:00Z', output: 10 } });
  return ctl.reconnected().then(() => {
    assert.deepEqual(ctl.processesOf('s1').map((p) => [p.state, p.exitCode]), [['exited', 2]]);
  });
});

test('how a process stands, in words', () => {
  const p = (x) => processStateText({ id: 'p1', sessionId: 's', command: 'x', cwd: '.', startedAt: '', output: 0, ...x });
  assert.equal(p({ state: 'running' }), 'running');
  assert.equal(p({ state: 'exited', exitCode: 0 }), 'exited');
  assert.equal(p({ state: 'exited', exitCode: 1 }), 'exited 1');
  assert.equal(p({ state: 'stopped', stoppedBy: 'user' }), 'stopped by you');
  assert.equal(p({ state: 'stopped', stoppedBy: 'model' }), 'stopped by the agent');
  assert.equal(p({ state: 'stopped', stoppedBy: 'agentd' }), 'stopped by agentd');
  assert.equal(p({ state: 'lost' }), 'lost when agentd restarted');
});
