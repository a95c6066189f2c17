// Where the context the user attaches comes from in VS Code: the active editor's file and
// selection, workspace files and folders, the Problems list and the terminal's selection; and the
// workspace's paths for `@` mentions.

import * as vscode from 'vscode';
import { Attachment, problemsText } from './context';

const EXCLUDE = '**/{node_modules,.git,out,dist,build,.e2e-cache,.venv,__pycache__}/**';
const MAX_FILES = 5000;

export class WorkspacePaths implements vscode.Disposable {
  private cache?: Promise<{ files: string[]; folders: string[] }>;
  private readonly watcher = vscode.workspace.createFileSystemWatcher('**/*', false, true, false);

  constructor() {
    this.watcher.onDidCreate(() => (this.cache = undefined));
    this.watcher.onDidDelete(() => (this.cache = undefined));
  }

  dispose(): void {
    this.watcher.dispose();
  }

  /** Workspace-relative files and folders (folders end with `/`). */
  all(): Promise<{ files: string[]; folders: string[] }> {
    this.cache ??= (async () => {
      const uris = await vscode.workspace.findFiles('**/*', EXCLUDE, MAX_FILES);
      const files = uris.map((u) => vscode.workspace.asRelativePath(u, false)).sort();
      const folders = new Set<string>();
      for (const f of files) {
        const parts = f.split('/');
        for (let i = 1; i < parts.length; i++) folders.add(`${parts.slice(0, i).join('/')}/`);
      }
      return { files, folders: [...folders].sort() };
    })();
    return this.cache;
  }

  async kindOf(p: string): Promise<'file' | 'folder' | undefined> {
    const { files, folders } = await this.all();
    if (files.includes(p)) return 'file';
    if (folders.includes(p.endsWith('/') ? p : `${p}/`)) return 'folder';
    return undefined;
  }
}

export function relPath(uri: vscode.Uri): string {
  return vscode.workspace.getWorkspaceFolder(uri) ? vscode.workspace.asRelativePath(uri, false) : uri.fsPath;
}

/** The active editor's selection (or its current line when `orLine`), as an attachment. */
export function selectionAttachment(orLine = false): Attachment | undefined {
  const ed = vscode.window.activeTextEditor;
  if (!ed || (ed.document.uri.scheme !== 'file' && ed.document.uri.scheme !== 'untitled')) return undefined;
  const sel = ed.selection;
  if (sel.isEmpty && !orLine) return undefined;
  const endLine = sel.end.character === 0 && sel.end.line > sel.start.line ? sel.end.line : sel.end.line + 1;
  return {
    kind: 'selection',
    selection: {
      path: ed.document.uri.scheme === 'file' ? relPath(ed.document.uri) : ed.document.uri.toString(),
      startLine: sel.start.line + 1,
      endLine,
      text: ed.document.getText(sel.isEmpty ? ed.document.lineAt(sel.start.line).range : sel),
    },
  };
}

export function activeFileAttachment(): Attachment | undefined {
  const ed = vscode.window.activeTextEditor;
  if (!ed || ed.document.uri.scheme !== 'file') return undefined;
  return { kind: 'file', path: relPath(ed.document.uri) };
}

export function problemsAttachment(): Attachment | undefined {
  const items: Parameters<typeof problemsText>[0] = [];
  const sev = ['error', 'warning', 'info', 'hint'] as const;
  for (const [uri, diags] of vscode.languages.getDiagnostics()) {
    for (const d of diags) items.push({ path: relPath(uri), line: d.range.start.line + 1, severity: sev[d.severity] ?? 'info', message: d.message, source: d.source });
  }
  if (!items.length) return undefined;
  const { text, count } = problemsText(items);
  return { kind: 'problems', text, count };
}

/**
 * The active terminal's selection. VS Code has no API for it: copy it to the clipboard through
 * the terminal's own command, read it, and put the clipboard back.
 */
export async function terminalAttachment(): Promise<Attachment | undefined> {
  if (!vscode.window.activeTerminal) return undefined;
  const saved = await vscode.env.clipboard.readText();
  const marker = `agentd-no-selection-${Date.now()}`;
  await vscode.env.clipboard.writeText(marker);
  try {
    await vscode.commands.executeCommand('workbench.action.terminal.copySelection');
    const text = await vscode.env.clipboard.readText();
    return text && text !== marker ? { kind: 'terminal', text: text.replace(/\s+$/, '') } : undefined;
  } finally {
    await vscode.env.clipboard.writeText(saved);
  }
}

type PickItem = vscode.QuickPickItem & { run: () => Promise<Attachment[] | undefined> };

/** The context picker: what to attach to the next prompt. */
export async function pickContext(paths: WorkspacePaths): Promise<Attachment[]> {
  const items: PickItem[] = [];
  const active = activeFileAttachment();
  const sel = selectionAttachment();
  if (active) items.push({ label: '$(file) Active file', description: active.kind === 'file' ? active.path : '', run: async () => [active] });
  if (sel && sel.kind === 'selection') items.push({ label: '$(selection) Selection', description: `${sel.selection.path}:${sel.selection.startLine}–${sel.selection.endLine}`, run: async () => [sel] });
  items.push({ label: '$(files) Files…', description: 'pick workspace files', run: () => pickPaths(paths, 'file') });
  items.push({ label: '$(folder) Folder…', description: 'pick a workspace folder', run: () => pickPaths(paths, 'folder') });
  const problems = problemsAttachment();
  items.push({
    label: '$(warning) Problems',
    description: problems && problems.kind === 'problems' ? `${problems.count} in the Problems list` : 'the Problems list is empty',
    run: async () => (problems ? [problems] : undefined),
  });
  items.push({
    label: '$(terminal) Terminal selection',
    description: vscode.window.activeTerminal ? `from ${vscode.window.activeTerminal.name}` : 'no terminal is open',
    run: async () => {
      const t = await terminalAttachment();
      if (!t) void vscode.window.showInformationMessage('agentd: select some text in the terminal first.');
      return t ? [t] : undefined;
    },
  });
  const pick = await vscode.window.showQuickPick(items, { title: 'agentd: Add context', placeHolder: 'What goes along with your next prompt' });
  return (await pick?.run()) ?? [];
}

async function pickPaths(paths: WorkspacePaths, kind: 'file' | 'folder'): Promise<Attachment[] | undefined> {
  const { files, folders } = await paths.all();
  const list = kind === 'file' ? files : folders;
  const picked = await vscode.window.showQuickPick(
    list.map((p) => ({ label: p })),
    { title: kind === 'file' ? 'agentd: Attach files' : 'agentd: Attach a folder', canPickMany: kind === 'file', matchOnDescription: true },
  );
  if (!picked) return undefined;
  const arr = Array.isArray(picked) ? picked : [picked];
  return arr.map((p) => ({ kind, path: p.label.replace(/\/$/, '') }) as Attachment);
}
