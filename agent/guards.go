package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// runawayWindow is how many characters of the same short unit repeated in a
// row count as a model stuck in a loop.
const runawayWindow = 400

// runaway watches streamed text for a model repeating itself (the same
// character or short unit over and over) so the stream can be cut.
type runaway struct {
	tail []rune
}

// feed returns the part of s to keep and whether the stream must stop.
func (g *runaway) feed(s string) (string, bool) {
	for i, r := range s {
		g.tail = append(g.tail, r)
		if len(g.tail) > 2*runawayWindow {
			g.tail = g.tail[len(g.tail)-runawayWindow:]
		}
		if len(g.tail) >= runawayWindow && repeating(g.tail[len(g.tail)-runawayWindow:]) {
			return s[:i] + "\n[output cut: the model repeated itself]", true
		}
	}
	return s, false
}

// repeating reports whether t is one unit of 1 to 8 runes repeated.
func repeating(t []rune) bool {
	for unit := 1; unit <= 8; unit++ {
		ok := true
		for i := unit; i < len(t); i++ {
			if t[i] != t[i-unit] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// callSignature identifies a tool call by name and canonical arguments, so
// the same call repeated is caught whatever the key order.
func callSignature(c ToolCall) string {
	var v any
	args := string(c.Args)
	if json.Unmarshal(c.Args, &v) == nil {
		if b, err := json.Marshal(v); err == nil {
			args = string(b)
		}
	}
	sum := sha256.Sum256([]byte(c.Name + "\x00" + strings.TrimSpace(args)))
	return hex.EncodeToString(sum[:8])
}
