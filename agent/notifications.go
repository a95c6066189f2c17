package agent

import (
	"encoding/json"
	"time"

	"github.com/agentd/agentd/tools"
)

// What a run reports, through the Listener: updates, input requests and
// their resolutions, state changes. Every notification carries the run, its
// session and a seq that rises by one per notification of the run. The
// native protocol sends them as they are (agent/update, agent/inputRequest,
// agent/inputResolved, agent/runState); docs/protocol.md shows them.

// UpdateParams is one update of a run.
type UpdateParams struct {
	RunID     string `json:"runId"`
	SessionID string `json:"sessionId"`
	Seq       int64  `json:"seq"`
	Update    Update `json:"update"`
}

// UpdateKind says which fields of an Update are set.
type UpdateKind string

// Update kinds.
const (
	UpdateMessageChunk   UpdateKind = "message_chunk"
	UpdateThoughtChunk   UpdateKind = "thought_chunk"
	UpdatePlan           UpdateKind = "plan"
	UpdateToolCall       UpdateKind = "tool_call"
	UpdateToolCallUpdate UpdateKind = "tool_call_update"
	UpdateUsage          UpdateKind = "usage"
	UpdateFilesChanged   UpdateKind = "files_changed"
	UpdateResult         UpdateKind = "result"
	// UpdateInstructions names the instruction files (AGENTS.md and
	// friends) the model was given: at a run's first step those of the
	// session, later a nested one when the run first reaches its directory.
	UpdateInstructions UpdateKind = "instructions"
	// UpdateNotice is something agentd tells the user, not the model's
	// answer, shown apart from it: a warning such as a context window too
	// small for the model, or the kernel sandbox unable to confine
	// commands here.
	UpdateNotice UpdateKind = "notice"
	// UpdateSteer is the user's words added to the run while it works
	// (agent/steer), where they were given; the model reads them before
	// its next request.
	UpdateSteer UpdateKind = "steer"
	// UpdateContext says how full the model's context window is, after
	// each model call: the context meter.
	UpdateContext UpdateKind = "context"
	// UpdateSettings: the session's settings changed during the run (the
	// user approved a plan into a mode): the ones in effect now.
	UpdateSettings UpdateKind = "settings"
	// UpdateSubagent carries what a subagent (the run a task call started)
	// reports, in its parent's run, under the task call (toolCallId): one
	// of its updates, or its new state (Subagent says which).
	UpdateSubagent UpdateKind = "subagent"
)

// UpdateKinds lists every update kind.
var UpdateKinds = []UpdateKind{UpdateMessageChunk, UpdateThoughtChunk, UpdatePlan, UpdateToolCall, UpdateToolCallUpdate,
	UpdateUsage, UpdateFilesChanged, UpdateResult, UpdateInstructions, UpdateNotice, UpdateSteer, UpdateContext, UpdateSettings,
	UpdateSubagent}

