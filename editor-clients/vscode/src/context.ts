// What goes along with a prompt: the files, folders, selection, Problems and terminal text the
// user attached (the context picker's chips) and the `@path` mentions typed in the prompt. No
// vscode import.
//
// The protocol carries files (and folders, named like files) and one selection; the Problems list
// and the terminal's text have no field of their own yet, so they travel in the prompt as fenced
// blocks the model reads, and the panel shows them as chips under the prompt.

import { RunContext, Selection } from './protocol';

export type Attachment =
  | { kind: 'file'; path: string }
  | { kind: 'folder'; path: string }
  | { kind: 'selection'; selection: Selection }
  | { kind: 'problems'; text: string; count: number }
  | { kind: 'terminal'; text: string };

/** The chip's label. */
export function attachmentLabel(a: Attachment): string {
  switch (a.kind) {
    case 'file':
      return a.path;
    case 'folder':
      return `${a.path.replace(/\/$/, '')}/`;
    case 'selection':
      return `${a.selection.path}:${a.selection.startLine}–${a.selection.endLine}`;
    case 'problems':
      return `Problems (${a.count})`;
    case 'terminal':
      return `Terminal selection (${a.text.split('\n').length} lines)`;
  }
}

/** A stable key, so the same thing is attached once. */
export function attachmentKey(a: Attachment): string {
  switch (a.kind) {
    case 'file':
    case 'folder':
      return `${a.kind}:${a.path}`;
    case 'selection':
      return `selection:${a.selection.path}:${a.selection.startLine}:${a.selection.endLine}`;
    default:
      return a.kind;
  }
}

/** Adds an attachment unless the same one is there (a newer selection replaces an older one). */
export function addAttachment(list: Attachment[], a: Attachment): Attachment[] {
  const key = attachmentKey(a);
  const rest = list.filter((x) => attachmentKey(x) !== key && !(a.kind === 'selection' && x.kind === 'selection') && !(a.kind !== 'file' && a.kind !== 'folder' && x.kind === a.kind));
  return [...rest, a];
}

const MENTION = /(^|\s)@([^\s@`]+)/g;

/** The `@path` mentions in a prompt that name known workspace files or folders. */
export function mentionsIn(text: string, isKnown: (path: string) => 'file' | 'folder' | undefined): Attachment[] {
  const out: Attachment[] = [];
  for (const m of text.matchAll(MENTION)) {
    const path = m[2].replace(/[.,;:!?)]+$/, '');
    const kind = isKnown(path) ?? isKnown(path.replace(/\/$/, ''));
    if (kind) out.push({ kind, path: path.replace(/\/$/, '') });
  }
  return out;
}

/** The mention being typed at the caret: the text after `@`, or undefined. */
export function mentionAt(text: string, caret: number): { start: number; query: string } | undefined {
  const before = text.slice(0, caret);
  const m = /(^|\s)@([^\s@`]*)$/.exec(before);
  if (!m) return undefined;
  return { start: caret - m[2].length - 1, query: m[2] };
}

/**
 * Workspace paths matching what was typed after `@`, best first: a name that starts with it, then
 * a path segment that does, then any substring; shorter paths first within each.
 */
export function matchPaths(paths: readonly string[], query: string, limit = 12): string[] {
  const q = query.toLowerCase();
  const scored: { p: string; s: number }[] = [];
  for (const p of paths) {
    const lower = p.toLowerCase();
    const base = lower.slice(lower.lastIndexOf('/', lower.length - 2) + 1);
    let s: number;
    if (!q) s = 3;
    else if (base.startsWith(q)) s = 0;
    else if (lower.startsWith(q) || lower.includes(`/${q}`)) s = 1;
    else if (lower.includes(q)) s = 2;
    else continue;
    scored.push({ p, s });
  }
  scored.sort((a, b) => a.s - b.s || a.p.length - b.p.length || a.p.localeCompare(b.p));
  return scored.slice(0, limit).map((x) => x.p);
}

const PROBLEMS_HEAD = 'Problems reported in the editor:';
const TERMINAL_HEAD = 'Selected in the terminal:';

function fenced(head: string, text: string): string {
  return `${head}\n\`\`\`\n${text}\n\`\`\``;
}

/** The chips of a run's context: the selection, then the other files and folders. */
export function contextChips(context: RunContext | undefined): string[] {
  const sel = context?.selection;
  return [...(sel ? [`${sel.path}:${sel.startLine}–${sel.endLine}`] : []), ...(context?.files ?? []).filter((f) => f !== sel?.path)];
}

