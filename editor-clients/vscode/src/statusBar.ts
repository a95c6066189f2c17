// The status bar item: mirrors the panel (how many requests wait, whether a run is working) in
// human words, and a click goes to the panel — to the oldest open request when one waits.

import * as vscode from 'vscode';
import { IndexProgress } from './agent';
import { StatusInput, mcpSummary, statusText, statusTooltip } from './words';

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 100);

  constructor() {
    this.item.name = 'agentd';
  }

  update(s: StatusInput & { detail?: string; kinds: string[]; activeRuns: number }): void {
    const { icon, text, severity } = statusText(s);
    const parts = [`${icon} ${text}`];
    if (s.index?.active) parts.push(`$(database) index ${s.index.percentage !== undefined ? `${Math.round(s.index.percentage)}%` : '…'}`);
    this.item.text = parts.join('  ');
    this.item.tooltip = new vscode.MarkdownString(statusTooltip(s));
    this.item.command = s.waiting > 0 ? 'agentd.focusRequest' : 'agentd.showPanel';
    this.item.backgroundColor =
      severity === 'error' ? new vscode.ThemeColor('statusBarItem.errorBackground') : severity === 'warning' ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
  }
}

/** Indexing progress in the status bar area (never a notification over the editor). */
export class IndexProgressView {
  private reportTo?: (p: IndexProgress) => void;

  report(p: IndexProgress): void {
    if (this.reportTo || !p.active) {
      this.reportTo?.(p);
      return;
    }
    void vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'agentd index' }, (progress) =>
      new Promise<void>((resolve) => {
        this.reportTo = (q) => {
          if (!q.active) {
            this.reportTo = undefined;
            resolve();
            return;
          }
          progress.report({ message: `${q.message ?? q.title ?? 'indexing'}${q.percentage !== undefined ? ` (${Math.round(q.percentage)}%)` : ''}` });
        };
        this.reportTo(p);
      }),
    );
  }
}

/** The MCP servers, when any is configured: connected of all, and a warning colour when one failed or waits for approval. */
export class McpStatusItem implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 99);

  constructor() {
    this.item.name = 'agentd MCP servers';
    this.item.command = 'agentd.mcpServers';
  }

  update(servers: readonly { name: string; state: string }[] | undefined): void {
    const sum = servers && mcpSummary(servers);
    if (!sum) {
      this.item.hide();
      return;
    }
    this.item.text = `$(plug) ${sum.text}`;
    this.item.tooltip = sum.tooltip;
    this.item.backgroundColor = sum.attention ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
  }
}
