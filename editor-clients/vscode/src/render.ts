// Renders the conversation panel's HTML from the run store and the open requests. No vscode
// import: the unit tests check the markup. The model's markdown goes through markdown-it with raw
// HTML disabled, so nothing the model writes can inject markup or script.
//
// Everything the agent asks is answered here, inline, where it was asked: a question has its
// answer field, a choice its buttons, a write its diff and decisions, a command its line, folder
// and the rule that asked. A request that belongs to a tool call is drawn inside that call's row,
// so a command line is shown once. Decisions the user took read as decisions, never as failures.

import MarkdownIt from 'markdown-it';
import { DiagnosticsReport, FileDiff, InputRequest, InstructionFile, McpServer, ProcessInfo, SessionInfo, TERMINAL_STATES, UndoResult } from './protocol';
import { KNOWN_KINDS, OpenRequest } from './requests';
import { RequestView, RunView, SubagentView, ToolCallView, unstreamedResult } from './runStore';
import type { UndoView } from './undo';
import type { RulesState } from './rules';
import type { TabView } from './agent';
import { decisionsOf, isAllow, mcpStateName, outcomeText, plural, profileText, ruleActionName, ruleScopeName, ruleToolName, runStateName, stopReasonText, whenText } from './words';

const md = new MarkdownIt({ html: false, linkify: true, breaks: false });

export interface PanelState {
  sessionId?: string;
  runs: RunView[];
  /** Every open request, across runs and sessions. */
  open: OpenRequest[];
  daemon: { state: string; detail?: string };
  /** What the user answered, by request (never a secret). */
  answers?: Record<string, string>;
  /** Writes whose proposed content the user edited (Accept sends their version). */
  edited?: Record<string, boolean>;
  /** The user's version of an edited write, as a diff of the file. */
  editedDiffs?: Record<string, string>;
  /** Changes open in the diff editor as they come (agentd.review.openDiff). */
  autoDiff?: boolean;
  /** The session list, when the panel shows it: found by `query`, one being renamed or deleted. */
  sessions?: { list?: SessionInfo[]; error?: string; query?: string; renaming?: string; deleting?: string; failed?: string };
  /** The conversations open (tabs). */
  tabs?: TabView[];
  /** The open session's loading state. */
  session?: { loading?: boolean; earlierRuns?: number; loadingEarlier?: boolean; error?: string };
  /** For the session list's times (tests fix it). */
  now?: Date;
  /** Undo and rewind can be offered: the daemon serves them and no run of the session is going. */
  canUndo?: boolean;
  /** The undo or rewind being previewed or done. */
  undo?: UndoView;
  /** Checkpoints undone since, and by which undo. */
  undone?: Record<string, string>;
  /** The MCP servers view, when the panel shows it. */
  mcp?: { list?: McpServer[]; error?: string; loading?: boolean };
  /** The rules view, when the panel shows it. */
  rules?: RulesState;
  /** The shown conversation's background processes, oldest first. */
  processes?: ProcessInfo[];
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

const esc = escapeHtml;

export function renderMarkdown(text: string): string {
  return md.render(text);
}

const PLAN_ICONS: Record<string, string> = { pending: '○', in_progress: '◐', completed: '✓', failed: '✗' };
// Plain symbols rather than emoji: they render with the editor's fonts on every platform.
const TOOL_ICONS: Record<string, string> = { read: '▤', edit: '✎', search: '⌕', execute: '▶', fetch: '⇣', think: '…', other: '⚙' };
const KIND_ICONS: Record<string, string> = { question: '?', choice: '☰', secret: '✱', confirm_write: '✎', confirm_command: '▶' };

export function renderDiff(diff: string): string {
  const lines = diff.replace(/\n$/, '').split('\n');
  return `<pre class="diff">${lines
    .map((l) => {
      const cls = l.startsWith('+++') || l.startsWith('---') ? 'meta' : l.startsWith('@@') ? 'hunk' : l.startsWith('+') ? 'add' : l.startsWith('-') ? 'del' : 'ctx';
      return `<span class="${cls}">${esc(l)}</span>`;
    })
    .join('\n')}</pre>`;
}

/** Lines added and removed by a unified diff. */
export function diffStat(diff: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const l of diff.split('\n')) {
    if (l.startsWith('+++') || l.startsWith('---')) continue;
    if (l.startsWith('+')) added++;
    else if (l.startsWith('-')) removed++;
  }
  return { added, removed };
}

/** A file run later outside any sandbox (.vscode/tasks.json, .envrc …): said where the file is named. */
function runsLater(f: FileDiff): string {
  return f.runsLater ? ` <span class="runs-later" title="${esc(f.runsLater)}">⚠ runs later, outside the sandbox</span>` : '';
}

function statHtml(diff: string): string {
  const { added, removed } = diffStat(diff ?? '');
  return `<span class="stat"><span class="stat-add">+${added}</span> <span class="stat-del">−${removed}</span></span>`;
}

function renderFiles(files: FileDiff[], idPrefix: string, open = false): string {
  return files
    .map(
      (f, i) =>
        `<details class="file" data-id="${esc(`${idPrefix}-${i}`)}"${open ? ' open' : ''}><summary><span class="fstatus fstatus-${esc(f.status)}">${esc(
          (f.status || '?').charAt(0).toUpperCase(),
        )}</span> ${esc(f.path)} ${statHtml(f.diff)}${runsLater(f)}</summary>${renderDiff(f.diff ?? '')}</details>`,
    )
    .join('');
}

// ---- tool rows ------------------------------------------------------------------------------

const KEY_ARGS = ['command', 'path', 'file', 'pattern', 'query', 'glob', 'dir'];

/** The argument that says what a call is about (its command, path, pattern …). */
export function keyArgument(input: unknown): string | undefined {
  if (!input || typeof input !== 'object') return undefined;
  const rec = input as Record<string, unknown>;
  for (const k of KEY_ARGS) if (typeof rec[k] === 'string' && rec[k]) return rec[k] as string;
  return undefined;
}

