// The commands, as one table: id → what it does. package.json declares the same ids (a unit test
// checks both lists match) and the keybindings.

import * as vscode from 'vscode';
import { AgentController } from './agent';
import { Composer } from './context';
import { WorkspacePaths, pickContext, selectionAttachment } from './contextPicker';
import { Conversation } from './conversation';
import { ConversationPanel } from './panel';
import { ProposedWrites } from './writes';
import { InlineEdits } from './inlineEdit';

export const SECRET_KEY = 'agentd.apiKey';

export interface CommandDeps {
  controller: AgentController;
  conversation: Conversation;
  panel: ConversationPanel;
  composer: Composer;
  paths: WorkspacePaths;
  secrets: vscode.SecretStorage;
  writes: ProposedWrites;
  inline: InlineEdits;
  restartDaemon: () => Promise<void>;
  showLog: () => void;
}

type Command = (...args: unknown[]) => unknown;

export function commandTable(d: CommandDeps): Record<string, Command> {
  const focusPrompt = () => d.panel.focus({ target: 'prompt' });
  return {
    /** With a string: asks it. Without: the prompt box, with the caret in it. */
    'agentd.ask': async (arg?: unknown) => {
      if (typeof arg === 'string' && arg.trim()) await d.conversation.ask(arg.trim());
      else await focusPrompt();
    },
    /** Attaches the selection (or the current line) and goes to the prompt box. */
    'agentd.askSelection': async (arg?: unknown) => {
      const sel = selectionAttachment(true);
      if (!sel) {
        void vscode.window.showInformationMessage('agentd: open a file and select some code first.');
        return;
      }
      d.composer.attach(sel);
      if (typeof arg === 'string' && arg.trim()) await d.conversation.ask(arg.trim());
      else await focusPrompt();
    },
    'agentd.addContext': async () => {
      const picked = await pickContext(d.paths);
      if (picked.length) d.composer.attach(...picked);
      await focusPrompt();
    },
    'agentd.cancel': async () => {
      const active = d.controller.activeRuns();
      const current = active.filter((r) => r.sessionId === d.controller.currentSessionId);
      if (!active.length) {
        void vscode.window.showInformationMessage('agentd: no run is going.');
        return;
      }
      let target = current.length === 1 ? current[0] : active.length === 1 ? active[0] : undefined;
      if (!target) {
        const pick = await vscode.window.showQuickPick(
          active.map((r) => ({ label: r.prompt ?? r.runId, description: r.sessionId === d.controller.currentSessionId ? 'this session' : 'another session', run: r })),
          { title: 'agentd: Cancel which run?' },
        );
        if (!pick) return;
        target = pick.run;
      }
      try {
        await d.controller.cancel(target.runId);
      } catch (e) {
        void vscode.window.showErrorMessage(`agentd: cancel failed: ${e instanceof Error ? e.message : e}`);
      }
    },
    'agentd.focusPanel': focusPrompt,
    'agentd.showPanel': () => d.panel.reveal(),
    /** The oldest open request, in the panel (also the status bar's click). */
    'agentd.focusRequest': async () => {
      if (!d.controller.requests.size) {
        void vscode.window.showInformationMessage('agentd: nothing is waiting for you.');
        return;
      }
      await d.panel.focus({ target: 'request' });
    },
    'agentd.showSessions': () => d.conversation.showSessions(),
    /** The MCP servers agentd sees: state, tools, errors (mcp/status). */
    'agentd.mcpServers': () => d.conversation.showMcp(),
    'agentd.newSession': () => d.conversation.newSession(),
    'agentd.showLog': () => d.showLog(),
    /** The diff editor's title bar: the whole change shown (its uri, or the active tab's). */
    'agentd.review.acceptChange': (uri?: unknown) => d.writes.decideAll(uri, true),
    'agentd.review.rejectChange': (uri?: unknown) => d.writes.decideAll(uri, false),
    /** A hunk's buttons, in the diff editor or in the buffer of an inline edit. */
    'agentd.review.acceptHunk': (id?: unknown, key?: unknown) => {
      if (typeof id !== 'string' || typeof key !== 'string') return;
      if (d.inline.owns(id)) d.inline.acceptHunk(id, key);
      else d.writes.acceptHunk(id, key);
    },
    'agentd.review.rejectHunk': (id?: unknown, key?: unknown) => {
      if (typeof id !== 'string' || typeof key !== 'string') return;
      return d.inline.owns(id) ? d.inline.rejectHunk(id, key) : d.writes.rejectHunk(id, key);
    },
    /** An inline edit's Accept all and Reject all. */
    'agentd.review.acceptAll': (id?: unknown) => typeof id === 'string' && d.inline.decideAll(id, true),
    'agentd.review.rejectAll': (id?: unknown) => typeof id === 'string' && d.inline.decideAll(id, false),
    /** Select code, say what to change, see it in the buffer. */
    'agentd.inlineEdit': () => d.inline.start(),
    /** The rules agentd applies; the user's "always" answers can be revoked or edited. */
    'agentd.rules': () => d.conversation.showRules(),
    'agentd.compact': () => d.conversation.compact(),
    'agentd.restart': () => d.restartDaemon(),
    'agentd.setApiKey': async () => {
      const key = await vscode.window.showInputBox({ title: 'agentd: API Key', prompt: 'Kept in VS Code secret storage and handed to agentd at start; never written to settings.', password: true, ignoreFocusOut: true });
      if (key === undefined) return;
      await d.secrets.store(SECRET_KEY, key);
      await d.restartDaemon();
    },
    'agentd.clearApiKey': async () => {
      await d.secrets.delete(SECRET_KEY);
      await d.restartDaemon();
    },
  };
}

export function registerCommands(table: Record<string, Command>): vscode.Disposable[] {
  return Object.entries(table).map(([id, fn]) => vscode.commands.registerCommand(id, fn));
}
