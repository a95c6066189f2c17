package wire

import (
	"encoding/json"
	"time"
)

// Prompt kinds an editor can render, and that an input request can carry.
const (
	KindQuestion       = "question"
	KindChoice         = "choice"
	KindConfirmWrite   = "confirm_write"
	KindConfirmCommand = "confirm_command"
	KindSecret         = "secret"
)

// Decisions on a confirmation.
const (
	AllowOnce    = "allow_once"
	AllowSession = "allow_session"
	AllowAlways  = "allow_always"
	RejectOnce   = "reject_once"
	RejectAlways = "reject_always"
)

// Approval policies (modes).
const (
	PolicyReadOnly = "read-only"
	PolicyAsk      = "ask"
	PolicyAutoEdit = "auto-edit"
	PolicyFullAuto = "full-auto"
)

// The complete lists, in the order editors show them.
var (
	PromptKinds = []string{KindQuestion, KindChoice, KindConfirmWrite, KindConfirmCommand, KindSecret}
	Decisions   = []string{AllowOnce, AllowSession, AllowAlways, RejectOnce, RejectAlways}
	Policies    = []string{PolicyReadOnly, PolicyAsk, PolicyAutoEdit, PolicyFullAuto}
)

// Run states.
const (
	StateRunning        = "running"
	StateRequiresAction = "requires_action"
	StatePaused         = "paused"
	StateCompleted      = "completed"
	StateFailed         = "failed"
	StateCancelled      = "cancelled"
)

// Stop reasons of a finished run.
const (
	StopEndTurn    = "end_turn"
	StopMaxSteps   = "max_steps"
	StopCancelled  = "cancelled"
	StopError      = "error"
	StopRepetition = "repetition"
	StopToolErrors = "tool_errors"
)

// Who resolved an input request.
const (
	ByUser    = "user"
	ByTimeout = "timeout"
	ByCancel  = "cancel"
	ByPolicy  = "policy"
)

// Update kinds carried by agent/update.
const (
	UpdateMessageChunk   = "message_chunk"
	UpdatePlan           = "plan"
	UpdateToolCall       = "tool_call"
	UpdateToolCallUpdate = "tool_call_update"
	UpdateUsage          = "usage"
	UpdateFilesChanged   = "files_changed"
	UpdateResult         = "result"
)

// Tool kinds, as ACP names them, so editors can pick icons.
const (
	ToolRead    = "read"
	ToolEdit    = "edit"
	ToolSearch  = "search"
	ToolExecute = "execute"
	ToolThink   = "think"
	ToolOther   = "other"
)

// Tool call and plan entry statuses.
const (
	StatusPending    = "pending"
	StatusInProgress = "in_progress"
	StatusCompleted  = "completed"
	StatusFailed     = "failed"
)

// InitializeOptions is initialize's initializationOptions. Every field is
// optional; what is missing comes from the environment or the config file.
type InitializeOptions struct {
	Model          *ModelOptions `json:"model,omitempty"`
	ApprovalPolicy string        `json:"approvalPolicy,omitempty"`
}

// ModelOptions names an OpenAI-compatible endpoint.
type ModelOptions struct {
	BaseURL string `json:"baseUrl,omitempty"`
	APIKey  string `json:"apiKey,omitempty"`
	Name    string `json:"name,omitempty"`
	// ToolMode is "native" (function calling) or "text" (a JSON tool call in
	// the reply text, for models without tool calling).
	ToolMode string `json:"toolMode,omitempty"`
}

// ClientAgentCapabilities is capabilities.experimental.agentd in initialize.
type ClientAgentCapabilities struct {
	// PromptKinds lists the input request kinds the editor renders. A kind
	// the editor does not render is resolved by the policy (fail closed).
	PromptKinds []string `json:"promptKinds,omitempty"`
}

// ServerAgentCapabilities is capabilities.experimental.agentd in the
// initialize result.
type ServerAgentCapabilities struct {
	PromptKinds []string `json:"promptKinds"`
	Decisions   []string `json:"decisions"`
	Policies    []string `json:"policies"`
	Tools       []string `json:"tools"`
	Index       bool     `json:"index"`
}

// RunParams starts a run.
type RunParams struct {
	Prompt         string      `json:"prompt"`
	SessionID      string      `json:"sessionId,omitempty"`
	Context        *RunContext `json:"context,omitempty"`
	ApprovalPolicy string      `json:"approvalPolicy,omitempty"`
}

// RunContext is what the editor knows that the prompt does not say.
type RunContext struct {
	Files     []string   `json:"files,omitempty"`
	Selection *Selection `json:"selection,omitempty"`
}

// Selection is a range of lines the user selected (1-based, inclusive).
type Selection struct {
	Path      string `json:"path"`
	StartLine int    `json:"startLine"`
	EndLine   int    `json:"endLine"`
	Text      string `json:"text,omitempty"`
}

// RunResult answers agent/run at once; the run goes on in the background.
type RunResult struct {
	RunID     string `json:"runId"`
	SessionID string `json:"sessionId"`
}

// ReplyParams answers a question, a choice or a secret.
type ReplyParams struct {
	RequestID string   `json:"requestId"`
	Text      *string  `json:"text,omitempty"`
	OptionID  string   `json:"optionId,omitempty"`
	Answers   []string `json:"answers,omitempty"`
}

// ConfirmParams answers a write or command confirmation.
type ConfirmParams struct {
	RequestID     string  `json:"requestId"`
	Decision      string  `json:"decision"`
	Reason        string  `json:"reason,omitempty"`
	EditedContent *string `json:"editedContent,omitempty"`
}

// RunRef names a run.
type RunRef struct {
	RunID string `json:"runId"`
}

