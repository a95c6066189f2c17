// The conversation as the user works with it: what the panel shows, and what its messages do —
// asking (with the composer's context and the pickers' model, effort and mode), answering requests
// inline, opening a write's diff or editing it, the session list, resuming a paused run. The panel
// survives "Reload Window": the open session's id is kept in the workspace state and its history
// replayed from the daemon when the window comes back.

import * as vscode from 'vscode';
import { AgentController, PanelSnapshot } from './agent';
import { Composer, attachmentLabel, buildRun, matchPaths, mentionsIn } from './context';
import { WorkspacePaths } from './contextPicker';
import { ConversationPanel, PanelMessage, PanelView } from './panel';
import { Rpc } from './daemon';
import { McpAction, McpWatch, listCommands, matchCommands, slashName } from './extensions';
import { ErrorCode, ImageInput, McpServer, OnConflict, ON_CONFLICT, SessionInfo, TERMINAL_STATES, errorCode } from './protocol';
import { RunView } from './runStore';
import { UndoFlow, UndoTarget } from './undo';
import { RulesView } from './rules';
import { plural } from './words';
import { PanelAnswer, RequestBook, answerFor } from './requests';
import { SessionPickers } from './settings';
import { ProposedWrites } from './writes';

const SNAPSHOT_KEY = 'agentd.panel';

export interface ConversationDeps {
  controller: AgentController;
  requests: RequestBook;
  writes: ProposedWrites;
  paths: WorkspacePaths;
  composer: Composer;
  memento: vscode.Memento;
  pickers: SessionPickers;
  daemonState: () => { state: string; detail?: string };
  rpc: Rpc;
  /** The daemon serves agent/undo, agent/rewind and agent/checkpoints. */
  undoSupported: () => boolean;
  /** The MCP servers, as last asked (the status bar and the MCP view). */
  mcp: McpWatch;
  workspaceRoot: () => vscode.Uri | undefined;
  log: (line: string) => void;
}

export class Conversation {
  panel?: ConversationPanel;
  private sessions?: PanelView['sessions'];
  /** The rules view, while shown. */
  private rules?: RulesView;
  /** The MCP view is shown. */
  private mcpShown = false;
  readonly undo: UndoFlow;
  /** Runs whose end already refreshed the checkpoints. */
  private readonly ended = new Set<string>();

  constructor(private readonly d: ConversationDeps) {
    this.undo = new UndoFlow({
      rpc: d.rpc,
      sessionId: () => d.controller.currentSessionId,
      changed: () => this.update(),
      applied: async (target) => {
        // A rewind marks runs as cut: the history says which.
        if (target.kind === 'rewind') await d.controller.reloadSession();
      },
      log: d.log,
    });
  }

  /** Brings back what the panel showed before the window reloaded. */
  restore(): void {
    this.d.controller.restore(this.d.memento.get<PanelSnapshot>(SNAPSHOT_KEY));
  }

  private saved = '';

  /** Keeps the open session's id for a window reload; written only when it changes. */
  save(): void {
    const snap = this.d.controller.snapshot();
    const json = JSON.stringify(snap);
    if (json === this.saved) return;
    this.saved = json;
    void this.d.memento.update(SNAPSHOT_KEY, snap);
  }

  view(): PanelView {
    const { controller, requests, composer, writes } = this.d;
    const runs = controller.currentRuns();
    const answers: Record<string, string> = {};
    for (const r of runs) for (const id of Object.keys(r.requests)) {
      const a = requests.answerOf(id);
      if (a !== undefined) answers[id] = a;
    }
    const sv = controller.session;
    const undone: Record<string, string> = {};
    for (const [id, by] of this.undo.undone()) undone[id] = by;
    const busy = runs.some((r) => !TERMINAL_STATES.has(r.state));
    return {
      sessionId: controller.currentSessionId,
      runs,
      open: requests.list(),
      daemon: this.d.daemonState(),
      answers,
      edited: writes.editedIds(),
      editedDiffs: writes.editedDiffs(),
      autoDiff: !!vscode.workspace.getConfiguration('agentd').get<boolean>('review.openDiff'),
      sessions: this.sessions,
      tabs: controller.openTabs(),
      rules: this.rules?.state,
      meter: sv?.context && { ...sv.context, busy },
      steering: !!controller.unfinishedRun(),
      session: sv && { loading: sv.loading, earlierRuns: sv.earlierRuns, loadingEarlier: sv.loadingEarlier, error: sv.error },
      busy,
      canUndo: this.d.undoSupported() && !!controller.currentSessionId && !busy && this.d.daemonState().state === 'ready',
      undo: this.undo.view,
      undone,
      mcp: this.mcpShown ? { list: this.d.mcp.list, error: this.d.mcp.error } : undefined,
      processes: controller.processesOf(controller.currentSessionId),
      chips: composer.chips(),
      pickers: this.d.pickers.view(),
    };
  }

