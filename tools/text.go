package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

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
		return Errorf("invalid arguments: %s", argsError(err))
	}
	return nil
}

// argsError says what is wrong with the arguments in the schema's words
// (the parameter's name, the JSON type it takes), not in Go's.
func argsError(err error) string {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		return fmt.Sprintf("%s must be %s, not a JSON %s", typeErr.Field, jsonKind(typeErr.Type), typeErr.Value)
	}
	var syntaxErr *json.SyntaxError
	if errors.As(err, &syntaxErr) {
		return fmt.Sprintf("they are not valid JSON (%v); send one JSON object with the parameters the tool's schema lists", err)
	}
	if typeErr != nil {
		return "they must be one JSON object with the parameters the tool's schema lists, not a JSON " + typeErr.Value
	}
	return err.Error()
}

// jsonKind names the JSON type a Go type is decoded from.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "an object"
}

// isBinary guesses like git does: a NUL byte in the first 8000 bytes.
func isBinary(b []byte) bool {
	if len(b) > 8000 {
		b = b[:8000]
	}
	return bytes.IndexByte(b, 0) >= 0
}

// capOutput keeps the head and the tail of s, whole lines, when it is over
// the byte or line limit, with a note naming the lines left out.
func capOutput(s string) (string, bool) {
	return cutLines(s, cutOptions{maxBytes: maxOutputBytes, maxLines: maxOutputLines, more: func(int, int, []int) string { return "Narrow the search to see them." }})
}

// truncateLine shortens one very long line (minified files) for the model,
// at a character boundary, saying how to see the rest: a model told only
// that characters are missing tends to read the same window again.
func truncateLine(l string) string {
	if len(l) <= maxLineChars {
		return l
	}
	cut := maxLineChars
	for cut > 0 && !utf8.RuneStart(l[cut]) {
		cut--
	}
	return l[:cut] + fmt.Sprintf("… [%d more bytes of this line; `cut -b %d-%d` on the line shows the next ones]",
		len(l)-cut, cut+1, min(len(l), cut+maxLineChars))
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
