// The editor-side brain, free of vscode: routes the daemon's notifications into the run store and
// the request book, fills seq gaps with agent/events, and after a (re)connect brings the requests
// back (agent/pending), catches up on every unfinished run and resumes paused ones. The open
// session comes whole from agent/history: after a window reload (its id is all the editor keeps),
// when the user opens it from the list, and after a daemon restart.

import { Rpc } from './daemon';
import { splitPrompt } from './context';
import {
  ConfigureResult,
  ErrorCode,
  EventsParams,
  EventsResult,
  HistoryParams,
  HistoryResult,
  HistoryRun,
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
  SessionSettings,
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
  /** The open session, or what is known of it, changed (loading, settings, earlier runs). */
  onSessionChange?(view: SessionView | undefined): void;
  log?(line: string): void;
}

/** What the panel showed, kept across a window reload: the open session (the daemon keeps the rest). */
export interface PanelSnapshot {
  sessionId?: string;
}

/** The open session as the panel shows it. */
export interface SessionView {
  sessionId: string;
  /** As agent/history or agent/sessions last described it (settings included). */
  info?: SessionInfo;
  /** Its history is being fetched and none of its runs is known yet. */
  loading?: boolean;
  /** Runs before the oldest one shown, not fetched yet. */
  earlierRuns: number;
  loadingEarlier?: boolean;
  /** Why its history could not be fetched. */
  error?: string;
  /** The settings its next step uses, as far as this editor knows. */
  settings?: SessionSettings;
}

/** Events asked per agent/events request. */
export const EVENTS_PAGE = 500;
/** Runs fetched when a session opens (older ones come with "Show earlier runs"). */
export const HISTORY_AUTO_RUNS = 100;

export class AgentController {
  /** The session the panel shows; follow-up prompts continue it. */
  session?: SessionView;
  index: IndexProgress = { active: false };
  private readonly catchingUp = new Map<string, Promise<void>>();

  constructor(
    private readonly rpc: Rpc,
    readonly store: RunStore,
    readonly requests: RequestBook,
    private readonly events: AgentEvents = {},
  ) {}

  get currentSessionId(): string | undefined {
    return this.session?.sessionId;
  }

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

