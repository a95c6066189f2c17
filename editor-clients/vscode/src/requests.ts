// The open input requests: every question, choice, secret and approval the agent is waiting on,
// across runs. No vscode import.
//
// They are all shown at once, inline in the conversation panel, and answered in any order; nothing
// here decides what is "on screen". Rules:
// - a request is never lost: it stays until agent/inputResolved, a successful answer, or an
//   answer the daemon refuses for good (already resolved, unknown, expired);
// - answering one request sends a reply for that request only, once (a second click while the
//   first answer is on its way is ignored);
// - after a reconnect `sync` makes the book match agent/pending;
// - while the daemon is away an answer is refused here, with a message, and the request stays.

import { ConfirmParams, Decision, DECISIONS, ErrorCode, InputRequest, Method, ReplyParams, errorCode } from './protocol';

export type Answer =
  | { method: typeof Method.reply; params: ReplyParams }
  | { method: typeof Method.confirm; params: ConfirmParams };

/** Sends an answer to the daemon; rejects with the JSON-RPC error. */
export type Sender = (answer: Answer) => Promise<unknown>;

export interface OpenRequest {
  req: InputRequest;
  /** An answer is on its way. */
  sending: boolean;
  /** Why the last answer did not go through. */
  error?: string;
}

/** Errors after which the request is gone for good. */
const FINAL_ERRORS: ReadonlySet<number> = new Set([ErrorCode.AlreadyResolved, ErrorCode.UnknownRequest, ErrorCode.Expired]);

export class RequestBook {
  private readonly open = new Map<string, OpenRequest>();
  private readonly gone = new Set<string>();
  /** What the user answered, for the conversation ("you answered …"); never a secret. */
  private readonly answered = new Map<string, string>();
  private connected = true;
  private readonly listeners: (() => void)[] = [];

  constructor(private readonly send: Sender) {}

  onDidChange(listener: () => void): { dispose(): void } {
    this.listeners.push(listener);
    return { dispose: () => this.listeners.splice(this.listeners.indexOf(listener), 1) };
  }

  /** The open requests, oldest first. */
  list(): OpenRequest[] {
    return [...this.open.values()].sort(byAge);
  }

  get size(): number {
    return this.open.size;
  }

  get(requestId: string): OpenRequest | undefined {
    return this.open.get(requestId);
  }

  has(requestId: string): boolean {
    return this.open.has(requestId);
  }

  answerOf(requestId: string): string | undefined {
    return this.answered.get(requestId);
  }

  /** A new open request (agent/inputRequest, or one listed by agent/pending). */
  add(req: InputRequest): void {
    if (this.gone.has(req.requestId)) return;
    const existing = this.open.get(req.requestId);
    if (existing) existing.req = { ...existing.req, ...req };
    else this.open.set(req.requestId, { req, sending: false });
    this.changed();
  }

  /** The request was resolved (agent/inputResolved or a successful answer). */
  resolve(requestId: string): void {
    this.gone.add(requestId);
    if (this.open.delete(requestId)) this.changed();
  }

  /** Makes the book match agent/pending after a (re)connect. */
  sync(pending: InputRequest[]): void {
    const still = new Set(pending.map((r) => r.requestId));
    for (const id of [...this.open.keys()]) if (!still.has(id)) this.resolve(id);
    for (const req of pending) {
      this.gone.delete(req.requestId);
      const e = this.open.get(req.requestId);
      if (e) e.error = undefined;
      this.add(req);
    }
    this.changed();
  }

  /** Shows why an answer was not sent (it did not fit the request). */
  setError(requestId: string, message: string): void {
    const e = this.open.get(requestId);
    if (!e) return;
    e.error = message;
    this.changed();
  }

  setConnected(connected: boolean): void {
    this.connected = connected;
    this.changed();
  }

  /** Sends an answer. Resolves once it is settled; errors end up on the request, not thrown. */
  async answer(a: Answer): Promise<void> {
    const id = a.params.requestId;
    const e = this.open.get(id);
    if (!e || e.sending) return;
    if (!this.connected) {
      e.error = 'agentd is restarting; answer again once it is back (the request stays open)';
      this.changed();
      return;
    }
    e.sending = true;
    e.error = undefined;
    this.changed();
    try {
      await this.send(a);
      const said = answerSummary(e.req, a);
      if (said !== undefined) this.answered.set(id, said);
      this.resolve(id);
    } catch (err) {
      e.sending = false;
      const code = errorCode(err);
      if (code !== undefined && FINAL_ERRORS.has(code)) {
        this.resolve(id);
        return;
      }
      e.error = err instanceof Error ? err.message : String(err);
      this.changed();
    }
  }

  private changed(): void {
    for (const l of [...this.listeners]) l();
  }
}

