package tools

import (
	"encoding/json"
	"fmt"
	"strings"
)

// LSP's answers come to agentd two ways, through the editor (rpc) and from
// its own servers (tools/lsp); each translates them into this package's
// types, and these read the parts of them that are loosely typed on the
// wire the same for both.

// HoverText reads LSP hover contents as Markdown: MarkupContent, a
// MarkedString ({language, value} or a string) or a list of them.
func HoverText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		parts := make([]string, 0, len(list))
		for _, item := range list {
			if t := HoverText(item); t != "" {
				parts = append(parts, t)
			}
		}
		return strings.Join(parts, "\n\n")
	}
	var markup struct {
		Kind     string  `json:"kind"`
		Language string  `json:"language"`
		Value    *string `json:"value"`
	}
	if json.Unmarshal(raw, &markup) == nil && markup.Value != nil {
		if markup.Language != "" {
			return "```" + markup.Language + "\n" + *markup.Value + "\n```"
		}
		return *markup.Value
	}
	return ""
}

// DiagnosticCode is a diagnostic's code in words: LSP sends a number or a
// string, which JSON decodes into any as float64 or string.
func DiagnosticCode(c any) string {
	switch v := c.(type) {
	case nil:
		return ""
	case string:
		return v
	case float64:
		return fmt.Sprint(int64(v))
	}
	return fmt.Sprint(c)
}
