// Wires agentd into VS Code: the daemon process, commands, document sync, the conversation panel,
// prompts, progress and the status bar.

import * as vscode from 'vscode';
import { AgentController, IndexProgress } from './agent';
import { Settings, daemonCommand, daemonEnv, initializeParams, needsRestart, policyOf } from './config';
import { DaemonClient, DaemonState } from './daemon';
import { ConversationPanel, PanelMessage } from './panel';
import { Decision, ErrorCode, Method, RunContext, TERMINAL_STATES, errorCode } from './protocol';
import { PromptQueue } from './promptQueue';
import { PromptUI } from './prompts';
import { RunStore, RunView } from './runStore';

const SECRET_KEY = 'agentd.apiKey';

let daemon: DaemonClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const out = vscode.window.createOutputChannel('agentd');
  const log = (line: string) => out.appendLine(`${new Date().toISOString().slice(11, 23)} ${line}`);
  context.subscriptions.push(out);

  const settings = (): Settings => {
    const c = vscode.workspace.getConfiguration('agentd');
    return {
      daemonPath: c.get<string>('daemonPath'),
      modelBaseUrl: c.get<string>('model.baseUrl'),
      modelName: c.get<string>('model.name'),
      modelToolMode: c.get<string>('model.toolMode'),
      approvalPolicy: c.get<string>('approvalPolicy'),
      env: c.get<Record<string, string>>('env'),
    };
  };
  const root = () => vscode.workspace.workspaceFolders?.[0]?.uri;

  const daemonOptions = () => {
    const s = settings();
    const { command, args } = daemonCommand(s);
    return {
      command,
      args,
      cwd: root()?.scheme === 'file' ? root()!.fsPath : undefined,
      env: daemonEnv(process.env, s),
      trace: vscode.workspace.getConfiguration('agentd').get<'off' | 'messages' | 'verbose'>('trace') ?? 'off',
      log,
      initializeParams: async () =>
        initializeParams({
          settings: settings(),
          apiKey: (await context.secrets.get(SECRET_KEY)) || undefined,
          folders: (vscode.workspace.workspaceFolders ?? []).map((f) => ({ uri: f.uri.toString(), name: f.name })),
          clientVersion: vscode.version,
        }),
    };
  };

  const client = (daemon = new DaemonClient(daemonOptions()));
  const store = new RunStore();
  const promptUI = new PromptUI(root, log);
  context.subscriptions.push(promptUI);

  const queue = new PromptQueue(
    promptUI.render,
    async (answer) => {
      log(`${answer.method} ${answer.params.requestId}${'decision' in answer.params ? ` ${answer.params.decision}` : ''}`);
      await client.request(answer.method, answer.params);
    },
    (message, req) => void vscode.window.showErrorMessage(`agentd: could not answer "${req.title}": ${message}`),
  );

  // ---- status bar ------------------------------------------------------------------------
  const status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 100);
  status.name = 'agentd';
  context.subscriptions.push(status);
  let daemonState: { state: DaemonState; detail?: string } = { state: 'stopped' };

  const updateStatus = () => {
    const active = controller.activeRuns();
    const waiting = queue.size;
    const idx = controller.index;
    const parts: string[] = [];
    let icon = '$(hubot)';
    let text = 'idle';
    if (daemonState.state === 'failed') {
      icon = '$(error)';
      text = 'daemon failed';
    } else if (daemonState.state !== 'ready') {
      icon = '$(loading~spin)';
      text = daemonState.state;
    } else if (waiting > 0) {
      icon = '$(bell-dot)';
      text = `${waiting} waiting for you`;
    } else if (active.some((r) => r.state === 'running')) {
      icon = '$(loading~spin)';
      text = 'running';
    } else if (active.some((r) => r.state === 'paused')) {
      text = 'paused';
    } else {
      const last = store.all().sort((a, b) => b.startedAt - a.startedAt)[0];
      if (last) text = last.state;
    }
    parts.push(`${icon} agentd: ${text}`);
    if (idx.active) parts.push(`$(database) index ${idx.percentage !== undefined ? `${Math.round(idx.percentage)}%` : '…'}`);
    status.text = parts.join('  ');
    const tip = new vscode.MarkdownString();
    tip.appendMarkdown(`**agentd** — daemon ${daemonState.state}${daemonState.detail ? `: ${daemonState.detail}` : ''}\n\n`);
    tip.appendMarkdown(`Runs: ${active.length} active; requests waiting: ${waiting}\n\n`);
    tip.appendMarkdown(`Index: ${idx.active ? `${idx.message ?? 'indexing'} (${idx.percentage ?? 0}%)` : idx.message ?? idx.state ?? 'unknown'}`);
    status.tooltip = tip;
    status.command = waiting > 0 ? 'agentd.showPending' : 'agentd.showPanel';
    status.backgroundColor = daemonState.state === 'failed' ? new vscode.ThemeColor('statusBarItem.errorBackground') : waiting > 0 ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    status.show();
  };

  // ---- progress ------------------------------------------------------------------------
  const progressOf = new Map<string, (run: RunView) => void>();
  const progressPending = new Set<string>();
  /**
   * A cancellable notification per unfinished run. It opens after a short delay, and only if the
   * run is still going: a notification whose task ended while VS Code was still creating it stayed
   * on screen in code-server 4.100, and short runs need no notification anyway.
   */
  const trackProgress = (run: RunView) => {
    if (progressOf.has(run.runId) || progressPending.has(run.runId) || TERMINAL_STATES.has(run.state)) return;
    progressPending.add(run.runId);
    setTimeout(() => {
      progressPending.delete(run.runId);
      const now = store.get(run.runId);
      if (now && !TERMINAL_STATES.has(now.state)) startProgress(now);
    }, 400);
  };
  const startProgress = (run: RunView) => {
    if (progressOf.has(run.runId)) return;
    let report: (run: RunView) => void = () => undefined;
    progressOf.set(run.runId, (r) => report(r));
    void vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'agentd', cancellable: true },
      (progress, token) =>
        new Promise<void>((resolve) => {
          let last = '';
          report = (r) => {
            if (TERMINAL_STATES.has(r.state)) {
              progressOf.delete(r.runId);
              resolve();
              return;
            }
            const msg = r.state === 'requires_action' ? 'waiting for your answer' : r.state === 'paused' ? 'paused' : r.activity ?? 'working…';
            if (msg !== last) progress.report({ message: msg });
            last = msg;
          };
          token.onCancellationRequested(() => {
            log(`progress cancelled: agent/cancel ${run.runId}`);
            void controller.cancel(run.runId).catch((e) => log(`agent/cancel: ${e.message ?? e}`));
          });
          report(store.get(run.runId) ?? run);
        }),
    );
  };

  let indexProgress: { report: (p: IndexProgress) => void } | undefined;
  const trackIndex = (p: IndexProgress) => {
    if (p.active && !indexProgress) {
      let reported = 0;
      let report: (p: IndexProgress) => void = () => undefined;
      indexProgress = { report: (q) => report(q) };
      void vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'agentd index' }, (progress) =>
        new Promise<void>((resolve) => {
          report = (q) => {
            if (!q.active) {
              indexProgress = undefined;
              resolve();
              return;
            }
            const pct = q.percentage ?? reported;
            progress.report({ message: `${q.message ?? q.title ?? 'indexing'}${q.percentage !== undefined ? ` (${Math.round(pct)}%)` : ''}` });
            reported = pct;
          };
          report(p);
        }),
      );
    } else indexProgress?.report(p);
  };

  let progressEvents = 0;

  // ---- panel ------------------------------------------------------------------------------
  const panel = new ConversationPanel(
    () => {
      const sid = controller.currentSessionId;
      const runs = sid ? store.runsOfSession(sid).sort((a, b) => a.startedAt - b.startedAt) : [];
      return {
        sessionId: sid,
        runs,
        pending: queue.list(),
        daemon: daemonState,
        activeWrite: promptUI.pendingWrite,
        busy: runs.some((r) => !TERMINAL_STATES.has(r.state)),
      };
    },
    (m: PanelMessage) => {
      switch (m.type) {
        case 'ask':
          void ask(m.text, editorContext(false));
          break;
        case 'cancel':
          void vscode.commands.executeCommand('agentd.cancel');
          break;
        case 'answer':
          queue.show(m.requestId);
          break;
        case 'decide':
          promptUI.decideActiveWrite(m.decision as Decision, m.requestId);
          break;
        case 'newSession':
          void vscode.commands.executeCommand('agentd.newSession');
          break;
        case 'sessions':
          void vscode.commands.executeCommand('agentd.showSessions');
          break;
      }
    },
  );
  context.subscriptions.push(panel, vscode.window.registerWebviewViewProvider(ConversationPanel.viewId, panel, { webviewOptions: { retainContextWhenHidden: true } }));

  const controller = new AgentController(client, store, queue, {
    log,
    onRunNotification: (n, run) => {
      if (!run) return;
      if (n.method === Method.runState && TERMINAL_STATES.has(run.state)) {
        const msg = run.state === 'completed' ? undefined : run.state === 'failed' ? `agentd: the run failed: ${run.error ?? run.stopReason ?? ''}` : undefined;
        if (msg) void vscode.window.showErrorMessage(msg);
      }
      if (!TERMINAL_STATES.has(run.state)) trackProgress(run);
      progressOf.get(run.runId)?.(run);
    },
    onIndexProgress: (p) => {
      progressEvents++;
      trackIndex(p);
      updateStatus();
    },
  });
  promptUI.onDidChangeActiveWrite(() => {
    if (promptUI.pendingWrite) void panel.reveal();
    panel.update();
  });
  store.onDidChange((run) => {
    progressOf.get(run.runId)?.(run);
    panel.update();
    updateStatus();
  });
  queue.onDidChange(() => {
    panel.update();
    updateStatus();
  });

  // ---- daemon -----------------------------------------------------------------------------
  client.onNotification((method, params) => controller.handleNotification(method, params));
  client.onRequest(Method.progressCreate, (p) => controller.handleProgressCreate(p as { token: string }));
  client.onStateChange((state, detail) => {
    daemonState = { state, detail };
    log(`daemon ${state}${detail ? `: ${detail}` : ''}`);
    if (state !== 'ready') controller.disconnected();
    if (state === 'failed') {
      void vscode.window.showErrorMessage(`agentd: ${detail ?? 'the daemon failed'}`, 'Open Settings', 'Show Log').then((a) => {
        if (a === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'agentd.daemonPath');
        if (a === 'Show Log') out.show();
      });
    }
    panel.update();
    updateStatus();
  });
  client.onReady((result, restarted) => {
    log(`connected to ${result.serverInfo?.name ?? 'agentd'} ${result.serverInfo?.version ?? ''} (protocol ${result.protocolVersion ?? '?'})${restarted ? ' after a restart' : ''}`);
    for (const doc of vscode.workspace.textDocuments) didOpen(doc);
    void controller.reconnected().then(() => {
      panel.update();
      updateStatus();
    });
    const progressSeen = progressEvents;
    void client
      .request<{ state: string; progress?: number; files?: number; chunks?: number; error?: string }>(Method.indexStatus)
      .then((st) => {
        // $/progress that arrived meanwhile is newer than this answer.
        if (progressEvents === progressSeen) {
          controller.index = { active: st.state === 'indexing', state: st.state, percentage: st.progress !== undefined && st.progress <= 1 ? st.progress * 100 : st.progress, message: st.state === 'failed' ? st.error : `${st.files ?? 0} files, ${st.chunks ?? 0} chunks` };
          updateStatus();
        }
      })
      .catch(() => undefined);
  });

  // ---- documents --------------------------------------------------------------------------
  const inWorkspace = (doc: vscode.TextDocument) => doc.uri.scheme === 'file' && !!vscode.workspace.getWorkspaceFolder(doc.uri);
  const didOpen = (doc: vscode.TextDocument) => {
    if (!inWorkspace(doc)) return;
    client.notify(Method.didOpen, { textDocument: { uri: doc.uri.toString(), languageId: doc.languageId, version: doc.version, text: doc.getText() } });
  };
  const changeTimers = new Map<string, NodeJS.Timeout>();
  context.subscriptions.push(
    vscode.workspace.onDidOpenTextDocument(didOpen),
    vscode.workspace.onDidChangeTextDocument((e) => {
      const doc = e.document;
      if (!inWorkspace(doc) || e.contentChanges.length === 0) return;
      const key = doc.uri.toString();
      clearTimeout(changeTimers.get(key));
      changeTimers.set(
        key,
        setTimeout(() => {
          changeTimers.delete(key);
          client.notify(Method.didChange, { textDocument: { uri: key, version: doc.version }, contentChanges: [{ text: doc.getText() }] });
        }, 300),
      );
    }),
    vscode.workspace.onDidSaveTextDocument((doc) => inWorkspace(doc) && client.notify(Method.didSave, { textDocument: { uri: doc.uri.toString() } })),
    vscode.workspace.onDidCloseTextDocument((doc) => inWorkspace(doc) && client.notify(Method.didClose, { textDocument: { uri: doc.uri.toString() } })),
  );

  // ---- runs -------------------------------------------------------------------------------
  const relPath = (uri: vscode.Uri) => (vscode.workspace.getWorkspaceFolder(uri) ? vscode.workspace.asRelativePath(uri, false) : uri.fsPath);

  /** The active file, and the selection when there is one (or `requireSelection`). */
  const editorContext = (requireSelection: boolean): RunContext | undefined => {
    const ed = vscode.window.activeTextEditor;
    if (!ed || (ed.document.uri.scheme !== 'file' && ed.document.uri.scheme !== 'untitled')) return undefined;
    const ctx: RunContext = {};
    if (ed.document.uri.scheme === 'file') ctx.files = [relPath(ed.document.uri)];
    const sel = ed.selection;
    if (!sel.isEmpty || requireSelection) {
      const endLine = sel.end.character === 0 && sel.end.line > sel.start.line ? sel.end.line : sel.end.line + 1;
      ctx.selection = {
        path: ed.document.uri.scheme === 'file' ? relPath(ed.document.uri) : ed.document.uri.toString(),
        startLine: sel.start.line + 1,
        endLine,
        text: ed.document.getText(sel.isEmpty ? ed.document.lineAt(sel.start.line).range : sel),
      };
    }
    return ctx;
  };

  const ask = async (prompt: string, ctx: RunContext | undefined): Promise<void> => {
    // Show the panel before the run starts, so that a prompt the run opens keeps the focus.
    await panel.reveal();
    try {
      const res = await controller.run({ prompt, context: ctx, approvalPolicy: policyOf(settings()) });
      log(`agent/run → ${res.runId} in ${res.sessionId}`);
      const run = store.get(res.runId);
      if (run) trackProgress(run);
      panel.update();
    } catch (e) {
      const code = errorCode(e);
      const message = e instanceof Error ? e.message : String(e);
      if (code === ErrorCode.NoModel) {
        const a = await vscode.window.showErrorMessage(`agentd: ${message}`, 'Open Settings', 'Set API Key');
        if (a === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'agentd.model');
        if (a === 'Set API Key') void vscode.commands.executeCommand('agentd.setApiKey');
      } else if (code === ErrorCode.SessionBusy) {
        const a = await vscode.window.showWarningMessage('agentd: this session still has a run going. Cancel it, or ask in a new session.', 'New Session');
        if (a === 'New Session') {
          controller.newSession();
          await ask(prompt, ctx);
        }
      } else {
        void vscode.window.showErrorMessage(`agentd: could not start the run: ${message}`);
      }
    }
  };

  const reg = (id: string, fn: (...args: unknown[]) => unknown) => context.subscriptions.push(vscode.commands.registerCommand(id, fn));

  reg('agentd.ask', async (arg?: unknown) => {
    const prompt =
      typeof arg === 'string'
        ? arg
        : await vscode.window.showInputBox({ title: 'agentd: Ask', prompt: 'What should agentd do? The active file and selection go along.', ignoreFocusOut: true });
    if (prompt?.trim()) await ask(prompt.trim(), editorContext(false));
  });
  reg('agentd.askSelection', async (arg?: unknown) => {
    const ctx = editorContext(true);
    if (!ctx?.selection) {
      void vscode.window.showInformationMessage('agentd: select some code in an editor first.');
      return;
    }
    const sel = ctx.selection;
    const prompt =
      typeof arg === 'string'
        ? arg
        : await vscode.window.showInputBox({ title: `agentd: Ask about ${sel.path}:${sel.startLine}–${sel.endLine}`, prompt: 'Your question about the selection', ignoreFocusOut: true });
    if (prompt?.trim()) await ask(prompt.trim(), ctx);
  });
  reg('agentd.cancel', async () => {
    const active = controller.activeRuns();
    if (!active.length) {
      void vscode.window.showInformationMessage('agentd: no run is going.');
      return;
    }
    let target = active[0];
    if (active.length > 1) {
      const pick = await vscode.window.showQuickPick(
        active.map((r) => ({ label: r.prompt ?? r.runId, description: r.state, run: r })),
        { title: 'agentd: Cancel which run?' },
      );
      if (!pick) return;
      target = pick.run;
    }
    try {
      await controller.cancel(target.runId);
    } catch (e) {
      void vscode.window.showErrorMessage(`agentd: cancel failed: ${e instanceof Error ? e.message : e}`);
    }
  });
  reg('agentd.showPending', async () => {
    const items = queue.list();
    if (!items.length) {
      void vscode.window.showInformationMessage('agentd: no requests are waiting for you.');
      return;
    }
    const pick = await vscode.window.showQuickPick(
      items.map((i) => ({
        label: `${i.req.title}`,
        description: `${i.req.kind.replace('_', ' ')} · ${i.state === 'deferred' ? 'answer later' : i.state}`,
        detail: i.error ? `${i.req.message} — ${i.error}` : i.req.command ? `$ ${i.req.command}` : i.req.message,
        id: i.req.requestId,
      })),
      { title: `agentd: ${items.length} request${items.length > 1 ? 's' : ''} waiting`, placeHolder: 'Pick one to answer it' },
    );
    if (pick) queue.show(pick.id);
  });
  reg('agentd.showSessions', async () => {
    try {
      const sessions = await controller.sessions();
      type Item = vscode.QuickPickItem & { session?: (typeof sessions)[number] };
      const items: Item[] = [{ label: '$(add) New session' }];
      for (const s of sessions) {
        items.push({ label: s.title || s.sessionId, description: s.state, detail: `${s.sessionId} · updated ${new Date(s.updatedAt).toLocaleString()}`, session: s });
      }
      const pick = await vscode.window.showQuickPick(items, { title: 'agentd: Sessions', placeHolder: 'Open a session in the conversation panel' });
      if (!pick) return;
      if (pick.session) await controller.openSession(pick.session);
      else controller.newSession();
      panel.update();
      await panel.reveal();
    } catch (e) {
      void vscode.window.showErrorMessage(`agentd: could not list sessions: ${e instanceof Error ? e.message : e}`);
    }
  });
  reg('agentd.newSession', () => {
    controller.newSession();
    panel.update();
    void panel.reveal();
  });
  reg('agentd.showPanel', () => panel.reveal());
  reg('agentd.showLog', () => out.show());
  reg('agentd.restart', async () => {
    client.setOptions(daemonOptions());
    await client.restart().catch((e) => log(`restart: ${e}`));
  });
  reg('agentd.setApiKey', async () => {
    const key = await vscode.window.showInputBox({ title: 'agentd: API Key', prompt: 'Kept in VS Code secret storage and handed to agentd at start; never written to settings.', password: true, ignoreFocusOut: true });
    if (key === undefined) return;
    await context.secrets.store(SECRET_KEY, key);
    await vscode.commands.executeCommand('agentd.restart');
  });
  reg('agentd.clearApiKey', async () => {
    await context.secrets.delete(SECRET_KEY);
    await vscode.commands.executeCommand('agentd.restart');
  });
  reg('agentd.allowWrite', () => promptUI.decideActiveWrite('allow_once'));
  reg('agentd.rejectWrite', () => promptUI.decideActiveWrite('reject_once'));

  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (needsRestart((s) => e.affectsConfiguration(s))) {
        log('settings changed: restarting agentd');
        void vscode.commands.executeCommand('agentd.restart');
      }
    }),
    context.secrets.onDidChange((e) => e.key === SECRET_KEY && log('API key changed')),
  );

  updateStatus();
  client.start().catch((e) => log(`start: ${e instanceof Error ? e.message : e}`));
}

export async function deactivate(): Promise<void> {
  await daemon?.stop();
  daemon = undefined;
}
