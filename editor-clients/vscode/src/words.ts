// What the user reads: the protocol's words (states, outcomes, decisions, stop reasons, tool
// kinds) turned into human ones. No vscode import. A raw protocol word never reaches the screen:
// an unknown one is made readable (underscores become spaces) rather than shown as is.

import { Decision, DECISIONS, InputRequest, TERMINAL_STATES } from './protocol';

/** A run's state as the status bar and the panel say it. */
const RUN_STATE_NAMES: Record<string, string> = {
  running: 'working',
  requires_action: 'waiting for you',
  paused: 'paused',
  completed: 'done',
  failed: 'failed',
  cancelled: 'cancelled',
  queued: 'queued',
};

export function runStateName(state: string): string {
  return RUN_STATE_NAMES[state] ?? readable(state);
}

/** Why a run stopped, when it is worth saying (end_turn and cancelled are not). */
const STOP_REASONS: Record<string, string> = {
  max_steps: 'stopped at the step limit',
  repetition: 'stopped: the same call kept repeating',
  tool_errors: 'stopped: too many tool errors in a row',
  error: '',
  end_turn: '',
  cancelled: '',
};

export function stopReasonText(reason: string | undefined): string {
  if (!reason) return '';
  return STOP_REASONS[reason] ?? readable(reason);
}

/** The decisions as buttons say them. */
export const DECISION_LABELS: Record<Decision, string> = {
  allow_once: 'Accept',
  allow_session: 'Accept for this session',
  allow_always: 'Always accept',
  reject_once: 'Reject',
  reject_always: 'Always reject',
  allow_full: 'Allow without the sandbox',
};

export function isAllow(decision: string): boolean {
  return decision.startsWith('allow_');
}

/**
 * The decisions a confirmation offers: its options when it has any, else all of them but `allow_full`
 * (running a command without the sandbox is offered only where the request says so).
 */
export function decisionsOf(req: Pick<InputRequest, 'options'>): { decision: Decision; label: string }[] {
  const offered = (req.options ?? []).map((o) => o.optionId).filter((id): id is Decision => (DECISIONS as readonly string[]).includes(id));
  const list = offered.length > 0 ? offered : DECISIONS.filter((d) => d !== 'allow_full');
  return list.map((decision) => ({ decision, label: DECISION_LABELS[decision] }));
}

/**
 * How a request ended, as a decision rather than a failure. `tone` says how to render it:
 * `ok` (accepted, answered), `declined` (the user said no), `neutral` (cancelled, timed out).
 */
export function outcomeText(outcome: string, by?: string, kind?: string): { text: string; tone: 'ok' | 'declined' | 'neutral' } {
  const confirm = kind === 'confirm_write' || kind === 'confirm_command';
  const byRule = by === 'policy';
  switch (outcome) {
    case 'answered':
      return { text: 'answered', tone: 'ok' };
    case 'allow_once':
      return { text: byRule ? 'accepted by a rule' : 'accepted', tone: 'ok' };
    case 'allow_session':
      return { text: byRule ? 'accepted by a rule' : 'accepted for this session', tone: 'ok' };
    case 'allow_always':
      return { text: byRule ? 'accepted by a rule' : 'always accepted', tone: 'ok' };
    case 'allow_full':
      return { text: 'accepted without the sandbox', tone: 'ok' };
    case 'reject_once':
      return { text: byRule ? 'rejected by a rule' : 'rejected by you', tone: 'declined' };
    case 'reject_always':
      return { text: byRule ? 'rejected by a rule' : 'always rejected', tone: 'declined' };
    case 'timeout':
      return { text: confirm ? 'not approved in time' : 'not answered in time', tone: 'neutral' };
    case 'cancelled':
      return { text: 'cancelled', tone: 'neutral' };
    default:
      return { text: readable(outcome), tone: 'neutral' };
  }
}

/** What a request asks, in a word, for lists and the status bar. */
export function requestKindName(kind: string): string {
  switch (kind) {
    case 'question':
      return 'question';
    case 'choice':
      return 'choice';
    case 'secret':
      return 'secret';
    case 'confirm_write':
      return 'change to approve';
    case 'confirm_command':
      return 'command to approve';
    default:
      return 'request';
  }
}