/** A URL as a row says it: its host and path, without the scheme, shortened in the middle. */
export function shortUrl(url: string): string {
  const s = url.replace(/^https?:\/\//, '').replace(/\/$/, '');
  return s.length > 60 ? `${s.slice(0, 40)}…${s.slice(-17)}` : s;
}

/** Bytes as people read them: 912 B, 12 KB, 3.4 MB. */
export function byteSize(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${Math.round(n / 1024)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

function sentenceCase(s: string): string {
  return s ? s.charAt(0).toUpperCase() + s.slice(1) : s;
}

function duration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(ms < 10000 ? 1 : 0)} s`;
}

/** The short facts after a call's title: how it went, and what it gave. */
export function toolFacts(t: ToolCallView, req?: RequestView, waiting = false): { status: string; tone: string; facts: string[] } {
  const facts: string[] = [];
  let status: string;
  let tone: string;
  if (req?.outcome && !isAllow(req.outcome) && req.outcome !== 'answered') {
    const o = outcomeText(req.outcome, req.by, req.kind);
    status = o.text;
    tone = o.tone;
  } else if (waiting) {
    status = 'waiting for you';
    tone = 'waiting';
  } else if (t.status === 'pending') {
    status = 'about to run';
    tone = 'neutral';
  } else if (t.status === 'in_progress') {
    status = 'running';
    tone = 'neutral';
  } else if (t.status === 'failed' || t.isError) {
    status = 'failed';
    tone = 'error';
  } else {
    status = 'done';
    tone = 'ok';
  }
  const out = t.output ?? t.liveOutput;
  if (t.exitCode !== undefined && t.exitCode !== 0) facts.push(`exit ${t.exitCode}`);
  if (t.fetched) {
    // The page as fetched: where it ended (after redirects), how big, what went wrong.
    const f = t.fetched;
    facts.push(shortUrl(f.url));
    if (f.status >= 400) facts.push(`HTTP ${f.status}`);
    facts.push(`${byteSize(f.bytes)}${f.cut ? ', cut at 10 MB' : ''}`);
    if (t.status === 'failed' || t.isError) return { status, tone, facts };
    return { status, tone, facts: t.durationMs !== undefined && t.durationMs >= 1000 ? [...facts, duration(t.durationMs)] : facts };
  }
  if (t.files?.length) {
    const s = t.files.map((f) => diffStat(f.diff ?? '')).reduce((a, b) => ({ added: a.added + b.added, removed: a.removed + b.removed }), { added: 0, removed: 0 });
    facts.push(`+${s.added} −${s.removed}`);
  } else if (out && tone !== 'declined' && tone !== 'neutral') {
    facts.push(plural(out.replace(/\n$/, '').split('\n').length, 'line'));
  }
  if (t.durationMs !== undefined && t.durationMs >= 1000) facts.push(duration(t.durationMs));
  if (t.truncated) facts.push('shortened for the model');
  return { status, tone, facts };
}

/** Calls that only exist to carry something shown elsewhere (the plan, a question). */
function isCarrier(t: ToolCallView, req?: RequestView): boolean {
  if (t.toolKind === 'think' && t.status !== 'failed') return true;
  return !!req && (req.kind === 'question' || req.kind === 'choice' || req.kind === 'secret') && t.toolKind !== 'execute';
}

function renderTool(run: RunView, t: ToolCallView, ctx: RenderContext): string {
  if (t.subagent) return renderTask(run, t, t.subagent, ctx);
  const req = t.requestId ? run.requests[t.requestId] : undefined;
  const open = req ? ctx.open.get(req.requestId) : undefined;
  if (isCarrier(t, req)) return req ? renderRequest(req, open, ctx) : '';
  const live = t.output === undefined && t.liveOutput !== undefined;
  const running = live && t.status === 'in_progress';
  const id = esc(`${run.runId}-${t.toolCallId}`);
  const { status, tone, facts } = toolFacts(t, req, !!open);
  const execute = t.toolKind === 'execute';
  const arg = keyArgument(t.input);
  const cmd = execute ? (typeof (t.input as { command?: unknown })?.command === 'string' ? (t.input as { command: string }).command : t.title) : undefined;
  const title = execute
    ? `<code class="cmdline">$ ${esc(cmd ?? '')}</code>`
    : `<span class="tool-title">${esc(sentenceCase(t.title))}</span>${arg && !t.title.includes(arg) ? ` <code class="key-arg">${esc(arg)}</code>` : ''}`;
  const body: string[] = [];
  if (req) body.push(renderRequest(req, open, ctx, true));
  if (!execute && t.toolKind === 'other' && t.input !== undefined && !arg) {
    body.push(`<details class="args" data-id="${id}-args"><summary>Arguments</summary><pre class="tool-input">${esc(formatInput(t.input))}</pre></details>`);
  }
  if (live) {
    const omitted = t.liveOutputOmitted
      ? `<div class="output-omitted">… ${t.liveOutputOmitted.toLocaleString('en-US')} earlier characters not shown${running ? '; the full output comes when the command ends' : ''}</div>`
      : '';
    body.push(`${omitted}<pre class="tool-output${running ? ' tool-output-live' : ''}" data-id="${id}-out">${esc(t.liveOutput!)}</pre>`);
  } else if (t.output !== undefined && t.output !== '' && !(tone === 'declined' || tone === 'neutral')) {
    body.push(`<pre class="tool-output">${esc(t.output)}</pre>`);
  }
  if (t.files?.length) body.push(renderFiles(t.files, `${run.runId}-${t.toolCallId}-f`));
  const expandable = body.length > 0;
  const proc = execute ? ctx.processByCall.get(t.toolCallId) : undefined;
  const diag = (proc ? processBadge(proc) : '') + (t.diagnostics ? renderDiagnostics(t.diagnostics, id) : '');
  const startOpen = running || !!open;
  const summary = `<span class="icon">${TOOL_ICONS[t.toolKind ?? 'other'] ?? TOOL_ICONS.other}</span> ${title} <span class="tool-status tone-${tone}">${esc(status)}</span>${
    facts.length ? ` <span class="tool-facts">${esc(facts.join(' · '))}</span>` : ''
  }${checkpointHtml(run, t, ctx)}`;
  if (!expandable) return `<div class="tool tool-${esc(t.status)} tone-${tone}" data-tool="${id}">${summary}</div>${diag}`;
  return `<details class="tool tool-${esc(t.status)} tone-${tone}" data-tool="${id}" data-id="${id}"${running ? ' data-live' : ''}${open ? ' data-waiting' : ''}${startOpen ? ' open' : ''}>
<summary>${summary}</summary>
<div class="tool-body">${body.join('\n')}</div>
</details>${diag}`;
}

const SUBAGENT_STATUS: Record<string, [string, string]> = {
  running: ['working', 'neutral'],
  requires_action: ['waiting for you', 'waiting'],
  paused: ['paused', 'waiting'],
  completed: ['done', 'ok'],
  failed: ['failed', 'error'],
  cancelled: ['stopped', 'declined'],
};

/**
 * A task call: the subagent's description, how it stands, its tokens and the files it read, a stop
 * button while it works; under it, the subagent's own calls, words and questions as they come.
 */
function renderTask(run: RunView, t: ToolCallView, sub: SubagentView, ctx: RenderContext): string {
  const id = esc(`${run.runId}-${t.toolCallId}`);
  // The call's end is the subagent's, whatever it last said of itself.
  const ended = t.status === 'completed' || t.status === 'failed';
  const state = ended && !TERMINAL_STATES.has(sub.state ?? '') ? (t.status === 'failed' ? 'failed' : 'completed') : (sub.state ?? 'running');
  const busy = !TERMINAL_STATES.has(state);
  // A question of it is open: it waits for the user, whatever its last state update said.
  const waiting = Object.keys(sub.work.tools).some((k) => {
    const r = sub.work.tools[k].requestId;
    return !!r && ctx.open.has(r);
  }) || sub.work.timeline.some((i) => i.type === 'request' && ctx.open.has(i.requestId));
  const [status, tone] = SUBAGENT_STATUS[busy && waiting ? 'requires_action' : state] ?? [state, 'neutral'];
  const facts: string[] = [];
  if (sub.usage?.totalTokens) facts.push(`${sub.usage.totalTokens.toLocaleString('en-US')} tokens`);
  if (sub.read?.length) facts.push(`read ${plural(sub.read.length, 'file')}`);
  if (t.durationMs !== undefined && t.durationMs >= 1000) facts.push(duration(t.durationMs));
  const stop = busy
    ? ` <button class="link sub-stop" data-action="cancelRun" data-run="${esc(sub.runId)}" title="Stop this subagent alone: the agent is told it was stopped">■ Stop</button>`
    : '';
  const summary = `<span class="icon">◇</span> <span class="tool-title">Subagent</span> <span class="subagent-desc">${esc(sub.description || t.title)}</span> <span class="tool-status tone-${tone}">${esc(status)}</span>${
    facts.length ? ` <span class="tool-facts">${esc(facts.join(' · '))}</span>` : ''
  }${stop}`;
  const body: string[] = [];
  const prompt = (t.input as { prompt?: unknown } | undefined)?.prompt;
  if (typeof prompt === 'string' && prompt.trim()) body.push(`<details class="args" data-id="${id}-task"><summary>Its task</summary><div class="md">${renderMarkdown(prompt)}</div></details>`);
  const work: string[] = [];
  if (sub.work.plan?.entries.length) work.push(planHtml(sub.work.plan));
  renderTimeline(sub.work, { ...ctx, processByCall: new Map(), canUndo: ctx.canUndo && !run.rewound, turnRunId: run.runId }, work);
  if (work.length) body.push(`<div class="subagent-work">${work.join('\n')}</div>`);
  const said = sub.work.timeline.some((i) => i.type === 'text' && i.text.trim());
  if (!said && t.output) body.push(`<pre class="tool-output">${esc(t.output)}</pre>`);
  if (sub.error && !busy) body.push(`<div class="run-error">${esc(sub.error)}</div>`);
  const open = busy || waiting;
  return `<details class="tool task tool-${esc(t.status)} tone-${tone}" data-tool="${id}" data-id="${id}" data-subagent="${esc(sub.runId)}"${waiting ? ' data-waiting' : ''}${open ? ' open' : ''}>
<summary>${summary}</summary>
<div class="tool-body">${body.join('\n')}</div>
</details>`;
}

/**
 * What the language servers said after the reply's edits, under its last edit: a summary ("1 new
 * error · gopls") that opens to the problems, each a link to its place; what the model read on demand.
 */
export function renderDiagnostics(d: DiagnosticsReport, id: string): string {
  const items = d.items ?? [];
  const errors = items.filter((i) => i.severity === 'error').length;
  const warnings = items.filter((i) => i.severity === 'warning').length;
  const parts: string[] = [];
  if (errors) parts.push(plural(errors, 'error'));
  if (warnings) parts.push(plural(warnings, 'warning'));
  const counted = parts.length ? parts.join(', ') : 'no problems';
  const fresh = d.new ? ` (${d.new} new)` : '';
  const who = d.servers?.length ? ` · ${d.servers.join(', ')}` : '';
  const tone = d.new ? (errors ? 'error' : 'waiting') : 'ok';
  const rows = items.map(
    (i) =>
      `<li class="diag diag-${esc(i.severity)}${i.new ? ' diag-new' : ''}"><button class="link" data-action="openFile" data-path="${esc(i.path)}" data-line="${i.line}" data-column="${i.column}">${esc(
        `${i.path}:${i.line}:${i.column}`,
      )}</button> <span class="diag-sev">${esc(i.severity)}</span> ${esc(i.message)}${i.source ? ` <span class="desc">${esc(i.source)}${i.code ? ` ${esc(i.code)}` : ''}</span>` : ''}${i.new ? ' <span class="diag-badge">new</span>' : ''}</li>`,
  );
  const more: string[] = [];
  if (d.omitted) more.push(`${plural(d.omitted, 'more problem')} not listed`);
  if (d.quiet) more.push(`${plural(d.quiet, 'hint')} and infos not listed`);
  const notes = [...more, ...(d.notes ?? [])].map((n) => `<div class="request-facts">${esc(n)}</div>`).join('');
  return `<details class="diagnostics tone-${tone}" data-id="${id}-diag"${d.new ? ' open' : ''}><summary><span class="icon">${errors ? '⨯' : warnings ? '⚠' : '✓'}</span> After the edits: ${esc(
    counted + fresh + who,
  )}</summary>${rows.length ? `<ul class="diag-list">${rows.join('')}</ul>` : ''}${notes}<details class="diag-model" data-id="${id}-diag-text"><summary>What the model read</summary><pre>${esc(d.text)}</pre></details></details>`;
}

/** A change's checkpoint: undone since (by which undo), or the way back to before it. */
function checkpointHtml(run: RunView, t: ToolCallView, ctx: RenderContext): string {
  if (!t.checkpoint) return '';
  const undone = ctx.undone[t.checkpoint];
  if (undone) return ` <span class="undone" title="An undo since put these files back as they were before this change">undone</span>`;
  if (!ctx.canUndo || run.rewound) return '';
  // A subagent's change is its parent's turn's: the preview shows under the parent's run.
  return ` <button class="link restore" data-action="undoCheckpoint" data-run="${esc(ctx.turnRunId ?? run.runId)}" data-checkpoint="${esc(t.checkpoint)}" title="Put the files back as they were before this change and every later one; you see what changes first">Restore to here</button>`;
}

function formatInput(input: unknown): string {
  if (typeof input === 'string') return input;
  try {
    return JSON.stringify(input, null, 2);
  } catch {
    return String(input);
  }
}

// ---- background processes -------------------------------------------------------------------

/** How a background process stands, in words: "running", "exited 1", "stopped by you", "lost …". */
export function processStateText(p: ProcessInfo): string {
  switch (p.state) {
    case 'running':
      return 'running';
    case 'exited':
      return p.exitCode ? `exited ${p.exitCode}` : 'exited';
    case 'stopped':
      return p.stoppedBy === 'user' ? 'stopped by you' : p.stoppedBy === 'model' ? 'stopped by the agent' : p.stoppedBy === 'agentd' ? 'stopped by agentd' : 'stopped';
    case 'lost':
      return 'lost when agentd restarted';
    default:
      return p.state;
  }
}

function clock(iso: string | undefined): string | undefined {
  const t = iso ? new Date(iso) : undefined;
  return t && !Number.isNaN(t.getTime()) ? t.toLocaleTimeString('en-GB') : undefined;
}

function stopButton(p: ProcessInfo): string {
  return p.state === 'running'
    ? ` <button class="link proc-stop" data-action="stopProcess" data-session="${esc(p.sessionId)}" data-process="${esc(p.id)}" title="Stop ${esc(p.id)} and everything it started">■ Stop</button>`
    : '';
}

/** Under the run_cmd call that started a background process: its id, how it stands, a stop button. */
function processBadge(p: ProcessInfo): string {
  const running = p.state === 'running';
  const what = running ? `running in the background (${p.id})` : `background process ${p.id}: ${processStateText(p)}`;
  return `<div class="proc-badge proc-${esc(p.state)}" data-proc="${esc(p.id)}"><span class="proc-dot">${running ? '●' : '○'}</span> ${esc(what)}${stopButton(p)}</div>`;
}

/** The conversation's background processes: the running ones with a stop button, ended ones greyed. */
export function renderProcesses(list: ProcessInfo[]): string {
  const running = list.filter((p) => p.state === 'running').length;
  const rows = list.map((p) => {
    const facts: string[] = [processStateText(p)];
    const started = clock(p.startedAt);
    if (started) facts.push(`started ${started}`);
    if (p.state !== 'running' && clock(p.endedAt)) facts.push(`ended ${clock(p.endedAt)}`);
    if (p.output) facts.push(`${byteSize(p.output)} of output`);
    if (p.cwd && p.cwd !== '.') facts.push(`in ${p.cwd}`);
    return `<li class="proc proc-${esc(p.state)}" data-proc="${esc(p.id)}"><span class="proc-dot">${p.state === 'running' ? '●' : '○'}</span> <span class="proc-id">${esc(p.id)}</span> <code class="cmdline">${esc(
      p.command,
    )}</code> <span class="proc-facts">${esc(facts.join(' · '))}</span>${stopButton(p)}</li>`;
  });
  const head = running ? `Background processes (${running} running)` : 'Background processes';
  return `<details class="processes" data-id="processes" open><summary>${esc(head)}</summary><ul class="proc-list">${rows.join('')}</ul></details>`;
}

// ---- requests -------------------------------------------------------------------------------

interface RenderContext {
  open: Map<string, OpenRequest>;
  answers: Record<string, string>;
  edited: Record<string, boolean>;
  editedDiffs: Record<string, string>;
  autoDiff: boolean;
  canUndo: boolean;
  undone: Record<string, string>;
  undo?: UndoView;
  /** Background processes by the run_cmd call that started them. */
  processByCall: Map<string, ProcessInfo>;
  /** Inside a subagent's card: the parent run, whose turn the subagent's changes belong to. */
  turnRunId?: string;
}

function decisionButtons(req: RequestView, edited: boolean): string {
  const id = esc(req.requestId);
  const decisions = decisionsOf(req);
  const described = (d: string) => req.options?.find((o) => o.optionId === d)?.description;
  // Running without the sandbox is offered apart from the usual answers, with what it means.
  const full = decisions.find((d) => d.decision === 'allow_full');
  const allows = decisions.filter((d) => isAllow(d.decision) && d.decision !== 'allow_full');
  const rejects = decisions.filter((d) => !isAllow(d.decision));
  const unconfined = req.kind === 'confirm_command' && req.profile === 'full';
  const buttons = allows.map((d, i) => {
    const tip = described(d.decision);
    // Where the command cannot be confined, allowing it is running it with the user's rights: said so.
    const label = i === 0 && edited ? 'Accept my version' : unconfined && d.decision === 'allow_once' ? 'Run without the sandbox' : d.label;
    return `<button class="${i === 0 ? (unconfined ? 'warning' : 'primary') : 'secondary'}" data-action="confirm" data-request="${id}" data-decision="${esc(d.decision)}"${
      tip ? ` title="${esc(tip)}"` : ''
    }>${esc(label)}</button>`;
  });
  if (rejects.length) buttons.push(`<button class="secondary" data-action="rejectForm" data-request="${id}">Reject…</button>`);
  const reject = rejects.length
    ? `<div class="reject-form" data-toggle="${id}-reject" hidden>
<input type="text" class="reason" data-field="${id}-reason" data-request="${id}" placeholder="Why not? The agent reads this (optional)" aria-label="Reason for rejecting">
${rejects.map((d) => `<button class="${d.decision === 'reject_once' ? 'danger' : 'secondary'}" data-action="reject" data-request="${id}" data-decision="${esc(d.decision)}">${esc(d.label)}</button>`).join(' ')}
</div>`
    : '';
  const fullRow = full
    ? `<div class="full-access"><button class="warning" data-action="confirm" data-request="${id}" data-decision="allow_full">${esc(full.label)}</button> <span class="full-why">${esc(
        described('allow_full') ?? 'once, with your full rights and the network',
      )}: for a command the sandbox keeps from working (one that must write outside the workspace or reach the network). Never remembered as a rule.</span></div>`
    : '';
  return `<div class="decisions">${buttons.join(' ')}</div>${reject}${fullRow}`;
}

/** How an allowed command runs: its sandbox profile, the network, the secrets it uses. */
function confinementHtml(req: RequestView): string {
  const parts: string[] = [];
  const how = profileText(req.profile, req.network);
  if (how) parts.push(`<div class="request-facts confinement profile-${esc(req.profile!)}">${req.profile === 'full' ? '<span class="icon">⚠</span> ' : ''}${esc(how)}.</div>`);
  if (req.secrets?.length) {
    parts.push(
      `<div class="request-facts secrets">Uses ${req.secrets.length === 1 ? 'the secret' : 'the secrets'} you gave: ${req.secrets
        .map((n) => `<code>$${esc(n)}</code>`)
        .join(', ')} (the model never sees the value${req.secrets.length === 1 ? '' : 's'})</div>`,
    );
  }
  return parts.join('\n');
}

function answerControls(req: RequestView): string {
  const id = esc(req.requestId);
  if (req.kind === 'choice') {
    const opts = req.options ?? [];
    const parts: string[] = [];
    if (req.multiple) {
      parts.push(
        `<div class="choices choices-multiple">${opts
          .map(
            (o) =>
              `<label class="choice-check"><input type="checkbox" data-field="${id}-opt-${esc(o.optionId)}" data-option="${esc(o.optionId)}"${req.default === o.optionId ? ' checked' : ''}> ${esc(o.label)}${
                o.description ? ` <span class="desc">${esc(o.description)}</span>` : ''
              }</label>`,
          )
          .join('')}</div><div class="decisions"><button class="primary" data-action="replyMany" data-request="${id}">Send</button></div>`,
      );
    } else {
      parts.push(
        `<div class="choices">${opts
          .map(
            (o) =>
              `<button class="choice${req.default === o.optionId ? ' primary' : ' secondary'}" data-action="choose" data-request="${id}" data-option="${esc(o.optionId)}"${
                o.description ? ` title="${esc(o.description)}"` : ''
              }>${esc(o.label)}</button>`,
          )
          .join(' ')}</div>`,
      );
    }
    if (req.allowOther) {
      parts.push(
        `<div class="answer-row"><input type="text" class="answer-text" data-field="${id}-text" data-request="${id}" data-submit="reply" placeholder="Other: type your own answer" aria-label="Your own answer"><button class="secondary" data-action="reply" data-request="${id}">Send</button></div>`,
      );
    }
    return parts.join('');
  }
  const secret = req.kind === 'secret';
  const value = !secret && req.default ? ` value="${esc(req.default)}"` : '';
  return `<div class="answer-row"><input type="${secret ? 'password' : 'text'}" class="answer-text" data-field="${id}-text" data-request="${id}" data-submit="reply"${value} placeholder="${
    secret ? 'The value goes to the command only; the model never sees it' : 'Your answer'
  }" aria-label="Your answer"><button class="primary" data-action="reply" data-request="${id}">Send</button></div>`;
}

