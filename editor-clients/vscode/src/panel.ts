// The conversation panel: a webview view in agentd's activity-bar container. The extension host
// renders the HTML (render.ts) and posts it; the webview only swaps it in, keeps the open/closed
// state of <details> and the scroll position, and posts back the prompt box and button clicks.

import * as crypto from 'crypto';
import * as vscode from 'vscode';
import { PanelState, renderConversation } from './render';

export type PanelMessage =
  | { type: 'ask'; text: string }
  | { type: 'cancel' }
  | { type: 'answer'; requestId: string }
  | { type: 'decide'; requestId: string; decision: string }
  | { type: 'newSession' }
  | { type: 'sessions' }
  | { type: 'ready' };

export class ConversationPanel implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly viewId = 'agentd.conversation';
  private view?: vscode.WebviewView;
  private timer?: NodeJS.Timeout;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly state: () => PanelState & { busy: boolean },
    private readonly onMessage: (m: PanelMessage) => void,
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    view.webview.options = { enableScripts: true, enableCommandUris: false, localResourceRoots: [] };
    view.webview.html = shell(view.webview, crypto.randomBytes(16).toString('base64'));
    this.disposables.push(
      view.webview.onDidReceiveMessage((m: PanelMessage) => {
        if (m.type === 'ready') this.flush();
        else this.onMessage(m);
      }),
      view.onDidChangeVisibility(() => view.visible && this.flush()),
      view.onDidDispose(() => (this.view = undefined)),
    );
  }

  /**
   * Shows the panel. Once it exists it is shown without taking the focus, so a prompt that is
   * opening at the same moment keeps it; the first time, the view must be focused to be created.
   */
  async reveal(preserveFocus = true): Promise<void> {
    if (this.view && preserveFocus) this.view.show(true);
    else await vscode.commands.executeCommand(`${ConversationPanel.viewId}.focus`);
  }

  /** Schedules a re-render (coalesced: streaming sends many small updates). */
  update(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, 60);
  }

  private flush(): void {
    if (!this.view) return;
    const s = this.state();
    void this.view.webview.postMessage({ type: 'render', html: renderConversation(s), busy: s.busy });
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const d of this.disposables) d.dispose();
  }
}

