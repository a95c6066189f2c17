// The conversation panel: a webview view in agentd's activity-bar container. The extension host
// renders the HTML (render.ts) and posts it; the webview script (media/panel.js) swaps it in,
// keeps what the user was typing, the open/closed state of rows and the scroll position, and
// posts back the prompt box, the answers and the clicks.

import * as crypto from 'crypto';
import * as vscode from 'vscode';
import { PanelAnswer } from './requests';
import { PanelState, renderConversation } from './render';
import { PickersView, SettingField } from './settings';
import { ContextUse } from './protocol';

export type PanelMessage =
  | { type: 'ready' }
  | { type: 'ask'; text: string; images?: { mimeType: string; data: string; name?: string }[]; paths?: string[] }
  | { type: 'needImage'; id: string }
  | { type: 'queue'; text: string; images?: { mimeType: string; data: string; name?: string }[] }
  | { type: 'cancelRun'; runId: string }
  | { type: 'cancel' }
  | PanelAnswer
  | { type: 'openDiff'; requestId: string; index?: number }
  | { type: 'edit'; requestId: string }
  | { type: 'sessions' }
  | { type: 'closeSessions' }
  | { type: 'openSession'; sessionId: string }
  | { type: 'newSession' }
  | { type: 'pickContext' }
  | { type: 'detach'; key: string }
  | { type: 'mention'; query: string }
  | { type: 'setting'; field: SettingField; value: string }
  | { type: 'openFile'; path: string; line?: number; column?: number }
  | { type: 'resume'; runId: string }
  | { type: 'loadEarlier' }
  | { type: 'undoRun'; runId: string }
  | { type: 'undoCheckpoint'; runId: string; checkpoint: string }
  | { type: 'rewind'; runId: string }
  | { type: 'undoApply'; onConflict: string }
  | { type: 'undoClose' }
  | { type: 'slash'; query: string }
  | { type: 'mcpRefresh' }
  | { type: 'mcpAction'; name: string; action: string }
  | { type: 'autoDiff'; value: boolean }
  | { type: 'sessionSearch'; query: string }
  | { type: 'sessionRename'; sessionId: string }
  | { type: 'sessionDelete'; sessionId: string }
  | { type: 'renameSave'; sessionId: string; title: string }
  | { type: 'deleteConfirm'; sessionId: string }
  | { type: 'openTab'; sessionId: string }
  | { type: 'closeTab'; sessionId: string }
  | { type: 'rules' }
  | { type: 'rulesRefresh' }
  | { type: 'closeRules' }
  | { type: 'ruleEdit'; id: string }
  | { type: 'ruleRevoke'; id: string }
  | { type: 'ruleSave'; id: string; pattern: string; action: string }
  | { type: 'compact' }
  | { type: 'stopProcess'; sessionId: string; id: string }
  | { type: 'closeMcp' };

export interface PanelView extends PanelState {
  busy: boolean;
  chips: { key: string; label: string }[];
  pickers: PickersView;
  /** The context meter of the shown conversation, when known. */
  meter?: ContextUse & { busy: boolean };
  /** The conversation's run works: Enter steers it, Queue sends the next prompt. */
  steering?: boolean;
}

