// Tells the daemon which workspace files are open, changed, saved and closed
// (textDocument/did*): it ranks them higher in search and re-indexes saved files.

import * as vscode from 'vscode';
import { Rpc } from './daemon';
import { Method } from './protocol';

export class DocumentSync implements vscode.Disposable {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly disposables: vscode.Disposable[];

  constructor(private readonly rpc: Rpc) {
    this.disposables = [
      vscode.workspace.onDidOpenTextDocument((d) => this.didOpen(d)),
      vscode.workspace.onDidChangeTextDocument((e) => e.contentChanges.length && this.didChange(e.document)),
      vscode.workspace.onDidSaveTextDocument((d) => this.inWorkspace(d) && this.rpc.notify(Method.didSave, { textDocument: { uri: d.uri.toString() } })),
      vscode.workspace.onDidCloseTextDocument((d) => this.inWorkspace(d) && this.rpc.notify(Method.didClose, { textDocument: { uri: d.uri.toString() } })),
    ];
  }

  /** After every (re)connect: the daemon learns what is open now. */
  openAll(): void {
    for (const doc of vscode.workspace.textDocuments) this.didOpen(doc);
  }

  private inWorkspace(doc: vscode.TextDocument): boolean {
    return doc.uri.scheme === 'file' && !!vscode.workspace.getWorkspaceFolder(doc.uri);
  }

  private didOpen(doc: vscode.TextDocument): void {
    if (!this.inWorkspace(doc)) return;
    this.rpc.notify(Method.didOpen, { textDocument: { uri: doc.uri.toString(), languageId: doc.languageId, version: doc.version, text: doc.getText() } });
  }

  /** Coalesced per document: typing sends one didChange per pause. */
  private didChange(doc: vscode.TextDocument): void {
    if (!this.inWorkspace(doc)) return;
    const key = doc.uri.toString();
    clearTimeout(this.timers.get(key));
    this.timers.set(
      key,
      setTimeout(() => {
        this.timers.delete(key);
        this.rpc.notify(Method.didChange, { textDocument: { uri: key, version: doc.version }, contentChanges: [{ text: doc.getText() }] });
      }, 300),
    );
  }

  dispose(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    for (const d of this.disposables) d.dispose();
  }
}
