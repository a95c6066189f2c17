// The state of every run this editor knows, built from the run notifications (agent/update,
// agent/inputRequest, agent/inputResolved, agent/runState) in seq order. No vscode import.
//
// Every run notification carries a seq that rises by exactly one per run. The store applies a
// notification only when it is the next one; a duplicate (seq already seen) is dropped, and one
// that comes after a gap is buffered until agent/events fills the gap (the caller asks for
// `afterSeq: lastSeq` when apply reports a gap).

import {
  DiagnosticsReport,
  ImageRef,
  Fetched,
  FileDiff,
  InputRequest,
  InstructionFile,
  InputResolved,
  Method,
  PlanEntry,
  RunContext,
  RunEvent,
  RunNotification,
  RunStateParams,
  Subagent,
  TERMINAL_STATES,
  UpdateParams,
  Usage,
} from './protocol';

export interface ToolCallView {
  toolCallId: string;
  title: string;
  toolKind?: string;
  status: string;
  input?: unknown;
  /** The full output, from the call's final update. */
  output?: string;
  /**
   * While a command runs: its output so far, from the `outputDelta` pieces; only the last
   * LIVE_OUTPUT_MAX characters are kept. Dropped when an update brings the full `output`.
   */
  liveOutput?: string;
  /** How many characters from the front of the streamed output liveOutput no longer holds. */
  liveOutputOmitted?: number;
  isError?: boolean;
  truncated?: boolean;
  exitCode?: number;
  durationMs?: number;
  files?: FileDiff[];
  locations?: { path: string; line?: number }[];
  /** The input request this call waited on (a question, or the approval of a write or command). */
  requestId?: string;
  /** The call changed the workspace: its checkpoint, which agent/undo takes back. */
  checkpoint?: string;
  /** The diagnostics of the files its reply changed (after the reply's last edit). */
  diagnostics?: DiagnosticsReport;
  /** What a web fetch got: the URL it ended at, its status and size. */
  fetched?: Fetched;
  /** A task call: the subagent it started, how it stands, and its own work, shown under the call. */
  subagent?: SubagentView;
}

/** A subagent as its task call shows it. */
export interface SubagentView {
  runId: string;
  description: string;
  /** Its own state (running, requires_action, completed, failed, cancelled …), as it last said. */
  state?: string;
  stopReason?: string;
  error?: string;
  usage?: Usage;
  /** The files it read (the task call's last update). */
  read?: string[];
  /**
   * Its own updates, reduced as a run's: its tool calls keyed by its own ids, its words. Its
   * requests are its parent's (they come in the parent run): `work.requests` is the parent's.
   */
  work: RunView;
}

/** An input request as the run shows it: what was asked, and once resolved, how it ended. */
export interface RequestView extends Omit<Partial<InputRequest>, 'kind'> {
  requestId: string;
  kind: string;
  title: string;
  message: string;
  /** Set once agent/inputResolved arrived. */
  outcome?: string;
  by?: string;
}

export type TimelineItem =
  | { type: 'text'; text: string }
  /** The model's streamed reasoning: shown folded, never sent back to it. */
  | { type: 'thinking'; text: string }
  | { type: 'tool'; toolCallId: string }
  | { type: 'request'; requestId: string }
  /** Something agentd itself tells the user (a warning about the setup), not the model's answer. */
  | { type: 'notice'; text: string }
  /** The user's words added to the run while it worked (agent/steer), with the pictures that went along. */
  | { type: 'steer'; text: string; images?: ImageRef[] };