  readonly handle = (m: PanelMessage): void => {
    switch (m.type) {
      case 'ask':
        // While the conversation's run works, what is typed steers it.
        if (this.d.controller.unfinishedRun()) void this.steer(m.text, [...(m.images ?? []), ...(m.paths ?? []).map((path) => ({ path }))]);
        else void this.ask(m.text, m.images, m.paths);
        break;
      case 'queue':
        void this.ask(m.text, m.images);
        break;
      case 'cancelRun':
        void this.d.controller.cancel(m.runId).catch((e) => void vscode.window.showErrorMessage(`agentd: cancel failed: ${e instanceof Error ? e.message : e}`));
        break;
      case 'needImage':
        void this.sendImage(m.id);
        break;
      case 'cancel':
        void vscode.commands.executeCommand('agentd.cancel');
        break;
      case 'reply':
      case 'confirm':
      case 'generic':
        void this.answer(m);
        break;
      case 'openDiff':
      case 'edit': {
        const open = this.d.requests.get(m.requestId);
        if (open) void this.d.writes.open(open.req, m.type === 'openDiff' ? (m.index ?? 0) : 0, m.type === 'edit');
        break;
      }
      case 'sessions':
        void this.showSessions();
        break;
      case 'sessionSearch':
        void this.searchSessions(m.query);
        break;
      case 'sessionRename':
      case 'sessionDelete':
        if (this.sessions) {
          this.sessions = { ...this.sessions, failed: undefined, renaming: m.type === 'sessionRename' ? m.sessionId || undefined : undefined, deleting: m.type === 'sessionDelete' ? m.sessionId || undefined : undefined };
          this.update();
        }
        break;
      case 'renameSave':
        void this.renameSession(m.sessionId, m.title);
        break;
      case 'deleteConfirm':
        void this.deleteSession(m.sessionId);
        break;
      case 'openTab':
        void this.openSession(m.sessionId || undefined, false);
        break;
      case 'closeTab':
        this.d.controller.closeTab(m.sessionId || undefined);
        this.save();
        this.update();
        break;
      case 'rules':
        void this.showRules();
        break;
      case 'rulesRefresh':
        void this.rules?.load();
        break;
      case 'closeRules':
        this.rules = undefined;
        this.update();
        break;
      case 'ruleEdit':
        this.rules?.edit(m.id || undefined);
        break;
      case 'ruleRevoke':
        void this.rules?.revoke(m.id);
        break;
      case 'ruleSave':
        void this.rules?.save(m.id, { pattern: m.pattern, action: m.action });
        break;
      case 'compact':
        void this.compact();
        break;
      case 'stopProcess':
        void this.d.controller
          .stopProcess(m.sessionId, m.id)
          .catch((e) => void vscode.window.showErrorMessage(`agentd: could not stop ${m.id}: ${e instanceof Error ? e.message : e}`));
        break;
      case 'closeSessions':
        this.sessions = undefined;
        this.update();
        break;
      case 'openSession':
        void this.openSession(m.sessionId);
        break;
      case 'newSession':
        this.newSession();
        break;
      case 'pickContext':
        void vscode.commands.executeCommand('agentd.addContext');
        break;
      case 'detach':
        this.d.composer.detach(m.key);
        break;
      case 'mention':
        void this.mentions(m.query);
        break;
      case 'setting':
        void this.d.pickers.choose(m.field, m.value);
        break;
      case 'openFile':
        void this.openFile(m.path, m.line, m.column);
        break;
      case 'resume':
        void this.resume(m.runId);
        break;
      case 'loadEarlier':
        void this.d.controller.loadEarlier();
        break;
      case 'undoRun':
        void this.undo.start({ kind: 'run', runId: m.runId });
        break;
      case 'undoCheckpoint':
        // "Undo this restore" names no run: it shows where the restore was shown.
        void this.undo.start({ kind: 'checkpoint', runId: m.runId || this.undo.view?.target.runId || '', checkpoint: m.checkpoint });
        break;
      case 'rewind':
        void this.undo.start({ kind: 'rewind', runId: m.runId });
        break;
      case 'undoApply':
        if ((ON_CONFLICT as readonly string[]).includes(m.onConflict)) void this.undo.apply(m.onConflict as OnConflict);
        break;
      case 'undoClose':
        this.undo.close();
        break;
      case 'slash':
        void this.slash(m.query);
        break;
      case 'mcpRefresh':
        void this.showMcp();
        break;
      case 'autoDiff':
        void vscode.workspace.getConfiguration('agentd').update('review.openDiff', !!m.value, vscode.ConfigurationTarget.Global);
        break;
      case 'mcpAction':
        void this.mcpAction(m.name, m.action);
        break;
      case 'closeMcp':
        this.mcpShown = false;
        this.update();
        break;
    }
  };

