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
import { listCommands, matchCommands, mcpStatus, slashName } from './extensions';
import { ErrorCode, McpServer, OnConflict, ON_CONFLICT, SessionInfo, TERMINAL_STATES, errorCode } from './protocol';
import { RunView } from './runStore';
import { UndoFlow, UndoTarget } from './undo';
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
  /** The MCP servers were listed (for the status bar). */
  mcpChanged?: (servers: McpServer[]) => void;
  workspaceRoot: () => vscode.Uri | undefined;
  log: (line: string) => void;
}

export class Conversation {
  panel?: ConversationPanel;
  private sessions?: { list?: SessionInfo[]; error?: string };
  private mcp?: { list?: McpServer[]; error?: string };
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
      sessions: this.sessions,
      session: sv && { loading: sv.loading, earlierRuns: sv.earlierRuns, loadingEarlier: sv.loadingEarlier, error: sv.error },
      busy,
      canUndo: this.d.undoSupported() && !!controller.currentSessionId && !busy && this.d.daemonState().state === 'ready',
      undo: this.undo.view,
      undone,
      mcp: this.mcp,
      chips: composer.chips(),
      pickers: this.d.pickers.view(),
    };
  }

  readonly handle = (m: PanelMessage): void => {
    switch (m.type) {
      case 'ask':
        void this.ask(m.text);
        break;
      case 'cancel':
        void vscode.commands.executeCommand('agentd.cancel');
        break;
      case 'reply':
      case 'confirm':
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
        void this.openFile(m.path);
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
      case 'closeMcp':
        this.mcp = undefined;
        this.update();
        break;
    }
  };

  update(): void {
    this.panel?.update();
  }

  /** Starts a run with the prompt box's text, the attached context and `@` mentions. */
  async ask(text: string): Promise<void> {
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
      const res = await controller.run(
        { prompt, context, ...pickers.forRun(fresh) },
        { prompt: text, attached: [...taken, ...mentioned].map(attachmentLabel) },
        fresh ? pickers.startedWith() : undefined,
      );
      this.d.log(`agent/run → ${res.runId} in ${res.sessionId}`);
      this.sessions = undefined;
      this.save();
      this.update();
    } catch (e) {
      composer.restore(taken);
      this.panel?.post({ type: 'setPrompt', text });
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
  async openFile(path: string): Promise<void> {
    const root = this.d.workspaceRoot();
    const uri = path.startsWith('/') || !root ? vscode.Uri.file(path) : vscode.Uri.joinPath(root, path);
    try {
      await vscode.window.showTextDocument(uri, { preview: true });
    } catch (e) {
      void vscode.window.showErrorMessage(`agentd: could not open ${path}: ${e instanceof Error ? e.message : e}`);
    }
  }

  /** Answers a request from the panel; a write's edited proposal goes along. */
  async answer(m: PanelAnswer): Promise<void> {
    const open = this.d.requests.get(m.requestId);
    if (!open) return;
    const edited = m.type === 'confirm' && open.req.kind === 'confirm_write' ? await this.d.writes.editedContent(m.requestId) : undefined;
    const a = answerFor(open.req, m, edited);
    if (typeof a === 'string') {
      this.d.requests.setError(m.requestId, a);
      return;
    }
    this.d.log(`${a.method} ${m.requestId}${'decision' in a.params ? ` ${a.params.decision}${a.params.editedContent !== undefined ? ' (edited)' : ''}` : ''}`);
    await this.d.requests.answer(a);
  }

  async showSessions(): Promise<void> {
    this.mcp = undefined;
    this.sessions = {};
    this.update();
    await this.panel?.reveal();
    try {
      this.sessions = { list: await this.d.controller.sessions() };
    } catch (e) {
      this.sessions = { error: `Could not list the sessions: ${e instanceof Error ? e.message : e}` };
    }
    this.update();
  }

  /** Opens a session of the list: its whole conversation, and follow-ups continue it. */
  async openSession(sessionId: string): Promise<void> {
    const info = this.sessions?.list?.find((x) => x.sessionId === sessionId);
    this.sessions = undefined;
    const opening = this.d.controller.openSession(sessionId, info);
    this.save();
    this.update();
    await opening;
    this.update();
  }

  newSession(): void {
    this.d.pickers.newConversation(this.d.controller.session?.settings);
    this.d.controller.newSession();
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

  /** The MCP servers view: agentd's servers for this session, asked afresh each time. */
  async showMcp(): Promise<void> {
    this.mcp = { list: this.mcp?.list };
    this.sessions = undefined;
    this.update();
    await this.panel?.reveal();
    try {
      const list = await mcpStatus(this.d.rpc, this.d.controller.currentSessionId);
      this.mcp = { list };
      this.d.mcpChanged?.(list);
    } catch (e) {
      this.mcp = { error: `Could not ask agentd for its MCP servers: ${e instanceof Error ? e.message : e}` };
    }
    this.update();
  }

  /**
   * Asks for the MCP servers for the status bar (after a connect, when a run ends: there is no
   * change notification). Never fails; the view, when open, shows the new list too.
   */
  async refreshMcp(): Promise<void> {
    try {
      const list = await mcpStatus(this.d.rpc, this.d.controller.currentSessionId);
      this.d.mcpChanged?.(list);
      if (this.mcp?.list) {
        this.mcp = { list };
        this.update();
      }
    } catch (e) {
      this.d.log(`mcp/status: ${e instanceof Error ? e.message : e}`);
    }
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
