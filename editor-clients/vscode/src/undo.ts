// Undo and rewind as the panel offers them: "Undo this turn", "Restore to here" on a change,
// "Rewind to here" on a run. No vscode import. Every action is previewed first (agent/undo or
// agent/rewind with dryRun): what would be written, and the conflicts — paths changed after the
// checkpoint, with the diff the undo would apply to them — so nothing the user changed is
// overwritten without their word. The user's choice is the second request, with its onConflict.
// The session's checkpoints (agent/checkpoints) say which changes were undone since.

import { Rpc } from './daemon';
import { Checkpoint, ErrorCode, Method, OnConflict, RewindParams, UndoParams, UndoResult, errorCode } from './protocol';

export type UndoTarget =
  /** "Undo this turn": every change of the run, and any later one. */
  | { kind: 'run'; runId: string }
  /** "Restore to here": this change and every later one (runId: the run that shows it). */
  | { kind: 'checkpoint'; runId: string; checkpoint: string }
  /** "Rewind to here": the conversation and the files go back to before the run. */
  | { kind: 'rewind'; runId: string };

export interface UndoView {
  target: UndoTarget;
  /** previewing: the dry run is on its way; preview: waiting for the user; applying; done. */
  phase: 'previewing' | 'preview' | 'applying' | 'done' | 'error';
  preview?: UndoResult;
  result?: UndoResult;
  error?: string;
}

export interface UndoDeps {
  rpc: Rpc;
  sessionId: () => string | undefined;
  changed: () => void;
  /** After a restore or a rewind: bring the conversation up to date. */
  applied?: (target: UndoTarget, result: UndoResult) => Promise<void> | void;
  log?: (line: string) => void;
}

export class UndoFlow {
  view?: UndoView;
  /** The session's checkpoints by id, as agent/checkpoints last listed them. */
  checkpoints = new Map<string, Checkpoint>();
  private checkpointsOf?: string;

  constructor(private readonly d: UndoDeps) {}

  /** Asks what the action would do (dry run) and shows it; nothing is written yet. */
  async start(target: UndoTarget): Promise<void> {
    const view: UndoView = { target, phase: 'previewing' };
    this.view = view;
    this.d.changed();
    try {
      const res = await this.send(target, { dryRun: true });
      if (this.view !== view) return;
      view.preview = res;
      view.phase = 'preview';
    } catch (e) {
      if (this.view !== view) return;
      view.phase = 'error';
      view.error = errorText(e);
    }
    this.d.changed();
  }

  /** Does it, with the user's choice for the conflicts the preview showed. */
  async apply(onConflict: OnConflict): Promise<void> {
    const view = this.view;
    if (!view || view.phase !== 'preview') return;
    view.phase = 'applying';
    view.error = undefined;
    this.d.changed();
    try {
      const res = await this.send(view.target, { onConflict });
      if (res.status === 'conflicts') {
        // Something changed since the preview: show the conflicts as they are now.
        view.preview = res;
        view.phase = 'preview';
      } else {
        view.result = res;
        view.phase = 'done';
      }
      this.d.changed();
      if (view.phase === 'done') await this.d.applied?.(view.target, res);
      await this.refreshCheckpoints();
    } catch (e) {
      view.phase = 'preview';
      view.error = errorText(e);
    }
    this.d.changed();
  }

  close(): void {
    this.view = undefined;
    this.d.changed();
  }

  /** Lists the session's checkpoints (which changes were undone, and by what). Never fails. */
  async refreshCheckpoints(): Promise<void> {
    const sessionId = this.d.sessionId();
    if (!sessionId) {
      this.checkpoints.clear();
      this.checkpointsOf = undefined;
      return;
    }
    try {
      const res = await this.d.rpc.request<{ checkpoints: Checkpoint[] }>(Method.checkpoints, { sessionId });
      if (this.d.sessionId() !== sessionId) return;
      this.checkpoints = new Map((res.checkpoints ?? []).map((c) => [c.id, c]));
      this.checkpointsOf = sessionId;
      this.d.changed();
    } catch (e) {
      this.d.log?.(`agent/checkpoints: ${e instanceof Error ? e.message : e}`);
    }
  }

  /** Which undo undid a checkpoint of the session shown, if one did and was not undone itself. */
  undoneBy(checkpoint: string): string | undefined {
    if (this.checkpointsOf !== this.d.sessionId()) return undefined;
    return undoneMap([...this.checkpoints.values()]).get(checkpoint);
  }

  /** Every undone checkpoint of the session shown, and the undo that undid it. */
  undone(): Map<string, string> {
    return this.checkpointsOf === this.d.sessionId() ? undoneMap([...this.checkpoints.values()]) : new Map();
  }

  private send(target: UndoTarget, extra: { dryRun?: boolean; onConflict?: OnConflict }): Promise<UndoResult> {
    const sessionId = this.d.sessionId();
    if (!sessionId) return Promise.reject(new Error('no session is open'));
    if (target.kind === 'rewind') {
      const p: RewindParams = { sessionId, runId: target.runId, ...extra };
      return this.d.rpc.request<UndoResult>(Method.rewind, p);
    }
    const p: UndoParams = target.kind === 'run' ? { sessionId, runId: target.runId, ...extra } : { sessionId, checkpoint: target.checkpoint, ...extra };
    return this.d.rpc.request<UndoResult>(Method.undo, p);
  }
}

/**
 * Which checkpoints are undone, from the list oldest first: an undo's checkpoint lists what it
 * `undoes`, and undoing that undo (a redo) brings them back. `undoneBy`, where the daemon sets it,
 * says the same.
 */
export function undoneMap(list: readonly Checkpoint[]): Map<string, string> {
  const by = new Map<string, string>();
  for (const c of list) {
    if (c.undoneBy) by.set(c.id, c.undoneBy);
    for (const u of c.undoes ?? []) {
      by.set(u, c.id);
      // An undo undone: what it had undone is back.
      for (const [k, v] of [...by]) if (v === u) by.delete(k);
    }
  }
  return by;
}

/** Why an undo could not be done, in the user's words. */
export function errorText(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  switch (errorCode(e)) {
    case ErrorCode.SessionBusy:
      return 'A run of this session has not finished: wait for it (or cancel it), then try again.';
    case ErrorCode.UnknownCheckpoint:
      return 'This change is no longer in the undo history (the session keeps a bounded number).';
    case ErrorCode.UnknownSession:
      return 'agentd no longer knows this session.';
    default:
      return msg;
  }
}