// Update is one event of a run; Kind says which fields are set.
type Update struct {
	Kind UpdateKind `json:"kind"`

	// message_chunk, thought_chunk (the model's reasoning, shown apart and
	// never sent back to it), notice, steer
	Text string `json:"text,omitempty"`
	// steer: the images that came with the words (agent/image has them).
	Images []ImageRef `json:"images,omitempty"`

	// plan
	Explanation string      `json:"explanation,omitempty"`
	Entries     []PlanEntry `json:"entries,omitempty"`

	// tool_call, tool_call_update
	ToolCallID string           `json:"toolCallId,omitempty"`
	Title      string           `json:"title,omitempty"`
	ToolKind   tools.Kind       `json:"toolKind,omitempty"`
	Status     Status           `json:"status,omitempty"`
	Input      json.RawMessage  `json:"input,omitempty"`
	Locations  []tools.Location `json:"locations,omitempty"`
	Output     string           `json:"output,omitempty"`
	// OutputDelta is the next piece of a running command's output.
	OutputDelta string `json:"outputDelta,omitempty"`
	IsError     bool   `json:"isError,omitempty"`
	Truncated   bool   `json:"truncated,omitempty"`
	ExitCode    *int   `json:"exitCode,omitempty"`
	DurationMs  int64  `json:"durationMs,omitempty"`

	// tool_call_update (an edit), files_changed
	Files []tools.FileDiff `json:"files,omitempty"`
	// tool_call_update of a call that changed the workspace: its
	// checkpoint in the session's undo history (agent/undo).
	Checkpoint string `json:"checkpoint,omitempty"`
	// tool_call_update of a reply's last edit: what the language servers
	// see in the files the reply changed, as the model was told.
	Diagnostics *tools.DiagnosticsReport `json:"diagnostics,omitempty"`
	// tool_call_update of a web fetch: the URL it ended at, its status,
	// content type and the bytes read.
	Fetched *tools.Fetched `json:"fetched,omitempty"`

	// usage
	Usage *Usage `json:"usage,omitempty"`

	// context
	Context *ContextUse `json:"context,omitempty"`

	// instructions
	Instructions []InstructionFile `json:"instructions,omitempty"`

	// settings
	Settings *SessionSettings `json:"settings,omitempty"`

	// result
	StopReason StopReason `json:"stopReason,omitempty"`

	// notice of a hook that failed (toolCallId is set for a tool event's
	// hook)
	Hook *HookReport `json:"hook,omitempty"`

	// subagent; and the tool_call and tool_call_update of a task call: the
	// subagent it started.
	Subagent *Subagent `json:"subagent,omitempty"`
}

// Subagent names a subagent, the run a task call started, where its parent
// run reports on it: the subagent's own run id and the task's short
// description (its label). In a subagent update it carries one of the
// subagent's own updates (Update) or its new state (State); on the task
// call's last tool_call_update, how it ended, its tokens and the files it
// read; on an input request it asks, the subagent's own call the request
// is about.
type Subagent struct {
	RunID       string `json:"runId"`
	Description string `json:"description"`
	// ToolCallID (an input request): the subagent's own tool call the
	// request is about; the request's toolCallId is the task call's.
	ToolCallID string `json:"toolCallId,omitempty"`
	// Update is one of the subagent's updates, as its own run made it: its
	// tool calls' ids are its own, unique within the subagent.
	Update *Update `json:"update,omitempty"`
	// State is the subagent's new state, with why it stopped.
	State      State      `json:"state,omitempty"`
	StopReason StopReason `json:"stopReason,omitempty"`
	Error      string     `json:"error,omitempty"`
	// Usage is the subagent's tokens (the task call's last update): its
	// parent's usage counts them too.
	Usage *Usage `json:"usage,omitempty"`
	// Read lists the files the subagent read (the task call's last
	// update), workspace-relative, in the order it first read them.
	Read []string `json:"read,omitempty"`
}

// Status is the state of a tool call or of a plan entry.
type Status string

// Statuses of tool calls and plan entries.
const (
	StatusPending    Status = "pending"
	StatusInProgress Status = "in_progress"
	StatusCompleted  Status = "completed"
	StatusFailed     Status = "failed"
)

// Statuses lists every status.
var Statuses = []Status{StatusPending, StatusInProgress, StatusCompleted, StatusFailed}

// PlanEntry is one step of the plan.
type PlanEntry struct {
	Content string `json:"content"`
	Status  Status `json:"status"`
}

// Usage counts tokens.
type Usage struct {
	PromptTokens     int `json:"promptTokens"`
	CompletionTokens int `json:"completionTokens"`
	TotalTokens      int `json:"totalTokens"`
	// CachedTokens is the part of the prompts the provider served from its
	// prompt cache, where it says (prompt_tokens_details.cached_tokens).
	CachedTokens int `json:"cachedTokens,omitempty"`
	// ReasoningTokens is the part of the completions spent thinking.
	ReasoningTokens int `json:"reasoningTokens,omitempty"`
}

// RequestKind is what an input request asks for. A front end says which
// kinds it can show (Config.RequestKinds); a kind it cannot show is
// resolved by the policy, failing closed.
type RequestKind string