/**
 * One request: open, with what answers it; or resolved, with how it ended. `nested` when drawn
 * inside its tool call's row (the row already shows the command line or the file).
 */
function renderRequest(req: RequestView, open: OpenRequest | undefined, ctx: RenderContext, nested = false): string {
  const id = esc(req.requestId);
  const icon = `<span class="icon">${KIND_ICONS[req.kind] ?? '?'}</span>`;
  const isConfirm = req.kind === 'confirm_write' || req.kind === 'confirm_command';
  const question = req.kind === 'question' || req.kind === 'choice' || req.kind === 'secret';
  // A command the model runs in the shell belongs to its call and has a folder; an MCP tool's call
  // has no folder, and the start of a .mcp.json server belongs to no call: they say what they are.
  const shell = req.kind === 'confirm_command' && !!req.toolCallId && req.cwd !== undefined && req.cwd !== null;
  const head = question
    ? `${icon} <span class="request-message">${esc(req.message)}</span>`
    : req.kind === 'confirm_command'
      ? `${icon} <span class="request-title">${shell ? (nested ? 'Run this command?' : 'Run a command?') : `${esc(req.title || 'Allow this?')}${req.title?.endsWith('?') ? '' : '?'}`}</span>`
      : `${icon} <span class="request-title">${esc(nested ? 'Apply this change?' : req.title)}</span>`;
  if (!open) {
    if (!req.outcome) return '';
    const o = outcomeText(req.outcome, req.by, req.kind);
    const said = req.outcome === 'answered' && ctx.answers[req.requestId] !== undefined ? `: ${ctx.answers[req.requestId]}` : '';
    if (nested) return '';
    const what = question ? esc(req.message) : esc(req.title);
    return `<div class="request request-done tone-${o.tone}" data-request="${id}">${fromSubagent(req)}<span class="icon">${KIND_ICONS[req.kind] ?? '?'}</span> <span class="request-message">${what}</span> <span class="request-outcome">— ${esc(
      o.text,
    )}${esc(said)}</span></div>`;
  }
  const parts: string[] = [`<div class="request request-open kind-${esc(req.kind)}${open.sending ? ' sending' : ''}" data-request="${id}" tabindex="-1">`];
  parts.push(`<div class="request-head">${fromSubagent(req)}${head}</div>`);
  if (req.context) parts.push(`<div class="request-context">${esc(req.context)}</div>`);
  if (req.kind === 'confirm_command' && !shell) {
    // What agentd says of it (the MCP server, what the tool claims), then what would run.
    if (req.message) parts.push(`<div class="request-context request-why">${esc(req.message)}</div>`);
    // The call's tool and arguments, or the server's command line: the row does not show them.
    if (req.command) parts.push(`<pre class="cmdline">${esc(req.command)}</pre>`);
  } else if (req.kind === 'confirm_command' || (question && req.command)) {
    if (!nested && req.command) parts.push(`<pre class="cmdline">$ ${esc(req.command)}</pre>`);
    parts.push(`<div class="request-facts">in <code>${esc(req.cwd && req.cwd !== '' ? req.cwd : '.')}</code>${req.cwd === '.' || !req.cwd ? ' (the workspace folder)' : ''}</div>`);
  }
  if (req.kind === 'confirm_command') parts.push(confinementHtml(req));
  if (req.kind === 'confirm_write') parts.push(renderWriteFiles(req, ctx));
  const generic = !KNOWN_KINDS.has(req.kind);
  if (generic) parts.push(genericBody(req));
  if (isConfirm && req.rule) parts.push(`<div class="request-facts rule">Asked because: ${esc(req.rule)}</div>`);
  if (req.expiresAt) parts.push(`<div class="request-facts">Waits until ${esc(new Date(req.expiresAt).toLocaleTimeString())}</div>`);
  parts.push(generic ? genericControls(req) : isConfirm ? decisionButtons(req, !!ctx.edited[req.requestId]) : answerControls(req));
  if (open.sending) parts.push('<div class="request-note">Sending…</div>');
  if (open.error) parts.push(`<div class="request-error">${esc(open.error)}</div>`);
  parts.push('</div>');
  return parts.join('\n');
}

