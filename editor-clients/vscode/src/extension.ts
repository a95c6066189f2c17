// Wires agentd into VS Code: the daemon process, the conversation (panel, requests, writes,
// context), the commands table, document sync and the status bar. Each part lives in its own
// module; this file only builds them and connects their events.

import * as vscode from 'vscode';
import { AgentController, IndexProgress } from './agent';
import { registerCommands, commandTable, SECRET_KEY } from './commands';
import { Settings, daemonCommand, daemonEnv, initializeParams, needsRestart, policyOf } from './config';
import { Composer } from './context';
import { WorkspacePaths } from './contextPicker';
import { Conversation } from './conversation';
import { DaemonClient, DaemonOptions, DaemonState } from './daemon';
import { DocumentSync } from './documentSync';
import { ConversationPanel } from './panel';
import { Method } from './protocol';
import { RequestBook } from './requests';
import { RunStore } from './runStore';
import { SessionPickers } from './settings';
import { IndexProgressView, McpStatusItem, StatusBar } from './statusBar';
import { McpWatch } from './extensions';
import { InlineEdits } from './inlineEdit';
import { LanguageAnswers } from './language';
import { relPath } from './contextPicker';
import { ProposedWrites } from './writes';

let daemon: DaemonClient | undefined;

function readSettings(): Settings {
  const c = vscode.workspace.getConfiguration('agentd');
  return {
    daemonPath: c.get<string>('daemonPath'),
    modelBaseUrl: c.get<string>('model.baseUrl'),
    modelName: c.get<string>('model.name'),
    modelToolMode: c.get<string>('model.toolMode'),
    approvalPolicy: c.get<string>('approvalPolicy'),
    env: c.get<Record<string, string>>('env'),
  };
}

const workspaceRoot = () => vscode.workspace.workspaceFolders?.[0]?.uri;

