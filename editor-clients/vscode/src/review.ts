// Reviewing one proposed change of one file, hunk by hunk: where the diff editor's (or the
// buffer's) accept and reject buttons lead. No vscode import.
//
// The review holds the file as it is (`original`), the model's proposal, and the text now under
// review (`current`: the proposal as the user changed it). Rejecting a hunk puts its original lines
// back into `current`; accepting one marks it done. When no hunk is left undecided the review has
// an outcome: rejected when nothing of the change is left, else accepted — with the user's version
// when it is not the model's. It is answered through the same agent/confirm as everything else,
// so the run, the approval and the undo checkpoint are the ordinary ones.

import { Hunk, applyHunks, diffLines, unifiedDiff } from './diff';

export type ReviewOutcome = { decision: 'reject_once'; reason: string } | { decision: 'allow_once'; editedContent?: string };

export class Review {
  current: string;
  private readonly accepted = new Set<string>();

  constructor(
    readonly requestId: string,
    readonly path: string,
    readonly original: string,
    readonly proposal: string,
  ) {
    this.current = proposal;
  }

  /** The hunks between the file and the text under review. */
  hunks(): Hunk[] {
    return diffLines(this.original, this.current);
  }

  /** A hunk's identity: where it is and what it changes (it changes when the user edits it). */
  static key(h: Hunk): string {
    return `${h.oldStart}\u0000${h.oldLines.join('\n')}\u0000${h.newLines.join('\n')}`;
  }

  isAccepted(h: Hunk): boolean {
    return this.accepted.has(Review.key(h));
  }

  /** The hunks still to decide. */
  pending(): Hunk[] {
    return this.hunks().filter((h) => !this.isAccepted(h));
  }

  /** The text with the hunk (by key) put back as it was; the caller writes it and calls update. */
  rejected(key: string): string | undefined {
    const hunks = this.hunks();
    const i = hunks.findIndex((h) => Review.key(h) === key);
    if (i < 0) return undefined;
    return applyHunks(this.original, hunks, (n) => n !== i);
  }

  accept(key: string): boolean {
    if (!this.hunks().some((h) => Review.key(h) === key)) return false;
    this.accepted.add(key);
    return true;
  }

  acceptAll(): void {
    for (const h of this.hunks()) this.accepted.add(Review.key(h));
  }

  /** The text under review changed (a hunk rejected, or the user typed). */
  update(text: string): void {
    this.current = text;
  }

  /** The user changed the proposal (a rejected hunk, or their own edit). */
  get edited(): boolean {
    return this.current !== this.proposal;
  }

  /** The change as it stands, as a unified diff of the file. */
  diff(): string {
    return unifiedDiff(this.path, this.original, this.current);
  }

  /** What to answer once every hunk is decided; undefined while some are not. */
  outcome(): ReviewOutcome | undefined {
    const hunks = this.hunks();
    if (!hunks.length) return { decision: 'reject_once', reason: 'The user rejected every part of this change.' };
    if (hunks.some((h) => !this.isAccepted(h))) return undefined;
    return this.accepting();
  }

  /** Accepting as it stands: the user's version when it is not the model's. */
  accepting(): ReviewOutcome {
    if (this.current === this.original) return { decision: 'reject_once', reason: 'The user rejected every part of this change.' };
    return this.edited ? { decision: 'allow_once', editedContent: this.current } : { decision: 'allow_once' };
  }
}
