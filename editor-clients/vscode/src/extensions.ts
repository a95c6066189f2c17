// What the daemon reads from the user's and the workspace's extensions, for the panel: custom
// commands (agent/commands) completed after `/` in the prompt box, and the MCP servers
// (mcp/status, asked again when mcp/changed says a server moved; mcp/enable, mcp/disable,
// mcp/restart). No vscode import. The commands are asked when shown: the daemon reads the
// command files when asked.

import { Rpc } from './daemon';
import { CommandsResult, CustomCommand, McpServer, Method } from './protocol';

/** A completion of `/name` in the prompt box. */
export interface SlashItem {
  name: string;
  description?: string;
  argumentHint?: string;
  source: string;
  /** The file is broken: shown with the reason, not inserted. */
  error?: string;
}

/**
 * The commands whose name matches what follows the slash, best first: names that start with it,
 * then names with a part (after `:`) that does, then names that contain it. Shadowed commands
 * cannot be run and are left out, as the protocol says.
 */
export function matchCommands(commands: readonly CustomCommand[], query: string, limit = 20): SlashItem[] {
  const q = query.toLowerCase();
  const scored: { c: CustomCommand; s: number }[] = [];
  for (const c of commands) {
    if (c.shadowed || !c.name) continue;
    const n = c.name.toLowerCase();
    let s: number;
    if (!q || n.startsWith(q)) s = 0;
    else if (n.split(':').some((part) => part.startsWith(q))) s = 1;
    else if (n.includes(q)) s = 2;
    else continue;
    scored.push({ c, s });
  }
  scored.sort((a, b) => a.s - b.s || a.c.name.localeCompare(b.c.name));
  return scored.slice(0, limit).map(({ c }) => {
    const item: SlashItem = { name: c.name, source: c.source };
    if (c.description) item.description = c.description;
    if (c.argumentHint) item.argumentHint = c.argumentHint;
    if (c.error) item.error = c.error;
    return item;
  });
}

/** The `/name` a prompt starts with, when its first word is one. */
export function slashName(prompt: string): string | undefined {
  const m = /^\/([^\s/]+)(?=\s|$)/.exec(prompt.trimStart());
  return m ? m[1] : undefined;
}

export async function listCommands(rpc: Rpc): Promise<CustomCommand[]> {
  // Params `{}`, not none: vscode-jsonrpc sends a missing params as `[null]`.
  const res = await rpc.request<CommandsResult>(Method.commands, {});
  return res.commands ?? [];
}

export async function mcpStatus(rpc: Rpc, sessionId?: string): Promise<McpServer[]> {
  const res = await rpc.request<{ servers: McpServer[] }>(Method.mcpStatus, sessionId ? { sessionId } : {});
  return res.servers ?? [];
}

/** What the user can do to an MCP server. */
export type McpAction = 'enable' | 'disable' | 'restart';

const MCP_METHODS: Record<McpAction, string> = { enable: Method.mcpEnable, disable: Method.mcpDisable, restart: Method.mcpRestart };

/**
 * The MCP servers as the editor shows them (status bar, MCP view): asked after a connect, and
 * again shortly after mcp/changed (a burst of changes, one request). Never fails: an error is
 * kept for the view.
 */
export class McpWatch {
  list?: McpServer[];
  error?: string;
  private timer?: ReturnType<typeof setTimeout>;
  private asking?: Promise<void>;
  private again = false;

  constructor(
    private readonly rpc: Rpc,
    private readonly sessionId: () => string | undefined,
    private readonly onChange: (w: McpWatch) => void,
    private readonly debounceMs = 150,
  ) {}

  /** mcp/changed: asks again soon. */
  changed(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.refresh();
    }, this.debounceMs);
  }

  /** Asks mcp/status now (one request at a time; a call meanwhile asks once more after it). */
  refresh(): Promise<void> {
    if (this.asking) {
      this.again = true;
      return this.asking;
    }
    this.asking = (async () => {
      do {
        this.again = false;
        try {
          this.list = await mcpStatus(this.rpc, this.sessionId());
          this.error = undefined;
        } catch (e) {
          this.error = `Could not ask agentd for its MCP servers: ${e instanceof Error ? e.message : e}`;
        }
        this.onChange(this);
      } while (this.again);
    })().finally(() => (this.asking = undefined));
    return this.asking;
  }

  /** Enables, disables or restarts a server; the list is asked again afterwards. */
  async act(name: string, action: McpAction): Promise<McpServer> {
    const sid = this.sessionId();
    const res = await this.rpc.request<{ server: McpServer }>(MCP_METHODS[action], sid ? { name, sessionId: sid } : { name });
    if (this.list) this.list = this.list.map((s) => (s.name === name ? res.server : s));
    this.onChange(this);
    void this.refresh();
    return res.server;
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
  }
}
