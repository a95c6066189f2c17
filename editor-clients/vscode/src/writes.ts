// The proposed side of a write waiting for approval, as an editable document. "Open diff" shows
// the change in VS Code's diff editor; "Edit before accepting" does the same with the focus on the
// proposed side, which the user may change: accepting then sends their version as
// `editedContent`. The proposed files live in memory (a file system provider), so saving one
// writes nothing to disk and closing it never asks to save.

import * as path from 'path';
import * as vscode from 'vscode';
import { FileDiff, InputRequest } from './protocol';

export const PROPOSED_SCHEME = 'agentd-proposed';
export const BASE_SCHEME = 'agentd-base';

interface Entry {
  data: Uint8Array;
  ctime: number;
  mtime: number;
}

export class ProposedWrites implements vscode.FileSystemProvider, vscode.TextDocumentContentProvider, vscode.Disposable {
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
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly root: () => vscode.Uri | undefined) {
    this.disposables.push(
      vscode.workspace.registerFileSystemProvider(PROPOSED_SCHEME, this, { isCaseSensitive: true }),
      vscode.workspace.registerTextDocumentContentProvider(BASE_SCHEME, this),
      vscode.workspace.onDidChangeTextDocument((e) => e.document.uri.scheme === PROPOSED_SCHEME && this.checkEdited(e.document)),
    );
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.fileEvents.dispose();
    this.editedEvents.dispose();
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
      const was = this.edited.has(id);
      const now = doc.getText() !== p.text;
      if (was === now) return;
      if (now) this.edited.add(id);
      else this.edited.delete(id);
      this.editedEvents.fire();
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
