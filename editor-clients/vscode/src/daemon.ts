// Starts `agentd serve`, speaks JSON-RPC 2.0 with LSP framing over its stdio (vscode-jsonrpc),
// and restarts it with a backoff when it dies. No vscode import: the unit tests run it against a
// fake daemon written in node.

import { ChildProcess, spawn } from 'child_process';
import {
  CancellationToken,
  MessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  Trace,
  createMessageConnection,
} from 'vscode-jsonrpc/node';
import { Method } from './protocol';

export type DaemonState = 'stopped' | 'starting' | 'ready' | 'restarting' | 'failed';

export interface DaemonOptions {
  command: string;
  args?: string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Built anew for every start, so a changed setting or API key takes effect on restart. */
  initializeParams: () => Promise<object> | object;
  log?: (line: string) => void;
  trace?: 'off' | 'messages' | 'verbose';
  /** Delays before each restart attempt; the last one repeats. */
  backoffMs?: number[];
  /** Give up after this many crashes in `crashWindowMs`. */
  maxCrashes?: number;
  crashWindowMs?: number;
}

export interface Rpc {
  request<T = unknown>(method: string, params?: unknown, token?: CancellationToken): Promise<T>;
  notify(method: string, params?: unknown): void;
}

type NotificationHandler = (method: string, params: unknown) => void;
type RequestHandler = (params: unknown) => unknown;

export class DaemonClient implements Rpc {
  private child?: ChildProcess;
  private conn?: MessageConnection;
  private _state: DaemonState = 'stopped';
  private stopping = false;
  private crashes: number[] = [];
  private restartTimer?: NodeJS.Timeout;
  private ready?: Promise<void>;
  private readyResolve?: () => void;
  private readyReject?: (e: Error) => void;
  private generation = 0;
  private readonly notificationHandlers: NotificationHandler[] = [];
  private readonly requestHandlers = new Map<string, RequestHandler>();
  private readonly readyHandlers: ((result: InitializeResult, restarted: boolean) => void)[] = [];
  private readonly stateHandlers: ((state: DaemonState, detail?: string) => void)[] = [];
  private starts = 0;
  lastError?: string;
  initializeResult?: InitializeResult;

  constructor(private opts: DaemonOptions) {}

  get state(): DaemonState {
    return this._state;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  setOptions(opts: DaemonOptions): void {
    this.opts = opts;
  }

  onNotification(h: NotificationHandler): void {
    this.notificationHandlers.push(h);
  }

  onRequest(method: string, h: RequestHandler): void {
    this.requestHandlers.set(method, h);
  }

  /** Called after every successful initialize; `restarted` is true after the first. */
  onReady(h: (result: InitializeResult, restarted: boolean) => void): void {
    this.readyHandlers.push(h);
  }

  onStateChange(h: (state: DaemonState, detail?: string) => void): void {
    this.stateHandlers.push(h);
  }

  /** Starts the daemon (no-op when running) and resolves once it answered initialize. */
  start(): Promise<void> {
    if (this._state === 'ready' || this._state === 'starting' || this._state === 'restarting') return this.whenReady();
    if (this._state === 'failed') this.crashes = [];
    this.stopping = false;
    this.newReadyPromise();
    void this.launch();
    return this.whenReady();
  }

  whenReady(): Promise<void> {
    if (!this.ready) this.newReadyPromise();
    return this.ready!;
  }


  async request<T = unknown>(method: string, params?: unknown, token?: CancellationToken): Promise<T> {
    if (this._state === 'stopped') await this.start();
    if (this._state !== 'ready') {
      if (this._state === 'failed') throw new Error(`agentd is not running: ${this.lastError ?? 'it failed to start'}`);
      await withTimeout(this.whenReady(), 30000, 'agentd did not become ready');
    }
    const conn = this.conn;
    if (!conn) throw new Error('agentd is not running');
    return (token ? conn.sendRequest(method, params, token) : conn.sendRequest(method, params)) as Promise<T>;
  }

  notify(method: string, params?: unknown): void {
    if (this._state !== 'ready' || !this.conn) return;
    void this.conn.sendNotification(method, params).catch((e) => this.log(`notify ${method}: ${e}`));
  }

  /** LSP shutdown + exit; kills the process if it does not exit in time. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const child = this.child;
    const conn = this.conn;
    if (!child) {
      this.setState('stopped');
      return;
    }
    const exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    });
    try {
      if (conn && this._state === 'ready') {
        await withTimeout(conn.sendRequest(Method.shutdown), 3000, 'shutdown timed out');
        await conn.sendNotification(Method.exit);
      }
    } catch (e) {
      this.log(`shutdown: ${e}`);
    }
    const killed = await Promise.race([exited.then(() => false), sleep(2000).then(() => true)]);
    if (killed) child.kill('SIGKILL');
    await exited;
    this.setState('stopped');
  }

  /** Stops and starts again (settings or the API key changed). */
  async restart(): Promise<void> {
    await this.stop();
    this.crashes = [];
    await this.start();
  }

  private async launch(): Promise<void> {
    const gen = ++this.generation;
    this.setState(this.starts > 0 ? 'restarting' : 'starting');
    let params: object;
    try {
      params = await this.opts.initializeParams();
    } catch (e) {
      this.fail(`could not build initialize params: ${e}`);
      return;
    }
    const { command, args = ['serve'], cwd, env } = this.opts;
    this.log(`starting ${command} ${args.join(' ')}${cwd ? ` in ${cwd}` : ''}`);
    let child: ChildProcess;
    try {
      child = spawn(command, args, { cwd, env: env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    } catch (e) {
      this.fail(`could not start ${command}: ${e}`);
      return;
    }
    this.child = child;
    let spawnError: Error | undefined;
    let gone = false;
    // 'exit' may not fire after a spawn error (ENOENT): both paths end here, once.
    const onGone = (code: number | null, signal: NodeJS.Signals | null) => {
      if (gone || gen !== this.generation) return;
      gone = true;
      this.conn?.dispose();
      this.conn = undefined;
      this.child = undefined;
      const why = spawnError
        ? (spawnError as NodeJS.ErrnoException).code === 'ENOENT'
          ? `${command} not found (set agentd.daemonPath or put agentd on the PATH)`
          : spawnError.message
        : `exited with ${signal ?? `code ${code}`}`;
      this.log(`agentd ${why}`);
      if (this.stopping) {
        this.setState('stopped');
        return;
      }
      this.lastError = why;
      this.scheduleRestart(why, spawnError !== undefined);
    };
    child.on('error', (e) => {
      this.log(`process error: ${e.message}`);
      if (child.pid === undefined) {
        spawnError = e;
        onGone(null, null);
      }
    });
    child.stdin?.on('error', (e) => this.log(`stdin: ${e.message}`));
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (d: string) => {
      for (const line of d.split('\n')) if (line.trim()) this.log(`[agentd] ${line}`);
    });
    const conn = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!), {
      error: (m) => this.log(`rpc error: ${m}`),
      warn: (m) => this.log(`rpc warn: ${m}`),
      info: () => undefined,
      log: () => undefined,
    });
    this.conn = conn;
    conn.onNotification((method: string, params: unknown) => {
      for (const h of this.notificationHandlers) {
        try {
          h(method, params);
        } catch (e) {
          this.log(`handler for ${method} failed: ${e instanceof Error ? e.stack : e}`);
        }
      }
    });
    // vscode-jsonrpc consumes $/progress itself and hands tokens nobody registered here.
    conn.onUnhandledProgress((params) => {
      for (const h of this.notificationHandlers) h(Method.progress, params);
    });
    conn.onRequest((method: string, params: unknown) => {
      const h = this.requestHandlers.get(method);
      if (!h) return null;
      return h(params) ?? null;
    });
    conn.onError(([e]) => this.log(`connection error: ${e.message}`));
    if (this.opts.trace && this.opts.trace !== 'off') {
      void conn.trace(this.opts.trace === 'verbose' ? Trace.Verbose : Trace.Messages, {
        log: (m: string, data?: string) => this.log(`[trace] ${m}${data ? `\n${data}` : ''}`),
      });
    }
    conn.listen();

    child.on('exit', (code, signal) => onGone(code, signal));

    try {
      const result = await withTimeout(conn.sendRequest<InitializeResult>(Method.initialize, params), 20000, 'initialize timed out');
      if (gen !== this.generation) return;
      await conn.sendNotification(Method.initialized, {});
      this.initializeResult = result;
      const restarted = this.starts > 0;
      this.starts++;
      this.setState('ready');
      this.readyResolve?.();
      for (const h of this.readyHandlers) {
        try {
          h(result, restarted);
        } catch (e) {
          this.log(`ready handler failed: ${e}`);
        }
      }
    } catch (e) {
      if (gen !== this.generation) return;
      this.log(`initialize failed: ${e instanceof Error ? e.message : e}`);
      // The process is gone (not found, crashed): why it went is the news, not the pending
      // initialize the closed connection rejected.
      if (gone) return;
      this.lastError = `initialize failed: ${e instanceof Error ? e.message : e}`;
      child.kill();
    }
  }