  update(): void {
    this.panel?.update();
  }

  /** Gives the running turn the user's words (or, if it just ended, asks them as the next prompt). */
  private async steer(text: string, images: ImageInput[]): Promise<void> {
    try {
      const how = await this.d.controller.steer(text, images);
      this.d.log(`steer: ${how}`);
    } catch (e) {
      this.panel?.post({ type: 'setPrompt', text, images: images.filter((im): im is ImageInput & { mimeType: string; data: string } => !!im.data && !!im.mimeType) });
      void vscode.window.showErrorMessage(`agentd: could not give the run your words: ${e instanceof Error ? e.message : e}`);
    }
    this.update();
  }

  /** Sends a stored image to the webview, which keeps a thumbnail of it. */
  private async sendImage(id: string): Promise<void> {
    try {
      const im = await this.d.controller.image(id);
      this.panel?.post({ type: 'image', id, mimeType: im.mimeType, data: im.data });
    } catch (e) {
      this.d.log(`agent/image ${id}: ${e instanceof Error ? e.message : e}`);
    }
  }

  /** Starts a run with the prompt box's text, the attached context, `@` mentions and images. */
  async ask(text: string, images?: { mimeType: string; data: string; name?: string }[], imagePaths?: string[]): Promise<void> {
    const { controller, composer, paths } = this.d;
    const taken = composer.take();
    let mentioned: ReturnType<typeof mentionsIn> = [];
    try {
      const { files, folders } = await paths.all();
      const f = new Set(files);
      const dirs = new Set(folders);
      mentioned = mentionsIn(text, (p) => (f.has(p) ? 'file' : dirs.has(p.endsWith('/') ? p : `${p}/`) ? 'folder' : undefined));
    } catch (e) {
      this.d.log(`mentions: ${e}`);
    }
    const { prompt, context } = buildRun(text, taken, mentioned);
    await this.panel?.reveal();
    const fresh = !controller.currentSessionId;
    const { pickers } = this.d;
    try {
      const pictures = [...(images ?? []), ...(imagePaths ?? []).map((path) => ({ path }))];
      const res = await controller.run(
        { prompt, context, ...(pictures.length ? { images: pictures } : {}), ...pickers.forRun(fresh) },
        { prompt: text, attached: [...taken, ...mentioned].map(attachmentLabel) },
        fresh ? pickers.startedWith() : undefined,
      );
      this.d.log(`agent/run → ${res.runId} in ${res.sessionId}`);
      this.sessions = undefined;
      this.save();
      this.update();
    } catch (e) {
      composer.restore(taken);
      this.panel?.post({ type: 'setPrompt', text, images });
      await this.runFailed(e, text);
    }
  }

  private async runFailed(e: unknown, text: string): Promise<void> {
    const code = errorCode(e);
    const message = e instanceof Error ? e.message : String(e);
    if (code === ErrorCode.NoModel) {
      const a = await vscode.window.showErrorMessage(`agentd: ${message}`, 'Open Settings', 'Set API Key');
      if (a === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'agentd.model');
      if (a === 'Set API Key') void vscode.commands.executeCommand('agentd.setApiKey');
    } else if (code === ErrorCode.SessionBusy) {
      const a = await vscode.window.showWarningMessage('agentd: this session still has a run going. Cancel it, or ask in a new session.', 'Ask in a New Session');
      if (a) {
        this.newSession();
        await this.ask(text);
      }
    } else if (code === ErrorCode.UnknownSession) {
      const a = await vscode.window.showWarningMessage('agentd no longer knows this session (its state directory was changed or wiped).', 'Ask in a New Session');
      if (a) {
        this.newSession();
        await this.ask(text);
      }
    } else if (code === ErrorCode.InvalidParams && slashName(text)) {
      // A custom command whose file is broken: the daemon says why.
      void vscode.window.showErrorMessage(`agentd: /${slashName(text)} cannot be run: ${message.replace(/^invalid params: /, '')}`);
    } else if (code === ErrorCode.NotSaved) {
      void vscode.window.showErrorMessage(`agentd could not save the run, so it did not start: ${message}. Free some space or fix the state directory's permissions, then send again.`);
    } else {
      void vscode.window.showErrorMessage(`agentd: could not start the run: ${message}`);
    }
  }

