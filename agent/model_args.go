package agent

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
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

// MarshalJSON stores the arguments as the model's exact string. It is
// written by hand: a call is stored at every step, and json.Marshal of a
// struct costs a dozen allocations where this costs one.
func (c ToolCall) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, len(c.ID)+len(c.Name)+len(c.Args)+48)
	b = append(b, `{"id":`...)
	b = appendJSONString(b, []byte(c.ID))
	b = append(b, `,"name":`...)
	b = appendJSONString(b, []byte(c.Name))
	b = append(b, `,"arguments":`...)
	b = appendJSONString(b, c.Args)
	return append(b, '}'), nil
}

// appendJSONString appends s as a JSON string. Only what JSON requires is
// escaped; the encoder that called MarshalJSON escapes HTML if it must.
// Invalid UTF-8 becomes U+FFFD, as encoding/json does.
func appendJSONString(b, s []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for len(s) > 0 {
		r, n := utf8.DecodeRune(s)
		s = s[n:]
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\r':
			b = append(b, '\\', 'r')
		case r == '\t':
			b = append(b, '\\', 't')
		case r < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[r>>4], hex[r&0xf])
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return append(b, '"')
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
