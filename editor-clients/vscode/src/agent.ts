// The editor-side brain, free of vscode: routes the daemon's notifications into the run store and
// the request book, fills seq gaps with agent/events, and after a (re)connect brings the requests
// back (agent/pending), catches up on every unfinished run and resumes paused ones. The open
// session comes whole from agent/history: after a window reload (its id is all the editor keeps),
// when the user opens it from the list, and after a daemon restart.

import { Rpc } from './daemon';
import { splitPrompt } from './context';
import {
  CompactResult,
  ConfigureResult,
  ContextUse,
  ErrorCode,
  EventsParams,
  EventsResult,
  HistoryParams,
  HistoryResult,
  HistoryRun,
  ImageData,
  ImageInput,
  IndexStatus,
  InputRequest,
  InputResolved,
  Method,
  ProcessInfo,
  ProcessResult,
  ProgressParams,
  RunNotification,
  RunContext,
  RunParams,
  RunResult,
  SessionInfo,
  SessionSettings,
  TERMINAL_STATES,
  UpdateParams,
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
  /** An MCP server's state changed (mcp/changed): the list is worth asking again. */
  onMcpChanged?(): void;
  /** The open session, or what is known of it, changed (loading, settings, earlier runs). */
  onSessionChange?(view: SessionView | undefined): void;
  log?(line: string): void;
}

/** What the panel showed, kept across a window reload: the conversations open (the daemon keeps the rest). */
export interface PanelSnapshot {
  sessionId?: string;
  /** Conversations open beside the shown one, in their order. */
  tabs?: string[];
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
  /** How full the model's context window is (the last `context` update, or agent/context). */
  context?: ContextUse;
}

/** A conversation open in the panel, as its tab shows it. */
export interface TabView {
  /** Undefined for a new conversation nothing was asked in yet. */
  sessionId?: string;
  title: string;
  active: boolean;
  /** A run of it is working (or paused). */
  busy: boolean;
  /** Requests of it wait for the user. */
  waiting: number;
}

/**
 * A run the daemon paused because it stopped mid-step, which the editor resumes by itself: the
 * daemon says so (pauseReason), or, before it did, gave no reason at all.
 */
export function pausedByRestart(r: Pick<RunView, 'pauseReason' | 'error'>): boolean {
  return r.pauseReason === 'restart' || (!r.pauseReason && !r.error);
}

/** The number in a process id ("p12" → 12), for the list's order. */
function procNumber(id: string): number {
  const n = Number(id.replace(/^\D+/, ''));
  return Number.isFinite(n) ? n : 0;
}

/** Conversations open at once, at most (the oldest idle one closes; the session list keeps it). */
export const MAX_TABS = 6;

/** Events asked per agent/events request. */
export const EVENTS_PAGE = 500;
/** Runs fetched when a session opens (older ones come with "Show earlier runs"). */
export const HISTORY_AUTO_RUNS = 100;

