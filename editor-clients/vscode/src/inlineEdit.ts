// The inline edit (Ctrl+Alt+E on a selection): say what to change, see the change in the buffer,
// accept or reject each hunk (Cursor's Cmd-K, CodeCompanion's inline assistant). It is an ordinary
// run of agentd in a session of its own, in "ask" mode so the write waits for the user: the
// proposed text is put into the buffer (unsaved), each hunk gets Accept and Reject above it and a
// colour, and once every hunk is decided the buffer goes back to the file as it was and the
// answer goes to agentd, which writes the file (the user's version when they changed the model's),
// with its undo checkpoint, as for any approved write. Escape-like exits (the request resolved
// elsewhere, the run ending, Reject all) put the buffer back.

import * as path from 'path';
import * as vscode from 'vscode';
import { AgentController } from './agent';
import { inlinePrompt, inlineWrite } from './inline';
import { InputRequest } from './protocol';
import { RequestBook } from './requests';
import { Review, ReviewOutcome } from './review';
import { TERMINAL_STATES } from './protocol';

interface Pending {
  runId: string;
  sessionId: string;
  uri: vscode.Uri;
  path: string;
  label: string;
  /** The request under review in the buffer, once the write came. */
  review?: Review;
  requestId?: string;
  /** Resolves the progress notification. */
  done: () => void;
}

export interface InlineDeps {
  controller: AgentController;
  requests: RequestBook;
  /** Reviews a write in the diff editor instead (auto save would write the buffer before the user decides). */
  openDiff: (req: InputRequest) => Promise<void>;
  /** Sends the decision on a write (through the request book, as the panel does). */
  answer: (requestId: string, out: ReviewOutcome) => Promise<void>;
  relPath: (uri: vscode.Uri) => string;
  log: (line: string) => void;
}