  /** Resumes a paused run; if its state still cannot be saved it pauses again and says so. */
  async resume(runId: string): Promise<void> {
    try {
      await this.d.controller.resume(runId);
    } catch (e) {
      void vscode.window.showErrorMessage(`agentd: could not resume the run: ${e instanceof Error ? e.message : e}`);
    }
    this.update();
  }

  /** Opens a file the daemon named (an instruction file): workspace-relative or absolute. */
  async openFile(path: string, line?: number, column?: number): Promise<void> {
    const root = this.d.workspaceRoot();
    const uri = path.startsWith('/') || !root ? vscode.Uri.file(path) : vscode.Uri.joinPath(root, path);
    try {
      const at = line ? new vscode.Position(Math.max(0, line - 1), Math.max(0, (column ?? 1) - 1)) : undefined;
      await vscode.window.showTextDocument(uri, { preview: true, selection: at && new vscode.Range(at, at) });
    } catch (e) {
      void vscode.window.showErrorMessage(`agentd: could not open ${path}: ${e instanceof Error ? e.message : e}`);
    }
  }

  /** Answers a request from the panel; a write's edited proposal goes along. */
  async answer(m: PanelAnswer, editedContent?: string): Promise<void> {
    const open = this.d.requests.get(m.requestId);
    if (!open) return;
    const edited = m.type === 'confirm' && open.req.kind === 'confirm_write' ? (editedContent ?? (await this.d.writes.editedContent(m.requestId))) : undefined;
    const a = answerFor(open.req, m, edited);
    if (typeof a === 'string') {
      this.d.requests.setError(m.requestId, a);
      return;
    }
    this.d.log(`${a.method} ${m.requestId}${'decision' in a.params ? ` ${a.params.decision}${a.params.editedContent !== undefined ? ' (edited)' : ''}` : ''}`);
    await this.d.requests.answer(a);
  }

  async showSessions(): Promise<void> {
    this.mcpShown = false;
    this.rules = undefined;
    this.sessions = {};
    this.update();
    await this.panel?.reveal();
    await this.searchSessions('');
  }

  /** Lists the sessions whose title or prompts hold every word of the query (all for none). */
  private async searchSessions(query: string): Promise<void> {
    if (!this.sessions) return;
    const asked = (this.searchCount = (this.searchCount ?? 0) + 1);
    this.sessions = { ...this.sessions, query };
    try {
      const list = await this.d.controller.sessions(query);
      if (asked === this.searchCount && this.sessions) this.sessions = { ...this.sessions, list, error: undefined };
    } catch (e) {
      if (this.sessions) this.sessions = { ...this.sessions, error: `Could not list the sessions: ${e instanceof Error ? e.message : e}` };
    }
    this.update();
  }
  private searchCount?: number;

  private async renameSession(sessionId: string, title: string): Promise<void> {
    try {
      await this.d.controller.renameSession(sessionId, title);
      if (this.sessions) this.sessions = { ...this.sessions, renaming: undefined, failed: undefined };
      this.save();
      await this.searchSessions(this.sessions?.query ?? '');
    } catch (e) {
      if (this.sessions) this.sessions = { ...this.sessions, failed: `Could not rename the session: ${e instanceof Error ? e.message : e}` };
      this.update();
    }
  }

  private async deleteSession(sessionId: string): Promise<void> {
    try {
      await this.d.controller.deleteSession(sessionId);
      if (this.sessions) this.sessions = { ...this.sessions, deleting: undefined, failed: undefined };
      this.save();
      await this.searchSessions(this.sessions?.query ?? '');
    } catch (e) {
      const msg = errorCode(e) === ErrorCode.SessionBusy ? 'It has a run going: cancel it first.' : e instanceof Error ? e.message : String(e);
      if (this.sessions) this.sessions = { ...this.sessions, failed: `Could not delete the session: ${msg}` };
      this.update();
    }
  }