export class ConversationPanel implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly viewId = 'agentd.conversation';
  private view?: vscode.WebviewView;
  private timer?: NodeJS.Timeout;
  private pendingFocus?: { target: 'prompt' } | { target: 'request'; requestId?: string };
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly media: vscode.Uri,
    private readonly state: () => PanelView,
    private readonly onMessage: (m: PanelMessage) => void,
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    view.webview.options = { enableScripts: true, enableCommandUris: false, localResourceRoots: [this.media] };
    view.webview.html = shell(view.webview, this.media, crypto.randomBytes(16).toString('base64'));
    this.disposables.push(
      view.webview.onDidReceiveMessage((m: PanelMessage) => {
        if (m.type === 'ready') {
          this.flush();
          this.sendFocus();
        } else this.onMessage(m);
      }),
      view.onDidChangeVisibility(() => view.visible && this.flush()),
      view.onDidDispose(() => (this.view = undefined)),
    );
  }

  /** Shows the panel without taking the focus (it is created the first time). */
  async reveal(): Promise<void> {
    if (this.view) this.view.show(true);
    else await vscode.commands.executeCommand(`${ConversationPanel.viewId}.focus`);
  }

  /** Shows the panel and puts the caret in the prompt box, or in an open request's first field. */
  async focus(target: { target: 'prompt' } | { target: 'request'; requestId?: string }): Promise<void> {
    this.pendingFocus = target;
    await vscode.commands.executeCommand(`${ConversationPanel.viewId}.focus`);
    this.flush();
    this.sendFocus();
  }

  /** Schedules a re-render (coalesced: streaming sends many small updates). */
  update(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, 50);
  }

  post(message: unknown): void {
    void this.view?.webview.postMessage(message);
  }

  private sendFocus(): void {
    if (!this.view || !this.pendingFocus) return;
    this.post({ type: 'focus', ...this.pendingFocus });
    this.pendingFocus = undefined;
  }

  private flush(): void {
    if (!this.view) return;
    const s = this.state();
    this.post({ type: 'render', html: renderConversation(s), busy: s.busy, chips: s.chips, pickers: s.pickers, waiting: s.open.length, meter: s.meter, steering: s.steering });
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const d of this.disposables) d.dispose();
  }
}

function shell(webview: vscode.Webview, media: vscode.Uri, nonce: string): string {
  const csp = `default-src 'none'; style-src ${webview.cspSource}; img-src ${webview.cspSource} data:; script-src 'nonce-${nonce}';`;
  const css = webview.asWebviewUri(vscode.Uri.joinPath(media, 'panel.css'));
  const js = webview.asWebviewUri(vscode.Uri.joinPath(media, 'panel.js'));
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${css}">
<title>agentd</title>
</head>
<body>
<div id="conversation" role="log" aria-live="polite"></div>
<div id="composer">
  <div id="chips" aria-label="Context for the next prompt"></div>
  <div id="mentions" role="listbox" hidden></div>
  <div id="images" aria-label="Images for the next prompt"></div>
  <textarea id="prompt" placeholder="Ask agentd… (@ to mention a file, / for your commands; paste or drop an image; Enter sends, Shift+Enter for a new line)" aria-label="Prompt"></textarea>
  <div class="buttons">
    <button id="send" class="primary" title="Send (Enter)">Send</button>
    <button id="queue" class="secondary" title="Queue this prompt: it runs when the current run ends (Alt+Enter)" hidden>Queue</button>
    <button id="cancel" class="secondary" title="Cancel the run (Ctrl+Alt+K)" disabled>Cancel</button>
    <button id="attach" class="secondary" title="Add context: files, folders, the Problems list, the terminal's selection" aria-label="Add context">+</button>
    <span class="spacer"></span>
    <span id="waiting" class="waiting" role="button" tabindex="0" hidden></span>
  </div>
  <div class="pickers">
    <select id="model" title="The model this conversation uses (changed at once, from its next step)" aria-label="Model" hidden></select>
    <select id="effort" title="How hard the model thinks (reasoning effort)" aria-label="Reasoning effort" hidden></select>
    <select id="mode" title="Approval mode: what the agent may do without asking" aria-label="Approval mode"></select>
  </div>
  <div id="picker-error" class="request-error" hidden></div>
  <div id="meter" class="meter" hidden><span class="meter-bar" aria-hidden="true"><span class="meter-fill"></span><span class="meter-mark"></span></span> <span class="meter-text"></span> <button id="compact" class="link" title="Summarize the older turns now (the last turn is kept whole), so the conversation takes less of the model's window">Compact</button></div>
</div>
<script nonce="${nonce}" src="${js}"></script>
</body></html>`;
}