// Input request kinds.
const (
	KindQuestion       RequestKind = "question"
	KindChoice         RequestKind = "choice"
	KindConfirmWrite   RequestKind = "confirm_write"
	KindConfirmCommand RequestKind = "confirm_command"
	KindSecret         RequestKind = "secret"
	// KindConfirmPlan puts the model's plan (propose_plan) to the user:
	// approve it into a mode, or keep planning with feedback.
	KindConfirmPlan RequestKind = "confirm_plan"
)

// RequestKinds lists every kind, in the order editors show them.
var RequestKinds = []RequestKind{KindQuestion, KindChoice, KindConfirmWrite, KindConfirmCommand, KindSecret, KindConfirmPlan}

// InputRequest asks the human something.
type InputRequest struct {
	RunID      string         `json:"runId"`
	SessionID  string         `json:"sessionId"`
	Seq        int64          `json:"seq"`
	RequestID  string         `json:"requestId"`
	ToolCallID string         `json:"toolCallId,omitempty"`
	Kind       RequestKind    `json:"kind"`
	Title      string         `json:"title"`
	Message    string         `json:"message"`
	Context    string         `json:"context,omitempty"`
	Options    []tools.Option `json:"options,omitempty"`
	AllowOther bool           `json:"allowOther,omitempty"`
	Multiple   bool           `json:"multiple,omitempty"`
	Default    string         `json:"default,omitempty"`
	// AnswerWith and Input complete the generic form every request has: a
	// front end that knows nothing of a kind shows its title, message,
	// context, command and diff, offers its options and its input, and
	// answers with AnswerWith (requestkinds.go sets them from the kind).
	AnswerWith AnswerMethod     `json:"answerWith"`
	Input      *TextInput       `json:"input,omitempty"`
	Diff       []tools.FileDiff `json:"diff,omitempty"`
	Command    string           `json:"command,omitempty"`
	Cwd        string           `json:"cwd,omitempty"`
	// Profile is the kernel sandbox profile a confirm_command runs in once
	// allowed (full: without the sandbox), Network whether it gets the
	// network, Secrets the secrets it uses (names only).
	Profile tools.Profile `json:"profile,omitempty"`
	Network bool          `json:"network,omitempty"`
	Secrets []string      `json:"secrets,omitempty"`
	// Rule is the policy rule that asked, e.g. "run_cmd: ask (mode ask)".
	Rule string `json:"rule,omitempty"`
	// GrantCovers says, for a confirmation, what "allow for this session"
	// and "always allow" would allow from then on, one entry per rule the
	// answer stores, e.g. "`go test` with any arguments, except options
	// that run another program …" (policy.Covers). Editors show it beside
	// those answers.
	GrantCovers []string `json:"grantCovers,omitempty"`
	// Subagent is set on a subagent's request: who asks (its run and
	// description) and about which of its own calls. Its runId and
	// toolCallId are its parent run's and the task call's, so it shows
	// under the task call; it is answered like any other request.
	Subagent     *Subagent  `json:"subagent,omitempty"`
	CreatedAt    time.Time  `json:"createdAt"`
	ExpiresAt    *time.Time `json:"expiresAt,omitempty"`
	PendingCount int        `json:"pendingCount"`
}

// AnswerMethod says how a request is answered: with a reply (an option or
// options, a text) or a decision (agent/confirm in the native protocol).
type AnswerMethod string

// Answer methods.
const (
	AnswerReply   AnswerMethod = "reply"
	AnswerConfirm AnswerMethod = "confirm"
)

// TextInput is the text a request lets the user type: the answer itself
// (a question, a secret, a choice's own answer), or words that go with the
// option picked (a rejection's reason, a plan's feedback).
type TextInput struct {
	Label string `json:"label"`
	// Secret: hidden as it is typed, and never shown again.
	Secret    bool `json:"secret,omitempty"`
	Multiline bool `json:"multiline,omitempty"`
	// Required: an answer without the text is refused.
	Required bool `json:"required,omitempty"`
	// With lists the options the text goes with, asked for once one of
	// them is picked; empty, the text is an answer of its own (instead of
	// an option, when the request has options).
	With []string `json:"with,omitempty"`
}