// PendingParams filters agent/pending; an empty RunID means every run.
type PendingParams struct {
	RunID string `json:"runId,omitempty"`
}

// PendingResult lists the open input requests, oldest first.
type PendingResult struct {
	Requests []InputRequest `json:"requests"`
}

// EventsParams asks for a run's notifications after a sequence number.
type EventsParams struct {
	RunID    string `json:"runId"`
	AfterSeq int64  `json:"afterSeq"`
}

// EventsResult holds the run's notifications with seq > afterSeq, in order,
// and the run's current state.
type EventsResult struct {
	Events []Event `json:"events"`
	State  string  `json:"state"`
}

// Event is one notification as it was sent.
type Event struct {
	Seq    int64           `json:"seq"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// SessionsResult lists the sessions of this workspace, newest first.
type SessionsResult struct {
	Sessions []SessionInfo `json:"sessions"`
}

// SessionInfo describes one session.
type SessionInfo struct {
	SessionID string    `json:"sessionId"`
	Title     string    `json:"title"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	// State is the state of the session's latest run, or "idle".
	State     string `json:"state"`
	LastRunID string `json:"lastRunId,omitempty"`
}

// UpdateParams is agent/update.
type UpdateParams struct {
	RunID     string `json:"runId"`
	SessionID string `json:"sessionId"`
	Seq       int64  `json:"seq"`
	Update    Update `json:"update"`
}

// Update is one event of a run; Kind says which fields are set.
type Update struct {
	Kind string `json:"kind"`

	// message_chunk
	Text string `json:"text,omitempty"`

	// plan
	Explanation string      `json:"explanation,omitempty"`
	Entries     []PlanEntry `json:"entries,omitempty"`

	// tool_call, tool_call_update
	ToolCallID string          `json:"toolCallId,omitempty"`
	Title      string          `json:"title,omitempty"`
	ToolKind   string          `json:"toolKind,omitempty"`
	Status     string          `json:"status,omitempty"`
	Input      json.RawMessage `json:"input,omitempty"`
	Locations  []Location      `json:"locations,omitempty"`
	Output     string          `json:"output,omitempty"`
	// OutputDelta is the next piece of a running command's output.
	OutputDelta string `json:"outputDelta,omitempty"`
	IsError     bool   `json:"isError,omitempty"`
	Truncated   bool   `json:"truncated,omitempty"`
	ExitCode    *int   `json:"exitCode,omitempty"`
	DurationMs  int64  `json:"durationMs,omitempty"`

	// tool_call_update (an edit), files_changed
	Files []FileDiff `json:"files,omitempty"`

	// usage
	Usage *Usage `json:"usage,omitempty"`

	// result
	StopReason string `json:"stopReason,omitempty"`
}

// PlanEntry is one step of the plan.
type PlanEntry struct {
	Content string `json:"content"`
	Status  string `json:"status"`
}

// Location points the editor at a place a tool touched.
type Location struct {
	Path string `json:"path"`
	Line int    `json:"line,omitempty"`
}

// FileDiff is one file a change touches. Path is relative to the workspace.
type FileDiff struct {
	Path string `json:"path"`
	// Status is added, modified, deleted or moved.
	Status  string `json:"status"`
	OldPath string `json:"oldPath,omitempty"`
	// Diff is a unified diff of the file.
	Diff    string  `json:"diff"`
	OldText *string `json:"oldText,omitempty"`
	NewText *string `json:"newText,omitempty"`
}

// Usage counts tokens.
type Usage struct {
	PromptTokens     int `json:"promptTokens"`
	CompletionTokens int `json:"completionTokens"`
	TotalTokens      int `json:"totalTokens"`
}

// InputRequest asks the human something; agent/inputRequest carries it.
type InputRequest struct {
	RunID      string     `json:"runId"`
	SessionID  string     `json:"sessionId"`
	Seq        int64      `json:"seq"`
	RequestID  string     `json:"requestId"`
	ToolCallID string     `json:"toolCallId,omitempty"`
	Kind       string     `json:"kind"`
	Title      string     `json:"title"`
	Message    string     `json:"message"`
	Context    string     `json:"context,omitempty"`
	Options    []Option   `json:"options,omitempty"`
	AllowOther bool       `json:"allowOther,omitempty"`
	Multiple   bool       `json:"multiple,omitempty"`
	Default    string     `json:"default,omitempty"`
	Diff       []FileDiff `json:"diff,omitempty"`
	Command    string     `json:"command,omitempty"`
	Cwd        string     `json:"cwd,omitempty"`
	// Rule is the policy rule that asked, e.g. "run_cmd: ask (mode ask)".
	Rule         string     `json:"rule,omitempty"`
	CreatedAt    time.Time  `json:"createdAt"`
	ExpiresAt    *time.Time `json:"expiresAt,omitempty"`
	PendingCount int        `json:"pendingCount"`
}

// Option is one answer a choice or confirmation offers.
type Option struct {
	OptionID    string `json:"optionId"`
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
}

// InputResolved closes an input request in every view.
type InputResolved struct {
	RunID     string `json:"runId"`
	SessionID string `json:"sessionId"`
	Seq       int64  `json:"seq"`
	RequestID string `json:"requestId"`
	// Outcome is answered, a decision (allow_once …), timeout or cancelled.
	Outcome string `json:"outcome"`
	By      string `json:"by"`
}

// RunState reports a run's state change.
type RunState struct {
	RunID      string `json:"runId"`
	SessionID  string `json:"sessionId"`
	Seq        int64  `json:"seq"`
	State      string `json:"state"`
	StopReason string `json:"stopReason,omitempty"`
	Error      string `json:"error,omitempty"`
}
