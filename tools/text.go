package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aymanbagabas/go-udiff"
)

// Limits on what the model reads. Codex caps command output at ~10 KiB and
// 256 lines; reads are capped by lines and by line length.
const (
	maxOutputBytes = 10 << 10
	maxOutputLines = 256
	maxFullBytes   = 4 << 20
	maxLineChars   = 2000
)

// decodeArgs unmarshals the model's arguments into p; an empty object is
// allowed so that tools with only optional parameters work.
func decodeArgs(args json.RawMessage, p any) *Result {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	if err := json.Unmarshal(args, p); err != nil {
		return Errorf("invalid arguments: %v", err)
	}
	return nil
}

// isBinary guesses like git does: a NUL byte in the first 8000 bytes.
func isBinary(b []byte) bool {
	if len(b) > 8000 {
		b = b[:8000]
	}
	return bytes.IndexByte(b, 0) >= 0
}

// capOutput keeps the head and the tail of s when it is over the byte or
// line limit, with a note in the middle saying what was cut. The model sees
// both the command that started and how it ended.
func capOutput(s string) (string, bool) {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(s) <= maxOutputBytes && len(lines) <= maxOutputLines {
		return s, false
	}
	headB, tailB := maxOutputBytes/2, maxOutputBytes/2
	headL, tailL := maxOutputLines/2, maxOutputLines/2
	var head, tail []string
	n := 0
	for _, l := range lines {
		if len(head) >= headL || n+len(l) > headB {
			break
		}
		head = append(head, l)
		n += len(l)
	}
	n = 0
	for i := len(lines) - 1; i >= len(head); i-- {
		l := lines[i]
		if len(tail) >= tailL || n+len(l) > tailB {
			break
		}
		tail = append([]string{l}, tail...)
		n += len(l)
	}
	omitted := len(lines) - len(head) - len(tail)
	omittedBytes := len(s)
	for _, l := range head {
		omittedBytes -= len(l)
	}
	for _, l := range tail {
		omittedBytes -= len(l)
	}
	h := strings.Join(head, "")
	if h != "" && !strings.HasSuffix(h, "\n") {
		h += "\n"
	}
	note := fmt.Sprintf("[… %d lines (%d bytes) omitted; the full output was kept for the editor …]\n", omitted, omittedBytes)
	return h + note + strings.Join(tail, ""), true
}

// truncateLine shortens one very long line (minified files) for the model.
func truncateLine(l string) string {
	if len(l) <= maxLineChars {
		return l
	}
	return l[:maxLineChars] + fmt.Sprintf("… [%d more characters]", len(l)-maxLineChars)
}

// unifiedDiff is a git-style unified diff of one file.
func unifiedDiff(oldPath, newPath string, before, after *string) string {
	var a, b string
	oldLabel, newLabel := "a/"+oldPath, "b/"+newPath
	if before != nil {
		a = *before
	} else {
		oldLabel = "/dev/null"
	}
	if after != nil {
		b = *after
	} else {
		newLabel = "/dev/null"
	}
	return udiff.Unified(oldLabel, newLabel, a, b)
}

// maxInlineText bounds the OldText/NewText a FileDiff carries; bigger files
// travel as the diff only.
const maxInlineText = 256 << 10

func inlineText(s *string) *string {
	if s == nil || len(*s) > maxInlineText {
		return nil
	}
	v := *s
	return &v
}

// statusOf names a change the way FileDiff does.
func statusOf(before, after *string, moved bool) string {
	switch {
	case moved:
		return "moved"
	case before == nil:
		return "added"
	case after == nil:
		return "deleted"
	}
	return "modified"
}

// strp returns a pointer to a copy of s.
func strp(s string) *string { return &s }

// numbered renders lines cat -n style starting at line first (1-based).
func numbered(lines []string, first int) string {
	var b strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&b, "%6d\t%s\n", first+i, truncateLine(l))
	}
	return b.String()
}