/**
 * The prompt as the user typed it and the labels of what went along, from a prompt as buildRun
 * made it (agent/history gives the prompt sent): the Problems and terminal blocks appended to it
 * become chips again.
 */
export function splitPrompt(prompt: string, context?: RunContext): { text: string; attached?: string[] } {
  let text = prompt;
  const labels: string[] = [];
  for (;;) {
    if (!text.endsWith('\n```')) break;
    const at = Math.max(text.lastIndexOf(`\n\n${PROBLEMS_HEAD}\n\`\`\`\n`), text.lastIndexOf(`\n\n${TERMINAL_HEAD}\n\`\`\`\n`));
    if (at < 0) break;
    const block = text.slice(at + 2);
    const problems = block.startsWith(PROBLEMS_HEAD);
    const head = problems ? PROBLEMS_HEAD : TERMINAL_HEAD;
    const body = block.slice(head.length + 5, -4);
    if (block !== fenced(head, body)) break;
    if (problems) {
      const lines = body.split('\n');
      const more = /^… and (\d+) more$/.exec(lines[lines.length - 1] ?? '');
      labels.unshift(attachmentLabel({ kind: 'problems', text: body, count: more ? lines.length - 1 + Number(more[1]) : lines.length }));
    } else {
      labels.unshift(attachmentLabel({ kind: 'terminal', text: body }));
    }
    text = text.slice(0, at);
  }
  return labels.length ? { text, attached: [...contextChips(context), ...labels] } : { text };
}

/** The run's context and the prompt text sent to the daemon. */
export function buildRun(prompt: string, attachments: Attachment[], mentions: Attachment[]): { prompt: string; context?: RunContext } {
  const files: string[] = [];
  let selection: Selection | undefined;
  const blocks: string[] = [];
  for (const a of [...attachments, ...mentions]) {
    if (a.kind === 'file' || a.kind === 'folder') {
      const p = a.kind === 'folder' ? `${a.path.replace(/\/$/, '')}/` : a.path;
      if (!files.includes(p)) files.push(p);
    } else if (a.kind === 'selection') {
      selection = a.selection;
      if (!files.includes(a.selection.path)) files.push(a.selection.path);
    } else if (a.kind === 'problems') {
      blocks.push(fenced(PROBLEMS_HEAD, a.text));
    } else if (a.kind === 'terminal') {
      blocks.push(fenced(TERMINAL_HEAD, a.text));
    }
  }
  const context: RunContext = {};
  if (files.length) context.files = files;
  if (selection) context.selection = selection;
  return { prompt: blocks.length ? `${prompt}\n\n${blocks.join('\n\n')}` : prompt, context: files.length || selection ? context : undefined };
}

/** The Problems list as text, one diagnostic a line, errors first, at most `max` lines. */
export function problemsText(
  items: { path: string; line: number; severity: 'error' | 'warning' | 'info' | 'hint'; message: string; source?: string }[],
  max = 50,
): { text: string; count: number } {
  const order = { error: 0, warning: 1, info: 2, hint: 3 };
  const sorted = [...items].sort((a, b) => order[a.severity] - order[b.severity] || a.path.localeCompare(b.path) || a.line - b.line);
  const lines = sorted.slice(0, max).map((d) => `${d.path}:${d.line}: ${d.severity}: ${d.message.replace(/\s*\n\s*/g, ' ')}${d.source ? ` (${d.source})` : ''}`);
  if (sorted.length > max) lines.push(`… and ${sorted.length - max} more`);
  return { text: lines.join('\n'), count: items.length };
}

/** What the prompt box holds besides its text: the attached context. */
export class Composer {
  private list: Attachment[] = [];
  private readonly listeners: (() => void)[] = [];

  onDidChange(l: () => void): void {
    this.listeners.push(l);
  }

  get attachments(): readonly Attachment[] {
    return this.list;
  }

  attach(...as: Attachment[]): void {
    for (const a of as) this.list = addAttachment(this.list, a);
    this.changed();
  }

  detach(key: string): void {
    this.list = this.list.filter((a) => attachmentKey(a) !== key);
    this.changed();
  }

  /** Takes the attachments for a run that is being sent. */
  take(): Attachment[] {
    const taken = this.list;
    this.list = [];
    this.changed();
    return taken;
  }

  /** Puts attachments back (the run could not start). */
  restore(as: Attachment[]): void {
    this.list = [...as, ...this.list];
    this.changed();
  }

  chips(): { key: string; label: string }[] {
    return this.list.map((a) => ({ key: attachmentKey(a), label: attachmentLabel(a) }));
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }
}