/** The status bar's words for the daemon and the runs; never a raw state name. */
export interface StatusInput {
  daemon: string;
  waiting: number;
  running: boolean;
  paused: boolean;
  lastState?: string;
  index?: { active: boolean; percentage?: number };
  /** Prompts waiting for a run before them to end. */
  queued?: number;
  /** Background processes still running, in every session. */
  processes?: number;
}

/** The status bar's tooltip (markdown): what waits, the runs going, the index. */
export function statusTooltip(s: StatusInput & { detail?: string; kinds: string[]; activeRuns: number; index?: { message?: string; state?: string } }): string {
  const parts = [`**agentd**: ${statusText(s).text.replace(/^agentd: /, '')}${s.detail ? ` — ${s.detail}` : ''}`];
  if (s.waiting) {
    const counts = new Map<string, number>();
    for (const k of s.kinds) counts.set(requestKindName(k), (counts.get(requestKindName(k)) ?? 0) + 1);
    parts.push(`Waiting for you: ${[...counts].map(([k, n]) => `${n} ${k}${n > 1 ? 's' : ''}`).join(', ')}. Click to answer in the panel.`);
  }
  parts.push(`Runs going: ${s.activeRuns}${s.queued ? `; ${s.queued} queued` : ''}`);
  if (s.processes) parts.push(`Background processes running: ${s.processes} (listed in their conversation, with a stop button)`);
  const index = indexLine(s.index);
  if (index) parts.push(index);
  return parts.join('\n\n');
}

/** The workspace index in one line: its size, how far it is, or why it failed. */
export function indexLine(i: { active: boolean; percentage?: number; message?: string; state?: string } | undefined): string | undefined {
  if (!i || (!i.active && !i.message)) return undefined;
  const msg = (i.message ?? '').replace(/\d{4,}/g, (n) => Number(n).toLocaleString('en-US'));
  if (i.active) return `Index: building${i.percentage !== undefined ? `, ${Math.round(i.percentage)}%` : ''}${msg ? ` (${msg})` : ''}`;
  if (i.state === 'failed') return `Index: failed${msg ? `: ${msg}` : ''}`;
  return `Index: ${msg}`;
}

export function statusText(s: StatusInput): { icon: string; text: string; severity: 'normal' | 'warning' | 'error' } {
  if (s.daemon === 'failed') return { icon: '$(error)', text: 'agentd: not running', severity: 'error' };
  if (s.daemon === 'stopped') return { icon: '$(circle-slash)', text: 'agentd: stopped', severity: 'normal' };
  if (s.daemon !== 'ready') return { icon: '$(loading~spin)', text: s.daemon === 'restarting' ? 'agentd: restarting' : 'agentd: starting', severity: 'normal' };
  if (s.waiting > 0) return { icon: '$(bell-dot)', text: `agentd: ${s.waiting} waiting for you`, severity: 'warning' };
  if (s.running) return { icon: '$(loading~spin)', text: `agentd: working${s.queued ? ` · ${s.queued} queued` : ''}`, severity: 'normal' };
  if (s.paused) return { icon: '$(debug-pause)', text: 'agentd: paused', severity: 'normal' };
  if (s.lastState && TERMINAL_STATES.has(s.lastState)) return { icon: '$(hubot)', text: `agentd: ${runStateName(s.lastState)}`, severity: 'normal' };
  return { icon: '$(hubot)', text: 'agentd: ready', severity: 'normal' };
}

/** An MCP server's state as the MCP view says it. */
const MCP_STATE_NAMES: Record<string, string> = {
  idle: 'not started yet',
  starting: 'starting',
  connected: 'connected',
  failed: 'failed',
  needs_approval: 'waiting for your approval',
  rejected: 'rejected by you',
  disabled: 'disabled',
};

export function mcpStateName(state: string): string {
  return MCP_STATE_NAMES[state] ?? readable(state);
}

/**
 * The MCP servers in a status bar item: how many are connected, and whether one needs a look (failed,
 * waiting for the user's approval). Undefined when none is configured (no item then).
 */