  private scheduleRestart(why: string, fatal: boolean): void {
    const now = Date.now();
    const window = this.opts.crashWindowMs ?? 60000;
    this.crashes = this.crashes.filter((t) => now - t < window);
    this.crashes.push(now);
    if (fatal || this.crashes.length > (this.opts.maxCrashes ?? 5)) {
      this.fail(fatal ? why : `agentd keeps dying (${why}); run "agentd: Restart Daemon" to try again`);
      return;
    }
    const backoff = this.opts.backoffMs ?? [300, 1000, 2000, 5000, 10000];
    const delay = backoff[Math.min(this.crashes.length - 1, backoff.length - 1)];
    this.setState('restarting', `${why}; restarting in ${delay} ms`);
    this.newReadyPromise();
    this.restartTimer = setTimeout(() => void this.launch(), delay);
  }

  private fail(why: string): void {
    this.lastError = why;
    this.setState('failed', why);
    this.readyReject?.(new Error(why));
  }

  /** A fresh promise for the next ready, unless the current one is still unsettled. */
  private newReadyPromise(): void {
    if (this.ready && !this.readySettled) return;
    this.readySettled = false;
    const p = new Promise<void>((resolve, reject) => {
      this.readyResolve = () => {
        this.readySettled = true;
        resolve();
      };
      this.readyReject = (e) => {
        this.readySettled = true;
        reject(e);
      };
    });
    p.catch(() => undefined);
    this.ready = p;
  }
  private readySettled = false;

  private setState(state: DaemonState, detail?: string): void {
    this._state = state;
    for (const h of this.stateHandlers) h(state, detail);
  }

  private log(line: string): void {
    this.opts.log?.(line);
  }
}

export interface InitializeResult {
  serverInfo?: { name: string; version?: string };
  protocolVersion?: number;
  capabilities?: {
    experimental?: {
      agentd?: {
        promptKinds?: string[];
        decisions?: string[];
        policies?: string[];
        tools?: string[];
        index?: boolean;
        /** The efforts a session may choose; absent: the daemon has no per-session settings. */
        reasoningEfforts?: string[];
        /** agent/checkpoints, agent/undo and agent/rewind are served. */
        undo?: boolean;
      };
    };
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(message)), ms);
    }),
  ]);
}
