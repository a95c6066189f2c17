// The daemon asks what VS Code's language servers know (docs/protocol.md "Language
// intelligence"): the diagnostics of files it just wrote, definitions, references, hovers,
// symbols, what the user has open and selected, and the unsaved text of open files. Each answer
// comes from VS Code's own providers (vscode.languages.getDiagnostics, the vscode.execute*Provider
// commands); `null` declines, and agentd asks its own servers then.

import * as vscode from 'vscode';
import { Method } from './protocol';
import { diagnostic, hover, isPositionParams, locations, pos, quietWindow, symbols } from './lspShapes';


/** Languages VS Code checks out of the box (its built-in TypeScript, JSON and CSS servers). */
const BUILTIN_CHECKED = new Set(['typescript', 'typescriptreact', 'javascript', 'javascriptreact', 'json', 'jsonc', 'css', 'scss', 'less']);

interface DiagnosticsParams {
  uris?: string[];
  fresh?: boolean;
  timeoutMs?: number;
}

function inTab(uri: vscode.Uri): boolean {
  return vscode.window.tabGroups.all.some((g) => g.tabs.some((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === uri.toString()));
}

export class LanguageAnswers implements vscode.Disposable {
  /** Languages some diagnostics were published for: a server covers them. */
  private readonly checked = new Set<string>(BUILTIN_CHECKED);
  private readonly disposables: vscode.Disposable[] = [];
  private readonly waiters = new Set<(uris: readonly vscode.Uri[]) => void>();

  constructor(
    private readonly log: (line: string) => void,
    /** A buffer under an inline edit's review holds agentd's proposal, not the user's text. */
    private readonly underReview: (uri: vscode.Uri) => boolean = () => false,
  ) {
    this.disposables.push(
      vscode.languages.onDidChangeDiagnostics((e) => {
        for (const uri of e.uris) {
          const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
          if (doc && vscode.languages.getDiagnostics(uri).length) this.checked.add(doc.languageId);
        }
        for (const w of [...this.waiters]) w(e.uris);
      }),
    );
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }

  /** The handlers, by method. */
  handlers(): Record<string, (params: unknown) => unknown> {
    return {
      [Method.editorDiagnostics]: (p) => this.diagnostics(p as DiagnosticsParams),
      [Method.editorDefinition]: (p) => this.atPosition(p, 'vscode.executeDefinitionProvider', locations),
      [Method.editorReferences]: (p) => this.atPosition(p, 'vscode.executeReferenceProvider', locations),
      [Method.editorHover]: (p) => this.hover(p),
      [Method.editorDocumentSymbols]: (p) => this.documentSymbols(p),
      [Method.editorWorkspaceSymbols]: (p) => this.workspaceSymbols(p),
      [Method.editorContext]: () => this.context(),
      [Method.editorReadFile]: (p) => this.readFile(p),
    };
  }

  private async diagnostics(p: DiagnosticsParams): Promise<{ items: unknown[] }> {
    const deadline = Date.now() + Math.max(200, (p.timeoutMs ?? 3000) - 150);
    const items = await Promise.all((p.uris ?? []).map((u) => this.diagnosticsOf(vscode.Uri.parse(u), !!p.fresh, deadline)));
    return { items };
  }

  private async diagnosticsOf(uri: vscode.Uri, fresh: boolean, deadline: number): Promise<Record<string, unknown>> {
    const out = (pending = false) => {
      const r: Record<string, unknown> = { uri: uri.toString(), diagnostics: vscode.languages.getDiagnostics(uri).map(diagnostic) };
      if (pending) r.pending = true;
      return r;
    };
    let doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    const wasOpen = !!doc;
    if (!doc) {
      try {
        doc = await vscode.workspace.openTextDocument(uri); // loaded, not shown: its servers check it
      } catch (e) {
        this.log(`editor/diagnostics: ${uri.toString()}: ${e instanceof Error ? e.message : e}`);
        return { uri: uri.toString(), covered: false, diagnostics: [] };
      }
    }
    if (!this.checked.has(doc.languageId)) return { uri: uri.toString(), covered: false, diagnostics: [] };
    if (!fresh && wasOpen) return out();
    // VS Code's TypeScript (and others) check only files that are in a tab: a file the agent just
    // changed opens in a preview tab, the focus staying where it is.
    if (fresh && !inTab(uri)) {
      await vscode.window.showTextDocument(doc, { preview: true, preserveFocus: true });
    }
    // The buffer must hold what is on disk before its diagnostics mean anything.
    let changed = !wasOpen;
    if (fresh && wasOpen && !doc.isDirty) changed = (await this.untilCurrent(doc, deadline)) || changed;
    const got = await this.untilDiagnostics(uri, changed ? deadline : Math.min(deadline, Date.now() + 1500));
    return out(!got && changed);
  }

  /** Waits (bounded) until an unmodified buffer holds the file's text on disk; true if it changed. */
  private async untilCurrent(doc: vscode.TextDocument, deadline: number): Promise<boolean> {
    let disk: string;
    try {
      disk = new TextDecoder().decode(await vscode.workspace.fs.readFile(doc.uri));
    } catch {
      return false;
    }
    if (doc.getText() === disk) return false;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, Math.max(0, deadline - Date.now()) / 2);
      const sub = vscode.workspace.onDidChangeTextDocument((e) => e.document === doc && doc.getText() === disk && done());
      function done() {
        clearTimeout(timer);
        sub.dispose();
        resolve();
      }
    });
    return true;
  }

  /**
   * Resolves true once the servers have published for uri and gone quiet (a server reports a
   * file's syntax first and its types a moment later: quietWindow), false at the deadline with
   * nothing published.
   */
  private untilDiagnostics(uri: vscode.Uri, deadline: number): Promise<boolean> {
    const start = Date.now();
    let settle: number | undefined;
    return new Promise((resolve) => {
      let got = false;
      let quiet: ReturnType<typeof setTimeout> | undefined;
      const finish = (v: boolean) => {
        clearTimeout(timer);
        if (quiet) clearTimeout(quiet);
        this.waiters.delete(w);
        resolve(v);
      };
      const w = (uris: readonly vscode.Uri[]) => {
        if (!uris.some((u) => u.toString() === uri.toString())) return;
        got = true;
        settle ??= quietWindow(Date.now() - start);
        if (quiet) clearTimeout(quiet);
        quiet = setTimeout(() => finish(true), Math.min(settle, Math.max(0, deadline - Date.now())));
      };
      const timer = setTimeout(() => finish(got), Math.max(0, deadline - Date.now()));
      this.waiters.add(w);
    });
  }

  private async atPosition<T>(p: unknown, command: string, shape: (r: T) => unknown[]): Promise<unknown[] | null> {
    if (!isPositionParams(p)) return null;
    const res = await vscode.commands.executeCommand<T>(command, vscode.Uri.parse(p.textDocument.uri), new vscode.Position(p.position.line, p.position.character));
    const list = shape(res);
    // Nothing found is most often no provider for the file: agentd then asks its own servers.
    return list.length ? list : null;
  }

  private async hover(p: unknown): Promise<unknown> {
    if (!isPositionParams(p)) return null;
    const res = await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', vscode.Uri.parse(p.textDocument.uri), new vscode.Position(p.position.line, p.position.character));
    return hover(res?.map((h) => ({ contents: h.contents.map((c) => (typeof c === 'string' ? c : { value: c.value, language: 'language' in c ? (c as { language: string }).language : undefined })) })));
  }

  private async documentSymbols(p: unknown): Promise<unknown> {
    const uri = (p as { textDocument?: { uri?: string } })?.textDocument?.uri;
    if (typeof uri !== 'string') return null;
    const res = await vscode.commands.executeCommand<(vscode.DocumentSymbol | vscode.SymbolInformation)[]>('vscode.executeDocumentSymbolProvider', vscode.Uri.parse(uri));
    return res?.length ? symbols(res) : null;
  }

  private async workspaceSymbols(p: unknown): Promise<unknown> {
    const query = (p as { query?: string })?.query ?? '';
    const res = await vscode.commands.executeCommand<vscode.SymbolInformation[]>('vscode.executeWorkspaceSymbolProvider', query);
    return res?.length ? symbols(res) : null;
  }

  /** What the user has in front of them: open files, the active one, the selection. */
  private context(): unknown {
    const files = new Set<string>();
    for (const group of vscode.window.tabGroups.all) {
      for (const tab of group.tabs) {
        const input = tab.input;
        if (input instanceof vscode.TabInputText && input.uri.scheme === 'file') files.add(input.uri.toString());
      }
    }
    const out: Record<string, unknown> = { openFiles: [...files] };
    const ed = vscode.window.activeTextEditor;
    if (ed?.document.uri.scheme === 'file') {
      out.activeFile = ed.document.uri.toString();
      if (!ed.selection.isEmpty) {
        out.selection = { uri: ed.document.uri.toString(), range: { start: pos(ed.selection.start), end: pos(ed.selection.end) }, text: ed.document.getText(ed.selection) };
      }
    }
    return out;
  }

  /** The buffer of an open file, unsaved changes included; null for a file that is not open. */
  private readFile(p: unknown): unknown {
    const uri = (p as { uri?: string })?.uri;
    const doc = typeof uri === 'string' ? vscode.workspace.textDocuments.find((d) => d.uri.toString() === vscode.Uri.parse(uri).toString()) : undefined;
    if (!doc || doc.isClosed || this.underReview(doc.uri)) return null;
    return { text: doc.getText(), version: doc.version, dirty: doc.isDirty };
  }
}