export class InlineEdits implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly pending = new Map<string, Pending>(); // by run id
  private readonly lensEvents = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.lensEvents.event;
  private readonly added = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor('diffEditor.insertedLineBackground'),
    overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.addedForeground'),
    overviewRulerLane: vscode.OverviewRulerLane.Left,
  });
  private readonly removed = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    after: { color: new vscode.ThemeColor('gitDecoration.deletedResourceForeground'), margin: '0 0 0 2em', fontStyle: 'italic' },
    overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.deletedForeground'),
    overviewRulerLane: vscode.OverviewRulerLane.Left,
  });
  private readonly disposables: vscode.Disposable[] = [];
  /** Buffer edits of ours, which are not the user's typing. */
  private applying = 0;

  constructor(private readonly d: InlineDeps) {
    this.disposables.push(
      this.added,
      this.removed,
      vscode.languages.registerCodeLensProvider({ scheme: 'file' }, this),
      vscode.workspace.onDidChangeTextDocument((e) => this.typed(e.document)),
      // Saving a buffer under review writes the file as it was, never agentd's proposal: only an
      // accepted change reaches the disk, through agentd (its approval and its undo checkpoint).
      vscode.workspace.onWillSaveTextDocument((e) => {
        const p = this.reviewOf(e.document.uri);
        if (p?.review) e.waitUntil(Promise.resolve([vscode.TextEdit.replace(new vscode.Range(0, 0, e.document.lineCount, 0), p.review.original)]));
      }),
      vscode.workspace.onDidSaveTextDocument((doc) => {
        const p = this.reviewOf(doc.uri);
        if (p?.review) void this.setText(doc, p.review.current).then(() => this.decorateAll());
      }),
      vscode.window.onDidChangeVisibleTextEditors(() => this.decorateAll()),
    );
  }

  dispose(): void {
    for (const p of this.pending.values()) p.done();
    for (const x of this.disposables) x.dispose();
    this.lensEvents.dispose();
  }

  /** Asks what to change in the selection (or the current line) and starts the run. */
  async start(): Promise<void> {
    const ed = vscode.window.activeTextEditor;
    if (!ed || ed.document.uri.scheme !== 'file') {
      void vscode.window.showInformationMessage('agentd: open a file of the workspace and select the code to edit.');
      return;
    }
    if ([...this.pending.values()].some((p) => p.uri.toString() === ed.document.uri.toString())) {
      void vscode.window.showInformationMessage('agentd: an inline edit of this file is already under way; decide on it first.');
      return;
    }
    const sel = ed.selection;
    const startLine = sel.start.line + 1;
    const endLine = sel.isEmpty ? startLine : sel.end.character === 0 && sel.end.line > sel.start.line ? sel.end.line : sel.end.line + 1;
    const range = new vscode.Range(startLine - 1, 0, endLine - 1, ed.document.lineAt(endLine - 1).range.end.character);
    const rel = this.d.relPath(ed.document.uri);
    const label = `${rel}:${startLine === endLine ? startLine : `${startLine}–${endLine}`}`;
    const instruction = await vscode.window.showInputBox({
      title: `agentd: edit ${label}`,
      prompt: 'What should change? The change shows in the file, to accept or reject hunk by hunk.',
      placeHolder: 'e.g. rename Total to Sum and add a doc comment',
      ignoreFocusOut: true,
    });
    if (!instruction?.trim()) return;
    if (ed.document.isDirty) await ed.document.save(); // agentd reads the file from disk
    const { prompt, context } = inlinePrompt({ path: rel, startLine, endLine, text: ed.document.getText(range) }, instruction);
    let res;
    try {
      res = await this.d.controller.run({ prompt, context, approvalPolicy: 'ask' }, { prompt: `Edit ${label}: ${instruction.trim()}`, attached: [label] }, undefined, { background: true });
    } catch (e) {
      void vscode.window.showErrorMessage(`agentd: could not start the inline edit: ${e instanceof Error ? e.message : e}`);
      return;
    }
    const p: Pending = { runId: res.runId, sessionId: res.sessionId, uri: ed.document.uri, path: rel, label, done: () => undefined };
    this.pending.set(res.runId, p);
    this.d.log(`inline edit of ${label}: run ${res.runId}`);
    void vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `agentd: editing ${label}…`, cancellable: true },
      (_progress, token) =>
        new Promise<void>((resolve) => {
          p.done = resolve;
          token.onCancellationRequested(() => {
            void this.d.controller.cancel(p.runId).catch(() => undefined);
            resolve();
          });
        }),
    );
  }

  /** Called when the open requests or a run changed: a write of an inline edit goes into its buffer. */
  sync(): void {
    for (const p of this.pending.values()) {
      if (!p.requestId) {
        const open = this.d.requests.list().find((o) => o.req.runId === p.runId && inlineWrite(o.req, p.path));
        if (open) void this.begin(p, open.req);
      } else if (!this.d.requests.has(p.requestId)) {
        // Answered (by us or in the panel), cancelled, timed out: the buffer goes back to the file.
        void this.end(p);
      }
      const run = this.d.controller.store.get(p.runId);
      if (run && TERMINAL_STATES.has(run.state) && !p.review) {
        this.pending.delete(p.runId);
        p.done();
        if (run.state === 'completed' && run.resultText) void this.said(p, run.resultText);
        else if (run.state === 'failed') void vscode.window.showErrorMessage(`agentd: the inline edit of ${p.label} failed: ${run.error ?? 'no reason given'}`);
      }
    }
  }

  private async said(p: Pending, text: string): Promise<void> {
    const a = await vscode.window.showInformationMessage(`agentd (${p.label}): ${text.split('\n')[0].slice(0, 200)}`, 'Open in Panel');
    if (a) await this.d.controller.openSession(p.sessionId);
  }

  /** The write came: its text goes into the buffer, unsaved, hunk by hunk. */
  private async begin(p: Pending, req: InputRequest): Promise<void> {
    const w = inlineWrite(req, p.path)!;
    p.requestId = req.requestId;
    p.done();
    const doc = await vscode.workspace.openTextDocument(p.uri);
    if (vscode.workspace.getConfiguration('files', doc.uri).get<string>('autoSave', 'off') !== 'off') {
      // Auto save would write agentd's proposal before you decide: the diff editor shows it instead.
      this.pending.delete(p.runId);
      await this.d.openDiff(req);
      void vscode.window.showInformationMessage(`agentd: the edit of ${p.label} is in the diff editor (with auto save on, the file itself shows a change only once you accept it).`);
      return;
    }
    const ed = await vscode.window.showTextDocument(doc, { preserveFocus: false, preview: false });
    const original = w.oldText ?? doc.getText();
    if (doc.getText() !== original) {
      // The buffer was changed since agentd read the file: its change is reviewed in the diff editor.
      this.pending.delete(p.runId);
      await vscode.commands.executeCommand('agentd.focusRequest');
      void vscode.window.showWarningMessage(`agentd: ${p.label} changed since the edit began; review agentd's change in the panel.`);
      return;
    }
    p.review = new Review(req.requestId, p.path, original, w.newText);
    await this.setText(doc, w.newText);
    const first = p.review.hunks()[0];
    if (first) ed.revealRange(new vscode.Range(first.newStart, 0, first.newStart, 0), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    this.decorateAll();
    this.lensEvents.fire();
  }

  /** The request is over: the buffer goes back to the file, which agentd writes if it was accepted. */
  private async end(p: Pending): Promise<void> {
    this.pending.delete(p.runId);
    p.done();
    if (p.review) await this.restore(p);
    this.decorateAll();
    this.lensEvents.fire();
  }

  private async restore(p: Pending): Promise<void> {
    const doc = vscode.workspace.textDocuments.find((x) => x.uri.toString() === p.uri.toString());
    if (!doc?.isDirty) return;
    await vscode.window.showTextDocument(doc, { preserveFocus: false, preview: false });
    this.applying++;
    try {
      await vscode.commands.executeCommand('workbench.action.files.revert');
    } finally {
      this.applying--;
    }
  }

  // ---- hunk by hunk ----

  /** A buffer that holds an inline edit's proposal (not what the user wrote). */
  reviewing(uri: vscode.Uri): boolean {
    return [...this.pending.values()].some((p) => p.review && p.uri.toString() === uri.toString());
  }

  /** A run of an inline edit (its write is shown in the buffer, not the diff editor). */
  ownsRun(runId: string): boolean {
    return this.pending.has(runId);
  }

  /** The inline review a request belongs to. */
  owns(requestId: string): boolean {
    return [...this.pending.values()].some((p) => p.requestId === requestId && p.review);
  }

  acceptHunk(requestId: string, key: string): void {
    const p = this.byRequest(requestId);
    if (!p?.review?.accept(key)) return;
    this.decorateAll();
    this.lensEvents.fire();
    void this.settle(p);
  }

  async rejectHunk(requestId: string, key: string): Promise<void> {
    const p = this.byRequest(requestId);
    const text = p?.review?.rejected(key);
    if (!p?.review || text === undefined) return;
    const doc = await vscode.workspace.openTextDocument(p.uri);
    await this.setText(doc, text);
    p.review.update(text);
    this.decorateAll();
    this.lensEvents.fire();
    void this.settle(p);
  }

  /** Accept all or Reject all (the top lens). */
  async decideAll(requestId: string, accept: boolean): Promise<void> {
    const p = this.byRequest(requestId);
    if (!p?.review) return;
    await this.finish(p, accept ? p.review.accepting() : { decision: 'reject_once', reason: 'The user rejected the inline edit.' });
  }

  private async settle(p: Pending): Promise<void> {
    const out = p.review?.outcome();
    if (out) await this.finish(p, out);
  }

  private async finish(p: Pending, out: ReviewOutcome): Promise<void> {
    if (!p.requestId) return;
    const id = p.requestId;
    await this.restore(p);
    p.review = undefined;
    this.decorateAll();
    this.lensEvents.fire();
    await this.d.answer(id, out);
  }

  private reviewOf(uri: vscode.Uri): Pending | undefined {
    return [...this.pending.values()].find((p) => p.review && p.uri.toString() === uri.toString());
  }

  private byRequest(requestId: string): Pending | undefined {
    return [...this.pending.values()].find((p) => p.requestId === requestId);
  }

  private async setText(doc: vscode.TextDocument, text: string): Promise<void> {
    const edit = new vscode.WorkspaceEdit();
    edit.replace(doc.uri, new vscode.Range(0, 0, doc.lineCount, 0), text);
    this.applying++;
    try {
      await vscode.workspace.applyEdit(edit);
    } finally {
      this.applying--;
    }
  }

  /** The user typed in a buffer under review: what they wrote is part of their version. */
  private typed(doc: vscode.TextDocument): void {
    if (this.applying) return;
    for (const p of this.pending.values()) {
      if (!p.review || p.uri.toString() !== doc.uri.toString()) continue;
      p.review.update(doc.getText());
      this.decorateAll();
      this.lensEvents.fire();
    }
  }

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const p = [...this.pending.values()].find((x) => x.review && x.uri.toString() === doc.uri.toString());
    if (!p?.review || !p.requestId) return [];
    const r = p.review;
    const top = new vscode.Range(0, 0, 0, 0);
    const hunks = r.hunks();
    const first = hunks.length ? new vscode.Range(hunks[0].newStart, 0, hunks[0].newStart, 0) : top;
    const lenses = [
      new vscode.CodeLens(first, { title: `$(sparkle) agentd: ${path.basename(p.path)}`, command: '' }),
      new vscode.CodeLens(first, { title: '$(check-all) Accept all', command: 'agentd.review.acceptAll', arguments: [p.requestId] }),
      new vscode.CodeLens(first, { title: '$(close-all) Reject all', command: 'agentd.review.rejectAll', arguments: [p.requestId] }),
    ];
    for (const h of hunks) {
      const at = new vscode.Range(Math.min(h.newStart, doc.lineCount - 1), 0, Math.min(h.newStart, doc.lineCount - 1), 0);
      if (r.isAccepted(h)) {
        lenses.push(new vscode.CodeLens(at, { title: '$(pass-filled) Accepted', command: '' }));
        continue;
      }
      const key = Review.key(h);
      const what = `${h.newLines.length ? `+${h.newLines.length}` : ''}${h.newLines.length && h.oldLines.length ? ' ' : ''}${h.oldLines.length ? `−${h.oldLines.length}` : ''}`;
      lenses.push(new vscode.CodeLens(at, { title: `$(check) Accept (${what})`, command: 'agentd.review.acceptHunk', arguments: [p.requestId, key] }));
      lenses.push(new vscode.CodeLens(at, { title: '$(discard) Reject', command: 'agentd.review.rejectHunk', arguments: [p.requestId, key] }));
    }
    return lenses;
  }

  /** Colours the added lines and says, after the line where it was, what was removed. */
  private decorateAll(): void {
    for (const ed of vscode.window.visibleTextEditors) {
      const p = [...this.pending.values()].find((x) => x.review && x.uri.toString() === ed.document.uri.toString());
      if (!p?.review) {
        ed.setDecorations(this.added, []);
        ed.setDecorations(this.removed, []);
        continue;
      }
      const added: vscode.Range[] = [];
      const removed: vscode.DecorationOptions[] = [];
      for (const h of p.review.hunks()) {
        for (let i = 0; i < h.newLines.length; i++) if (h.newStart + i < ed.document.lineCount) added.push(new vscode.Range(h.newStart + i, 0, h.newStart + i, 0));
        if (h.oldLines.length) {
          const line = Math.min(ed.document.lineCount - 1, Math.max(0, h.newLines.length ? h.newStart + h.newLines.length - 1 : h.newStart - 1));
          const first = h.oldLines.find((l) => l.trim()) ?? '';
          const hover = new vscode.MarkdownString();
          hover.appendMarkdown('**Removed by agentd:**\n');
          hover.appendCodeblock(h.oldLines.join('\n'));
          removed.push({
            range: new vscode.Range(line, 0, line, 0),
            hoverMessage: hover,
            renderOptions: { after: { contentText: `− ${h.oldLines.length === 1 ? first.trim().slice(0, 60) : `${h.oldLines.length} lines removed (${first.trim().slice(0, 40)}…)`}` } },
          });
        }
      }
      ed.setDecorations(this.added, added);
      ed.setDecorations(this.removed, removed);
    }
  }
}
