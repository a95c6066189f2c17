// Renders input requests the way VS Code users expect: an input box for a question, a quick pick
// for a choice, a password box for a secret, a diff editor plus a decision pick for a write, and a
// modal for a command. Each renderer honours the AbortSignal (the request was resolved elsewhere):
// it closes its prompt and resolves undefined.

import * as path from 'path';
import * as vscode from 'vscode';
import { Decision, FileDiff, InputRequest, decisionsOf } from './protocol';
import { Answer } from './promptQueue';

export const PROPOSED_SCHEME = 'agentd-proposed';

const DECISION_ICONS: Record<Decision, string> = {
  allow_once: '$(check)',
  allow_session: '$(check-all)',
  allow_always: '$(pass-filled)',
  reject_once: '$(close)',
  reject_always: '$(circle-slash)',
};

export class PromptUI implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly docs = new Map<string, string>();
  private readonly emitter = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.emitter.event;
  private activeWrite?: { requestId: string; decisions: { decision: Decision; label: string }[]; decide: (d: Decision) => void };
  private readonly writeChanged = new vscode.EventEmitter<void>();
  /** The write waiting for a decision changed (the panel shows its buttons). */
  readonly onDidChangeActiveWrite = this.writeChanged.event;
  private readonly registration: vscode.Disposable;

  constructor(
    private readonly workspaceRoot: () => vscode.Uri | undefined,
    private readonly log: (line: string) => void = () => undefined,
  ) {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(PROPOSED_SCHEME, this);
  }

  dispose(): void {
    this.writeChanged.dispose();
    this.registration.dispose();
    this.emitter.dispose();
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.docs.get(uri.toString()) ?? '';
  }

  /** The write on screen, for the panel's decision buttons. */
  get pendingWrite(): { requestId: string; decisions: { decision: Decision; label: string }[] } | undefined {
    return this.activeWrite && { requestId: this.activeWrite.requestId, decisions: this.activeWrite.decisions };
  }

  /** The panel's buttons and the diff editor's title actions answer the write on screen. */
  decideActiveWrite(decision: Decision, requestId?: string): void {
    if (!this.activeWrite || (requestId && requestId !== this.activeWrite.requestId)) return;
    this.activeWrite.decide(decision);
  }

  readonly render = async (req: InputRequest, signal: AbortSignal): Promise<Answer | undefined> => {
    this.log(`showing ${req.kind} ${req.requestId}: ${req.title}`);
    switch (req.kind) {
      case 'question':
        return this.text(req, signal, false);
      case 'secret':
        return this.text(req, signal, true);
      case 'choice':
        return this.choice(req, signal);
      case 'confirm_write':
        return this.write(req, signal);
      case 'confirm_command':
        return this.command(req, signal);
      default:
        void vscode.window.showWarningMessage(`agentd: cannot show a "${req.kind}" request (${req.title}).`);
        return undefined;
    }
  };

  private text(req: InputRequest, signal: AbortSignal, secret: boolean): Promise<Answer | undefined> {
    return new Promise((resolve) => {
      const box = vscode.window.createInputBox();
      box.title = `agentd: ${req.title}`;
      box.prompt = [req.message, req.context].filter(Boolean).join(' — ');
      box.placeholder = secret ? 'The value goes to the command only; the model never sees it' : 'Your answer (Enter to send, Escape to answer later)';
      box.password = secret;
      box.ignoreFocusOut = true;
      if (req.default && !secret) box.value = req.default;
      let done = false;
      const finish = (a: Answer | undefined) => {
        if (done) return;
        done = true;
        signal.removeEventListener('abort', onAbort);
        resolve(a);
        box.dispose();
      };
      const onAbort = () => {
        box.hide();
        finish(undefined);
      };
      signal.addEventListener('abort', onAbort);
      box.onDidAccept(() => {
        if (!box.value.trim() && !secret) {
          box.validationMessage = 'Type an answer, or press Escape to answer later.';
          return;
        }
        finish({ method: 'agent/reply', params: { requestId: req.requestId, text: box.value } });
      });
      box.onDidChangeValue(() => (box.validationMessage = undefined));
      box.onDidHide(() => {
        if (!done) this.log(`prompt ${req.requestId} dismissed`);
        finish(undefined);
      });
      box.show();
    });
  }

  private choice(req: InputRequest, signal: AbortSignal): Promise<Answer | undefined> {
    type Item = vscode.QuickPickItem & { optionId?: string; other?: boolean };
    return new Promise((resolve) => {
      const qp = vscode.window.createQuickPick<Item>();
      const options: Item[] = (req.options ?? []).map((o) => ({ label: o.label, description: o.description, optionId: o.optionId }));
      // The message is the question itself: it goes in the title, which stays visible while typing.
      const short = req.message.length <= 120 && !req.message.includes('\n');
      qp.title = `agentd: ${short ? req.message : req.title}`;
      qp.placeholder = `${short ? '' : `${req.message} — `}${req.multiple ? 'Pick one or more' : 'Pick one'}${req.allowOther ? ', or type your own answer' : ''}${req.context ? ` (${req.context})` : ''}`;
      qp.items = options;
      qp.canSelectMany = !!req.multiple;
      qp.ignoreFocusOut = true;
      qp.matchOnDescription = true;
      const def = options.find((o) => o.optionId === req.default || o.label === req.default);
      if (def) {
        if (req.multiple) qp.selectedItems = [def];
        else qp.activeItems = [def];
      }
      if (req.allowOther) {
        qp.onDidChangeValue((v) => {
          const exact = options.some((o) => o.label.toLowerCase() === v.trim().toLowerCase());
          qp.items = v.trim() && !exact ? [...options, { label: v, description: 'your own answer', other: true, alwaysShow: true }] : options;
        });
      }
      let done = false;
      const finish = (a: Answer | undefined) => {
        if (done) return;
        done = true;
        signal.removeEventListener('abort', onAbort);
        resolve(a);
        qp.dispose();
      };
      const onAbort = () => {
        qp.hide();
        finish(undefined);
      };
      signal.addEventListener('abort', onAbort);
      qp.onDidAccept(() => {
        if (req.multiple) {
          const picked = qp.selectedItems.filter((i) => i.optionId);
          if (!picked.length) return;
          finish({ method: 'agent/reply', params: { requestId: req.requestId, answers: picked.map((i) => i.optionId!) } });
          return;
        }
        const item = qp.activeItems[0] ?? qp.selectedItems[0];
        if (item?.other) finish({ method: 'agent/reply', params: { requestId: req.requestId, text: item.label } });
        else if (item?.optionId !== undefined) finish({ method: 'agent/reply', params: { requestId: req.requestId, optionId: item.optionId } });
        else if (req.allowOther && qp.value.trim()) finish({ method: 'agent/reply', params: { requestId: req.requestId, text: qp.value } });
      });
      qp.onDidHide(() => {
        if (!done) this.log(`prompt ${req.requestId} dismissed`);
        finish(undefined);
      });
      qp.show();
    });
  }

  /**
   * A write: the proposed change opens in a diff editor, and the decision is taken with the
   * buttons the conversation panel shows next to the request (Allow / Allow for Session / Always
   * Allow / Reject / Always Reject) or the ✓ / ✗ actions in the diff editor's title bar. Nothing
   * covers the diff while the user reads it. Closing the diff tab answers later (the request stays
   * open).
   */
  private async write(req: InputRequest, signal: AbortSignal): Promise<Answer | undefined> {
    const files = req.diff ?? [];
    const opened: vscode.Uri[] = [];
    for (const f of files) opened.push(await this.openDiff(req, f, files.length));
    if (signal.aborted) {
      await this.closeTabs(opened);
      return undefined;
    }
    const answer = await new Promise<Answer | undefined>((resolve) => {
      let done = false;
      const disposables: vscode.Disposable[] = [];
      const finish = (a: Answer | undefined) => {
        if (done) return;
        done = true;
        signal.removeEventListener('abort', onAbort);
        for (const d of disposables) d.dispose();
        if (this.activeWrite?.requestId === req.requestId) this.activeWrite = undefined;
        this.writeChanged.fire();
        resolve(a);
      };
      const onAbort = () => finish(undefined);
      signal.addEventListener('abort', onAbort);
      this.activeWrite = {
        requestId: req.requestId,
        decisions: decisionsOf(req),
        decide: (decision) => finish({ method: 'agent/confirm', params: { requestId: req.requestId, decision } }),
      };
      const wanted = new Set(opened.map((u) => u.toString()));
      disposables.push(
        vscode.window.tabGroups.onDidChangeTabs(() => {
          if (opened.length && !this.openTabs(wanted).length) {
            this.log(`prompt ${req.requestId} dismissed (diff closed)`);
            finish(undefined);
          }
        }),
      );
      this.writeChanged.fire();
    });
    await this.closeTabs(opened);
    return answer;
  }

  private async openDiff(req: InputRequest, f: FileDiff, count: number): Promise<vscode.Uri> {
    const key = `req=${encodeURIComponent(req.requestId)}`;
    const name = path.basename(f.path);
    const proposed = vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: `/${f.path}`, query: `${key}&side=new` });
    const title = `${name}: proposed by agentd${count > 1 ? ` (${req.title})` : ''}`;
    if (f.newText !== undefined || f.status === 'deleted') {
      this.docs.set(proposed.toString(), f.newText ?? '');
      let left: vscode.Uri;
      if (f.oldText !== undefined || f.status === 'added') {
        left = vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: `/${f.path}`, query: `${key}&side=old` });
        this.docs.set(left.toString(), f.oldText ?? '');
      } else {
        const root = this.workspaceRoot();
        left = root ? vscode.Uri.joinPath(root, f.oldPath ?? f.path) : vscode.Uri.file(f.path);
      }
      this.emitter.fire(proposed);
      await vscode.commands.executeCommand('vscode.diff', left, proposed, title, { preview: false });
      return proposed;
    }
    // No full texts: show the unified diff itself.
    const diffUri = vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: `/${f.path}.diff`, query: `${key}&side=diff` });
    this.docs.set(diffUri.toString(), f.diff);
    const doc = await vscode.workspace.openTextDocument(diffUri);
    await vscode.languages.setTextDocumentLanguage(doc, 'diff');
    await vscode.window.showTextDocument(doc, { preview: false, preserveFocus: true });
    return diffUri;
  }

  private openTabs(wanted: Set<string>): vscode.Tab[] {
    const tabs: vscode.Tab[] = [];
    for (const group of vscode.window.tabGroups.all) {
      for (const tab of group.tabs) {
        const input = tab.input;
        const uri =
          input instanceof vscode.TabInputTextDiff ? input.modified : input instanceof vscode.TabInputText ? input.uri : undefined;
        if (uri && wanted.has(uri.toString())) tabs.push(tab);
      }
    }
    return tabs;
  }

  private async closeTabs(uris: vscode.Uri[]): Promise<void> {
    const wanted = new Set(uris.map((u) => u.toString()));
    const tabs = this.openTabs(wanted);
    if (tabs.length) await vscode.window.tabGroups.close(tabs, true);
    for (const u of wanted) this.docs.delete(u);
  }

  private async command(req: InputRequest, signal: AbortSignal): Promise<Answer | undefined> {
    type Item = vscode.MessageItem & { decision?: Decision };
    const items: Item[] = decisionsOf(req)
      .filter((d) => d.decision !== 'reject_always')
      .map((d) => ({ title: d.label, decision: d.decision }));
    const detail = [
      `$ ${req.command ?? ''}`,
      `in ${req.cwd && req.cwd !== '.' ? req.cwd : 'the workspace folder'}${req.cwd ? ` (${req.cwd})` : ''}`,
      req.message,
      req.rule ? `Asked because: ${req.rule}` : '',
    ]
      .filter(Boolean)
      .join('\n\n');
    // A modal cannot be closed from code: if the request is resolved elsewhere while it is open,
    // the queue drops whatever is clicked (the daemon would answer AlreadyResolved anyway).
    const picked = await vscode.window.showWarningMessage(`agentd: ${req.title}`, { modal: true, detail }, ...items);
    if (signal.aborted || !picked?.decision) return undefined;
    return { method: 'agent/confirm', params: { requestId: req.requestId, decision: picked.decision } };
  }
}