function daemonOptions(context: vscode.ExtensionContext, log: (line: string) => void): DaemonOptions {
  const s = readSettings();
  const { command, args } = daemonCommand(s);
  const root = workspaceRoot();
  return {
    command,
    args,
    cwd: root?.scheme === 'file' ? root.fsPath : undefined,
    env: daemonEnv(process.env, s),
    trace: vscode.workspace.getConfiguration('agentd').get<'off' | 'messages' | 'verbose'>('trace') ?? 'off',
    log,
    initializeParams: async () =>
      initializeParams({
        settings: readSettings(),
        apiKey: (await context.secrets.get(SECRET_KEY)) || undefined,
        folders: (vscode.workspace.workspaceFolders ?? []).map((f) => ({ uri: f.uri.toString(), name: f.name })),
        clientVersion: vscode.version,
      }),
  };
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const out = vscode.window.createOutputChannel('agentd');
  const log = (line: string) => out.appendLine(`${new Date().toISOString().slice(11, 23)} ${line}`);
  const subs = context.subscriptions;
  subs.push(out);

  const client = (daemon = new DaemonClient(daemonOptions(context, log)));
  let daemonState: { state: DaemonState; detail?: string } = { state: 'stopped' };
  let undoSupported = false;
  const store = new RunStore();
  let shownSession: string | undefined;
  const requests = new RequestBook((a) => client.request(a.method, a.params));
  const controller = new AgentController(client, store, requests, {
    log,
    onIndexProgress: (p) => indexProgress(p),
    onMcpChanged: () => mcp.changed(),
    onSessionChange: (view) => {
      conversation.save();
      if (view?.sessionId !== shownSession) {
        shownSession = view?.sessionId;
        conversation.sessionSwitched();
      }
      panel.update();
      // A background process started or ended: the status bar counts them (after activation's set-up).
      queueMicrotask(() => updateStatus());
    },
  });
  const pickers = new SessionPickers({
    rpc: client,
    current: () => ({ sessionId: controller.currentSessionId, settings: controller.session?.settings }),
    applied: (sessionId, result) => controller.configured(sessionId, result),
    defaults: () => ({ approvalPolicy: policyOf(readSettings()) }),
    changed: () => panel.update(),
    log,
  });
  const writes = new ProposedWrites(workspaceRoot, (requestId, out) =>
    void conversation.answer({ type: 'confirm', requestId, decision: out.decision, reason: out.decision === 'reject_once' ? out.reason : undefined }),
  );
  const inline = new InlineEdits({
    controller,
    requests,
    answer: (requestId, out) =>
      conversation.answer(
        { type: 'confirm', requestId, decision: out.decision, reason: out.decision === 'reject_once' ? out.reason : undefined },
        out.decision === 'allow_once' ? out.editedContent : undefined,
      ),
    openDiff: (req) => writes.open(req),
    relPath,
    log,
  });
  const paths = new WorkspacePaths();
  const composer = new Composer();
  const docs = new DocumentSync(client);
  const statusBar = new StatusBar();
  const mcpItem = new McpStatusItem();
  const mcp = new McpWatch(client, () => controller.currentSessionId, (w) => {
    if (w.list) mcpItem.update(w.list);
    panel.update();
  });
  const language = new LanguageAnswers(log, (uri) => inline.reviewing(uri));
  subs.push(writes, inline, language, paths, docs, statusBar, mcpItem, mcp);

  const conversation = new Conversation({
    controller,
    requests,
    writes,
    paths,
    composer,
    pickers,
    memento: context.workspaceState,
    daemonState: () => daemonState,
    rpc: client,
    undoSupported: () => undoSupported,
    mcp,
    workspaceRoot,
    log,
  });
  const panel = new ConversationPanel(vscode.Uri.joinPath(context.extensionUri, 'media'), () => conversation.view(), conversation.handle);
  conversation.panel = panel;
  subs.push(panel, vscode.window.registerWebviewViewProvider(ConversationPanel.viewId, panel, { webviewOptions: { retainContextWhenHidden: true } }));

  const updateStatus = () => {
    const active = controller.activeRuns();
    const last = store.all().sort((a, b) => b.startedAt - a.startedAt)[0];
    const open = requests.list();
    statusBar.update({
      daemon: daemonState.state,
      detail: daemonState.detail,
      waiting: open.length,
      kinds: open.map((o) => o.req.kind),
      running: active.some((r) => r.state === 'running'),
      paused: active.some((r) => r.state === 'paused'),
      activeRuns: active.filter((r) => r.state !== 'queued').length,
      queued: active.filter((r) => r.state === 'queued').length,
      processes: controller.runningProcesses(),
      lastState: last?.state,
      index: controller.index,
    });
  };
  const refresh = () => {
    panel.update();
    updateStatus();
  };

  const indexView = new IndexProgressView();
  const indexProgress = (p: IndexProgress) => {
    indexView.report(p);
    updateStatus();
  };

  store.onDidChange((run) => {
    if (run.sessionId === controller.currentSessionId) conversation.runChanged(run);
    inline.sync();
    refresh();
  });
  // Changes open in the diff editor as they come, when the user wants them to.
  const offered = new Set<string>();
  requests.onDidChange(() => {
    const open = requests.list();
    void writes.closeExcept(new Set(open.map((o) => o.req.requestId)));
    for (const o of open) {
      if (o.req.kind !== 'confirm_write' || offered.has(o.req.requestId)) continue;
      offered.add(o.req.requestId);
      if (vscode.workspace.getConfiguration('agentd').get<boolean>('review.openDiff') && !inline.ownsRun(o.req.runId)) void writes.open(o.req);
    }
    inline.sync();
    refresh();
  });
  writes.onDidChangeEdited(() => panel.update());
  composer.onDidChange(() => panel.update());

  client.onNotification((method, params) => controller.handleNotification(method, params));
  client.onRequest(Method.progressCreate, (p) => controller.handleProgressCreate(p as { token: string }));
  for (const [method, answer] of Object.entries(language.handlers())) client.onRequest(method, answer);
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
    refresh();
  });
  client.onReady((result, restarted) => {
    log(`connected to ${result.serverInfo?.name ?? 'agentd'} ${result.serverInfo?.version ?? ''} (protocol ${result.protocolVersion ?? '?'})${restarted ? ' after a restart' : ''}`);
    docs.openAll();
    pickers.setCapabilities(result.capabilities?.experimental?.agentd);
    undoSupported = !!result.capabilities?.experimental?.agentd?.undo;
    conversation.refreshCheckpoints();
    void conversation.refreshMcp();
    void pickers.refreshModels();
    void controller.reconnected().then(refresh);
    void controller.refreshIndexStatus().then(updateStatus);
  });

  const restartDaemon = async () => {
    client.setOptions(daemonOptions(context, log));
    await client.restart().catch((e) => log(`restart: ${e}`));
  };
  subs.push(
    ...registerCommands(commandTable({ controller, conversation, panel, composer, paths, writes, inline, secrets: context.secrets, restartDaemon, showLog: () => out.show() })),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (needsRestart((s) => e.affectsConfiguration(s))) {
        log('settings changed: restarting agentd');
        void restartDaemon();
      } else if (e.affectsConfiguration('agentd.model.name')) {
        // The model is chosen per session: new conversations take the setting, no restart (a
        // daemon without per-session settings takes it at a restart).
        if (pickers.perSession) pickers.defaultModelChanged(readSettings().modelName?.trim());
        else void restartDaemon();
      }
      if (e.affectsConfiguration('agentd.approvalPolicy') || e.affectsConfiguration('agentd.review.openDiff')) panel.update();
    }),
    context.secrets.onDidChange((e) => e.key === SECRET_KEY && log('API key changed')),
  );

  conversation.restore();
  updateStatus();
  client.start().catch((e) => log(`start: ${e instanceof Error ? e.message : e}`));
}

export async function deactivate(): Promise<void> {
  await daemon?.stop();
  daemon = undefined;
}