export class AgentController {
  /** The session the panel shows; follow-up prompts continue it. */
  session?: SessionView;
  /**
   * The conversations open, one tab each, in their order; the shown one (`session`) is among them.
   * `undefined` is the new conversation nothing was asked in yet (one at most).
   */
  private tabs: (SessionView | undefined)[] = [undefined];
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
    else if (method === Method.mcpChanged) this.events.onMcpChanged?.();
    else if (method === Method.processChanged) {
      const p = (params as ProcessResult)?.process;
      if (p?.id && p.sessionId) {
        this.noteProcess(p);
        this.sessionChanged();
      }
    }
  }

  /** Every session's background processes this editor heard of: by session, then by id. */
  private readonly procs = new Map<string, Map<string, ProcessInfo>>();

  /** A session's background processes, oldest first (as agent/processes lists them). */
  processesOf(sessionId: string | undefined): ProcessInfo[] {
    const list = sessionId ? [...(this.procs.get(sessionId)?.values() ?? [])] : [];
    return list.sort((a, b) => a.startedAt.localeCompare(b.startedAt) || procNumber(a.id) - procNumber(b.id));
  }

  /** How many background processes run, in every session this editor heard of. */
  runningProcesses(): number {
    let n = 0;
    for (const byId of this.procs.values()) for (const p of byId.values()) if (p.state === 'running') n++;
    return n;
  }

  /** Stops a background process (the panel's stop button); agentd answers it as it is now. */
  async stopProcess(sessionId: string, id: string): Promise<ProcessInfo> {
    const res = await this.rpc.request<ProcessResult>(Method.stopProcess, { sessionId, id });
    if (res?.process) this.noteProcess(res.process);
    this.sessionChanged();
    return res.process;
  }

  /**
   * Takes a process as agentd describes it. An ended one stays ended: a list asked before it
   * ended (agent/history) can arrive after the notification that said so.
   */
  private noteProcess(p: ProcessInfo, listed = false): void {
    let byId = this.procs.get(p.sessionId);
    if (!byId) this.procs.set(p.sessionId, (byId = new Map()));
    const known = byId.get(p.id);
    if (listed && known && known.state !== 'running' && p.state === 'running') return;
    byId.set(p.id, p);
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
    if (sid) tasks.push(this.loadSession(sid).then(() => this.refreshContext(sid)));
    const tabbed = new Set(this.tabs.map((t) => t?.sessionId).filter((id): id is string => !!id && id !== sid));
    for (const id of tabbed) tasks.push(this.loadSession(id));
    for (const run of this.store.all()) {
      if (run.sessionId === sid || tabbed.has(run.sessionId)) continue;
      if (TERMINAL_STATES.has(run.state) && !this.store.hasBuffered(run.runId)) continue;
      tasks.push(this.catchUp(run.runId));
    }
    await Promise.all(tasks);
    // A run paused by the restart goes on; one paused because its state could not be saved
    // (it says why) waits for the user's Resume.
    const paused = this.store.all().filter((r) => r.state === 'paused' && pausedByRestart(r) && (known.has(r.runId) || r.sessionId === sid || tabbed.has(r.sessionId)));
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
  async run(params: RunParams, shown?: { prompt: string; attached: string[] }, settings?: SessionSettings, opts?: { background?: boolean }): Promise<RunResult> {
    const sessionId = opts?.background ? params.sessionId : (params.sessionId ?? this.currentSessionId);
    const p: RunParams = { ...params };
    if (sessionId) p.sessionId = sessionId;
    const res = await this.rpc.request<RunResult>(Method.run, p);
    // A run of its own (an inline edit) does not take the panel.
    let view = this.viewOf(res.sessionId);
    if (!opts?.background && this.session?.sessionId !== res.sessionId) {
      view ??= { sessionId: res.sessionId, earlierRuns: 0 };
      this.show(view, true);
    }
    if (view && settings && !view.settings) view.settings = settings;
    // Notifications may have raced ahead of the answer: the store keyed them by run.
    const run = this.store.start(res.runId, res.sessionId, shown?.prompt ?? params.prompt, params.context, shown?.attached);
    run.model = view?.settings?.model ?? settings?.model;
    if (res.images?.length) run.images = res.images;
    this.sessionChanged();
    return res;
  }

  /**
   * The user's words for the shown conversation's unfinished run, while it works (agent/steer); a
   * run that ended meanwhile gets them as the next prompt instead. Resolves with what happened.
   */
  async steer(text: string, images?: ImageInput[]): Promise<'steered' | 'asked'> {
    const run = this.unfinishedRun();
    const pictures = images?.length ? { images } : {};
    if (run) {
      try {
        await this.rpc.request(Method.steer, { runId: run.runId, text, ...pictures });
        return 'steered';
      } catch (e) {
        if (errorCode(e) !== ErrorCode.RunFinished) throw e;
      }
    }
    await this.run({ prompt: text, ...pictures });
    return 'asked';
  }

  /** The shown conversation's latest run, while it is not over (working, waiting, paused, queued). */
  unfinishedRun(): RunView | undefined {
    const runs = this.currentRuns().filter((r) => !TERMINAL_STATES.has(r.state));
    return runs.find((r) => r.state !== 'queued') ?? runs[0];
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

  async sessions(query?: string): Promise<SessionInfo[]> {
    // Params `{}`, not none: vscode-jsonrpc sends a missing params as `[null]`.
    const q = query?.trim();
    const res = await this.rpc.request<{ sessions: SessionInfo[] }>(Method.sessions, q ? { query: q } : {});
    const list = res.sessions ?? [];
    const open = this.session && list.find((s) => s.sessionId === this.session!.sessionId);
    if (open) this.describe(open);
    return list;
  }

  /**
   * Shows a session and replays its conversation from agent/history. A conversation open in a tab
   * comes to the front; another replaces the one shown (which stays open in its tab when `keep`).
   */
  async openSession(sessionId: string, info?: SessionInfo, keep = true): Promise<void> {
    if (this.session?.sessionId !== sessionId) {
      const open = this.viewOf(sessionId);
      if (open) {
        this.show(open, false);
        this.sessionChanged();
        return;
      }
      this.show({ sessionId, earlierRuns: 0, loading: this.store.runsOfSession(sessionId).length === 0 }, !keep);
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

  /** A new conversation, in front; the one shown stays open in its tab. */
  newSession(): void {
    if (!this.tabs.includes(undefined)) this.tabs.push(undefined);
    this.session = undefined;
    this.trimTabs();
    this.sessionChanged();
  }

  /**
   * Shows a conversation: one open already comes to the front; another gets a tab after the one
   * shown, or takes its place (`replace`, and always for the new conversation's blank tab).
   */
  private show(view: SessionView, replace: boolean): void {
    if (!this.tabs.includes(view)) {
      const at = this.tabs.indexOf(this.session);
      if (at < 0) this.tabs.push(view);
      else if (replace || this.session === undefined) this.tabs[at] = view;
      else this.tabs.splice(at + 1, 0, view);
    }
    this.session = view;
    this.trimTabs();
  }

  /** At most MAX_TABS open: the oldest that neither works nor waits closes (it stays in the list). */
  private trimTabs(): void {
    while (this.tabs.length > MAX_TABS) {
      const idle = this.tabs.findIndex((t) => t !== this.session && t !== undefined && !this.tabOf(t, false).busy && !this.tabOf(t, false).waiting);
      if (idle < 0) return;
      this.tabs.splice(idle, 1);
    }
  }

  /** The conversations open, in their tab order. */
  openTabs(): TabView[] {
    return this.tabs.map((v) => this.tabOf(v, v === this.session));
  }

  private tabOf(v: SessionView | undefined, active: boolean): TabView {
    if (!v) return { title: 'New conversation', active, busy: false, waiting: 0 };
    const runs = this.store.runsOfSession(v.sessionId);
    const first = runs.sort((a, b) => a.startedAt - b.startedAt)[0];
    const title = v.info?.title || first?.prompt?.split('\n')[0] || 'Conversation';
    const waiting = this.requests.list().filter((o) => o.req.sessionId === v.sessionId).length;
    return { sessionId: v.sessionId, title, active, busy: runs.some((r) => !TERMINAL_STATES.has(r.state)), waiting };
  }

  /** Closes a conversation's tab (its runs go on in agentd); the shown one gives way to the last tab. */
  closeTab(sessionId: string | undefined): void {
    const at = this.tabs.findIndex((t) => t?.sessionId === sessionId);
    if (at < 0) return;
    const [gone] = this.tabs.splice(at, 1);
    if (!this.tabs.length) this.tabs.push(undefined);
    if (gone === this.session) this.session = this.tabs[Math.max(0, at - 1)];
    this.sessionChanged();
  }

  /** Renames a session; its tab and the list say so at once. */
  async renameSession(sessionId: string, title: string): Promise<SessionInfo> {
    const res = await this.rpc.request<{ session: SessionInfo }>(Method.renameSession, { sessionId, title });
    const view = this.viewOf(sessionId);
    if (view) view.info = res.session;
    this.sessionChanged();
    return res.session;
  }

  /** Deletes a session in agentd; its runs leave the store and its tab closes. */
  async deleteSession(sessionId: string): Promise<void> {
    await this.rpc.request(Method.deleteSession, { sessionId });
    for (const r of this.store.runsOfSession(sessionId)) this.store.forget(r.runId);
    if (this.viewOf(sessionId)) this.closeTab(sessionId);
    else this.sessionChanged();
  }

  /** A stored image's bytes (agent/image), to show a conversation's pictures again. */
  image(id: string): Promise<ImageData> {
    return this.rpc.request<ImageData>(Method.image, { id });
  }

  /** Asks agentd how full the shown session's context window is. Never fails. */
  async refreshContext(sessionId = this.currentSessionId): Promise<void> {
    if (!sessionId) return;
    try {
      const use = await this.rpc.request<ContextUse>(Method.context, { sessionId });
      this.noteContext(sessionId, use);
      this.sessionChanged();
    } catch (e) {
      this.events.log?.(`agent/context: ${e instanceof Error ? e.message : e}`);
    }
  }

  /** Compacts the shown session now; the meter follows. */
  async compact(): Promise<CompactResult | undefined> {
    const sid = this.currentSessionId;
    if (!sid) return undefined;
    const res = await this.rpc.request<CompactResult>(Method.compact, { sessionId: sid });
    await this.refreshContext(sid);
    return res;
  }

  /** The current session's runs, oldest first. */
  currentRuns(): RunView[] {
    const sid = this.currentSessionId;
    return sid ? this.store.runsOfSession(sid).sort((a, b) => a.startedAt - b.startedAt) : [];
  }

  snapshot(): PanelSnapshot {
    const tabs = this.tabs.map((t) => t?.sessionId).filter((id): id is string => !!id);
    return tabs.length > 1 ? { sessionId: this.currentSessionId, tabs } : { sessionId: this.currentSessionId };
  }

  /**
   * Brings back the session the panel showed before a window reload: its id only; the first
   * connect replays it with agent/history. Call before the first connect.
   */
  restore(snap: PanelSnapshot | undefined): void {
    const ids = Array.isArray(snap?.tabs) ? snap.tabs.filter((id): id is string => typeof id === 'string' && !!id) : [];
    const shown = typeof snap?.sessionId === 'string' && snap.sessionId ? snap.sessionId : undefined;
    if (shown && !ids.includes(shown)) ids.push(shown);
    this.tabs = ids.map((sessionId) => ({ sessionId, earlierRuns: 0, loading: true }));
    if (!shown) this.tabs.push(undefined);
    this.session = this.tabs.find((t) => t?.sessionId === shown);
  }

  /**
   * Brings the session's latest runs up to date from agent/history; when none of its runs were
   * known, pages back while earlier runs remain (up to HISTORY_AUTO_RUNS).
   */
  private async loadSession(sessionId: string): Promise<void> {
    const view = this.viewOf(sessionId);
    const oldestKnown = this.store.runsOfSession(sessionId).sort((a, b) => a.startedAt - b.startedAt)[0];
    try {
      const res = await this.history({ sessionId });
      const pageHasOldest = !oldestKnown || res.runs.some((r) => r.runId === oldestKnown.runId);
      for (const p of res.processes ?? []) this.noteProcess(p, true);
      await this.applyHistory(sessionId, res);
      if (!view || this.viewOf(sessionId) !== view) return;
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
      if (!view || this.viewOf(sessionId) !== view) return;
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
    // The session as it is now wins over the settings updates its runs replayed.
    if (this.session?.sessionId === sessionId && res.session) this.describe(res.session);
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
    if (hr.images?.length && !run.images) run.images = hr.images;
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
    const view = this.viewOf(info.sessionId);
    if (!view) return;
    view.info = info;
    if (info.settings) view.settings = info.settings;
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
      const u = n.method === Method.update ? (n.params as UpdateParams).update : undefined;
      if (u?.kind === 'context') this.noteContext(n.params.sessionId, u.context);
      // The session's settings changed in the run (an approved plan moves it to the mode picked).
      if (u?.kind === 'settings' && u.settings) this.noteSettings(n.params.sessionId, u.settings);
      this.events.onRunNotification?.(n, this.store.get(n.params.runId));
    }
  }

  private noteSettings(sessionId: string, settings: SessionSettings): void {
    const view = this.viewOf(sessionId);
    if (!view) return;
    view.settings = settings;
    if (view.info) view.info = { ...view.info, settings };
    this.sessionChanged();
  }

  private noteContext(sessionId: string, use: ContextUse | undefined): void {
    if (!use) return;
    const view = this.viewOf(sessionId);
    if (view) view.context = use;
  }

  /** The view of an open conversation (shown or a tab). */
  private viewOf(sessionId: string): SessionView | undefined {
    if (this.session?.sessionId === sessionId) return this.session;
    return this.tabs.find((t) => t?.sessionId === sessionId);
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