  /**
   * Fetches the run's notifications after the last one seen, a page at a time while the daemon
   * says more follow, and applies them.
   */
  catchUp(runId: string): Promise<void> {
    const inFlight = this.catchingUp.get(runId);
    if (inFlight) return inFlight.then(() => (this.store.hasBuffered(runId) ? this.catchUp(runId) : undefined));
    const p = (async () => {
      let retries = 0;
      for (;;) {
        const run = this.store.get(runId);
        const afterSeq = run?.lastSeq ?? 0;
        const params: EventsParams = { runId, afterSeq, limit: EVENTS_PAGE };
        const res = await this.rpc.request<EventsResult>(Method.events, params);
        const applied = this.store.applyEvents(runId, res.events ?? [], res.more ? undefined : res.state, run?.sessionId);
        this.dispatch(applied);
        const moved = (this.store.get(runId)?.lastSeq ?? 0) > afterSeq;
        if (res.more && moved) continue;
        // A gap the answer did not close (a notification sent after it was made): ask again, a few times.
        if (!this.store.hasBuffered(runId) || ++retries >= 3) return;
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

  /**
   * After every (re)connect: prompts come back, the open session is brought up to date from its
   * history, other unfinished runs catch up, and runs the restart paused go on.
   */
  async reconnected(): Promise<void> {
    this.requests.setConnected(true);
    const known = new Set(this.store.all().map((r) => r.runId));
    const sid = this.currentSessionId;
    const tasks: Promise<unknown>[] = [];
    tasks.push(
      this.rpc
        .request<{ requests: InputRequest[] }>(Method.pending, {})
        .then((res) => this.requests.sync(res.requests ?? []))
        .catch((e) => this.events.log?.(`agent/pending: ${e instanceof Error ? e.message : e}`)),
    );
    if (sid) tasks.push(this.loadSession(sid));
    for (const run of this.store.all()) {
      if (run.sessionId === sid) continue;
      if (TERMINAL_STATES.has(run.state) && !this.store.hasBuffered(run.runId)) continue;
      tasks.push(this.catchUp(run.runId));
    }
    await Promise.all(tasks);
    // A run paused by the restart goes on; one paused because its state could not be saved
    // (it says why) waits for the user's Resume.
    const paused = this.store.all().filter((r) => r.state === 'paused' && !r.error && (known.has(r.runId) || r.sessionId === sid));
    await Promise.all(
      paused.map((r) => {
        this.events.log?.(`resuming paused run ${r.runId}`);
        return this.resume(r.runId).catch((e) => this.events.log?.(`agent/resume: ${e instanceof Error ? e.message : e}`));
      }),
    );
  }

  disconnected(): void {
    this.requests.setConnected(false);
  }

  /**
   * Starts a run, in the current session unless told otherwise. `shown` is the prompt as the user
   * typed it and the labels of what they attached, when the prompt sent carries more; `settings`
   * what the run uses, as far as the editor knows (the pickers').
   */
  async run(params: RunParams, shown?: { prompt: string; attached: string[] }, settings?: SessionSettings): Promise<RunResult> {
    const sessionId = params.sessionId ?? this.currentSessionId;
    const p: RunParams = { ...params };
    if (sessionId) p.sessionId = sessionId;
    const res = await this.rpc.request<RunResult>(Method.run, p);
    if (this.session?.sessionId !== res.sessionId) this.session = { sessionId: res.sessionId, earlierRuns: 0 };
    if (settings && !this.session.settings) this.session.settings = settings;
    // Notifications may have raced ahead of the answer: the store keyed them by run.
    const run = this.store.start(res.runId, res.sessionId, shown?.prompt ?? params.prompt, params.context, shown?.attached);
    run.model = this.session.settings?.model ?? settings?.model;
    this.sessionChanged();
    return res;
  }

  async cancel(runId: string): Promise<void> {
    await this.rpc.request(Method.cancel, { runId });
  }

  /** Continues a paused run; a run that is no longer paused is left as it is. */
  async resume(runId: string): Promise<void> {
    try {
      await this.rpc.request(Method.resume, { runId });
    } catch (e) {
      if (errorCode(e) === ErrorCode.RunNotPaused) return;
      throw e;
    }
  }

  /** The unfinished runs, newest first. */
  activeRuns(): RunView[] {
    return this.store.active().sort((a, b) => b.startedAt - a.startedAt);
  }

  async sessions(): Promise<SessionInfo[]> {
    // Params `{}`, not none: vscode-jsonrpc sends a missing params as `[null]`.
    const res = await this.rpc.request<{ sessions: SessionInfo[] }>(Method.sessions, {});
    const list = res.sessions ?? [];
    const open = this.session && list.find((s) => s.sessionId === this.session!.sessionId);
    if (open) this.describe(open);
    return list;
  }

  /** Switches the panel to a session and replays its conversation from agent/history. */
  async openSession(sessionId: string, info?: SessionInfo): Promise<void> {
    if (this.session?.sessionId !== sessionId) {
      this.session = { sessionId, earlierRuns: 0, loading: this.store.runsOfSession(sessionId).length === 0 };
    }
    if (info) this.describe(info);
    this.sessionChanged();
    await this.loadSession(sessionId);
  }

  /** Brings the open session up to date from agent/history (after a rewind marked runs). */
  async reloadSession(): Promise<void> {
    const sid = this.currentSessionId;
    if (sid) await this.loadSession(sid);
  }

  /** Fetches the page of runs before the oldest one shown. */
  async loadEarlier(): Promise<void> {
    const view = this.session;
    if (!view || view.earlierRuns <= 0 || view.loadingEarlier) return;
    const oldest = this.currentRuns()[0];
    if (!oldest) return;
    view.loadingEarlier = true;
    this.sessionChanged();
    try {
      const res = await this.history({ sessionId: view.sessionId, beforeRunId: oldest.runId });
      await this.applyHistory(view.sessionId, res);
      if (this.session === view) view.earlierRuns = res.earlierRuns ?? 0;
    } catch (e) {
      if (this.session === view) view.error = `Could not load the earlier runs: ${e instanceof Error ? e.message : e}`;
    } finally {
      view.loadingEarlier = false;
      this.sessionChanged();
    }
  }

  /** agent/configure answered: the session and its unfinished run use these settings now. */
  configured(sessionId: string, result: ConfigureResult): void {
    if (this.session?.sessionId === sessionId) this.session.settings = result.settings;
    const run = result.runId ? this.store.get(result.runId) : undefined;
    if (run && result.settings?.model) run.model = result.settings.model;
    this.sessionChanged();
  }

  newSession(): void {
    this.session = undefined;
    this.sessionChanged();
  }

  /** The current session's runs, oldest first. */
  currentRuns(): RunView[] {
    const sid = this.currentSessionId;
    return sid ? this.store.runsOfSession(sid).sort((a, b) => a.startedAt - b.startedAt) : [];
  }

  snapshot(): PanelSnapshot {
    return { sessionId: this.currentSessionId };
  }

  /**
   * Brings back the session the panel showed before a window reload: its id only; the first
   * connect replays it with agent/history. Call before the first connect.
   */
  restore(snap: PanelSnapshot | undefined): void {
    if (!snap?.sessionId || typeof snap.sessionId !== 'string') return;
    this.session = { sessionId: snap.sessionId, earlierRuns: 0, loading: true };
  }

  /**
   * Brings the session's latest runs up to date from agent/history; when none of its runs were
   * known, pages back while earlier runs remain (up to HISTORY_AUTO_RUNS).
   */
  private async loadSession(sessionId: string): Promise<void> {
    const view = this.session?.sessionId === sessionId ? this.session : undefined;
    const oldestKnown = this.store.runsOfSession(sessionId).sort((a, b) => a.startedAt - b.startedAt)[0];
    try {
      const res = await this.history({ sessionId });
      const pageHasOldest = !oldestKnown || res.runs.some((r) => r.runId === oldestKnown.runId);
      await this.applyHistory(sessionId, res);
      if (!view || this.session !== view) return;
      view.error = undefined;
      if (pageHasOldest) view.earlierRuns = res.earlierRuns ?? 0;
      view.loading = false;
      this.sessionChanged();
      for (let loaded = res.runs.length; !oldestKnown && view.earlierRuns > 0 && loaded < HISTORY_AUTO_RUNS && this.session === view; ) {
        const before = this.currentRuns().length;
        await this.loadEarlier();
        const got = this.currentRuns().length - before;
        if (got <= 0) break;
        loaded += got;
      }
    } catch (e) {
      this.events.log?.(`agent/history ${sessionId}: ${e instanceof Error ? e.message : e}`);
      if (!view || this.session !== view) return;
      view.error =
        errorCode(e) === ErrorCode.UnknownSession
          ? 'agentd no longer knows this session (its state directory was changed or wiped).'
          : `Could not load this conversation: ${e instanceof Error ? e.message : e}`;
    } finally {
      if (view) view.loading = false;
      this.sessionChanged();
    }
  }

  private history(params: HistoryParams): Promise<HistoryResult> {
    return this.rpc.request<HistoryResult>(Method.history, params);
  }

  /** Shows a page of history: each run's prompt, its events as if they had just arrived, its open requests. */
  private async applyHistory(sessionId: string, res: HistoryResult): Promise<void> {
    if (this.session?.sessionId === sessionId && res.session) this.describe(res.session);
    const rest: Promise<void>[] = [];
    for (const hr of res.runs ?? []) {
      this.applyHistoryRun(sessionId, hr);
      if (hr.moreEvents) rest.push(this.catchUp(hr.runId));
    }
    for (const req of res.pending ?? []) this.requests.add(req);
    await Promise.all(rest);
  }

  private applyHistoryRun(sessionId: string, hr: HistoryRun): void {
    const known = this.store.get(hr.runId);
    // A run started in this window keeps the prompt as typed and the chips of what went along.
    const split = splitPrompt(hr.prompt ?? '', hr.context);
    const run = this.store.start(hr.runId, sessionId, known?.prompt ?? split.text, known?.context ?? hr.context, known?.attached ?? split.attached);
    const t = Date.parse(hr.createdAt);
    if (!Number.isNaN(t)) run.startedAt = t;
    if (hr.settings?.model) run.model = hr.settings.model;
    if (hr.usage && !run.usage) run.usage = hr.usage;
    run.rewound = hr.rewound || undefined;
    const applied = this.store.applyEvents(hr.runId, hr.events ?? [], hr.moreEvents ? undefined : hr.state, sessionId);
    if (!hr.events?.length && !hr.moreEvents && run.lastSeq === 0) {
      run.state = hr.state;
      run.stopReason = hr.stopReason;
      run.error = hr.error;
      if (hr.answer && !run.resultText) run.resultText = hr.answer;
    }
    this.dispatch(applied);
  }

  /** Takes what the daemon says of the open session (title, run count, settings). */
  private describe(info: SessionInfo): void {
    if (!this.session || this.session.sessionId !== info.sessionId) return;
    this.session.info = info;
    if (info.settings) this.session.settings = info.settings;
  }

  private sessionChanged(): void {
    this.events.onSessionChange?.(this.session);
  }

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
