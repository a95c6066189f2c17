// Renders the conversation panel's HTML from the run store and the prompt queue. No vscode
// import: the unit tests check the markup. The model's markdown goes through markdown-it with
// raw HTML disabled, so nothing the model writes can inject markup or script.

import MarkdownIt from 'markdown-it';
import { FileDiff, TERMINAL_STATES } from './protocol';
import { QueueItem } from './promptQueue';
import { RunView, ToolCallView, unstreamedResult } from './runStore';

const md = new MarkdownIt({ html: false, linkify: true, breaks: false });

export interface PanelState {
  sessionId?: string;
  runs: RunView[];
  pending: QueueItem[];
  daemon: { state: string; detail?: string };
  /** The write whose diff is open: its request gets the decision buttons. */
  activeWrite?: { requestId: string; decisions: { decision: string; label: string }[] };
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export function renderMarkdown(text: string): string {
  return md.render(text);
}

const PLAN_ICONS: Record<string, string> = { pending: '○', in_progress: '◐', completed: '✓', failed: '✗' };
// Plain symbols rather than emoji: they render with the editor's fonts on every platform.
const TOOL_ICONS: Record<string, string> = { read: '▤', edit: '✎', search: '⌕', execute: '▶', think: '…', other: '⚙' };
const STATE_LABELS: Record<string, string> = {
  running: 'running',
  requires_action: 'waiting for you',
  paused: 'paused',
  completed: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
};

export function renderDiff(diff: string): string {
  const lines = diff.replace(/\n$/, '').split('\n');
  return `<pre class="diff">${lines
    .map((l) => {
      const cls = l.startsWith('+++') || l.startsWith('---') ? 'meta' : l.startsWith('@@') ? 'hunk' : l.startsWith('+') ? 'add' : l.startsWith('-') ? 'del' : 'ctx';
      return `<span class="${cls}">${escapeHtml(l)}</span>`;
    })
    .join('\n')}</pre>`;
}

function renderFiles(files: FileDiff[], idPrefix: string): string {
  return files
    .map(
      (f, i) =>
        `<details class="file" data-id="${escapeHtml(`${idPrefix}-${i}`)}"><summary><span class="fstatus fstatus-${escapeHtml(f.status)}">${escapeHtml(
          (f.status || '?').charAt(0).toUpperCase(),
        )}</span> ${escapeHtml(f.path)}</summary>${renderDiff(f.diff ?? '')}</details>`,
    )
    .join('');
}

function formatInput(input: unknown): string {
  if (input === undefined || input === null) return '';
  if (typeof input === 'string') return input;
  try {
    return JSON.stringify(input, null, 2);
  } catch {
    return String(input);
  }
}

function renderTool(run: RunView, t: ToolCallView): string {
  const facts: string[] = [escapeHtml(t.status)];
  if (t.exitCode !== undefined) facts.push(`exit ${t.exitCode}`);
  if (t.durationMs !== undefined) facts.push(`${t.durationMs} ms`);
  if (t.truncated) facts.push('output shortened for the model');
  const failed = t.status === 'failed' || t.isError;
  const input = formatInput(t.input);
  // A command's output streams in while it runs (at most LIVE_OUTPUT_MAX characters of it); the
  // final update's full output replaces it. A streaming call is rendered open: the webview keeps
  // the user's choice after the first time (see data-live in panel.ts).
  const live = t.output === undefined && t.liveOutput !== undefined;
  const running = live && t.status === 'in_progress';
  const id = escapeHtml(`${run.runId}-${t.toolCallId}`);
  let output = '';
  if (live) {
    const omitted = t.liveOutputOmitted
      ? `<div class="output-omitted">… ${t.liveOutputOmitted.toLocaleString('en-US')} earlier characters not shown${running ? '; the full output comes when the command ends' : ''}</div>`
      : '';
    output = `<div class="label">${running ? 'Output (running)' : 'Output'}</div>${omitted}<pre class="tool-output${running ? ' tool-output-live' : ''}" data-id="${id}-out">${escapeHtml(t.liveOutput!)}</pre>`;
  } else if (t.output !== undefined) {
    output = `<div class="label">Result</div><pre class="tool-output">${escapeHtml(t.output)}</pre>`;
  }
  return `<details class="tool tool-${escapeHtml(t.status)}${failed ? ' tool-error' : ''}" data-id="${id}"${running ? ' data-live open' : ''}>
<summary><span class="icon">${TOOL_ICONS[t.toolKind ?? 'other'] ?? TOOL_ICONS.other}</span> <span class="tool-title">${escapeHtml(t.title)}</span> <span class="tool-status">${facts.join(' · ')}</span></summary>
${input ? `<div class="label">Input</div><pre class="tool-input">${escapeHtml(input)}</pre>` : ''}
${output}
${t.files?.length ? `<div class="label">Changes</div>${renderFiles(t.files, `${run.runId}-${t.toolCallId}-f`)}` : ''}
</details>`;
}

const KIND_ICONS: Record<string, string> = { question: '?', choice: '☰', secret: '✱', confirm_write: '✎', confirm_command: '▶' };

function renderRun(run: RunView, pendingIds: Set<string>, activeWrite?: PanelState['activeWrite']): string {
  const parts: string[] = [];
  parts.push(`<section class="run state-${escapeHtml(run.state)}" data-run="${escapeHtml(run.runId)}">`);
  if (run.prompt !== undefined) {
    parts.push(`<div class="prompt"><div class="who">You</div><div class="prompt-text">${escapeHtml(run.prompt)}</div>`);
    const sel = run.context?.selection;
    if (sel) parts.push(`<div class="context">Selection: ${escapeHtml(sel.path)}:${sel.startLine}–${sel.endLine}</div>`);
    else if (run.context?.files?.length) parts.push(`<div class="context">Context: ${run.context.files.map(escapeHtml).join(', ')}</div>`);
    parts.push('</div>');
  }
  if (run.plan && run.plan.entries.length) {
    parts.push('<div class="plan"><div class="label">Plan</div>');
    if (run.plan.explanation) parts.push(`<div class="plan-explanation">${escapeHtml(run.plan.explanation)}</div>`);
    parts.push('<ul>');
    for (const e of run.plan.entries) {
      parts.push(`<li class="step step-${escapeHtml(e.status)}"><span class="step-icon">${PLAN_ICONS[e.status] ?? '○'}</span> ${escapeHtml(e.content)}</li>`);
    }
    parts.push('</ul></div>');
  }
  for (const item of run.timeline) {
    if (item.type === 'text') {
      if (item.text.trim()) parts.push(`<div class="answer md">${renderMarkdown(item.text)}</div>`);
    } else if (item.type === 'tool') {
      const t = run.tools[item.toolCallId];
      if (t) parts.push(renderTool(run, t));
    } else {
      const r = run.requests[item.requestId];
      if (!r) continue;
      const open = pendingIds.has(r.requestId) && !r.outcome;
      const outcome = r.outcome ? `${r.outcome.replace(/_/g, ' ')}${r.by && r.by !== 'user' ? ` (${r.by})` : ''}` : open ? 'waiting for you' : '';
      const detail = r.command ? `<code>${escapeHtml(r.command)}</code>${r.cwd ? ` in <code>${escapeHtml(r.cwd)}</code>` : ''}` : escapeHtml(r.message);
      parts.push(
        `<div class="request${open ? ' request-open' : ''}" data-request="${escapeHtml(r.requestId)}"><span class="icon">${KIND_ICONS[r.kind] ?? '?'}</span> <span class="request-title">${escapeHtml(
          r.title,
        )}</span>: ${detail} <span class="request-outcome">${escapeHtml(outcome)}</span>${
          open && activeWrite?.requestId === r.requestId
            ? `<div class="decisions">${activeWrite.decisions
                .map(
                  (d, i) =>
                    `<button class="${i === 0 ? '' : 'secondary'}" data-action="decide" data-request="${escapeHtml(r.requestId)}" data-decision="${escapeHtml(d.decision)}">${escapeHtml(d.label)}</button>`,
                )
                .join(' ')}</div>`
            : open
              ? ` <button class="link" data-action="answer" data-request="${escapeHtml(r.requestId)}">Answer…</button>`
              : ''
        }</div>`,
      );
    }
  }
  const result = unstreamedResult(run);
  if (result) parts.push(`<div class="answer md">${renderMarkdown(result)}</div>`);
  if (run.filesChanged?.length) {
    parts.push(
      `<details class="files-changed" open data-id="${escapeHtml(run.runId)}-files"><summary>Files changed (${run.filesChanged.length})</summary>${renderFiles(
        run.filesChanged,
        `${run.runId}-fc`,
      )}</details>`,
    );
  }
  const footer: string[] = [];
  const label = STATE_LABELS[run.state] ?? run.state;
  const busy = !TERMINAL_STATES.has(run.state);
  footer.push(`<span class="run-state run-state-${escapeHtml(run.state)}">${busy ? '<span class="spinner"></span>' : ''}${escapeHtml(label)}${run.stopReason && run.stopReason !== 'end_turn' && run.stopReason !== run.state ? ` (${escapeHtml(run.stopReason)})` : ''}</span>`);
  if (busy && run.activity) footer.push(`<span class="activity">${escapeHtml(run.activity)}</span>`);
  if (run.usage) footer.push(`<span class="usage" title="prompt + completion tokens">${run.usage.promptTokens} + ${run.usage.completionTokens} = ${run.usage.totalTokens} tokens</span>`);
  parts.push(`<div class="run-footer">${footer.join(' · ')}</div>`);
  if (run.error) parts.push(`<div class="run-error">${escapeHtml(run.error)}</div>`);
  parts.push('</section>');
  return parts.join('\n');
}

export function renderConversation(state: PanelState): string {
  const parts: string[] = [];
  const pendingIds = new Set(state.pending.map((p) => p.req.requestId));
  if (state.daemon.state !== 'ready') {
    parts.push(`<div class="daemon daemon-${escapeHtml(state.daemon.state)}">agentd ${escapeHtml(state.daemon.state)}${state.daemon.detail ? `: ${escapeHtml(state.daemon.detail)}` : ''}</div>`);
  }
  if (state.runs.length === 0) {
    parts.push('<div class="empty">Ask agentd about this workspace. The active file and selection go along as context.</div>');
  }
  for (const run of state.runs) parts.push(renderRun(run, pendingIds, state.activeWrite));
  // Requests of runs that are not in this view (other sessions, or from before a restart).
  const shown = new Set(state.runs.flatMap((r) => Object.keys(r.requests)));
  const others = state.pending.filter((p) => !shown.has(p.req.requestId));
  if (others.length) {
    parts.push('<div class="pending"><div class="label">Waiting for you in other runs</div>');
    for (const p of others) {
      parts.push(
        `<div class="request request-open" data-request="${escapeHtml(p.req.requestId)}"><span class="icon">${KIND_ICONS[p.req.kind] ?? '?'}</span> ${escapeHtml(
          p.req.title,
        )}: ${escapeHtml(p.req.message)} ${
          state.activeWrite?.requestId === p.req.requestId
            ? `<div class="decisions">${state.activeWrite.decisions
                .map((d, i) => `<button class="${i === 0 ? '' : 'secondary'}" data-action="decide" data-request="${escapeHtml(p.req.requestId)}" data-decision="${escapeHtml(d.decision)}">${escapeHtml(d.label)}</button>`)
                .join(' ')}</div>`
            : `<button class="link" data-action="answer" data-request="${escapeHtml(p.req.requestId)}">Answer…</button>`
        }</div>`,
      );
    }
    parts.push('</div>');
  }
  return parts.join('\n');
}
