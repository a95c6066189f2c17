// The queue of open input requests. No vscode import.
//
// VS Code shows one quick input at a time (a second quick pick hides the first), so prompts are
// shown one after another, oldest first. Rules:
// - a request is never lost: dismissing its prompt defers it (it stays open on the daemon and in
//   the list), it does not reject it;
// - answering one request sends a reply for that request only;
// - a request resolved elsewhere (agent/inputResolved: timeout, cancel, policy, another editor)
//   is dropped, and if its prompt is on screen the prompt is closed (its AbortSignal fires);
// - after a reconnect `sync` makes the queue match agent/pending.

import { ConfirmParams, ErrorCode, InputRequest, ReplyParams, errorCode } from './protocol';

export type Answer =
  | { method: 'agent/reply'; params: ReplyParams }
  | { method: 'agent/confirm'; params: ConfirmParams };

/** Shows a request; resolves with the answer, or undefined when the user dismissed it. */
export type Renderer = (req: InputRequest, signal: AbortSignal) => Promise<Answer | undefined>;

/** Sends an answer to the daemon; rejects with the JSON-RPC error. */
export type Sender = (answer: Answer) => Promise<unknown>;

export type ItemState = 'queued' | 'showing' | 'deferred' | 'sending';

export interface QueueItem {
  req: InputRequest;
  state: ItemState;
  error?: string;
}

interface Entry extends QueueItem {
  abort?: AbortController;
}

/** Errors after which the request is gone for good. */
const FINAL_ERRORS: ReadonlySet<number> = new Set([ErrorCode.AlreadyResolved, ErrorCode.UnknownRequest, ErrorCode.Expired]);

export class PromptQueue {
  private readonly entries = new Map<string, Entry>();
  private readonly gone = new Set<string>();
  private connected = true;
  private pumping = false;
  private readonly listeners: (() => void)[] = [];

  constructor(
    private readonly render: Renderer,
    private readonly send: Sender,
    private readonly onError: (message: string, req: InputRequest) => void = () => undefined,
  ) {}

  onDidChange(listener: () => void): { dispose(): void } {
    this.listeners.push(listener);
    return { dispose: () => this.listeners.splice(this.listeners.indexOf(listener), 1) };
  }

  /** The open requests, oldest first. */
  list(): QueueItem[] {
    return [...this.entries.values()]
      .map(({ req, state, error }) => ({ req, state, error }))
      .sort(byAge);
  }

  get size(): number {
    return this.entries.size;
  }

  showing(): InputRequest | undefined {
    for (const e of this.entries.values()) if (e.state === 'showing') return e.req;
    return undefined;
  }

  has(requestId: string): boolean {
    return this.entries.has(requestId);
  }

  /** A new open request (agent/inputRequest, or one listed by agent/pending). */
  add(req: InputRequest): void {
    if (this.gone.has(req.requestId)) return;
    const existing = this.entries.get(req.requestId);
    if (existing) {
      existing.req = { ...existing.req, ...req };
      return;
    }
    this.entries.set(req.requestId, { req, state: 'queued' });
    this.changed();
    this.pump();
  }

  /** The request was resolved (agent/inputResolved): drop it and close its prompt. */
  resolve(requestId: string): void {
    this.gone.add(requestId);
    const e = this.entries.get(requestId);
    if (!e) return;
    this.entries.delete(requestId);
    e.abort?.abort();
    this.changed();
    this.pump();
  }

  /** Makes the queue match agent/pending after a (re)connect. */
  sync(pending: InputRequest[]): void {
    const open = new Set(pending.map((r) => r.requestId));
    for (const id of [...this.entries.keys()]) if (!open.has(id)) this.resolve(id);
    for (const req of pending) {
      this.gone.delete(req.requestId);
      const e = this.entries.get(req.requestId);
      if (e && e.state === 'queued' && e.error) e.error = undefined;
      this.add(req);
    }
    this.changed();
    this.pump();
  }