export interface RunView {
  runId: string;
  sessionId: string;
  prompt?: string;
  context?: RunContext;
  /** The labels of what the user attached (files, Problems, terminal text …), for the panel. */
  attached?: string[];
  lastSeq: number;
  state: string;
  stopReason?: string;
  error?: string;
  /** Why a paused run is paused (agent/runState's pauseReason). */
  pauseReason?: string;
  plan?: { explanation?: string; entries: PlanEntry[] };
  timeline: TimelineItem[];
  tools: Record<string, ToolCallView>;
  requests: Record<string, RequestView>;
  filesChanged?: FileDiff[];
  usage?: Usage;
  resultText?: string;
  /** The instruction files the model was given during this run, each once, in the order they came. */
  instructions?: InstructionFile[];
  /** The model the run uses (as far as this editor knows: its history, or the picker's at start). */
  model?: string;
  /** What the model is doing now, for progress messages. */
  activity?: string;
  /** When the run started (ms since the epoch): the order the conversation shows runs in. */
  startedAt: number;
  /** A rewind cut it from the conversation (agent/history says so). */
  rewound?: boolean;
  /** The prompt's images as the model got them (agent/run's answer, agent/history). */
  images?: ImageRef[];
}

export interface Notification {
  method: string;
  params: RunNotification;
}

export type ApplyOutcome =
  /** Applied; `applied` lists it and any buffered notifications it made contiguous, in seq order. */
  | { kind: 'applied'; applied: Notification[] }
  /** Already seen. */
  | { kind: 'duplicate' }
  /** Buffered: the run is missing notifications after `lastSeq`; fetch them with agent/events. */
  | { kind: 'gap'; runId: string; lastSeq: number };

const RUN_METHODS: ReadonlySet<string> = new Set([Method.update, Method.inputRequest, Method.inputResolved, Method.runState]);

export function isRunNotification(method: string): boolean {
  return RUN_METHODS.has(method);
}

export class RunStore {
  private readonly runs = new Map<string, RunView>();
  private readonly buffered = new Map<string, Map<number, Notification>>();
  private readonly listeners: ((run: RunView) => void)[] = [];

  onDidChange(listener: (run: RunView) => void): { dispose(): void } {
    this.listeners.push(listener);
    return { dispose: () => this.listeners.splice(this.listeners.indexOf(listener), 1) };
  }

  get(runId: string): RunView | undefined {
    return this.runs.get(runId);
  }

  all(): RunView[] {
    return [...this.runs.values()];
  }

  runsOfSession(sessionId: string): RunView[] {
    return this.all().filter((r) => r.sessionId === sessionId);
  }

  /** Runs that have not finished. */
  active(): RunView[] {
    return this.all().filter((r) => !TERMINAL_STATES.has(r.state));
  }

  /** Records a run the editor started (before its first notification). */
  start(runId: string, sessionId: string, prompt?: string, context?: RunContext, attached?: string[]): RunView {
    const run = this.ensure(runId, sessionId);
    if (prompt !== undefined) run.prompt = prompt;
    if (context !== undefined) run.context = context;
    if (attached?.length) run.attached = attached;
    this.emit(run);
    return run;
  }

  /** Drops a run from the store (e.g. when the panel switches sessions). */
  forget(runId: string): void {
    this.runs.delete(runId);
    this.buffered.delete(runId);
  }

  /** Applies one live notification. */
  apply(method: string, params: RunNotification): ApplyOutcome {
    const run = this.ensure(params.runId, params.sessionId);
    const seq = params.seq;
    if (typeof seq !== 'number' || seq <= run.lastSeq) return { kind: 'duplicate' };
    if (seq > run.lastSeq + 1) {
      let buf = this.buffered.get(run.runId);
      if (!buf) this.buffered.set(run.runId, (buf = new Map()));
      buf.set(seq, { method, params });
      return { kind: 'gap', runId: run.runId, lastSeq: run.lastSeq };
    }
    const applied: Notification[] = [];
    this.reduce(run, method, params);
    applied.push({ method, params });
    this.drain(run, applied);
    this.emit(run);
    return { kind: 'applied', applied };
  }

