// The proposed side of a write waiting for approval, as an editable document. "Open diff" shows
// the change in VS Code's diff editor; "Edit before accepting" does the same with the focus on the
// proposed side, which the user may change: accepting then sends their version as
// `editedContent`. The proposed files live in memory (a file system provider), so saving one
// writes nothing to disk and closing it never asks to save.
//
// In the diff editor each hunk of a single-file change has Accept and Reject above it (CodeLens),
// and the editor's title bar accepts or rejects the whole change. A rejected hunk goes back into
// the proposed side; once every hunk is decided the change is answered (review.ts), the user's
// version when they changed the model's. The diff can open by itself as each change comes
// (`agentd.review.openDiff`).

import * as path from 'path';
import * as vscode from 'vscode';
import { FileDiff, InputRequest } from './protocol';
import { Review, ReviewOutcome } from './review';

export const PROPOSED_SCHEME = 'agentd-proposed';
export const BASE_SCHEME = 'agentd-base';

interface Entry {
  data: Uint8Array;
  ctime: number;
  mtime: number;
}

export class ProposedWrites implements vscode.FileSystemProvider, vscode.TextDocumentContentProvider, vscode.CodeLensProvider, vscode.Disposable {
  private readonly files = new Map<string, Entry>();
  private readonly base = new Map<string, string>();
  /** The proposal as the daemon sent it, by request. */
  private readonly proposals = new Map<string, { uri: vscode.Uri; text: string }>();
  private readonly edited = new Set<string>();
  /** Requests whose diff was opened. */
  private readonly opened = new Set<string>();
  private readonly fileEvents = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.fileEvents.event;
  private readonly editedEvents = new vscode.EventEmitter<void>();
  /** Which writes the user edited changed. */
  readonly onDidChangeEdited = this.editedEvents.event;
  private readonly lensEvents = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.lensEvents.event;
  /** The hunk by hunk reviews of single-file changes, by request. */
  private readonly reviews = new Map<string, Review>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly root: () => vscode.Uri | undefined,
    /** Every hunk was decided (or the title bar decided): answer the request. */
    private readonly decide: (requestId: string, outcome: ReviewOutcome) => void = () => undefined,
  ) {
    this.disposables.push(
      vscode.workspace.registerFileSystemProvider(PROPOSED_SCHEME, this, { isCaseSensitive: true }),
      vscode.workspace.registerTextDocumentContentProvider(BASE_SCHEME, this),
      vscode.languages.registerCodeLensProvider({ scheme: PROPOSED_SCHEME }, this),
      vscode.workspace.onDidChangeTextDocument((e) => e.document.uri.scheme === PROPOSED_SCHEME && this.checkEdited(e.document)),
    );
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.fileEvents.dispose();
    this.editedEvents.dispose();
    this.lensEvents.dispose();
  }

  /** The change as the user made it, as a diff of the file, for writes they edited. */
  editedDiffs(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const id of this.edited) {
      const r = this.reviews.get(id);
      if (r) out[id] = r.diff();
    }
    return out;
  }

  // ---- hunk by hunk ----

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const id = requestOf(doc.uri);
    const r = id ? this.reviews.get(id) : undefined;
    if (!r) return [];
    const lenses: vscode.CodeLens[] = [];
    const hunks = r.hunks();
    const top = new vscode.Range(0, 0, 0, 0);
    const pending = hunks.filter((h) => !r.isAccepted(h)).length;
    if (hunks.length > 1) {
      lenses.push(new vscode.CodeLens(top, { title: `$(check-all) Accept all (${pending} left)`, command: 'agentd.review.acceptChange', arguments: [doc.uri] }));
      lenses.push(new vscode.CodeLens(top, { title: '$(close-all) Reject all', command: 'agentd.review.rejectChange', arguments: [doc.uri] }));
    }
    for (const h of hunks) {
      const line = Math.min(h.newStart, Math.max(0, doc.lineCount - 1));
      const at = new vscode.Range(line, 0, line, 0);
      const key = Review.key(h);
      const what = `${h.newLines.length ? `+${h.newLines.length}` : ''}${h.newLines.length && h.oldLines.length ? ' ' : ''}${h.oldLines.length ? `−${h.oldLines.length}` : ''}`;
      if (r.isAccepted(h)) {
        lenses.push(new vscode.CodeLens(at, { title: `$(pass-filled) Accepted (${what})`, command: '' }));
        continue;
      }
      lenses.push(new vscode.CodeLens(at, { title: `$(check) Accept (${what})`, command: 'agentd.review.acceptHunk', arguments: [id, key] }));
      lenses.push(new vscode.CodeLens(at, { title: '$(discard) Reject', command: 'agentd.review.rejectHunk', arguments: [id, key] }));
    }
    return lenses;
  }

  /** Accepts one hunk; the last one decided answers the request. */
  acceptHunk(requestId: string, key: string): void {
    const r = this.reviews.get(requestId);
    if (!r || !r.accept(key)) return;
    this.lensEvents.fire();
    this.settle(r);
  }

  /** Puts one hunk back as the file has it; the last one decided answers the request. */
  async rejectHunk(requestId: string, key: string): Promise<void> {
    const r = this.reviews.get(requestId);
    const p = this.proposals.get(requestId);
    const text = r?.rejected(key);
    if (!r || !p || text === undefined) return;
    const doc = await vscode.workspace.openTextDocument(p.uri);
    const edit = new vscode.WorkspaceEdit();
    edit.replace(p.uri, new vscode.Range(0, 0, doc.lineCount, 0), text);
    await vscode.workspace.applyEdit(edit);
    this.checkEdited(doc);
    this.lensEvents.fire();
    this.settle(r);
  }

  /** The title bar's (or Accept all's) decision on the whole change of the diff shown. */
  decideAll(uri: unknown, accept: boolean): void {
    const id = this.requestShown(uri);
    if (!id) {
      void vscode.window.showInformationMessage('agentd: no change of agentd is shown in this editor.');
      return;
    }
    const r = this.reviews.get(id);
    if (!accept) this.decide(id, { decision: 'reject_once', reason: 'The user rejected this change in the diff editor.' });
    else this.decide(id, r ? r.accepting() : { decision: 'allow_once' });
  }

  private settle(r: Review): void {
    const out = r.outcome();
    if (out) this.decide(r.requestId, out);
  }

  /** The request whose diff is shown: from the title bar's uri, or the active tab. */
  private requestShown(uri: unknown): string | undefined {
    if (uri instanceof vscode.Uri) {
      const id = requestOf(uri);
      if (id) return id;
    }
    const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
    if (input instanceof vscode.TabInputTextDiff) return requestOf(input.modified) ?? requestOf(input.original);
    if (input instanceof vscode.TabInputText) return requestOf(input.uri);
    return undefined;
  }

  isEdited(requestId: string): boolean {
    return this.edited.has(requestId);
  }

  editedIds(): Record<string, boolean> {
    return Object.fromEntries([...this.edited].map((id) => [id, true]));
  }

  /** Opens the diff of one file of a write; `edit` focuses its proposed side for editing. */
  async open(req: InputRequest, index = 0, edit = false): Promise<void> {
    const files = req.diff ?? [];
    const f = files[index];
    if (!f) return;
    this.opened.add(req.requestId);
    const single = files.length === 1 && f.newText !== undefined && f.status !== 'deleted';
    const right = single ? this.proposedUri(req, f) : this.baseUri(req, f, 'new', f.newText ?? f.diff ?? '');
    const left = this.leftUri(req, f);
    if (single && !this.reviews.has(req.requestId)) {
      const original = f.oldText ?? (f.status === 'added' ? '' : await this.readText(left));
      if (original !== undefined) this.reviews.set(req.requestId, new Review(req.requestId, f.path, original, f.newText ?? ''));
    }
    const title = `${path.basename(f.path)}: ${edit ? 'edit before accepting' : 'proposed by agentd'}`;
    await vscode.commands.executeCommand('vscode.diff', left, right, title, { preview: false, preserveFocus: !edit });
  }

  /** The user's version of a single-file write, if they changed the proposal. */
  async editedContent(requestId: string): Promise<string | undefined> {
    const p = this.proposals.get(requestId);
    if (!p || !this.edited.has(requestId)) return undefined;
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === p.uri.toString());
    if (doc?.isDirty) await doc.save();
    const text = doc ? doc.getText() : new TextDecoder().decode(this.files.get(p.uri.toString())?.data ?? new Uint8Array());
    return text === p.text ? undefined : text;
  }

  /** Closes the diffs of every request that is no longer open. */
  async closeExcept(open: Set<string>): Promise<void> {
    for (const id of [...this.opened]) if (!open.has(id)) await this.close(id);
  }

  /** The request is over: close its diff tabs and forget its files. */
  async close(requestId: string): Promise<void> {
    const p = this.proposals.get(requestId);
    const mine = (u: vscode.Uri | undefined) => !!u && (u.scheme === PROPOSED_SCHEME || u.scheme === BASE_SCHEME) && requestOf(u) === requestId;
    const tabs: vscode.Tab[] = [];
    for (const group of vscode.window.tabGroups.all) {
      for (const tab of group.tabs) {
        const input = tab.input;
        if (input instanceof vscode.TabInputTextDiff ? mine(input.modified) || mine(input.original) : input instanceof vscode.TabInputText && mine(input.uri)) tabs.push(tab);
      }
    }
    if (p) {
      // Saved first, so that closing a changed proposal does not ask whether to save it.
      const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === p.uri.toString());
      if (doc?.isDirty) await doc.save();
    }
    if (tabs.length) await vscode.window.tabGroups.close(tabs, true);
    if (p) this.files.delete(p.uri.toString());
    for (const k of [...this.base.keys()]) if (requestOf(vscode.Uri.parse(k)) === requestId) this.base.delete(k);
    this.proposals.delete(requestId);
    this.reviews.delete(requestId);
    this.opened.delete(requestId);
    if (this.edited.delete(requestId)) this.editedEvents.fire();
  }

  private proposedUri(req: InputRequest, f: FileDiff): vscode.Uri {
    // The path is the file's, so the editor's title and breadcrumbs name it; the request is in the query.
    const uri = vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: `/${f.path}`, query: `req=${req.requestId}` });
    if (!this.proposals.has(req.requestId)) {
      const text = f.newText ?? '';
      this.proposals.set(req.requestId, { uri, text });
      const now = Date.now();
      this.files.set(uri.toString(), { data: new TextEncoder().encode(text), ctime: now, mtime: now });
    }
    return uri;
  }

  private baseUri(req: InputRequest, f: FileDiff, side: string, text: string): vscode.Uri {
    const uri = vscode.Uri.from({ scheme: BASE_SCHEME, path: `/${f.path}`, query: `req=${req.requestId}&side=${side}` });
    this.base.set(uri.toString(), text);
    return uri;
  }

  /** The file as it is now: on disk when it exists, else what the daemon sent (or nothing). */
  private leftUri(req: InputRequest, f: FileDiff): vscode.Uri {
    if (f.oldText !== undefined || f.status === 'added') return this.baseUri(req, f, 'old', f.oldText ?? '');
    const root = this.root();
    return root ? vscode.Uri.joinPath(root, f.oldPath ?? f.path) : vscode.Uri.file(f.oldPath ?? f.path);
  }

  private checkEdited(doc: vscode.TextDocument): void {
    for (const [id, p] of this.proposals) {
      if (p.uri.toString() !== doc.uri.toString()) continue;
      const text = doc.getText();
      const r = this.reviews.get(id);
      const changed = r !== undefined && r.current !== text;
      r?.update(text);
      const was = this.edited.has(id);
      const now = text !== p.text;
      if (now) this.edited.add(id);
      else this.edited.delete(id);
      // The panel shows the user's version as it changes, not only when it starts to differ.
      if (was !== now || (now && changed)) this.editedEvents.fire();
      if (changed) this.lensEvents.fire();
    }
  }

  private async readText(uri: vscode.Uri): Promise<string | undefined> {
    try {
      return new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
    } catch {
      return undefined;
    }
  }

  // ---- TextDocumentContentProvider (the read-only sides) ----
  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.base.get(uri.toString()) ?? '';
  }

  // ---- FileSystemProvider (the editable proposed side) ----
  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    const f = this.files.get(uri.toString());
    if (!f) throw vscode.FileSystemError.FileNotFound(uri);
    return { type: vscode.FileType.File, ctime: f.ctime, mtime: f.mtime, size: f.data.byteLength };
  }

  readDirectory(): [string, vscode.FileType][] {
    return [];
  }

  createDirectory(): void {
    throw vscode.FileSystemError.NoPermissions('proposed files have no folders');
  }

  readFile(uri: vscode.Uri): Uint8Array {
    const f = this.files.get(uri.toString());
    if (!f) throw vscode.FileSystemError.FileNotFound(uri);
    return f.data;
  }

  writeFile(uri: vscode.Uri, content: Uint8Array): void {
    const f = this.files.get(uri.toString());
    if (!f) throw vscode.FileSystemError.NoPermissions('only a proposed file can be saved here');
    f.data = content;
    f.mtime = Date.now();
    this.fileEvents.fire([{ type: vscode.FileChangeType.Changed, uri }]);
  }

  delete(): void {
    throw vscode.FileSystemError.NoPermissions('proposed files cannot be deleted');
  }

  rename(): void {
    throw vscode.FileSystemError.NoPermissions('proposed files cannot be renamed');
  }
}

function requestOf(u: vscode.Uri): string | undefined {
  return /(?:^|&)req=([^&]+)/.exec(u.query)?.[1];
}
