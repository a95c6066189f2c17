package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Prefix starts the name of every MCP tool the model sees:
// mcp__<server>__<tool>, as Claude Code names them.
const Prefix = "mcp__"

// maxToolName is the longest function name OpenAI-compatible endpoints
// take (^[a-zA-Z0-9_-]{1,64}$).
const maxToolName = 64

// ToolName is the name the model calls a server's tool by. Characters a
// function name may not hold become _, and a name over 64 characters is
// cut and ends with a hash of the whole, so two long names stay apart.
func ToolName(server, tool string) string {
	name := Prefix + sanitize(server) + "__" + sanitize(tool)
	if len(name) <= maxToolName {
		return name
	}
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	tag := hex.EncodeToString(sum[:4])
	return name[:maxToolName-len(tag)-1] + "_" + tag
}

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}
