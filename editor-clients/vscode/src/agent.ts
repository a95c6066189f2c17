// The editor-side brain, free of vscode: routes the daemon's notifications into the run store and
// the request book, fills seq gaps with agent/events, and after a (re)connect brings the requests
// back (agent/pending), catches up on every unfinished run and resumes paused ones. After a window
// reload it rebuilds the conversation the panel showed from a snapshot (the run ids and prompts)
// and agent/events.

import { Rpc } from './daemon';
import {
  ErrorCode,
  EventsResult,
  IndexStatus,
  InputRequest,
  InputResolved,
  Method,
  ProgressParams,
  RunNotification,
  RunContext,
  RunParams,
  RunResult,
  SessionInfo,
  TERMINAL_STATES,
  errorCode,
} from './protocol';
import { RequestBook } from './requests';
import { Notification, RunStore, RunView, isRunNotification } from './runStore';

export interface IndexProgress {
  token?: string | number;
  active: boolean;
  title?: string;
  message?: string;
  percentage?: number;
  state?: string;
}

export interface AgentEvents {
  /** A run notification was applied (live or replayed), in seq order. */
  onRunNotification?(n: Notification, run: RunView | undefined): void;
  onIndexProgress?(p: IndexProgress): void;
  log?(line: string): void;
}

/** What the panel showed, kept across a window reload (the daemon keeps everything else). */
export interface PanelSnapshot {
  sessionId?: string;
  runs: { runId: string; sessionId: string; prompt?: string; context?: RunContext; attached?: string[] }[];
}

/** The state of a run brought back from a snapshot until its events arrive. */
export const RESTORING = 'restoring';

export class AgentController {
  currentSessionId?: string;
  index: IndexProgress = { active: false };
  private readonly catchingUp = new Map<string, Promise<void>>();

  constructor(
    private readonly rpc: Rpc,
    readonly store: RunStore,
    readonly requests: RequestBook,
    private readonly events: AgentEvents = {},
  ) {}

  /** Every notification from the daemon comes through here. */
  handleNotification(method: string, params: unknown): void {
    if (isRunNotification(method)) {
      const p = params as RunNotification;
      const outcome = this.store.apply(method, p);
      if (outcome.kind === 'applied') this.dispatch(outcome.applied);
      else if (outcome.kind === 'gap') void this.catchUp(outcome.runId);
      return;
    }
    if (method === Method.progress) this.handleProgress(params as ProgressParams);
  }

  /**
   * Asks index/status after a connect; $/progress that arrived meanwhile is newer and wins.
   * Never fails: the index is optional.
   */
  async refreshIndexStatus(): Promise<void> {
    const seen = this.progressEvents;
    try {
      const st = await this.rpc.request<IndexStatus>(Method.indexStatus, {});
      if (this.progressEvents !== seen) return;
      this.index = {
        active: st.state === 'indexing',
        state: st.state,
        percentage: st.progress !== undefined && st.progress <= 1 ? st.progress * 100 : st.progress,
        message: st.state === 'failed' ? st.error : `${st.files ?? 0} files, ${st.chunks ?? 0} chunks`,
      };
    } catch (e) {
      this.events.log?.(`index/status: ${e instanceof Error ? e.message : e}`);
    }
  }
  private progressEvents = 0;

  /** window/workDoneProgress/create: accept the token. */
  handleProgressCreate(params: { token: string | number }): null {
    this.index = { ...this.index, token: params.token };
    return null;
  }

  /** Fetches the run's notifications after the last one seen and applies them. */
  catchUp(runId: string): Promise<void> {
    const inFlight = this.catchingUp.get(runId);
    if (inFlight) return inFlight.then(() => (this.store.hasBuffered(runId) ? this.catchUp(runId) : undefined));
    const p = (async () => {
      for (let attempt = 0; attempt < 3; attempt++) {
        const run = this.store.get(runId);
        const afterSeq = run?.lastSeq ?? 0;
        const res = await this.rpc.request<EventsResult>(Method.events, { runId, afterSeq });
        const applied = this.store.applyEvents(runId, res.events ?? [], res.state, run?.sessionId);
        this.dispatch(applied);
        if (!this.store.hasBuffered(runId)) return;
      }
    })()
      .catch((e) => {
        this.events.log?.(`agent/events ${runId}: ${e instanceof Error ? e.message : e}`);
        // The daemon no longer knows the run (its state was wiped): the panel drops it.
        if (errorCode(e) === ErrorCode.UnknownRun) this.store.forget(runId);
      })
      .finally(() => this.catchingUp.delete(runId));
    this.catchingUp.set(runId, p);
    return p;
  }