export function mcpSummary(servers: readonly { name: string; state: string }[]): { text: string; tooltip: string; attention: boolean } | undefined {
  if (!servers.length) return undefined;
  const connected = servers.filter((s) => s.state === 'connected').length;
  const failed = servers.filter((s) => s.state === 'failed');
  const waiting = servers.filter((s) => s.state === 'needs_approval');
  let text = `MCP ${connected}/${servers.length}`;
  if (failed.length) text += ` · ${failed.length} failed`;
  else if (waiting.length) text += ` · ${waiting.length} to approve`;
  const tooltip = servers.map((s) => `${s.name}: ${mcpStateName(s.state)}`).join('\n');
  return { text, tooltip: `agentd's MCP servers (click for their tools and errors)\n${tooltip}`, attention: failed.length > 0 || waiting.length > 0 };
}

/** Where an approved command runs, as a confirmation says it. */
export function profileText(profile: string | undefined, network: boolean | undefined): string | undefined {
  if (!profile) return undefined;
  const net = network ? 'with the network' : 'without the network';
  switch (profile) {
    case 'read':
      return `Runs in the read-only sandbox (it can change nothing but its temporary files), ${net}`;
    case 'workspace-write':
      return `Runs in the workspace-write sandbox (it can change the workspace only), ${net}`;
    case 'full':
      return `Not confined: the kernel sandbox cannot confine it here, so it runs with your full rights, ${net}`;
    default:
      return `Runs in the ${readable(profile)} sandbox, ${net}`;
  }
}

/** Makes an unknown protocol word readable. */
export function readable(word: string): string {
  return word.replace(/_/g, ' ');
}

/** "1 line", "3 lines". */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}

/** The approval modes as the mode picker says them. */
const MODE_LABELS: Record<string, string> = {
  plan: 'Plan first (read only until approved)',
  'read-only': 'Read only',
  ask: 'Ask before changes',
  'auto-edit': 'Auto-accept edits',
  'full-auto': 'Full auto',
};

export function modeLabel(mode: string): string {
  return MODE_LABELS[mode] ?? sentence(readable(mode));
}

/** A reasoning effort as the effort picker says it ("" is the daemon's default). */
export function effortLabel(effort: string): string {
  return effort ? `${sentence(readable(effort))} effort` : 'Default effort';
}

function sentence(s: string): string {
  return s ? s.charAt(0).toUpperCase() + s.slice(1) : s;
}

/**
 * When something happened, as a list says it: the time today, the day and time this year, the
 * date before. Never seconds or fractions of them.
 */
export function whenText(iso: string, now: Date = new Date()): string {
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) return '';
  const time = t.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit' });
  const sameDay = t.toDateString() === now.toDateString();
  if (sameDay) return `today ${time}`;
  const yesterday = new Date(now);
  yesterday.setDate(now.getDate() - 1);
  if (t.toDateString() === yesterday.toDateString()) return `yesterday ${time}`;
  const day = t.toLocaleDateString('en-GB', { day: 'numeric', month: 'short', ...(t.getFullYear() === now.getFullYear() ? {} : { year: 'numeric' }) });
  return `${day} ${time}`;
}

/** Where a rule comes from, as the rules view says it. */
const RULE_SCOPE_NAMES: Record<string, string> = {
  'built-in': "agentd's own",
  user: 'Your rules.json',
  workspace: "The workspace's .agentd/rules.json",
  always: 'Your "always" answers (this workspace)',
  session: 'This session ("for this session" answers)',
};

export function ruleScopeName(scope: string): string {
  return RULE_SCOPE_NAMES[scope] ?? sentence(readable(scope));
}

/** What a rule does, in a word. */
export function ruleActionName(action: string): string {
  return ({ allow: 'allowed', ask: 'asks first', deny: 'refused' } as Record<string, string>)[action] ?? readable(action);
}

/** What a rule's tool covers. */
export function ruleToolName(tool: string): string {
  const mcp = /^mcp__(.+?)__(\*|.+)$/.exec(tool);
  if (mcp) return mcp[2] === '*' ? `every tool of the MCP server ${mcp[1]}` : `the MCP tool ${mcp[2]} of ${mcp[1]}`;
  const names: Record<string, string> = { run_cmd: 'the command', write: 'writing', read: 'reading', network: 'the network for', '*': 'any tool on' };
  return names[tool] ?? `the tool ${tool} on`;
}
