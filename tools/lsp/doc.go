// Package lsp runs agentd's own language servers: gopls,
// typescript-language-server, pyright, rust-analyzer, clangd, found on the
// PATH (or as the languageServers setting says), each in the kernel
// sandbox's read profile without network, one per workspace and language,
// started when a file of its language is first read or asked about and
// stopped when idle. Manager is tools.Language over them, for a front end
// without an editor (agentd run, agentd acp) and for the files an editor
// has no server for.
//
// It is the only importer of go.lsp.dev/protocol (v0.12.0, pinned), whose
// types stay inside. It speaks JSON-RPC itself (conn.go) rather than
// through go.lsp.dev/jsonrpc2, which rpc owns: a language server is a child
// that may crash, hang or flood, and every call here is bounded by its
// context, every frame by a size, and a write never blocks a caller.
package lsp
