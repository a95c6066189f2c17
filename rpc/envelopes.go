package rpc

import (
	"encoding/json"

	"github.com/agentd/agentd/agent"
)

// The params and results of the agent/* methods that are not the agent's
// own values: the envelopes the native protocol wraps them in. The agent's
// run vocabulary (RunParams, InputRequest, …) is in package agent; the
// method names and error codes are in rpc/wire.

// RunRef names a run (agent/cancel, agent/resume).
type RunRef struct {
	RunID string `json:"runId"`
}

// PendingParams filters agent/pending; an empty RunID means every run.
type PendingParams struct {
	RunID string `json:"runId,omitempty"`
}

// PendingResult lists the open input requests, oldest first.
type PendingResult struct {
	Requests []agent.InputRequest `json:"requests"`
}

// EventsParams asks for a run's notifications after a sequence number.
type EventsParams struct {
	RunID    string `json:"runId"`
	AfterSeq int64  `json:"afterSeq"`
}

// EventsResult holds the run's notifications with seq > afterSeq, in order,
// and the run's current state.
type EventsResult struct {
	Events []Event     `json:"events"`
	State  agent.State `json:"state"`
}

// Event is one notification as it was sent.
type Event struct {
	Seq    int64           `json:"seq"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// SessionRef names a session (agent/checkpoints).
type SessionRef struct {
	SessionID string `json:"sessionId"`
}

// CheckpointsResult lists a session's checkpoints, oldest first.
type CheckpointsResult struct {
	Checkpoints []agent.CheckpointInfo `json:"checkpoints"`
}

// SessionsResult lists the sessions of this workspace, newest first.
type SessionsResult struct {
	Sessions []agent.SessionInfo `json:"sessions"`
}
