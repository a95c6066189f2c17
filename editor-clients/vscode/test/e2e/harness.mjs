// Starts the fake model, code-server (real VS Code) with the packaged extension, and Debian's
// Chromium through playwright-core. Recipe: shared/research/clients.md §b1.

import { scaled } from '../support/scale.mjs';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
export const EXT_DIR = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

export function env(name, fallback) {
  const v = process.env[name] ?? fallback;
  if (v === undefined) throw new Error(`${name} is not set`);
  return v;
}

/** Spawns a process and resolves with the first stdout/stderr match of `re`. */
function startAndWait(cmd, args, opts, re, timeoutMs, logFile) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { ...opts, stdio: ['pipe', 'pipe', 'pipe'] });
    const log = fs.createWriteStream(logFile);
    let done = false;
    const timer = setTimeout(() => {
      if (!done) reject(new Error(`${path.basename(cmd)} did not start within ${timeoutMs} ms (log: ${logFile})`));
    }, timeoutMs);
    const onData = (d) => {
      log.write(d);
      const m = String(d).match(re);
      if (m && !done) {
        done = true;
        clearTimeout(timer);
        resolve({ child, match: m });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => {
      if (!done) {
        done = true;
        clearTimeout(timer);
        reject(new Error(`${path.basename(cmd)} exited with ${code} before it was ready (log: ${logFile})`));
      }
    });
  });
}