/** Who asks, when a subagent does: its description, so a question is never taken for the agent's own. */
function fromSubagent(req: RequestView): string {
  const s = req.subagent;
  return s ? `<span class="request-from" title="A subagent the agent started asks this">Subagent · ${esc(s.description || s.runId)}</span> ` : '';
}

/** A kind the panel has no view of its own for: its message whole (markdown), its command, its diff. */
function genericBody(req: RequestView): string {
  const parts: string[] = [];
  if (req.message) parts.push(`<div class="request-body md">${renderMarkdown(req.message)}</div>`);
  if (req.command) parts.push(`<pre class="cmdline">${esc(req.command)}</pre>`);
  if (req.diff?.length) parts.push(renderFiles(req.diff, `${req.requestId}-g`, req.diff.length === 1));
  return parts.join('');
}

/**
 * The generic form's answers: its options (check boxes when several may be picked), and its text —
 * an answer of its own, or what goes with some of the options (a rejection's reason, feedback on a
 * plan), asked for as they are picked.
 */
function genericControls(req: RequestView): string {
  const id = esc(req.requestId);
  const opts = req.options ?? [];
  const input = req.input;
  const field = input
    ? input.multiline && !input.secret
      ? `<textarea class="answer-text generic-text" data-field="${id}-text" data-request="${id}" rows="3" placeholder="${esc(input.label)}${input.required ? '' : ' (optional)'}" aria-label="${esc(input.label)}"></textarea>`
      : `<input type="${input.secret ? 'password' : 'text'}" class="answer-text generic-text" data-field="${id}-text" data-request="${id}" data-submit="genericSend" placeholder="${esc(input.label)}${
          input.required ? '' : ' (optional)'
        }" aria-label="${esc(input.label)}">`
    : '';
  const parts: string[] = [];
  if (req.multiple && opts.length) {
    parts.push(
      `<div class="choices choices-multiple">${opts
        .map((o) => `<label class="choice-check"><input type="checkbox" data-field="${id}-opt-${esc(o.optionId)}" data-option="${esc(o.optionId)}"> ${esc(o.label)}${o.description ? ` <span class="desc">${esc(o.description)}</span>` : ''}</label>`)
        .join('')}</div>`,
    );
    if (field) parts.push(`<div class="answer-row">${field}</div>`);
    parts.push(`<div class="decisions"><button class="primary" data-action="genericMany" data-request="${id}">Send</button></div>`);
    return parts.join('');
  }
  if (field && input?.with?.length) parts.push(`<div class="answer-row">${field}</div>`);
  if (opts.length) {
    parts.push(
      `<div class="decisions">${opts
        .map(
          (o, i) =>
            `<button class="${i === 0 ? 'primary' : 'secondary'}" data-action="genericPick" data-request="${id}" data-option="${esc(o.optionId)}"${o.description ? ` title="${esc(o.description)}"` : ''}>${esc(o.label)}</button>`,
        )
        .join(' ')}</div>`,
    );
  }
  if (field && !input?.with?.length) {
    parts.push(`<div class="answer-row">${field}<button class="${opts.length ? 'secondary' : 'primary'}" data-action="genericSend" data-request="${id}">Send</button></div>`);
  }
  return parts.join('');
}

