// Package rpc is the daemon's face to the editor: JSON-RPC 2.0 with LSP
// framing over stdio (go.lsp.dev/jsonrpc2, which only this package imports),
// the LSP lifecycle, and one thin handler per method that decodes its params
// and dispatches to the agent or the index.
//
// Errors carry their JSON-RPC code; [toWire] is the one place that maps an
// error to its code. A bad frame is answered with a parse or invalid-request
// error and the connection goes on ([framedConn]). The [Server] is the agent's
// Listener: it sends each run notification under its method, and shows a
// run's logged events the same way (agent/events). The index is plugged in
// by cmd through [IndexStarter], so rpc never imports rag.
//
// The method names and error codes are in rpc/wire, the run vocabulary in
// agent, the envelopes of the agent/* methods here; the contract is written
// out in docs/protocol.md. [Client] is the other end, for tests and tools.
package rpc
