// Package acp is agentd's second front door: the Agent Client Protocol (ACP)
// v1 over stdio (newline-delimited JSON-RPC), so that Zed, the JetBrains
// IDEs, CodeCompanion, avante.nvim, agent-shell and other ACP editors drive
// the same agent, sessions and state as the native protocol (package rpc).
//
// It is built on github.com/coder/acp-go-sdk v0.13.0, which speaks protocol
// version 1. What ACP calls a session is an agentd session; one ACP prompt
// turn is one agentd run, held open until the run ends. Every run
// notification (agent/update, agent/inputRequest, agent/inputResolved,
// agent/runState) is turned into what ACP has for it:
//
//   - agent/update becomes session/update (agent_message_chunk, plan,
//     tool_call, tool_call_update with kind, locations and diffs, and the
//     unstable usage_update);
//   - a confirmation becomes session/request_permission, the diff or the
//     command inside the tool call; a question or a choice becomes
//     elicitation/create when the client offers form elicitation, or else a
//     message (a choice as numbered options) whose answer is the next
//     prompt;
//   - agent/runState ends the turn with a stop reason.
//
// When the client offers fs/read_text_file and fs/write_text_file, the
// tools' file contents go through it (editorFiles), so unsaved buffers are
// seen and the editor tracks changes; existence, deletes and moves stay on
// the disk, since ACP has no delete.
//
// One agent.Agent serves each workspace root (a session's cwd), created on
// first use. session/load replays every run of the session; requests that
// were open when agentd stopped are asked again when their session is
// loaded. The session's approval mode, model and reasoning effort are
// config options (config.go), the mode also a session mode. `/search query` answers from the workspace
// index without the model.
//
// At debug level every message is logged both ways (wireLog), clipped, the
// answer to a secret question hidden.
//
// The SDK's form elicitation type has no field for the session scope the
// schema requires (sessionId, toolCallId); scopeWriter adds it on the way
// out. See docs/acp.md for what is supported.
package acp