function renderWriteFiles(req: RequestView, ctx: RenderContext): string {
  const id = esc(req.requestId);
  const files = req.diff ?? [];
  const editable = files.length === 1 && files[0].newText !== undefined && files[0].status !== 'deleted';
  const rows = files.map(
    (f, i) =>
      `<div class="write-file"><span class="fstatus fstatus-${esc(f.status)}">${esc((f.status || '?').charAt(0).toUpperCase())}</span> <span class="path">${esc(f.path)}</span> ${statHtml(
        f.diff,
      )}${f.runsLater ? `<div class="request-facts runs-later-why">⚠ ${esc(f.runsLater)}</div>` : ''} <button class="link" data-action="openDiff" data-request="${id}" data-index="${i}">Open diff</button>${
        editable ? ` <button class="link" data-action="edit" data-request="${id}">Edit before accepting</button>` : ''
      }</div>`,
  );
  // Once the user changed the proposal (in the diff editor), the change shown is theirs.
  const mine = ctx.edited[req.requestId] ? ctx.editedDiffs[req.requestId] : undefined;
  const shown = mine !== undefined ? [mine] : files.map((f) => f.diff ?? '');
  const summary = mine !== undefined ? `Your version ${statHtml(mine)}` : 'Proposed change';
  const diffs = `<details class="inline-diff${mine !== undefined ? ' inline-diff-edited' : ''}" data-id="${id}-diff"${shown.length === 1 && shown[0].split('\n').length <= 40 ? ' open' : ''}><summary>${summary}</summary>${shown
    .map((d) => (d ? renderDiff(d) : '<div class="empty">No change left: accepting writes nothing new.</div>'))
    .join('')}</details>`;
  const edited = ctx.edited[req.requestId] ? '<div class="request-note edited">You edited the proposed content: accepting writes your version.</div>' : '';
  const auto = `<label class="auto-diff" title="Changes agentd proposes open in VS Code's diff editor, where each hunk can be accepted or rejected"><input type="checkbox" data-action="autoDiff"${
    ctx.autoDiff ? ' checked' : ''
  }> Open changes in the diff editor as they come</label>`;
  return `<div class="write-files">${rows.join('')}</div>${diffs}${edited}${auto}`;
}

// ---- runs -----------------------------------------------------------------------------------

/** A run's words, calls and requests, in the order they came (a subagent's work too, under its call). */
function renderTimeline(run: RunView, ctx: RenderContext, parts: string[]): void {
  run.timeline.forEach((item, i) => {
    if (item.type === 'text') {
      if (item.text.trim()) parts.push(`<div class="answer md">${renderMarkdown(item.text)}</div>`);
    } else if (item.type === 'thinking') {
      const streaming = i === run.timeline.length - 1 && run.state === 'running';
      if (item.text.trim()) parts.push(renderThinking(item.text, `${run.runId}-think-${i}`, streaming));
    } else if (item.type === 'notice') {
      parts.push(`<div class="notice" role="note"><span class="icon">ⓘ</span> ${esc(item.text)}</div>`);
    } else if (item.type === 'steer') {
      parts.push(`<div class="steer" title="Your words, given to the model at its next step"><span class="icon">›</span> ${esc(item.text)}${item.images?.length ? imagesHtml(item.images) : ''}</div>`);
    } else if (item.type === 'tool') {
      const t = run.tools[item.toolCallId];
      if (t) parts.push(renderTool(run, t, ctx));
    } else {
      const r = run.requests[item.requestId];
      if (r) parts.push(renderRequest(r, ctx.open.get(r.requestId), ctx));
    }
  });
}

/** A run's plan (a subagent's too): its steps with how each stands. */
function planHtml(plan: NonNullable<RunView['plan']>): string {
  const parts = ['<div class="plan"><div class="label">Plan</div>'];
  if (plan.explanation) parts.push(`<div class="plan-explanation">${esc(plan.explanation)}</div>`);
  parts.push('<ul>');
  for (const e of plan.entries) parts.push(`<li class="step step-${esc(e.status)}"><span class="step-icon">${PLAN_ICONS[e.status] ?? '○'}</span> ${esc(e.content)}</li>`);
  parts.push('</ul></div>');
  return parts.join('\n');
}

function renderRun(run: RunView, ctx: RenderContext): string {
  const parts: string[] = [];
  parts.push(`<section class="run state-${esc(run.state)}${run.rewound ? ' rewound' : ''}" data-run="${esc(run.runId)}">`);
  if (run.prompt !== undefined) {
    parts.push(`<div class="prompt"><div class="prompt-text">${esc(run.prompt)}</div>`);
    const chips = run.attached?.length
      ? run.attached
      : [
          ...(run.context?.selection ? [`${run.context.selection.path}:${run.context.selection.startLine}–${run.context.selection.endLine}`] : []),
          ...(run.context?.files ?? []).filter((f) => f !== run.context?.selection?.path),
        ];
    if (chips.length) parts.push(`<div class="context">${chips.map((c) => `<span class="chip">${esc(c)}</span>`).join(' ')}</div>`);
    if (run.images?.length) {
      // The picture itself comes from the webview's cache (filled from agent/image): the HTML stays small.
      parts.push(imagesHtml(run.images));
    }
    parts.push('</div>');
  } else {
    parts.push('<div class="prompt prompt-unknown">A run started from another window or client</div>');
  }
  if (run.plan && run.plan.entries.length) parts.push(planHtml(run.plan));
  if (run.instructions?.length) parts.push(renderInstructions(run.instructions));
  renderTimeline(run, ctx, parts);
  const result = unstreamedResult(run);
  if (result) parts.push(`<div class="answer md">${renderMarkdown(result)}</div>`);
  const later = (run.filesChanged ?? []).filter((f) => f.runsLater);
  if (later.length) {
    parts.push(`<div class="notice runs-later-note" role="note"><span class="icon">⚠</span> Runs later, outside the sandbox: ${later.map((f) => `<span title="${esc(f.runsLater!)}">${esc(f.path)}</span>`).join(', ')}</div>`);
  }
  if (run.filesChanged?.length) {
    parts.push(
      `<details class="files-changed" data-id="${esc(run.runId)}-files"><summary>Files changed (${run.filesChanged.length})</summary>${renderFiles(run.filesChanged, `${run.runId}-fc`)}</details>`,
    );
  }
  parts.push(renderFooter(run));
  parts.push(renderRunActions(run, ctx));
  if (ctx.undo && ctx.undo.target.runId === run.runId) parts.push(renderUndo(ctx.undo));
  parts.push('</section>');
  return parts.join('\n');
}

/** Thumbnails of a prompt's or a steer's pictures: the bytes come from the webview's cache (filled from agent/image), so the HTML stays small. */
function imagesHtml(images: NonNullable<RunView['images']>): string {
  return `<div class="prompt-images">${images
    .map(
      (im) =>
        `<figure class="prompt-image"><img data-image-id="${esc(im.id)}" alt="${esc(im.name ?? 'image')}" title="${esc(`${im.name ?? 'image'} · ${im.width}×${im.height}, ${byteSize(im.bytes)}${im.scaled ? ', scaled down for the model' : ''}`)}"><figcaption>${esc(
          im.name ?? 'image',
        )} · ${im.width}×${im.height}</figcaption></figure>`,
    )
    .join('')}</div>`;
}

