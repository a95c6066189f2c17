package agent

import (
	"encoding/json"
	"fmt"
)

// A tool call's arguments are the exact string the model produced, kept
// byte for byte from its reply through the journal and the run record back
// into later requests: a re-encoded string (2>&1 turned into 2\u003e\u00261,
// spaces dropped, keys reordered) breaks the provider's prompt cache from
// that message on. json.RawMessage would be compacted and HTML-escaped when
// stored, and could not hold arguments that are not valid JSON, so stored
// calls carry them as a JSON string.

// toolCallJSON is how a ToolCall is stored.
type toolCallJSON struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the model's string, unchanged.
	Arguments *string `json:"arguments,omitempty"`
	// Args is the form written before arguments were kept exact: a JSON
	// value, read but no longer written.
	Args json.RawMessage `json:"args,omitempty"`
}

// MarshalJSON stores the arguments as the model's exact string.
func (c ToolCall) MarshalJSON() ([]byte, error) {
	args := string(c.Args)
	return json.Marshal(toolCallJSON{ID: c.ID, Name: c.Name, Arguments: &args})
}

// UnmarshalJSON reads the exact string, or the older JSON value.
func (c *ToolCall) UnmarshalJSON(data []byte) error {
	var v toolCallJSON
	if err := json.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("tool call: %w", err)
	}
	c.ID, c.Name = v.ID, v.Name
	switch {
	case v.Arguments != nil:
		c.Args = json.RawMessage(*v.Arguments)
	default:
		c.Args = v.Args
	}
	return nil
}

// input is the call's arguments as a JSON value for the editor: the
// arguments themselves when they are JSON, else the string the model sent,
// so that a malformed call is still shown and never breaks a notification.
func (c ToolCall) input() json.RawMessage {
	if len(c.Args) == 0 || json.Valid(c.Args) {
		return c.Args
	}
	b, err := json.Marshal(string(c.Args))
	if err != nil {
		return nil
	}
	return b
}
