// Package mcp connects agentd to MCP servers and serves agentd's index as
// one. It alone imports the MCP Go SDK; its types stay inside.
//
// As a client, a [Manager] runs a workspace's servers: those of the user's
// config.json (trusted), those of the workspace's .mcp.json (started only
// once the user approved that server's exact configuration), and those an
// editor passes for a session (ACP's session/new). A stdio server runs in
// the kernel sandbox (package sandbox; the read profile unless configured
// otherwise, no network unless "network": true), with a state directory of
// its own; an HTTP server is reached by the daemon. Each server's tools
// reach the model as mcp__<server>__<tool>, with the server's schemas, as
// tools.Tool values of unknown effect: the policy asks before every call
// whatever the server claims (its annotations are shown, never trusted).
// A run takes the tools of the servers connected when it starts, in a
// fixed order (agent offers a session the ones its first run took); a
// server that announces new tools is listed again when a run next takes
// them. A failure is a result the model reads; a server
// that crashed starts again at the next call. A server's questions
// (elicitation) become the call's durable input requests.
//
// As a server, [Serve] answers MCP clients (Claude Code, Codex, the MCP
// Inspector) on stdio with the workspace index: search, and a file's
// outline. docs/extensions.md says how to configure both sides.
package mcp
