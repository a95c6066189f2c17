package wire

// Error codes. The standard JSON-RPC and LSP codes first, then agentd's own,
// each named in docs/protocol.md. A code never changes meaning.
const (
	CodeParseError           = -32700
	CodeInvalidRequest       = -32600
	CodeMethodNotFound       = -32601
	CodeInvalidParams        = -32602
	CodeInternalError        = -32603
	CodeServerNotInitialized = -32002
	CodeRequestCancelled     = -32800

	CodeUnknownRun       = -32010
	CodeUnknownRequest   = -32011
	CodeAlreadyResolved  = -32012
	CodeWrongKind        = -32013
	CodeExpired          = -32014
	CodeIndexUnavailable = -32015
	CodeSessionBusy      = -32016
	CodeUnknownSession   = -32017
	CodeNoModel          = -32018
	CodeRunNotPaused     = -32019
	CodeShuttingDown     = -32020
	CodeNotSaved         = -32021
)

// CodeUnknownCheckpoint: no such checkpoint in the session, or it expired.
const CodeUnknownCheckpoint = -32022

// CodeUnknownRule: no rule has that id (revoked, or edited since).
const CodeUnknownRule = -32023

// CodeRunFinished: the run is over (or ending); a steer goes in a new run.
const CodeRunFinished = -32024