// Outcome is how an input request was closed: answered, timed out,
// cancelled, or, for a confirmation, the decision taken.
type Outcome string

// Outcomes other than a decision.
const (
	OutcomeAnswered  Outcome = "answered"
	OutcomeTimeout   Outcome = "timeout"
	OutcomeCancelled Outcome = "cancelled"
)

// decided is the outcome of a confirmation answered with d.
func decided(d tools.Decision) Outcome { return Outcome(d) }

// ResolvedBy says who closed an input request.
type ResolvedBy string

// Who resolves input requests.
const (
	ByUser    ResolvedBy = "user"
	ByTimeout ResolvedBy = "timeout"
	ByCancel  ResolvedBy = "cancel"
	ByPolicy  ResolvedBy = "policy"
)

// Resolvers lists who may resolve a request.
var Resolvers = []ResolvedBy{ByUser, ByTimeout, ByCancel, ByPolicy}

// InputResolved closes an input request in every view.
type InputResolved struct {
	RunID     string     `json:"runId"`
	SessionID string     `json:"sessionId"`
	Seq       int64      `json:"seq"`
	RequestID string     `json:"requestId"`
	Outcome   Outcome    `json:"outcome"`
	By        ResolvedBy `json:"by"`
}

// State is where a run is.
type State string

// Run states.
const (
	StateRunning        State = "running"
	StateRequiresAction State = "requires_action"
	StatePaused         State = "paused"
	StateCompleted      State = "completed"
	StateFailed         State = "failed"
	StateCancelled      State = "cancelled"
	// StateQueued: the run waits for the session's run before it to end
	// (agent/run on a busy session); it has not started.
	StateQueued State = "queued"
)

// StateIdle is the state of a session that has no run yet; no run is ever
// in it.
const StateIdle State = "idle"

// States lists every run state.
var States = []State{StateRunning, StateRequiresAction, StatePaused, StateCompleted, StateFailed, StateCancelled, StateQueued}

// Finished reports whether a run in this state is over for good.
func (s State) Finished() bool {
	return s == StateCompleted || s == StateFailed || s == StateCancelled
}

// StopReason says why a finished run stopped.
type StopReason string

// Stop reasons.
const (
	StopEndTurn    StopReason = "end_turn"
	StopMaxSteps   StopReason = "max_steps"
	StopCancelled  StopReason = "cancelled"
	StopError      StopReason = "error"
	StopRepetition StopReason = "repetition"
	StopToolErrors StopReason = "tool_errors"
)

// StopReasons lists every stop reason.
var StopReasons = []StopReason{StopEndTurn, StopMaxSteps, StopCancelled, StopError, StopRepetition, StopToolErrors}

// RunState reports a run's state change.
type RunState struct {
	RunID      string     `json:"runId"`
	SessionID  string     `json:"sessionId"`
	Seq        int64      `json:"seq"`
	State      State      `json:"state"`
	StopReason StopReason `json:"stopReason,omitempty"`
	Error      string     `json:"error,omitempty"`
	// PauseReason says why a paused run is paused: an editor resumes one a
	// restart paused by itself, and leaves one whose state could not be
	// saved to the user.
	PauseReason PauseReason `json:"pauseReason,omitempty"`
}

// PauseReason is why a run is paused.
type PauseReason string

// Pause reasons.
const (
	// PauseRestart: the daemon stopped in the middle of a step; resuming
	// does the step again.
	PauseRestart PauseReason = "restart"
	// PauseNotSaved: the run's state could not be saved; resuming goes on
	// once it can be.
	PauseNotSaved PauseReason = "not_saved"
)

// PauseReasons lists every pause reason.
var PauseReasons = []PauseReason{PauseRestart, PauseNotSaved}