  /**
   * Opens a session of the list or a tab: its whole conversation, and follow-ups continue it. The
   * one shown before stays open in its tab. Undefined is the new conversation's tab.
   */
  async openSession(sessionId: string | undefined, fromList = true): Promise<void> {
    if (!sessionId) {
      this.d.controller.closeTab(undefined);
      this.d.controller.newSession();
      this.save();
      this.update();
      return;
    }
    const info = this.sessions?.list?.find((x) => x.sessionId === sessionId);
    if (fromList) this.sessions = undefined;
    const opening = this.d.controller.openSession(sessionId, info);
    this.save();
    this.update();
    await opening;
    if (!this.d.controller.session?.context) void this.d.controller.refreshContext(sessionId);
    this.update();
  }

  /** The rules view: what agentd may do unasked, with the user's answers to revoke or edit. */
  async showRules(): Promise<void> {
    this.sessions = undefined;
    this.mcpShown = false;
    this.rules = new RulesView(this.d.rpc, () => this.d.controller.currentSessionId, () => this.update());
    this.update();
    await this.panel?.reveal();
    await this.rules.load();
  }

  /** Compacts the shown conversation now and says what it saved. */
  async compact(): Promise<void> {
    try {
      const res = await this.d.controller.compact();
      if (!res) return;
      const k = (n: number) => (n >= 1000 ? `${(n / 1000).toFixed(1)}k` : `${n}`);
      const msg = res.dropped
        ? `agentd: compacted the conversation, ${k(res.before)} → ${k(res.after)} tokens (${plural(res.dropped, 'message')} summarized; the last turn is kept whole).`
        : 'agentd: nothing worth compacting yet: the conversation is its last turn, or its older turns are shorter than a summary of them.';
      void vscode.window.showInformationMessage(msg);
    } catch (e) {
      const why = errorCode(e) === ErrorCode.SessionBusy ? 'a run of it is going; compact once it is over.' : e instanceof Error ? e.message : String(e);
      void vscode.window.showErrorMessage(`agentd: could not compact the conversation: ${why}`);
    }
    this.update();
  }

  newSession(): void {
    this.d.pickers.newConversation(this.d.controller.session?.settings);
    // One new conversation at a time: a blank one already open comes to the front.
    if (this.d.controller.session) this.d.controller.newSession();
    this.sessions = undefined;
    this.save();
    this.update();
    void this.panel?.focus({ target: 'prompt' });
  }

  /** Called when a run of the current session changed: keeps the snapshot current. */
  runChanged(run?: RunView): void {
    this.save();
    // A run that ended may have changed files: the checkpoints (what was undone since) are asked again.
    if (run && TERMINAL_STATES.has(run.state) && !this.ended.has(run.runId)) {
      this.ended.add(run.runId);
      this.refreshCheckpoints();
      void this.refreshMcp();
    }
  }

  /** Lists the open session's checkpoints when the daemon keeps them. */
  refreshCheckpoints(): void {
    if (this.d.undoSupported()) void this.undo.refreshCheckpoints();
  }

  /** Another session is shown: an undo of the last one no longer applies. */
  sessionSwitched(): void {
    if (this.undo.view && !this.d.controller.currentRuns().some((r) => r.runId === this.undo.view!.target.runId)) this.undo.close();
    this.refreshCheckpoints();
  }

  /** The MCP servers view: agentd's servers for this session, asked afresh when shown. */
  async showMcp(): Promise<void> {
    this.mcpShown = true;
    this.sessions = undefined;
    this.rules = undefined;
    this.update();
    await this.panel?.reveal();
    await this.d.mcp.refresh();
  }

  /** Enables, disables or restarts a server from the MCP view. */
  private async mcpAction(name: string, action: string): Promise<void> {
    if (action !== 'enable' && action !== 'disable' && action !== 'restart') return;
    try {
      await this.d.mcp.act(name, action as McpAction);
    } catch (e) {
      void vscode.window.showErrorMessage(`agentd: could not ${action} the MCP server ${name}: ${e instanceof Error ? e.message : e}`);
    }
  }

  /** Asks for the MCP servers again (after a connect, when a run ends). Never fails. */
  refreshMcp(): Promise<void> {
    return this.d.mcp.refresh();
  }

  /** Completes `/name` in the prompt box from the custom commands (read afresh, so new files show). */
  private async slash(query: string): Promise<void> {
    try {
      const items = matchCommands(await listCommands(this.d.rpc), query);
      this.panel?.post({ type: 'slash', query, items });
    } catch (e) {
      this.d.log(`agent/commands: ${e instanceof Error ? e.message : e}`);
      this.panel?.post({ type: 'slash', query, items: [] });
    }
  }

  private async mentions(query: string): Promise<void> {
    const { files, folders } = await this.d.paths.all();
    this.panel?.post({ type: 'mentions', query, items: matchPaths([...files, ...folders], query) });
  }
}
