package agent

import "encoding/json"

// Message is one turn of a conversation, in our own shape so that no model
// library's types leak out of model.go.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content,omitempty"`
	ToolCalls  []ToolCall `json:"toolCalls,omitempty"`
	ToolCallID string     `json:"toolCallId,omitempty"`
	// Summary marks a message that stands for turns compacted away.
	Summary bool `json:"summary,omitempty"`
	// Images go with a user message: the prompt's, or a picture a tool
	// handed the model (sent as image_url parts after the text).
	Images []ImageRef `json:"images,omitempty"`
}

// ToolCall is a call the model asked for.
type ToolCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// Roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)