function renderFooter(run: RunView): string {
  const footer: string[] = [];
  const busy = !TERMINAL_STATES.has(run.state);
  const why = stopReasonText(run.stopReason);
  footer.push(`<span class="run-state run-state-${esc(run.state)}">${busy && run.state !== 'paused' && run.state !== 'requires_action' && run.state !== 'queued' ? '<span class="spinner"></span>' : ''}${esc(runStateName(run.state))}${why ? ` (${esc(why)})` : ''}</span>`);
  if (busy && run.activity && run.state === 'running') footer.push(`<span class="activity">${esc(run.activity)}</span>`);
  if (run.model) footer.push(`<span class="model" title="the model this run uses">${esc(run.model)}</span>`);
  if (run.usage) footer.push(usageHtml(run.usage));
  if (run.rewound) footer.push('<span class="rewound-note" title="A rewind cut this run from the conversation: the agent no longer sees it">rewound</span>');
  let after = '';
  if (run.state === 'queued') {
    after = `<div class="run-queued"><span>Queued: starts when the run before it ends.</span> <button class="link" data-action="cancelRun" data-run="${esc(run.runId)}" title="Take it out of the queue">Cancel</button></div>`;
  } else if (run.state === 'paused') {
    // Paused by a restart, or because its state could not be saved: the reason, and the way on.
    after = `<div class="run-paused"><span class="paused-why">${esc(run.error ? `Paused: ${run.error}` : 'Paused: the daemon stopped in the middle of a step.')}</span> <button class="secondary" data-action="resume" data-run="${esc(run.runId)}">Resume</button></div>`;
  } else if (run.error) {
    after = `<div class="run-error">${esc(run.error)}</div>`;
  }
  return `<div class="run-footer">${footer.join(' · ')}</div>${after}`;
}

/** Undo this turn (when it changed files) and rewind to before it, for a finished run. */
function renderRunActions(run: RunView, ctx: RenderContext): string {
  if (!ctx.canUndo || run.rewound || !TERMINAL_STATES.has(run.state)) return '';
  const id = esc(run.runId);
  const changed = Object.values(run.tools).some((t) => [t, ...Object.values(t.subagent?.work.tools ?? {})].some((c) => c.checkpoint && !ctx.undone[c.checkpoint]));
  const buttons: string[] = [];
  if (changed) buttons.push(`<button class="link" data-action="undoRun" data-run="${id}" title="Put back every file this run changed (and any later change); you see what changes first">Undo this turn</button>`);
  buttons.push(
    `<button class="link" data-action="rewind" data-run="${id}" title="Go back to before this prompt: the agent forgets this run and every later one, and their changes to files are undone; you see what changes first">Rewind to here</button>`,
  );
  return `<div class="run-actions">${buttons.join(' · ')}</div>`;
}

const UNDO_TITLES: Record<UndoView['target']['kind'], string> = {
  run: 'Undo this turn',
  checkpoint: 'Restore to before this change',
  rewind: 'Rewind the conversation to before this prompt',
};

function undoFiles(files: FileDiff[], prefix: string): string {
  return files.length ? `<div class="undo-files">${renderFiles(files, prefix, files.length === 1)}</div>` : '';
}

/** The undo or rewind in progress: its preview (files, conflicts with their diffs) and the choices, or its outcome. */
export function renderUndo(u: UndoView): string {
  const t = u.target;
  const key = `undo-${t.kind}-${t.runId}-${t.kind === 'checkpoint' ? t.checkpoint : ''}`;
  const parts = [`<div class="undo undo-${esc(u.phase)}" data-undo="${esc(key)}" tabindex="-1">`];
  parts.push(`<div class="undo-head"><span class="icon">↶</span> <span class="request-title">${esc(UNDO_TITLES[t.kind])}</span><span class="spacer"></span><button class="link" data-action="undoClose">Close</button></div>`);
  if (u.phase === 'previewing') parts.push('<div class="request-note">Looking at what would change…</div>');
  if (u.phase === 'error') parts.push(`<div class="request-error">${esc(u.error ?? 'failed')}</div>`);
  const p = u.phase === 'done' ? undefined : u.preview;
  if (p) parts.push(renderUndoPreview(p, t.kind, key, u.phase === 'applying'));
  if (u.phase === 'applying') parts.push('<div class="request-note">Restoring…</div>');
  if (u.error && u.phase !== 'error') parts.push(`<div class="request-error">${esc(u.error)}</div>`);
  if (u.phase === 'done' && u.result) parts.push(renderUndoResult(u.result, t.kind, key));
  parts.push('</div>');
  return parts.join('\n');
}

function renderUndoPreview(p: UndoResult, kind: UndoView['target']['kind'], key: string, busy: boolean): string {
  const parts: string[] = [];
  const conflicts = p.conflicts ?? [];
  const changed = conflicts.filter((c) => c.kind !== 'missing');
  const missing = conflicts.filter((c) => c.kind === 'missing');
  if (p.status === 'nothing' || (!p.files?.length && !conflicts.length && kind !== 'rewind')) {
    parts.push('<div class="undo-summary">Nothing to undo: the files are already as they were.</div>');
    return parts.join('');
  }
  const what = kind === 'rewind' ? `The agent forgets this run and every later one${p.rewound?.length ? ` (${plural(p.rewound.length, 'run')})` : ''}. ` : '';
  const files = p.files?.length ? `${plural(p.files.length, 'file')} would be put back` : 'No file would change';
  parts.push(`<div class="undo-summary">${esc(what + files)}${p.undone && p.undone.length > 1 ? ` <span class="undo-ids">(${esc(plural(p.undone.length, 'change'))} undone)</span>` : ''}.</div>`);
  parts.push(undoFiles(p.files ?? [], `${key}-f`));
  if (changed.length) {
    parts.push(`<div class="undo-conflicts"><div class="label">Changed since — yours to keep or overwrite</div>`);
    for (const c of changed) {
      parts.push(
        `<details class="file conflict" data-id="${esc(`${key}-c-${c.path}`)}" open><summary><span class="fstatus fstatus-conflict">!</span> ${esc(c.path)} <span class="conflict-why">${esc(c.reason)}</span></summary>${
          c.diff?.diff ? `<div class="conflict-diff-label">What the undo would do to it:</div>${renderDiff(c.diff.diff)}` : ''
        }</details>`,
      );
    }
    parts.push('</div>');
  }
  if (missing.length) {
    parts.push(`<div class="undo-missing"><div class="label">Cannot be restored</div>${missing.map((c) => `<div class="request-facts">${esc(c.path)}: ${esc(c.reason)}</div>`).join('')}</div>`);
  }
  for (const n of p.notes ?? []) parts.push(`<div class="request-facts">${esc(n)}</div>`);
  const dis = busy ? ' disabled' : '';
  const act = kind === 'rewind' ? 'Rewind' : kind === 'run' ? 'Undo' : 'Restore';
  const buttons: string[] = [];
  if (!changed.length) buttons.push(`<button class="primary" data-action="undoApply" data-on-conflict="stop"${dis}>${act}</button>`);
  else {
    buttons.push(`<button class="primary" data-action="undoApply" data-on-conflict="skip"${dis} title="Restore the rest; the files changed since stay as they are">${act}, keep my changes</button>`);
    buttons.push(`<button class="danger" data-action="undoApply" data-on-conflict="overwrite"${dis} title="Restore them too; what they hold now goes into the undo's own checkpoint, so undoing the undo brings it back">${act} and overwrite them</button>`);
  }
  buttons.push(`<button class="secondary" data-action="undoClose"${dis}>Cancel</button>`);
  parts.push(`<div class="decisions">${buttons.join(' ')}</div>`);
  return parts.join('\n');
}

function renderUndoResult(r: UndoResult, kind: UndoView['target']['kind'], key: string): string {
  const parts: string[] = [];
  if (r.status === 'nothing') parts.push('<div class="undo-summary">Nothing to undo.</div>');
  else {
    const files = r.files?.length ? `${plural(r.files.length, 'file')} put back` : 'no file changed';
    const rew = kind === 'rewind' ? `Rewound${r.rewound?.length ? ` ${plural(r.rewound.length, 'run')}` : ''}: the next prompt continues from before this run; ` : 'Done: ';
    parts.push(`<div class="undo-summary undo-done-text">${esc(rew + files)}.</div>`);
    parts.push(undoFiles(r.files ?? [], `${key}-r`));
  }
  for (const n of r.notes ?? []) parts.push(`<div class="request-facts">${esc(n)}</div>`);
  if (r.checkpoint) {
    parts.push(
      `<div class="decisions"><button class="secondary" data-action="undoCheckpoint" data-run="" data-checkpoint="${esc(r.checkpoint)}" title="The restore is a change of its own: undoing it brings the files back as they were before it">Undo this restore</button></div>`,
    );
  }
  return parts.join('\n');
}