function shell(webview: vscode.Webview, nonce: string): string {
  const csp = `default-src 'none'; style-src ${webview.cspSource} 'unsafe-inline'; img-src ${webview.cspSource} https: data:; script-src 'nonce-${nonce}';`;
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>agentd</title>
<style>
  body { padding: 0; margin: 0; font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); display: flex; flex-direction: column; height: 100vh; }
  #conversation { flex: 1; overflow-y: auto; padding: 8px 12px; }
  .run { border-bottom: 1px solid var(--vscode-panel-border, #8884); padding: 8px 0 10px; }
  .prompt { background: var(--vscode-textBlockQuote-background, #8882); border-radius: 6px; padding: 6px 8px; margin-bottom: 8px; }
  .who, .label { font-size: 0.85em; font-weight: 600; opacity: 0.75; text-transform: uppercase; letter-spacing: 0.04em; margin: 4px 0 2px; }
  .prompt-text { white-space: pre-wrap; }
  .context { font-size: 0.85em; opacity: 0.75; margin-top: 4px; }
  .answer { line-height: 1.45; }
  .answer p { margin: 4px 0 8px; }
  .answer pre, pre { background: var(--vscode-textCodeBlock-background, #8881); padding: 6px 8px; border-radius: 4px; overflow-x: auto; font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); white-space: pre; }
  code { font-family: var(--vscode-editor-font-family); }
  .plan { border-left: 3px solid var(--vscode-focusBorder); padding: 2px 8px; margin: 6px 0; }
  .plan ul { list-style: none; padding: 0; margin: 2px 0; }
  .step-completed { opacity: 0.7; } .step-completed .step-icon { color: var(--vscode-testing-iconPassed, #3c3); }
  .step-in_progress { font-weight: 600; } .step-in_progress .step-icon { color: var(--vscode-progressBar-background, #38f); }
  .step-failed .step-icon { color: var(--vscode-errorForeground, #f44); }
  details.tool { border: 1px solid var(--vscode-panel-border, #8884); border-radius: 4px; margin: 6px 0; padding: 2px 6px; }
  details > summary { cursor: pointer; }
  .tool-status { opacity: 0.7; font-size: 0.9em; }
  pre.tool-output-live { max-height: 20em; overflow-y: auto; }
  .output-omitted { font-size: 0.85em; opacity: 0.7; font-style: italic; }
  .tool-error .tool-status, .tool-failed .tool-status { color: var(--vscode-errorForeground, #f44); opacity: 1; }
  .diff .add { color: var(--vscode-gitDecoration-addedResourceForeground, #3a3); background: var(--vscode-diffEditor-insertedTextBackground, #3a32); display: inline-block; min-width: 100%; }
  .diff .del { color: var(--vscode-gitDecoration-deletedResourceForeground, #c33); background: var(--vscode-diffEditor-removedTextBackground, #c332); display: inline-block; min-width: 100%; }
  .diff .hunk { color: var(--vscode-textLink-foreground); } .diff .meta { opacity: 0.7; }
  .fstatus { font-weight: 700; font-family: var(--vscode-editor-font-family); }
  .fstatus-added { color: var(--vscode-gitDecoration-addedResourceForeground, #3a3); }
  .fstatus-modified { color: var(--vscode-gitDecoration-modifiedResourceForeground, #c93); }
  .fstatus-deleted { color: var(--vscode-gitDecoration-deletedResourceForeground, #c33); }
  .files-changed { margin: 6px 0; }
  .request { margin: 6px 0; padding: 4px 6px; border-radius: 4px; background: var(--vscode-editorWidget-background, #8881); }
  .request-open { border: 1px solid var(--vscode-inputValidation-warningBorder, #c93); }
  .request-outcome { opacity: 0.75; font-style: italic; }
  .decisions { display: flex; flex-wrap: wrap; gap: 4px; margin-top: 6px; }
  .run-footer { font-size: 0.85em; opacity: 0.8; margin-top: 6px; }
  .run-state-completed { color: var(--vscode-testing-iconPassed, #3c3); }
  .run-state-failed, .run-error { color: var(--vscode-errorForeground, #f44); }
  .run-state-cancelled { color: var(--vscode-disabledForeground, #888); }
  .spinner { display: inline-block; width: 8px; height: 8px; margin-right: 4px; border: 2px solid currentColor; border-right-color: transparent; border-radius: 50%; animation: spin 0.8s linear infinite; }
  @keyframes spin { to { transform: rotate(360deg); } }
  .empty { opacity: 0.7; padding: 12px 0; }
  .daemon { padding: 4px 6px; margin-bottom: 6px; background: var(--vscode-inputValidation-warningBackground, #c932); }
  #composer { border-top: 1px solid var(--vscode-panel-border, #8884); padding: 8px 12px; }
  #prompt { width: 100%; box-sizing: border-box; min-height: 48px; resize: vertical; background: var(--vscode-input-background); color: var(--vscode-input-foreground); border: 1px solid var(--vscode-input-border, transparent); font-family: inherit; font-size: inherit; padding: 4px 6px; }
  #prompt:focus { outline: 1px solid var(--vscode-focusBorder); }
  .buttons { display: flex; gap: 6px; margin-top: 6px; }
  button { background: var(--vscode-button-background); color: var(--vscode-button-foreground); border: none; padding: 4px 10px; cursor: pointer; border-radius: 2px; }
  button.secondary { background: var(--vscode-button-secondaryBackground); color: var(--vscode-button-secondaryForeground); }
  button.link { background: none; color: var(--vscode-textLink-foreground); padding: 0 2px; text-decoration: underline; }
  button:disabled { opacity: 0.5; cursor: default; }
</style></head>
<body>
<div id="conversation" role="log" aria-live="polite"></div>
<div id="composer">
  <textarea id="prompt" placeholder="Ask agentd… (Enter to send, Shift+Enter for a new line)" aria-label="Prompt"></textarea>
  <div class="buttons">
    <button id="send">Send</button>
    <button id="cancel" class="secondary" disabled>Cancel</button>
    <span style="flex:1"></span>
    <button id="sessions" class="secondary" title="Show sessions">Sessions</button>
    <button id="new" class="secondary" title="Start a new session">New</button>
  </div>
</div>
<script nonce="${nonce}">
  const vscode = acquireVsCodeApi();
  const conv = document.getElementById('conversation');
  const prompt = document.getElementById('prompt');
  const cancel = document.getElementById('cancel');
  const saved = vscode.getState() || {};
  if (saved.draft) prompt.value = saved.draft;
  function send() {
    const text = prompt.value.trim();
    if (!text) return;
    vscode.postMessage({ type: 'ask', text });
    prompt.value = '';
    vscode.setState({ draft: '' });
  }
  document.getElementById('send').addEventListener('click', send);
  prompt.addEventListener('keydown', (e) => { if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); send(); } });
  prompt.addEventListener('input', () => vscode.setState({ draft: prompt.value }));
  cancel.addEventListener('click', () => vscode.postMessage({ type: 'cancel' }));
  document.getElementById('new').addEventListener('click', () => vscode.postMessage({ type: 'newSession' }));
  document.getElementById('sessions').addEventListener('click', () => vscode.postMessage({ type: 'sessions' }));
  conv.addEventListener('click', (e) => {
    const b = e.target.closest('[data-action]');
    if (!b) return;
    if (b.dataset.action === 'answer') vscode.postMessage({ type: 'answer', requestId: b.dataset.request });
    if (b.dataset.action === 'decide') {
      conv.querySelectorAll('[data-action="decide"]').forEach((x) => (x.disabled = true));
      vscode.postMessage({ type: 'decide', requestId: b.dataset.request, decision: b.dataset.decision });
    }
  });
  window.addEventListener('message', (e) => {
    const m = e.data;
    if (m.type !== 'render') return;
    const atBottom = conv.scrollHeight - conv.scrollTop - conv.clientHeight < 40;
    const open = new Set(), closed = new Set(), live = new Set();
    conv.querySelectorAll('details[data-id]').forEach((d) => {
      (d.open ? open : closed).add(d.dataset.id);
      if ('live' in d.dataset) live.add(d.dataset.id);
    });
    // A running command's output keeps showing its end, unless the user scrolled up in it.
    const outScroll = new Map();
    conv.querySelectorAll('pre.tool-output-live[data-id]').forEach((p) => {
      outScroll.set(p.dataset.id, p.scrollHeight - p.scrollTop - p.clientHeight < 20 ? -1 : p.scrollTop);
    });
    conv.innerHTML = m.html;
    conv.querySelectorAll('details[data-id]').forEach((d) => {
      // A tool call that just started streaming output opens (the markup says so); after that the
      // user's choice wins.
      if ('live' in d.dataset && !live.has(d.dataset.id)) return;
      if (open.has(d.dataset.id)) d.open = true;
      else if (closed.has(d.dataset.id)) d.open = false;
    });
    conv.querySelectorAll('pre.tool-output-live[data-id]').forEach((p) => {
      const top = outScroll.get(p.dataset.id);
      p.scrollTop = top === undefined || top < 0 ? p.scrollHeight : top;
    });
    cancel.disabled = !m.busy;
    if (atBottom) conv.scrollTop = conv.scrollHeight;
  });
  vscode.postMessage({ type: 'ready' });
</script>
</body></html>`;
}
