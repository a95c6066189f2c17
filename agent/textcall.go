package agent

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentd/agentd/internal/lazy"
)

// Models without native tool calling write the call as JSON in their text:
// bare, in a fenced block, or as the first {...} object among prose. The
// parser takes any of these shapes:
//
//	{"tool": "read_file", "arguments": {...}}
//	{"name": "read_file", "arguments": {...}}     (also "args", "parameters")
//	{"function": {"name": "read_file", "arguments": "{...}"}}
var fence = lazy.Regexp("(?s)```(?:json)?\\s*(\\{.*?\\})\\s*```")

// parseTextToolCall returns the text without the call and the call, if any.
func parseTextToolCall(text string, step int) (string, *ToolCall) {
	var candidates [][2]int
	if m := fence().FindStringSubmatchIndex(text); m != nil {
		candidates = append(candidates, [2]int{m[0], m[1]}, [2]int{m[2], m[3]})
	}
	if start := strings.IndexByte(text, '{'); start >= 0 {
		if end := matchBrace(text, start); end > start {
			candidates = append(candidates, [2]int{start, end})
		}
	}
	for _, c := range candidates {
		body := text[c[0]:c[1]]
		if m := fence().FindStringSubmatch(body); m != nil {
			body = m[1]
		}
		if call := decodeCall(body); call != nil {
			call.ID = fmt.Sprintf("text_%d_%s", step, newID("c")[2:])
			rest := strings.TrimSpace(text[:c[0]] + text[c[1]:])
			return rest, call
		}
	}
	return text, nil
}

// matchBrace finds the end (exclusive) of the JSON object starting at i,
// minding strings and escapes; -1 if it never closes.
func matchBrace(s string, i int) int {
	depth, inStr, esc := 0, false, false
	for j := i; j < len(s); j++ {
		c := s[j]
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
	return -1
}

func decodeCall(body string) *ToolCall {
	var raw struct {
		Tool       string          `json:"tool"`
		Name       string          `json:"name"`
		Arguments  json.RawMessage `json:"arguments"`
		Args       json.RawMessage `json:"args"`
		Parameters json.RawMessage `json:"parameters"`
		Function   *struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	}
	if json.Unmarshal([]byte(body), &raw) != nil {
		return nil
	}
	name := firstNonEmpty(raw.Tool, raw.Name)
	args := firstRaw(raw.Arguments, raw.Args, raw.Parameters)
	if raw.Function != nil {
		name, args = raw.Function.Name, raw.Function.Arguments
	}
	if name == "" {
		return nil
	}
	// Arguments sent as a JSON string holding the object.
	var s string
	if json.Unmarshal(args, &s) == nil && json.Valid([]byte(s)) {
		args = json.RawMessage(s)
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	return &ToolCall{Name: name, Args: args}
}

func firstRaw(r ...json.RawMessage) json.RawMessage {
	for _, v := range r {
		if len(v) > 0 {
			return v
		}
	}
	return nil
}

// textModeMessages renders tool results as user messages, since the model
// knows no tool role.
func textModeMessages(msgs []Message) []Message {
	names := map[string]string{}
	out := make([]Message, 0, len(msgs))
	for _, m := range msgs {
		switch m.Role {
		case RoleAssistant:
			for _, c := range m.ToolCalls {
				names[c.ID] = c.Name
			}
			out = append(out, Message{Role: RoleAssistant, Content: m.Content})
		case RoleTool:
			out = append(out, Message{Role: RoleUser, Content: fmt.Sprintf("Result of tool %s:\n%s", names[m.ToolCallID], m.Content)})
		default:
			out = append(out, m)
		}
	}
	return out
}

func textToolInstructions(specs []ToolSpec) string {
	var b strings.Builder
	b.WriteString("\n\n## Tools\nTo use a tool, reply with exactly one JSON object and nothing else:\n" +
		"{\"tool\": \"NAME\", \"arguments\": {...}}\nThe result comes back in the next message. When you are done, reply in plain text with no JSON object.\n")
	for _, s := range specs {
		fmt.Fprintf(&b, "- %s: %s Arguments schema: %s\n", s.Name, oneLine(s.Description, 300), oneLine(string(s.Parameters), 600))
	}
	return b.String()
}
