package rpc

import (
	"errors"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/rpc/wire"
	"github.com/agentd/agentd/tools/mcp"
)

// Errors of the rpc layer itself.
var (
	errMethodNotFound   = errors.New("method not found")
	errInvalidRequest   = errors.New("invalid request")
	errInvalidParams    = errors.New("invalid params")
	errNotInitialized   = errors.New("server not initialized")
	errShuttingDown     = errors.New("shutting down")
	errIndexUnavailable = errors.New("index unavailable")
	errRequestCancelled = errors.New("request cancelled")
	errInternal         = errors.New("internal error")
)

// codes maps each known error to its wire code; see docs/protocol.md.
var codes = []struct {
	err  error
	code int
}{
	{errMethodNotFound, wire.CodeMethodNotFound},
	{errInvalidRequest, wire.CodeInvalidRequest},
	{errInvalidParams, wire.CodeInvalidParams},
	{agent.ErrInvalid, wire.CodeInvalidParams},
	{errNotInitialized, wire.CodeServerNotInitialized},
	{errShuttingDown, wire.CodeShuttingDown},
	{errIndexUnavailable, wire.CodeIndexUnavailable},
	{errRequestCancelled, wire.CodeRequestCancelled},
	{agent.ErrUnknownRun, wire.CodeUnknownRun},
	{agent.ErrUnknownRequest, wire.CodeUnknownRequest},
	{agent.ErrAlreadyResolved, wire.CodeAlreadyResolved},
	{agent.ErrWrongKind, wire.CodeWrongKind},
	{agent.ErrExpired, wire.CodeExpired},
	{agent.ErrSessionBusy, wire.CodeSessionBusy},
	{agent.ErrUnknownSession, wire.CodeUnknownSession},
	{agent.ErrNoModel, wire.CodeNoModel},
	{agent.ErrRunNotPaused, wire.CodeRunNotPaused},
	{agent.ErrRunFinished, wire.CodeRunFinished},
	{agent.ErrNotSaved, wire.CodeNotSaved},
	{agent.ErrUnknownCheckpoint, wire.CodeUnknownCheckpoint},
	{agent.ErrUnknownRule, wire.CodeUnknownRule},
	{mcp.ErrUnknownServer, wire.CodeInvalidParams},
	{mcp.ErrNotStartable, wire.CodeInvalidParams},
}

// toWire is the one place an error gets its JSON-RPC code. The message is
// the whole error text, so it names the field or id at fault.
func toWire(err error) *jsonrpc2.Error {
	code := wire.CodeInternalError
	for _, c := range codes {
		if errors.Is(err, c.err) {
			code = c.code
			break
		}
	}
	return &jsonrpc2.Error{Code: jsonrpc2.Code(code), Message: err.Error()}
}