/** What the panel posts when the user answers a request inline. */
export type PanelAnswer =
  | { type: 'reply'; requestId: string; text?: string; optionId?: string; answers?: string[] }
  | { type: 'confirm'; requestId: string; decision: string; reason?: string }
  /** A kind the panel has no view of its own for, answered from its generic form. */
  | { type: 'generic'; requestId: string; optionId?: string; answers?: string[]; text?: string };

/** The kinds the panel has views of its own for; any other is shown and answered by its form. */
export const KNOWN_KINDS: ReadonlySet<string> = new Set(['question', 'choice', 'secret', 'confirm_write', 'confirm_command']);

/**
 * The answer of a request's generic form (docs/protocol.md "The generic form"): an option (with the
 * text it asks for), several options, or the text alone; sent with the method the request names.
 */
export function genericAnswer(req: InputRequest, m: { optionId?: string; answers?: string[]; text?: string }): Answer | string {
  const requestId = req.requestId;
  const ids = new Set((req.options ?? []).map((o) => o.optionId));
  const text = m.text?.trim() ? m.text : undefined;
  const input = req.input;
  const picked = m.optionId ?? m.answers?.[0];
  if (m.optionId !== undefined && !ids.has(m.optionId)) return 'that answer is not offered';
  if (m.answers && (!req.multiple || !m.answers.length || m.answers.some((a) => !ids.has(a)))) return 'pick answers that are offered';
  if (!picked && !text) return input?.required || !ids.size ? 'type an answer first' : 'pick an answer';
  if (!picked && input?.with?.length) return 'pick an answer';
  if (picked && input?.required && input.with?.includes(picked) && !text) return `${input.label}: type it first`;
  if (req.answerWith === 'confirm') {
    if (!picked) return 'pick an answer';
    const params: ConfirmParams = { requestId, decision: picked as Decision };
    if (text) params.reason = text;
    return { method: Method.confirm, params };
  }
  const params: ReplyParams = { requestId };
  if (m.answers) params.answers = m.answers;
  else if (m.optionId !== undefined) params.optionId = m.optionId;
  if (text) params.text = text;
  return { method: Method.reply, params };
}

/**
 * Turns the panel's answer into the daemon's params, checking it fits the request; returns an
 * error message instead when it does not (the panel shows it next to the request).
 */
export function answerFor(req: InputRequest, m: PanelAnswer, editedContent?: string): Answer | string {
  const requestId = req.requestId;
  if (m.type === 'generic') return genericAnswer(req, m);
  if (m.type === 'confirm') {
    if (req.kind !== 'confirm_write' && req.kind !== 'confirm_command') return 'this request is not an approval';
    if (!(DECISIONS as readonly string[]).includes(m.decision)) return `unknown decision ${m.decision}`;
    const params: ConfirmParams = { requestId, decision: m.decision as Decision };
    const reason = m.reason?.trim();
    if (reason && m.decision.startsWith('reject_')) params.reason = reason;
    if (editedContent !== undefined && m.decision.startsWith('allow_') && req.kind === 'confirm_write') params.editedContent = editedContent;
    return { method: Method.confirm, params };
  }
  switch (req.kind) {
    case 'question':
      if (!m.text?.trim()) return 'type an answer first';
      return { method: Method.reply, params: { requestId, text: m.text } };
    case 'secret':
      if (m.text === undefined || m.text === '') return 'type the value first';
      return { method: Method.reply, params: { requestId, text: m.text } };
    case 'choice': {
      const ids = new Set((req.options ?? []).map((o) => o.optionId));
      if (m.answers !== undefined) {
        if (!req.multiple) return 'pick one answer';
        if (!m.answers.length) return 'pick at least one answer';
        if (m.answers.some((a) => !ids.has(a))) return 'that answer is not offered';
        return { method: Method.reply, params: { requestId, answers: m.answers } };
      }
      if (m.optionId !== undefined) {
        if (!ids.has(m.optionId)) return 'that answer is not offered';
        return { method: Method.reply, params: { requestId, optionId: m.optionId } };
      }
      if (!req.allowOther) return 'pick one of the answers';
      if (!m.text?.trim()) return 'type your answer first';
      return { method: Method.reply, params: { requestId, text: m.text } };
    }
    default:
      return 'this request needs a decision, not an answer';
  }
}

/** The answer as the conversation shows it afterwards; undefined for a secret or a decision. */
function answerSummary(req: InputRequest, a: Answer): string | undefined {
  if (a.method !== Method.reply || req.kind === 'secret' || req.input?.secret) return undefined;
  const p = a.params;
  const label = (id: string) => req.options?.find((o) => o.optionId === id)?.label ?? id;
  if (p.answers) return p.answers.map(label).join(', ');
  if (p.optionId !== undefined) return label(p.optionId);
  return p.text;
}

function byAge(a: { req: InputRequest }, b: { req: InputRequest }): number {
  const ta = Date.parse(a.req.createdAt ?? '') || 0;
  const tb = Date.parse(b.req.createdAt ?? '') || 0;
  return ta - tb;
}
