package rpc

import (
	"encoding/json"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/tools"
	"github.com/agentd/agentd/tools/mcp"
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

// EventsParams asks for a run's notifications after a sequence number, at
// most Limit of them (0: all).
type EventsParams struct {
	RunID    string `json:"runId"`
	AfterSeq int64  `json:"afterSeq"`
	Limit    int    `json:"limit,omitempty"`
}

// EventsResult holds the run's notifications with seq > afterSeq, in order,
// and the run's current state; More says the limit left some out.
type EventsResult struct {
	Events []Event     `json:"events"`
	State  agent.State `json:"state"`
	More   bool        `json:"more,omitempty"`
}

// Event is one notification as it was sent.
type Event struct {
	Seq    int64           `json:"seq"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// CommandsResult lists the custom commands, and the directories they are
// read from, the one that wins first.
type CommandsResult struct {
	Commands    []agent.Command    `json:"commands"`
	Directories []agent.CommandDir `json:"directories"`
}

// SessionRef names a session (agent/checkpoints).
type SessionRef struct {
	SessionID string `json:"sessionId"`
}

// CheckpointsResult lists a session's checkpoints, oldest first.
type CheckpointsResult struct {
	Checkpoints []agent.CheckpointInfo `json:"checkpoints"`
}

// MCPStatusParams asks for the MCP servers a session sees; without a
// session, those every session sees (the user's and the workspace's).
type MCPStatusParams struct {
	SessionID string `json:"sessionId,omitempty"`
}

// MCPStatusResult lists the servers by name.
type MCPStatusResult struct {
	Servers []mcp.Status `json:"servers"`
}

// SessionsResult lists the sessions of this workspace, newest first.
type SessionsResult struct {
	Sessions []agent.SessionInfo `json:"sessions"`
}

// HistoryResult is agent/history's answer: agent.History with each run's
// events as agent/events shows them.
type HistoryResult struct {
	Session     agent.SessionInfo    `json:"session"`
	Runs        []HistoryRun         `json:"runs"`
	EarlierRuns int                  `json:"earlierRuns"`
	Pending     []agent.InputRequest `json:"pending"`
	Processes   []tools.ProcessInfo  `json:"processes"`
}

// HistoryRun is one run of a history page.
type HistoryRun struct {
	agent.RunSummary
	Events     []Event `json:"events"`
	MoreEvents bool    `json:"moreEvents,omitempty"`
}

func wireHistory(h agent.History) HistoryResult {
	out := HistoryResult{Session: h.Session, EarlierRuns: h.EarlierRuns, Pending: h.Pending, Processes: h.Processes,
		Runs: make([]HistoryRun, 0, len(h.Runs))}
	for _, r := range h.Runs {
		out.Runs = append(out.Runs, HistoryRun{RunSummary: r.RunSummary, Events: wireEvents(r.Events), MoreEvents: r.MoreEvents})
	}
	return out
}

// RulesParams asks for the rules; with a session, its own rules too.
type RulesParams struct {
	SessionID string `json:"sessionId,omitempty"`
}

// RulesResult lists the rules the policy applies, and its files.
type RulesResult struct {
	Rules []agent.RuleInfo `json:"rules"`
	Files agent.RuleFiles  `json:"files"`
}

// RuleRef names a rule (rules/revoke); SessionID for a session's rule.
type RuleRef struct {
	ID        string `json:"id"`
	SessionID string `json:"sessionId,omitempty"`
}

// RuleEditParams changes a rule; a field left out stays.
type RuleEditParams struct {
	ID        string  `json:"id"`
	SessionID string  `json:"sessionId,omitempty"`
	Tool      string  `json:"tool,omitempty"`
	Pattern   *string `json:"pattern,omitempty"`
	Action    string  `json:"action,omitempty"`
}

// RuleResult is a rule as it is after an edit.
type RuleResult struct {
	Rule agent.RuleInfo `json:"rule"`
}

// MCPServerRef names an MCP server the session (or every session) sees.
type MCPServerRef struct {
	Name      string `json:"name"`
	SessionID string `json:"sessionId,omitempty"`
}

// MCPServerResult is the server as mcp/status shows it, after the change.
type MCPServerResult struct {
	Server mcp.Status `json:"server"`
}

// ProcessesResult lists a session's background processes (agent/processes).
type ProcessesResult struct {
	Processes []tools.ProcessInfo `json:"processes"`
}

// ProcessResult is one background process: agent/stopProcess's answer, and
// the agent/processChanged notification.
type ProcessResult struct {
	Process tools.ProcessInfo `json:"process"`
}

// MCPChangedParams is the mcp/changed notification: which server, and its
// new state.
type MCPChangedParams struct {
	Name  string    `json:"name"`
	State mcp.State `json:"state"`
}

// SessionResult is a session as agent/sessions lists it.
type SessionResult struct {
	Session agent.SessionInfo `json:"session"`
}
