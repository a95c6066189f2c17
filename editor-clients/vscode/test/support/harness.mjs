// What the unit tests that talk to the fake daemon over a real pipe share: starting it with a log
// of what it received, and waiting for a condition with a deadline (never a sleep that hopes).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { scaled } from './scale.mjs';
const require = createRequire(import.meta.url);
const { DaemonClient } = require('../../out/daemon.js');

export const fake = path.resolve(path.dirname(new URL(import.meta.url).pathname), 'fake-daemon.mjs');

/** Resolves once pred() holds; throws after ms (scaled to the machine's load) naming what it waited for. */
export const until = async (pred, what = 'the condition', ms = 5000) => {
  const t0 = Date.now();
  while (!pred()) {
    if (Date.now() - t0 > scaled(ms)) throw new Error(`timed out waiting for ${what} (${scaled(ms)} ms)`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

/** Starts the fake daemon for test t; received() is every message it got, decoded. */
export async function daemon(t, env = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentd-fake-'));
  const logFile = path.join(dir, 'log.jsonl');
  const c = new DaemonClient({ command: process.execPath, args: [fake], env: { ...process.env, FAKE_LOG: logFile, ...env }, initializeParams: () => ({ processId: 1, capabilities: {} }), backoffMs: [50] });
  t.after(() => c.stop());
  await c.start();
  const received = () => fs.readFileSync(logFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  return { c, received };
}
