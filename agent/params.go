package agent

import (
	"time"

	"github.com/agentd/agentd/tools"
	"github.com/agentd/agentd/tools/mcp"
)

// What a front end asks of the agent: start a run, answer a request. The
// native protocol carries these as they are (agent/run, agent/reply,
// agent/confirm); docs/protocol.md shows them.

// RunParams starts a run.
type RunParams struct {
	Prompt    string      `json:"prompt"`
	SessionID string      `json:"sessionId,omitempty"`
	Context   *RunContext `json:"context,omitempty"`
	// Images go with the prompt: base64 data or workspace files.
	Images         []ImageInput `json:"images,omitempty"`
	ApprovalPolicy tools.Mode   `json:"approvalPolicy,omitempty"`
	// Model and ReasoningEffort, like ApprovalPolicy, become the session's
	// from this run on (see Agent.Configure).
	Model           string `json:"model,omitempty"`
	ReasoningEffort string `json:"reasoningEffort,omitempty"`
	// MCPServers are MCP servers the editor gives the session (ACP's
	// session/new); they replace the ones it gave before. Not part of the
	// native protocol.
	MCPServers []mcp.Server `json:"-"`
}

// RunContext is what the editor knows that the prompt does not say.
type RunContext struct {
	Files     []string   `json:"files,omitempty"`
	Selection *Selection `json:"selection,omitempty"`
	// Attachments are texts the user attached to the prompt (the
	// uncommitted changes, a buffer's unsaved text), quoted into what the
	// model reads after the prompt.
	Attachments []Attachment `json:"attachments,omitempty"`
}

// Attachment is a text the user attached: Name says what it is for people
// and the model ("git diff", "cart.go (unsaved)").
type Attachment struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

// Selection is a range of lines the user selected (1-based, inclusive).
type Selection struct {
	Path      string `json:"path"`
	StartLine int    `json:"startLine"`
	EndLine   int    `json:"endLine"`
	Text      string `json:"text,omitempty"`
}

// RunResult answers Run at once; the run goes on in the background.
type RunResult struct {
	RunID     string `json:"runId"`
	SessionID string `json:"sessionId"`
	// Queued: the session's run before it has not finished; this one
	// starts when it has (state queued until then).
	Queued bool `json:"queued,omitempty"`
	// Images are the prompt's images as the model gets them (scaled down
	// when they were too large).
	Images []ImageRef `json:"images,omitempty"`
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
	RequestID     string         `json:"requestId"`
	Decision      tools.Decision `json:"decision"`
	Reason        string         `json:"reason,omitempty"`
	EditedContent *string        `json:"editedContent,omitempty"`
}

// SessionInfo describes one session.
type SessionInfo struct {
	SessionID string    `json:"sessionId"`
	Title     string    `json:"title"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	// State is the state of the session's latest run, or StateIdle.
	State     State  `json:"state"`
	LastRunID string `json:"lastRunId,omitempty"`
	RunCount  int    `json:"runCount"`
	// Settings are the ones the session's next step uses.
	Settings SessionSettings `json:"settings"`
	// Match is the prompt a search found the session by (one line, cut),
	// when not by its title.
	Match string `json:"match,omitempty"`
}
