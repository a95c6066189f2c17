// Package rpc is the daemon's face to the editor: JSON-RPC 2.0 with LSP
// framing over stdio (go.lsp.dev/jsonrpc2, which only this package imports),
// the LSP lifecycle, and one thin handler per method that decodes its params
// and dispatches to the agent or the index.
//
// Errors carry their JSON-RPC code; [toWire] is the one place that maps an
// error to its code. A bad frame is answered with a parse or invalid-request
// error and the connection goes on ([stream]). The agent reports through the
// notifier the server gives it; the index is plugged in by cmd through
// [IndexOpener], so rpc never imports rag.
//
// The wire types and error codes are in rpc/wire; the contract is written
// out in docs/protocol.md. [Client] is the other end, for tests and tools.
package rpc
