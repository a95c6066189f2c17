package wire

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
	// ReasoningEffort is "low", "medium" or "high", sent to the model as
	// reasoning_effort; empty sends none.
	ReasoningEffort string `json:"reasoningEffort,omitempty"`
	// Images is "on", "off" or "auto": whether the model reads images.
	Images string `json:"images,omitempty"`
}

// ClientAgentCapabilities is capabilities.experimental.agentd in initialize.
type ClientAgentCapabilities struct {
	// PromptKinds lists the input request kinds the editor renders. A kind
	// the editor does not render is resolved by the policy (fail closed).
	PromptKinds []string `json:"promptKinds,omitempty"`
	// Language lists the language requests the editor answers
	// (editor/diagnostics, editor/definition, …); nil: none.
	Language *LanguageCapabilities `json:"language,omitempty"`
	// GenericPrompts: the editor shows any kind, those it does not know
	// from their generic form (title, message, context, command, diff,
	// options, input, answerWith), so a kind added to the daemon reaches it.
	GenericPrompts bool `json:"genericPrompts,omitempty"`
}

// ServerAgentCapabilities is capabilities.experimental.agentd in the
// initialize result.
type ServerAgentCapabilities struct {
	PromptKinds []string `json:"promptKinds"`
	Decisions   []string `json:"decisions"`
	Policies    []string `json:"policies"`
	Tools       []string `json:"tools"`
	Index       bool     `json:"index"`
	// ReasoningEfforts are the efforts a session may choose
	// (agent/configure).
	ReasoningEfforts []string `json:"reasoningEfforts"`
	// Undo: agent/checkpoints, agent/undo and agent/rewind are served.
	Undo bool `json:"undo"`
	// Sandbox is what the kernel sandbox offers on the daemon's machine.
	Sandbox SandboxCapability `json:"sandbox"`
}

// SandboxCapability says whether commands run confined by the kernel.
// When Active is false every command asks, and an approved one runs with
// the user's own rights; an editor shows Summary once, prominently.
type SandboxCapability struct {
	Active bool `json:"active"`
	// Profiles lists the profiles commands can run in: read,
	// workspace-write, full (always).
	Profiles []string `json:"profiles"`
	Landlock int      `json:"landlock"`
	// Off: the user switched the sandbox off in the settings.
	Off      bool     `json:"off,omitempty"`
	Summary  string   `json:"summary"`
	Problems []string `json:"problems,omitempty"`
}