  /** While disconnected nothing is shown, so no answer is typed that cannot be sent. */
  setConnected(connected: boolean): void {
    this.connected = connected;
    if (!connected) {
      for (const e of this.entries.values()) if (e.state === 'showing') { e.state = 'queued'; e.abort?.abort(); }
    }
    this.changed();
    this.pump();
  }

  /** Shows this request next (the user picked it), putting whatever is on screen back in line. */
  show(requestId: string): void {
    const e = this.entries.get(requestId);
    if (!e) return;
    for (const other of this.entries.values()) {
      if (other !== e && other.state === 'showing') { other.state = 'queued'; other.abort?.abort(); }
    }
    if (e.state === 'showing') return;
    // Move it to the front of the line.
    this.entries.delete(requestId);
    const rest = [...this.entries.entries()];
    this.entries.clear();
    e.state = 'queued';
    e.error = undefined;
    this.entries.set(requestId, e);
    for (const [k, v] of rest) this.entries.set(k, v);
    this.front = requestId;
    this.changed();
    this.pump();
  }

  /** Re-queues every deferred request (e.g. "Show Pending Requests" → "Answer all"). */
  requeueDeferred(): void {
    for (const e of this.entries.values()) if (e.state === 'deferred') { e.state = 'queued'; e.error = undefined; }
    this.changed();
    this.pump();
  }

  private front?: string;

  private nextQueued(): Entry | undefined {
    if (this.front) {
      const f = this.entries.get(this.front);
      this.front = undefined;
      if (f && f.state === 'queued') return f;
    }
    return [...this.entries.values()].filter((e) => e.state === 'queued').sort(byAge)[0];
  }

  private pump(): void {
    if (this.pumping || !this.connected) return;
    if ([...this.entries.values()].some((e) => e.state === 'showing')) return;
    const e = this.nextQueued();
    if (!e) return;
    this.pumping = true;
    try {
      e.state = 'showing';
      e.error = undefined;
      const abort = (e.abort = new AbortController());
      this.changed();
      void this.present(e, abort);
    } finally {
      this.pumping = false;
    }
  }

  private async present(e: Entry, abort: AbortController): Promise<void> {
    let answer: Answer | undefined;
    try {
      answer = await this.render(e.req, abort.signal);
    } catch (err) {
      answer = undefined;
      e.error = String(err instanceof Error ? err.message : err);
    }
    const id = e.req.requestId;
    const current = this.entries.get(id);
    if (current !== e || abort.signal.aborted) {
      // Resolved elsewhere or put back in line while on screen: whatever was typed is dropped.
      if (current === e && e.state === 'showing') e.state = 'queued';
      this.changed();
      this.pump();
      return;
    }
    if (!answer) {
      e.state = 'deferred';
      this.changed();
      this.pump();
      return;
    }
    e.state = 'sending';
    this.changed();
    this.pump();
    try {
      await this.send(answer);
      // Answered: gone, whether or not agent/inputResolved has arrived yet.
      this.resolve(id);
    } catch (err) {
      const code = errorCode(err);
      if (code !== undefined && FINAL_ERRORS.has(code)) {
        this.resolve(id);
        return;
      }
      const message = err instanceof Error ? err.message : String(err);
      if (this.entries.get(id) === e) {
        // Not sent (the daemon went away): shown again after the reconnect. Refused: left for the
        // user to pick again from the list, with the error.
        e.state = code === undefined && !this.connected ? 'queued' : 'deferred';
        e.error = message;
        this.onError(message, e.req);
        this.changed();
        this.pump();
      }
    }
  }

  private changed(): void {
    for (const l of [...this.listeners]) l();
  }
}

function byAge(a: { req: InputRequest }, b: { req: InputRequest }): number {
  const ta = Date.parse(a.req.createdAt ?? '') || 0;
  const tb = Date.parse(b.req.createdAt ?? '') || 0;
  return ta - tb;
}
