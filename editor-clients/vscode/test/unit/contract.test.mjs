// The client's protocol against the daemon's: testdata/contract/protocol.json and src/contract.ts are
// written by the Go tests (go test ./rpc -run TestContract -update) from the daemon's handler tables
// and Go types, and the Go test fails when either is stale. Here: the extension sends only what the
// daemon serves, handles everything it sends, and its fake daemon is true to both.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const P = require('../../out/protocol.js');
const { runStateName, outcomeText } = require('../../out/words.js');

const HERE = path.dirname(new URL(import.meta.url).pathname);
const EXT = path.resolve(HERE, '../..');
const contract = JSON.parse(fs.readFileSync(path.resolve(EXT, '../../testdata/contract/protocol.json'), 'utf8'));
const sorted = (xs) => [...xs].sort();
const missing = (xs, from) => xs.filter((x) => !from.includes(x));

test('the protocol version is the daemon\'s', () => {
  assert.equal(P.PROTOCOL_VERSION, contract.protocolVersion);
});

test('every method the extension sends is one the daemon serves', () => {
  assert.deepEqual(missing(P.CLIENT_REQUESTS, contract.requests), [], 'requests');
  assert.deepEqual(missing(P.CLIENT_NOTIFICATIONS, contract.notifications), [], 'notifications');
});

test('every method the daemon sends is one the extension handles (an opt-in one only if it declares it)', () => {
  const required = (list) => list.filter((m) => !contract.methods[m].optIn);
  assert.deepEqual(missing(required(contract.serverNotifications), P.HANDLED_NOTIFICATIONS), [], 'notifications not handled');
  assert.deepEqual(missing(required(contract.serverRequests), P.HANDLED_REQUESTS), [], 'requests not handled');
  assert.deepEqual(missing(P.HANDLED_NOTIFICATIONS, contract.serverNotifications), [], 'handled notifications the daemon never sends');
  assert.deepEqual(missing(P.HANDLED_REQUESTS, contract.serverRequests), [], 'handled requests the daemon never sends');
});

test('the generated contract.ts is the contract: every enumeration, method and kind', () => {
  const screaming = (s) => s.replace(/[A-Z]/g, (c) => '_' + c).toUpperCase();
  for (const e of Object.values(contract.enums)) assert.deepEqual(P[screaming(e.list)], e.values, e.list);
  assert.deepEqual(sorted(Object.values(P.Method)), sorted(Object.keys(contract.methods)));
  assert.deepEqual(Object.keys(P.KINDS).sort(), Object.keys(contract.kinds).sort());
  for (const k of P.PROMPT_KINDS) assert.ok(P.KINDS[k].answer === P.Method.reply || P.KINDS[k].answer === P.Method.confirm, k);
});

test('the error codes are the daemon\'s', () => {
  for (const [name, code] of Object.entries(P.ErrorCode)) assert.equal(contract.errorCodes[name], code, name);
});

test('the fake daemon of the unit tests implements every method the extension calls, and only real ones', () => {
  const fake = JSON.parse(execFileSync(process.execPath, [path.join(HERE, '../support/fake-daemon.mjs')], { env: { ...process.env, FAKE_LIST: '1' } }).toString());
  assert.deepEqual(missing(P.CLIENT_REQUESTS, fake.requests), [], 'requests the fake lacks');
  assert.deepEqual(missing(P.CLIENT_NOTIFICATIONS, fake.notifications), [], 'notifications the fake lacks');
  assert.deepEqual(missing(fake.requests, contract.requests), [], 'fake requests the daemon does not serve');
  assert.deepEqual(missing(fake.notifications, contract.notifications), [], 'fake notifications the daemon does not take');
});

test('method names live in protocol.ts only', () => {
  const src = path.join(EXT, 'src');
  const offenders = [];
  for (const f of fs.readdirSync(src)) {
    if (f === 'protocol.ts' || f === 'contract.ts') continue;
    const text = fs.readFileSync(path.join(src, f), 'utf8');
    for (const m of text.matchAll(/['"`]((?:agent|index|rules|mcp|editor|textDocument|window\/workDoneProgress)\/[A-Za-z]+|\$\/progress|\$\/cancelRequest)['"`]/g)) offenders.push(`${f}: ${m[1]}`);
  }
  assert.deepEqual(offenders, []);
});

test('every state and outcome has a human name', () => {
  for (const s of P.RUN_STATES) assert.doesNotMatch(runStateName(s), /_/, s);
  assert.equal(runStateName('requires_action'), 'waiting for you');
  for (const d of [...P.DECISIONS, 'answered', 'timeout', 'cancelled']) {
    for (const by of P.RESOLVED_BY) assert.doesNotMatch(outcomeText(d, by, 'confirm_write').text, /_/, `${d} by ${by}`);
  }
});

test('package.json declares exactly the commands the table registers, and binds keys to them', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(EXT, 'package.json'), 'utf8'));
  const declared = pkg.contributes.commands.map((c) => c.command);
  const table = [...fs.readFileSync(path.join(EXT, 'src/commands.ts'), 'utf8').matchAll(/^\s+'(agentd\.[A-Za-z.]+)':/gm)].map((m) => m[1]);
  assert.deepEqual(sorted(declared), sorted(table));
  const bound = pkg.contributes.keybindings.map((k) => k.command);
  for (const c of ['agentd.ask', 'agentd.askSelection', 'agentd.cancel', 'agentd.focusPanel']) assert.ok(bound.includes(c), `${c} has a key`);
  for (const c of bound) assert.ok(declared.includes(c), `${c} is declared`);
});