function usageHtml(u: NonNullable<RunView['usage']>): string {
  const n = (x: number) => (x ?? 0).toLocaleString('en-US');
  const tip = [`${n(u.promptTokens)} prompt + ${n(u.completionTokens)} completion tokens`];
  if (u.cachedTokens) tip.push(`${n(u.cachedTokens)} of the prompt tokens served from the provider's prompt cache`);
  if (u.reasoningTokens) tip.push(`${n(u.reasoningTokens)} of the completion tokens spent thinking`);
  return `<span class="usage" title="${esc(tip.join('; '))}">${n(u.totalTokens)} tokens${u.cachedTokens ? ` (${n(u.cachedTokens)} cached)` : ''}</span>`;
}

/** The model's reasoning, folded: "Thinking…" while it streams, then its first words. */
function renderThinking(text: string, id: string, streaming: boolean): string {
  const first = text.trim().split('\n')[0];
  const preview = first.length > 90 ? `${first.slice(0, 90).replace(/\s+\S*$/, '')}…` : first;
  const label = streaming ? '<span class="spinner"></span>Thinking…' : 'Thinking';
  return `<details class="thinking" data-id="${esc(id)}"><summary>${label} <span class="thinking-preview">${esc(preview)}</span></summary><div class="thinking-text">${esc(text.trim())}</div></details>`;
}

const SCOPE_NAMES: Record<string, string> = { user: 'your own instructions', workspace: "the workspace's instructions", directory: "a folder's instructions" };

/** The instruction files the model was given, once per run, each a link that opens it. */
function renderInstructions(files: InstructionFile[]): string {
  const links = files.map((f) => {
    // The user's own file is named as people write it (~/.config/agentd/AGENTS.md).
    const cfg = f.path.indexOf('/.config/');
    const name = f.scope === 'user' && cfg >= 0 ? `~${f.path.slice(cfg)}` : f.path;
    const tip = `${SCOPE_NAMES[f.scope] ?? 'instructions'}: ${f.path}, ${plural(f.bytes ?? 0, 'byte')}${f.truncated ? '; the model got the first 32 KiB' : ''}`;
    return `<button class="link" data-action="openFile" data-path="${esc(f.path)}" title="${esc(tip)}">${esc(name)}</button>${f.truncated ? ' <span class="truncated">(first 32 KiB)</span>' : ''}`;
  });
  return `<div class="instructions">Instructions: ${links.join(' · ')}</div>`;
}

function renderSessions(s: NonNullable<PanelState['sessions']>, current: string | undefined, now: Date): string {
  const parts = ['<div class="sessions"><div class="sessions-head"><span class="label">Sessions</span><span style="flex:1"></span><button class="secondary" data-action="newSession">New session</button> <button class="link" data-action="closeSessions">Close</button></div>'];
  parts.push(
    `<input type="search" class="sessions-query" data-field="sessions-query" placeholder="Search titles and prompts" aria-label="Search the sessions" value="${esc(s.query ?? '')}">`,
  );
  if (s.error) parts.push(`<div class="request-error">${esc(s.error)}</div>`);
  else if (!s.list) parts.push('<div class="empty">Loading…</div>');
  else if (!s.list.length) parts.push(s.query ? `<div class="empty">No session matches “${esc(s.query)}”.</div>` : '<div class="empty">No sessions yet in this workspace.</div>');
  if (s.failed) parts.push(`<div class="request-error">${esc(s.failed)}</div>`);
  for (const x of s.list ?? []) {
    const id = esc(x.sessionId);
    const meta = [whenText(x.updatedAt, now), x.state === 'idle' ? 'no runs' : runStateName(x.state)];
    if (x.runCount !== undefined && x.state !== 'idle') meta.push(plural(x.runCount, 'run'));
    parts.push(
      `<div class="session-row" data-session="${id}"><button class="session${x.sessionId === current ? ' current' : ''} session-state-${esc(x.state)}" data-action="openSession" data-session="${id}"><span class="session-title">${esc(
        x.title || x.sessionId,
      )}</span><span class="session-meta">${esc(meta.filter(Boolean).join(' · '))}</span>${x.match ? `<span class="session-match">“${esc(x.match)}”</span>` : ''}</button><span class="session-actions"><button class="link" data-action="sessionRename" data-session="${id}">Rename</button> · <button class="link" data-action="sessionDelete" data-session="${id}">Delete</button></span></div>`,
    );
    if (s.renaming === x.sessionId) {
      parts.push(
        `<div class="session-rename" data-session="${id}"><input type="text" data-field="rename-${id}" data-submit="renameSave" data-session="${id}" value="${esc(x.title)}" aria-label="New title"> <button class="primary" data-action="renameSave" data-session="${id}">Save</button> <button class="secondary" data-action="sessionRename" data-session="">Cancel</button></div>`,
      );
    }
    if (s.deleting === x.sessionId) {
      parts.push(
        `<div class="session-delete" data-session="${id}">Delete “${esc(x.title)}”${x.runCount ? ` and its ${esc(plural(x.runCount, 'run'))}` : ''}? agentd forgets it for good; your files stay as they are. <button class="danger" data-action="deleteConfirm" data-session="${id}">Delete</button> <button class="secondary" data-action="sessionDelete" data-session="">Keep it</button></div>`,
      );
    }
  }
  parts.push('</div>');
  return parts.join('');
}

/** The conversations open, one tab each: its title, whether it works or waits for you. */
export function renderTabs(tabs: NonNullable<PanelState['tabs']>): string {
  if (tabs.length < 2) return '';
  const items = tabs.map((t) => {
    const id = esc(t.sessionId ?? '');
    const flags = `${t.busy ? '<span class="spinner"></span>' : ''}${t.waiting ? `<span class="tab-waiting" title="${esc(plural(t.waiting, 'request'))} waiting for you">${t.waiting}</span>` : ''}`;
    return `<span class="tab${t.active ? ' active' : ''}"><button class="tab-open" data-action="openTab" data-session="${id}" title="${esc(t.title)}">${flags}<span class="tab-title">${esc(t.title)}</span></button><button class="tab-x" data-action="closeTab" data-session="${id}" title="Close this conversation (its runs go on; the session list has it)" aria-label="Close ${esc(t.title)}">×</button></span>`;
  });
  return `<div class="tabs" role="tablist">${items.join('')}<button class="tab-new" data-action="newSession" title="A new conversation beside these" aria-label="New conversation">+</button></div>`;
}

const MCP_TONES: Record<string, string> = { connected: 'ok', failed: 'error', rejected: 'declined', needs_approval: 'waiting', disabled: 'neutral', idle: 'neutral', starting: 'neutral' };

const RULE_TONES: Record<string, string> = { allow: 'ok', ask: 'waiting', deny: 'declined' };
const RULE_ORDER = ['session', 'always', 'user', 'workspace', 'built-in'];

/** The rules agentd applies, by where they come from; the user's answers can be revoked or edited. */
export function renderRules(r: RulesState): string {
  const parts = [
    '<div class="rules"><div class="sessions-head"><span class="label">Rules</span><span style="flex:1"></span><button class="secondary" data-action="rulesRefresh">Refresh</button> <button class="link" data-action="closeRules">Close</button></div>',
    '<div class="request-facts">What agentd may do without asking you, and what it refuses. Where several rules match, the strictest wins.</div>',
  ];
  if (r.error) parts.push(`<div class="request-error">${esc(r.error)}</div>`);
  else if (!r.list) parts.push('<div class="empty">Loading…</div>');
  if (r.failed) parts.push(`<div class="request-error">${esc(r.failed)}</div>`);
  const files: Record<string, string | undefined> = { user: r.files?.user, workspace: r.files?.workspace };
  for (const scope of RULE_ORDER) {
    const rules = (r.list ?? []).filter((x) => x.scope === scope);
    if (!rules.length && !(scope === 'always' || scope === 'session') && !files[scope]) continue;
    if (!r.list) break;
    const file = files[scope] ? ` <button class="link" data-action="openFile" data-path="${esc(files[scope]!)}" title="${esc(files[scope]!)}">Open the file</button>` : '';
    parts.push(`<div class="rules-group" data-scope="${esc(scope)}"><div class="label">${esc(ruleScopeName(scope))}${file}</div>`);
    if (!rules.length) {
      parts.push(
        `<div class="empty">${
          scope === 'always' ? 'None: "Always accept" or "Always reject" on a request stores one here.' : scope === 'session' ? 'None: "Accept for this session" stores one here.' : 'None.'
        }</div>`,
      );
    }
    for (const x of rules) {
      const id = esc(x.id);
      const what = `${esc(sentenceCase(ruleToolName(x.tool)))} <code>${esc(x.pattern || 'anything')}</code>`;
      const acts = x.revocable
        ? ` <span class="rule-actions"><button class="link" data-action="ruleEdit" data-rule="${id}">Edit</button> · <button class="link" data-action="ruleRevoke" data-rule="${id}" title="Take it back: what it covered asks again">Revoke</button></span>`
        : '';
      parts.push(`<div class="rule rule-${esc(x.action)}" data-rule="${id}"><span class="rule-what">${what}</span> <span class="tool-status tone-${RULE_TONES[x.action] ?? 'neutral'}">${esc(ruleActionName(x.action))}</span>${acts}</div>`);
      if (r.editing === x.id) {
        const opt = (a: string) => `<option value="${a}"${x.action === a ? ' selected' : ''}>${esc(sentenceCase(ruleActionName(a)))}</option>`;
        parts.push(
          `<div class="rule-edit" data-rule="${id}"><input type="text" class="rule-pattern" data-field="rule-${id}-pattern" value="${esc(x.pattern)}" aria-label="Pattern" title="A command glob (* is anything) or a path glob (** spans folders)"> <select data-field="rule-${id}-action" aria-label="What the rule does">${['allow', 'ask', 'deny']
            .map(opt)
            .join('')}</select> <button class="primary" data-action="ruleSave" data-rule="${id}">Save</button> <button class="secondary" data-action="ruleEdit" data-rule="">Cancel</button></div>`,
        );
      }
    }
    parts.push('</div>');
  }
  parts.push('</div>');
  return parts.join('');
}