export async function setup({ modelScript, artifacts, settings = {}, daemonEnv = {} }) {
  const agentd = env('AGENTD_BIN');
  const fakemodel = env('FAKEMODEL_BIN');
  const csDir = env('CS_DIR');
  const vsix = env('VSIX', path.join(EXT_DIR, 'agentd-vscode.vsix'));
  const chromium = env('CHROMIUM', '/usr/bin/chromium');
  fs.mkdirSync(artifacts, { recursive: true });

  const T = fs.mkdtempSync(path.join(os.tmpdir(), 'agentd-vscode-e2e-'));
  const ws = path.join(T, 'ws');
  const ext = path.join(T, 'ext');
  const ud = path.join(T, 'ud');
  const state = path.join(T, 'state');
  const home = path.join(T, 'home');
  for (const d of [ws, ext, path.join(ud, 'User'), state, home]) fs.mkdirSync(d, { recursive: true });
  fs.writeFileSync(path.join(ws, 'README.md'), '# demo workspace\n\nA tiny workspace for the agentd e2e test.\n');
  // Instruction files the model is given (and the panel links to).
  fs.writeFileSync(path.join(ws, 'AGENTS.md'), '# Agent notes\n\nKeep answers short.\n');
  fs.writeFileSync(path.join(ws, 'broken.json'), '{"name": "demo",\n  "port": }\n');
  fs.writeFileSync(path.join(ws, 'cart.go'), 'package cart\n\n// Total sums the cart.\nfunc Total(prices []int) int {\n\tt := 0\n\tfor _, p := range prices {\n\t\tt += p\n\t}\n\treturn t\n}\n');

  const cleanups = [];
  const procs = [];

  // The fake model.
  const fm = await startAndWait(fakemodel, ['-script', modelScript, '-addr', '127.0.0.1:0', '-stdin-exit'], {}, /listening on (http:\/\/\S+)/, 20000, path.join(artifacts, 'fakemodel.log'));
  procs.push(fm.child);
  const modelUrl = fm.match[1];

  const csBin = path.join(csDir, 'node_modules', 'code-server');
  const baseEnv = {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local/share'),
    AGENTD_STATE_DIR: state,
    AGENTD_QUESTION_TIMEOUT: '0',
  };
  delete baseEnv.OPENAI_API_KEY;
  delete baseEnv.OPENAI_BASE_URL;
  delete baseEnv.AGENTD_MODEL;

  // Install the packaged extension before the first start (pitfall 6 in the recipe).
  execFileSync(process.execPath, [csBin, '--extensions-dir', ext, '--user-data-dir', ud, '--config', path.join(T, 'config.yaml'), '--install-extension', vsix], {
    env: baseEnv,
    stdio: ['ignore', fs.openSync(path.join(artifacts, 'install-extension.log'), 'w'), fs.openSync(path.join(artifacts, 'install-extension.log'), 'a')],
  });

  fs.writeFileSync(
    path.join(ud, 'User', 'settings.json'),
    JSON.stringify(
      {
        'workbench.startupEditor': 'none',
        'security.workspace.trust.enabled': false,
        'workbench.tips.enabled': false,
        'workbench.enableExperiments': false,
        'telemetry.telemetryLevel': 'off',
        'extensions.ignoreRecommendations': true,
        'update.mode': 'none',
        'window.commandCenter': false,
        'chat.commandCenter.enabled': false,
        'workbench.secondarySideBar.defaultVisibility': 'hidden',
        // Ports other processes on the machine open would otherwise raise toasts over the editor.
        'remote.autoForwardPorts': false,
        'agentd.daemonPath': agentd,
        'agentd.model.baseUrl': modelUrl,
        'agentd.model.name': 'fake-model',
        'agentd.approvalPolicy': 'ask',
        'agentd.env': { AGENTD_STATE_DIR: state, ...daemonEnv },
        'agentd.trace': 'verbose',
        ...settings,
      },
      null,
      2,
    ),
  );

  const cs = await startAndWait(
    process.execPath,
    [csBin, '--auth', 'none', '--bind-addr', '127.0.0.1:0', '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', '--disable-getting-started-override', '--config', path.join(T, 'config.yaml'), '--extensions-dir', ext, '--user-data-dir', ud, ws],
    { env: baseEnv, detached: true },
    /HTTP server listening on (http:\/\/[\d.]+:\d+)\/?/,
    60000,
    path.join(artifacts, 'code-server.log'),
  );
  procs.push(cs.child);
  const addr = cs.match[1];

  const { chromium: pwChromium } = require('playwright-core');
  const browser = await pwChromium.launch({
    executablePath: chromium,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
  });
  // The clipboard lets the extension read the terminal's selection, as a user allows it in a browser.
  const page = await browser.newPage({ viewport: { width: 1600, height: 900 }, permissions: ['clipboard-read', 'clipboard-write'] });
  page.setDefaultTimeout(scaled(30000));
  await page.goto(`${addr}/?folder=${encodeURIComponent(ws)}`);
  await page.waitForSelector('.monaco-workbench', { timeout: scaled(60000) });

  async function teardown() {
    try {
      await browser.close();
    } catch {}
    // SIGTERM, then SIGKILL for whatever has not exited within two seconds.
    const exited = (p) => (p.exitCode !== null || p.signalCode !== null ? Promise.resolve() : new Promise((r) => p.once('exit', r)));
    const signal = (p, sig) => {
      try {
        if (p === cs.child) process.kill(-p.pid, sig);
        else p.kill(sig);
      } catch {}
    };
    for (const p of procs.reverse()) signal(p, 'SIGTERM');
    await Promise.all(
      procs.map((p) => {
        const timer = setTimeout(() => signal(p, 'SIGKILL'), 2000);
        return exited(p).finally(() => clearTimeout(timer));
      }),
    );
    // Keep the extension host and output logs with the artifacts.
    try {
      fs.cpSync(path.join(ud, 'logs'), path.join(artifacts, 'vscode-logs'), { recursive: true });
    } catch {}
    for (const c of cleanups) c();
    if (!process.env.KEEP_E2E_DIR) fs.rmSync(T, { recursive: true, force: true });
  }

  /** The pids of the agentd daemons this test's VS Code started (by their state directory). */
  function daemonPids() {
    const pids = [];
    for (const d of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(d)) continue;
      try {
        const argv = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
        if (argv[0] !== agentd || argv[1] !== 'serve') continue;
        if (fs.readFileSync(`/proc/${d}/environ`, 'utf8').split('\0').includes(`AGENTD_STATE_DIR=${state}`)) pids.push(Number(d));
      } catch {}
    }
    return pids;
  }

  return { T, ws, ud, state, page, browser, addr, modelUrl, teardown, daemonPids };
}