  /**
   * Applies the result of agent/events. Returns the notifications applied, in seq order
   * (including buffered ones the events made contiguous).
   */
  applyEvents(runId: string, events: RunEvent[], state?: string, sessionId?: string): Notification[] {
    const applied: Notification[] = [];
    const sorted = [...events].sort((a, b) => a.seq - b.seq);
    let run = this.runs.get(runId);
    for (const ev of sorted) {
      const params = { ...(ev.params as RunNotification) };
      if (params.runId === undefined) params.runId = runId;
      if (params.seq === undefined) params.seq = ev.seq;
      run = this.ensure(runId, params.sessionId ?? sessionId ?? run?.sessionId ?? '');
      if (params.seq <= run.lastSeq) continue;
      if (params.seq > run.lastSeq + 1) {
        // A hole even in the replay: keep it buffered rather than skip.
        let buf = this.buffered.get(runId);
        if (!buf) this.buffered.set(runId, (buf = new Map()));
        buf.set(params.seq, { method: ev.method, params });
        continue;
      }
      this.reduce(run, ev.method, params);
      applied.push({ method: ev.method, params });
      this.drain(run, applied);
    }
    run = run ?? this.runs.get(runId);
    if (run && state && state !== run.state && !this.hasBuffered(runId)) {
      // The events are authoritative; the state given alongside covers a run that has no
      // notifications at all yet.
      run.state = state;
    }
    if (run) this.emit(run);
    return applied;
  }

  hasBuffered(runId: string): boolean {
    return (this.buffered.get(runId)?.size ?? 0) > 0;
  }

  private drain(run: RunView, applied: Notification[]): void {
    const buf = this.buffered.get(run.runId);
    if (!buf) return;
    for (;;) {
      const next = buf.get(run.lastSeq + 1);
      if (!next) break;
      buf.delete(run.lastSeq + 1);
      this.reduce(run, next.method, next.params);
      applied.push(next);
    }
    for (const seq of [...buf.keys()]) if (seq <= run.lastSeq) buf.delete(seq);
    if (buf.size === 0) this.buffered.delete(run.runId);
  }

  private ensure(runId: string, sessionId: string): RunView {
    let run = this.runs.get(runId);
    if (!run) {
      run = {
        runId,
        sessionId,
        lastSeq: 0,
        state: 'running',
        timeline: [],
        tools: {},
        requests: {},
        startedAt: Date.now(),
      };
      this.runs.set(runId, run);
    } else if (!run.sessionId && sessionId) {
      run.sessionId = sessionId;
    }
    return run;
  }

  private reduce(run: RunView, method: string, params: RunNotification): void {
    run.lastSeq = params.seq;
    switch (method) {
      case Method.runState: {
        const p = params as RunStateParams;
        run.state = p.state;
        if (p.stopReason) run.stopReason = p.stopReason;
        // The error says why the run is where it is now: a paused run that goes on again has none.
        run.error = p.error || undefined;
        run.pauseReason = p.state === 'paused' ? p.pauseReason || undefined : undefined;
        if (p.state === 'running' && !run.activity) run.activity = 'Thinking…';
        if (p.state === 'requires_action') run.activity = 'Waiting for your input';
        break;
      }
      case Method.update:
        reduceUpdate(run, (params as UpdateParams).update);
        break;
      case Method.inputRequest: {
        const r = params as InputRequest;
        const linked = r.toolCallId ? run.tools[r.toolCallId] : undefined;
        if (linked && r.subagent) linkSubagentRequest(run, linked, r);
        else if (linked) linked.requestId = r.requestId;
        else if (!run.requests[r.requestId]) run.timeline.push({ type: 'request', requestId: r.requestId });
        const { runId: _r, sessionId: _s, seq: _q, ...fields } = r;
        run.requests[r.requestId] = { ...run.requests[r.requestId], ...fields };
        run.activity = 'Waiting for your input';
        break;
      }
      case Method.inputResolved: {
        const r = params as InputResolved;
        const view = run.requests[r.requestId] ?? (run.requests[r.requestId] = { requestId: r.requestId, kind: '', title: '', message: '' });
        view.outcome = r.outcome;
        view.by = r.by;
        break;
      }
    }
  }