/** What can be done to a server from its row: start it again, switch it off or on. */
function mcpButtons(s: McpServer): string {
  const b = (action: string, label: string, tip: string) =>
    `<button class="link mcp-action" data-action="mcpAction" data-name="${esc(s.name)}" data-mcp-action="${action}" title="${esc(tip)}">${label}</button>`;
  const out: string[] = [];
  if (s.state === 'disabled') out.push(b('enable', 'Enable', 'Let it start again (runs offer its tools from the next session)'));
  else if (s.state === 'rejected') out.push(b('enable', 'Enable', 'You rejected it for good: enabling it asks you again at the next session'));
  else {
    if (s.state !== 'needs_approval') out.push(b('restart', 'Restart', 'Stop it and start it again now'));
    out.push(b('disable', 'Disable', 'Stop it and keep it stopped (remembered for this workspace)'));
  }
  return ` <span class="mcp-actions">${out.join(' · ')}</span>`;
}

/** The MCP servers the session sees (mcp/status): state, tools, why one failed. */
export function renderMcp(m: NonNullable<PanelState['mcp']>): string {
  const parts = [
    '<div class="mcp"><div class="sessions-head"><span class="label">MCP servers</span><span style="flex:1"></span><button class="secondary" data-action="mcpRefresh">Refresh</button> <button class="link" data-action="closeMcp">Close</button></div>',
  ];
  if (m.error) parts.push(`<div class="request-error">${esc(m.error)}</div>`);
  else if (!m.list) parts.push('<div class="empty">Loading…</div>');
  else if (!m.list.length)
    parts.push('<div class="empty">No MCP server is configured: add one under <code>mcpServers</code> in <code>~/.config/agentd/config.json</code> or the workspace\'s <code>.mcp.json</code>.</div>');
  for (const s of m.list ?? []) {
    const tools = s.tools ?? [];
    const facts = [`${s.origin === 'workspace' ? '.mcp.json' : s.origin === 'user' ? 'your config' : s.origin === 'session' ? 'this editor' : s.origin}`, s.transport];
    if (s.sandbox) facts.push(`sandbox: ${s.sandbox}`);
    if ((s.starts ?? 0) > 1) facts.push(`started ${s.starts} times`);
    const tone = MCP_TONES[s.state] ?? 'neutral';
    const count = s.state === 'connected' ? ` <span class="tool-facts">${esc(plural(tools.length, 'tool'))}</span>` : '';
    const body: string[] = [];
    body.push(`<div class="mcp-facts">${esc(facts.join(' · '))}</div>`);
    if (s.command || s.url) body.push(`<pre class="cmdline">${esc(s.command ?? s.url ?? '')}</pre>`);
    if (s.error) body.push(`<div class="request-error mcp-error">${esc(s.error)}</div>`);
    if (s.state === 'needs_approval') body.push('<div class="request-facts">Starts once you approve it: agentd asks when a run of this workspace starts.</div>');
    if (s.toolsChanged) body.push('<div class="request-facts">The server announced new tools: sessions started from now on offer them.</div>');
    if (tools.length) {
      body.push(
        `<ul class="mcp-tools">${tools
          .map((t) => {
            const hints = Object.entries(t.hints ?? {}).filter(([, v]) => v).map(([k]) => k);
            return `<li><code>${esc(t.tool)}</code>${t.title && t.title !== t.tool ? ` ${esc(t.title)}` : ''}${t.description ? ` <span class="desc">— ${esc(t.description)}</span>` : ''}${
              hints.length ? ` <span class="hints" title="what the server claims, not verified">${esc(hints.join(', '))}</span>` : ''
            }</li>`;
          })
          .join('')}</ul>`,
      );
    }
    parts.push(
      `<details class="mcp-server mcp-state-${esc(s.state)}" data-id="mcp-${esc(s.name)}"${s.error || s.state === 'needs_approval' ? ' open' : ''}><summary><span class="mcp-name">${esc(s.name)}</span> <span class="tool-status tone-${tone}">${esc(
        mcpStateName(s.state),
      )}</span>${count}${mcpButtons(s)}</summary>${body.join('')}</details>`,
    );
  }
  parts.push('</div>');
  return parts.join('');
}

export function renderConversation(state: PanelState): string {
  const ctx: RenderContext = {
    open: new Map(state.open.map((o) => [o.req.requestId, o])),
    answers: state.answers ?? {},
    edited: state.edited ?? {},
    editedDiffs: state.editedDiffs ?? {},
    autoDiff: !!state.autoDiff,
    canUndo: !!state.canUndo,
    undone: state.undone ?? {},
    undo: state.undo,
    processByCall: new Map((state.processes ?? []).filter((p) => p.toolCallId).map((p) => [p.toolCallId!, p])),
  };
  const parts: string[] = [];
  if (state.tabs) parts.push(renderTabs(state.tabs));
  if (state.daemon.state !== 'ready') {
    const words: Record<string, string> = { starting: 'starting…', restarting: 'restarting…', failed: 'not running', stopped: 'stopped' };
    parts.push(`<div class="daemon daemon-${esc(state.daemon.state)}">agentd ${esc(words[state.daemon.state] ?? state.daemon.state)}${state.daemon.detail ? `: ${esc(state.daemon.detail)}` : ''}</div>`);
  }
  if (state.rules) parts.push(renderRules(state.rules));
  if (state.mcp) parts.push(renderMcp(state.mcp));
  if (state.sessions) parts.push(renderSessions(state.sessions, state.sessionId, state.now ?? new Date()));
  // Requests of runs that are not in this view (other sessions, or from before a restart) come
  // first: they are waiting, and answerable right here.
  const shown = new Set(state.runs.flatMap((r) => Object.keys(r.requests)));
  const others = state.open.filter((p) => !shown.has(p.req.requestId));
  if (others.length) {
    parts.push(`<div class="pending"><div class="label">Waiting for you in other sessions</div>`);
    for (const p of others) parts.push(renderRequest(asView(p.req), p, ctx));
    parts.push('</div>');
  }
  const sv = state.session;
  if (sv?.error) parts.push(`<div class="request-error session-error">${esc(sv.error)}</div>`);
  if (sv?.loadingEarlier) parts.push('<div class="earlier">Loading earlier runs…</div>');
  else if (sv?.earlierRuns) parts.push(`<div class="earlier"><button class="link" data-action="loadEarlier">Show ${esc(plural(sv.earlierRuns, 'earlier run'))}</button></div>`);
  if (state.runs.length === 0 && sv?.loading) {
    parts.push('<div class="empty loading">Loading the conversation…</div>');
  } else if (state.runs.length === 0 && !others.length && !sv?.error) {
    parts.push('<div class="empty">Ask agentd about this workspace. Attach files, folders, the Problems list or the terminal\'s selection with <b>+</b>, or type <code>@</code> to mention a file.</div>');
  }
  for (const run of state.runs) parts.push(renderRun(run, ctx));
  if (state.processes?.length) parts.push(renderProcesses(state.processes));
  return parts.join('\n');
}

function asView(req: InputRequest): RequestView {
  return { ...req };
}