  /** After every (re)connect: prompts come back, runs catch up, paused runs go on. */
  async reconnected(): Promise<void> {
    this.requests.setConnected(true);
    const tasks: Promise<unknown>[] = [];
    tasks.push(
      this.rpc
        .request<{ requests: InputRequest[] }>(Method.pending, {})
        .then((res) => this.requests.sync(res.requests ?? []))
        .catch((e) => this.events.log?.(`agent/pending: ${e instanceof Error ? e.message : e}`)),
    );
    for (const run of this.store.all()) {
      const replay = this.restored.delete(run.runId);
      if (!replay && TERMINAL_STATES.has(run.state) && !this.store.hasBuffered(run.runId)) continue;
      tasks.push(
        this.catchUp(run.runId).then(async () => {
          const r = this.store.get(run.runId);
          if (r?.state === 'paused') {
            this.events.log?.(`resuming paused run ${r.runId}`);
            await this.rpc.request(Method.resume, { runId: r.runId }).catch((e) => this.events.log?.(`agent/resume: ${e.message ?? e}`));
          }
        }),
      );
    }
    await Promise.all(tasks);
  }

  disconnected(): void {
    this.requests.setConnected(false);
  }

  /**
   * Starts a run, in the current session unless told otherwise. `shown` is the prompt as the user
   * typed it and the labels of what they attached, when the prompt sent carries more.
   */
  async run(params: RunParams, shown?: { prompt: string; attached: string[] }): Promise<RunResult> {
    const sessionId = params.sessionId ?? this.currentSessionId;
    const p: RunParams = { ...params };
    if (sessionId) p.sessionId = sessionId;
    const res = await this.rpc.request<RunResult>(Method.run, p);
    this.currentSessionId = res.sessionId;
    // Notifications may have raced ahead of the answer: the store keyed them by run.
    this.store.start(res.runId, res.sessionId, shown?.prompt ?? params.prompt, params.context, shown?.attached);
    return res;
  }

  async cancel(runId: string): Promise<void> {
    await this.rpc.request(Method.cancel, { runId });
  }

  /** The unfinished runs, newest first. */
  activeRuns(): RunView[] {
    return this.store.active().sort((a, b) => b.startedAt - a.startedAt);
  }

  async sessions(): Promise<SessionInfo[]> {
    // Params `{}`, not none: vscode-jsonrpc sends a missing params as `[null]`.
    const res = await this.rpc.request<{ sessions: SessionInfo[] }>(Method.sessions, {});
    return res.sessions ?? [];
  }

  /** Switches the panel to a session and loads its latest run from the daemon. */
  async openSession(s: SessionInfo): Promise<void> {
    this.currentSessionId = s.sessionId;
    if (s.lastRunId && !this.store.get(s.lastRunId)) {
      // The prompt of that run is not known (agent/sessions gives the session's first prompt).
      this.store.start(s.lastRunId, s.sessionId);
      await this.catchUp(s.lastRunId);
    }
  }

  newSession(): void {
    this.currentSessionId = undefined;
  }

  /** The current session's runs, oldest first. */
  currentRuns(): RunView[] {
    const sid = this.currentSessionId;
    return sid ? this.store.runsOfSession(sid).sort((a, b) => a.startedAt - b.startedAt) : [];
  }

  snapshot(): PanelSnapshot {
    return {
      sessionId: this.currentSessionId,
      runs: this.currentRuns().map((r) => ({ runId: r.runId, sessionId: r.sessionId, prompt: r.prompt, context: r.context, attached: r.attached })),
    };
  }

  /**
   * Brings back the conversation of a snapshot: each run is replayed from its first event, so the
   * panel shows it whole, and an unfinished run goes on updating. Call before the first connect.
   */
  restore(snap: PanelSnapshot | undefined): void {
    if (!snap) return;
    this.currentSessionId = snap.sessionId;
    let order = 0;
    for (const r of snap.runs ?? []) {
      if (!r?.runId || this.store.get(r.runId)) continue;
      const run = this.store.start(r.runId, r.sessionId ?? snap.sessionId ?? '', r.prompt, r.context, r.attached);
      // Replayed runs keep the snapshot's order, whatever the replay's timing.
      run.startedAt = ++order;
      run.state = RESTORING;
      this.restored.add(r.runId);
    }
  }
  private readonly restored = new Set<string>();

  private dispatch(applied: Notification[]): void {
    // Requests opened and resolved within one batch (a replay) never reach the screen.
    const resolved = new Set(applied.filter((n) => n.method === Method.inputResolved).map((n) => (n.params as InputResolved).requestId));
    for (const n of applied) {
      if (n.method === Method.inputRequest) {
        const req = n.params as InputRequest;
        if (resolved.has(req.requestId)) this.requests.resolve(req.requestId);
        else this.requests.add(req);
      } else if (n.method === Method.inputResolved) {
        this.requests.resolve((n.params as InputResolved).requestId);
      }
      this.events.onRunNotification?.(n, this.store.get(n.params.runId));
    }
  }

  private handleProgress(p: ProgressParams): void {
    if (!p?.value) return;
    this.progressEvents++;
    const v = p.value;
    if (v.kind === 'begin') this.index = { token: p.token, active: true, title: v.title, message: v.message, percentage: v.percentage };
    else if (v.kind === 'report')
      this.index = { ...this.index, token: p.token, active: true, message: v.message ?? this.index.message, percentage: v.percentage ?? this.index.percentage };
    else if (v.kind === 'end') this.index = { token: p.token, active: false, message: v.message, percentage: 100, state: 'ready' };
    this.events.onIndexProgress?.(this.index);
  }
}