  private emit(run: RunView): void {
    for (const l of [...this.listeners]) l(run);
  }
}

/** How much of a running command's streamed output the store keeps (and the panel renders). */
export const LIVE_OUTPUT_MAX = 64 * 1024;

/**
 * Appends a piece of a running command's output to the tool call's live output, keeping only the
 * last `max` characters (starting at a line when one begins shortly after the cut, and never in
 * the middle of a surrogate pair) and counting what was dropped in liveOutputOmitted.
 */
export function appendLiveOutput(t: ToolCallView, piece: string, max = LIVE_OUTPUT_MAX): void {
  let text = (t.liveOutput ?? '') + piece;
  let omitted = t.liveOutputOmitted ?? 0;
  if (text.length > max) {
    let cut = text.length - max;
    const nl = text.indexOf('\n', cut);
    if (nl !== -1 && nl - cut < Math.min(1024, max / 4)) cut = nl + 1;
    else if (cut < text.length && isLowSurrogate(text.charCodeAt(cut))) cut++;
    omitted += cut;
    text = text.slice(cut);
  }
  t.liveOutput = text;
  if (omitted) t.liveOutputOmitted = omitted;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

/** The subagent of a task call, made on its first word (its work shares the parent's requests). */
function subagentOf(run: RunView, t: ToolCallView, s: Subagent): SubagentView {
  if (t.subagent) return t.subagent;
  const work: RunView = { runId: s.runId, sessionId: run.sessionId, lastSeq: 0, state: 'running', timeline: [], tools: {}, requests: run.requests, startedAt: run.startedAt };
  return (t.subagent = { runId: s.runId, description: s.description, work });
}

/** Takes what a task call's update or a subagent update says of the subagent's standing. */
function noteSubagent(sub: SubagentView, s: Subagent): void {
  if (s.description) sub.description = s.description;
  if (s.state) {
    sub.state = s.state;
    sub.work.state = s.state;
    sub.stopReason = s.stopReason;
    sub.error = s.error || undefined;
  }
  if (s.usage) sub.usage = s.usage;
  if (s.read) sub.read = s.read;
}

/** A subagent's request goes under the subagent's own call (or at its place in its work). */
function linkSubagentRequest(run: RunView, task: ToolCallView, r: InputRequest): void {
  const s = r.subagent!;
  const sub = subagentOf(run, task, s);
  const own = s.toolCallId ? sub.work.tools[s.toolCallId] : undefined;
  if (own) own.requestId = r.requestId;
  else if (!sub.work.timeline.some((i) => i.type === 'request' && i.requestId === r.requestId)) sub.work.timeline.push({ type: 'request', requestId: r.requestId });
}

function reduceUpdate(run: RunView, u: UpdateParams['update']): void {
  if (!u) return;
  switch (u.kind) {
    case 'subagent': {
      if (!u.subagent?.runId) break;
      const id = u.toolCallId ?? '';
      let t = run.tools[id];
      if (!t) {
        t = run.tools[id] = { toolCallId: id, title: `Subagent: ${u.subagent.description}`, toolKind: 'other', status: 'in_progress' };
        run.timeline.push({ type: 'tool', toolCallId: id });
      }
      const sub = subagentOf(run, t, u.subagent);
      noteSubagent(sub, u.subagent);
      if (u.subagent.update) reduceUpdate(sub.work, u.subagent.update);
      if (sub.work.activity && !TERMINAL_STATES.has(sub.state ?? 'running')) run.activity = `${sub.description}: ${sub.work.activity}`;
      break;
    }
    case 'message_chunk': {
      const last = run.timeline[run.timeline.length - 1];
      if (last && last.type === 'text') last.text += u.text ?? '';
      else run.timeline.push({ type: 'text', text: u.text ?? '' });
      run.activity = 'Writing the answer…';
      break;
    }
    case 'thought_chunk': {
      const last = run.timeline[run.timeline.length - 1];
      if (last && last.type === 'thinking') last.text += u.text ?? '';
      else run.timeline.push({ type: 'thinking', text: u.text ?? '' });
      run.activity = 'Thinking…';
      break;
    }
    case 'plan':
      run.plan = { explanation: u.explanation, entries: u.entries ?? [] };
      break;
    case 'tool_call': {
      const id = u.toolCallId ?? `tool_${run.timeline.length}`;
      if (!run.tools[id]) run.timeline.push({ type: 'tool', toolCallId: id });
      run.tools[id] = {
        ...run.tools[id],
        toolCallId: id,
        title: u.title ?? id,
        toolKind: u.toolKind,
        status: u.status ?? 'pending',
        input: u.input,
        locations: u.locations,
      };
      if (u.subagent?.runId) noteSubagent(subagentOf(run, run.tools[id], u.subagent), u.subagent);
      run.activity = activityOf(run.tools[id]);
      break;
    }
    case 'tool_call_update': {
      const id = u.toolCallId ?? '';
      let t = run.tools[id];
      if (!t) {
        t = run.tools[id] = { toolCallId: id, title: u.title ?? id, status: 'pending' };
        run.timeline.push({ type: 'tool', toolCallId: id });
      }
      if (u.status) t.status = u.status;
      if (u.title) t.title = u.title;
      if (u.outputDelta) appendLiveOutput(t, u.outputDelta);
      if (u.output !== undefined) {
        // The full output replaces what was streamed.
        t.output = u.output;
        delete t.liveOutput;
        delete t.liveOutputOmitted;
      }
      if (u.isError !== undefined) t.isError = u.isError;
      if (u.truncated !== undefined) t.truncated = u.truncated;
      if (u.exitCode !== undefined) t.exitCode = u.exitCode;
      if (u.durationMs !== undefined) t.durationMs = u.durationMs;
      if (u.files !== undefined) t.files = u.files;
      if (u.checkpoint) t.checkpoint = u.checkpoint;
      if (u.diagnostics) t.diagnostics = u.diagnostics;
      if (u.fetched) t.fetched = u.fetched;
      if (u.subagent?.runId) noteSubagent(subagentOf(run, t, u.subagent), u.subagent);
      if (u.status === 'in_progress') run.activity = activityOf(t);
      break;
    }
    case 'usage':
      if (u.usage) run.usage = u.usage;
      break;
    case 'files_changed':
      run.filesChanged = u.files ?? [];
      break;
    case 'result':
      run.resultText = u.text;
      if (u.stopReason) run.stopReason = u.stopReason;
      break;
    case 'instructions': {
      const list = (run.instructions ??= []);
      for (const f of u.instructions ?? []) {
        if (!f?.path) continue;
        const i = list.findIndex((x) => x.path === f.path);
        if (i >= 0) list[i] = f;
        else list.push(f);
      }
      break;
    }
    case 'notice':
      if (u.text?.trim()) run.timeline.push({ type: 'notice', text: u.text });
      break;
    case 'steer':
      if (u.text?.trim() || u.images?.length) run.timeline.push({ type: 'steer', text: u.text ?? '', ...(u.images?.length ? { images: u.images } : {}) });
      break;
  }
}

/** What a run is doing while a call runs; a command line is not repeated (its row shows it). */
function activityOf(t: ToolCallView): string {
  if (t.toolKind === 'execute') return 'Running a command…';
  if (t.title === 'Ask the user') return 'Asking you…';
  return `${t.title.charAt(0).toUpperCase()}${t.title.slice(1)}…`;
}

/** The text of the final answer when the model did not stream it. */
export function unstreamedResult(run: RunView): string | undefined {
  if (!run.resultText) return undefined;
  for (let i = run.timeline.length - 1; i >= 0; i--) {
    const item = run.timeline[i];
    if (item.type === 'text') return item.text.trim() ? undefined : run.resultText;
    if (item.type === 'tool') break;
  }
  return run.resultText;
}
