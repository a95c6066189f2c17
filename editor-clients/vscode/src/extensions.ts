// What the daemon reads from the user's and the workspace's extensions, for the panel: custom
// commands (agent/commands) completed after `/` in the prompt box, and the MCP servers
// (mcp/status). No vscode import. Both lists are asked when shown: the daemon reads the command
// files when asked, and MCP has no change notification.

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
