package tools

import (
	"fmt"
	"strings"
)

// The Codex patch envelope: file operations between *** Begin Patch and
// *** End Patch, hunks introduced by @@ with context, - and + lines and no
// line numbers (models are bad at line numbers).
const (
	patchBegin  = "*** Begin Patch"
	patchEnd    = "*** End Patch"
	patchAdd    = "*** Add File: "
	patchDelete = "*** Delete File: "
	patchUpdate = "*** Update File: "
	patchMove   = "*** Move to: "
	patchEOF    = "*** End of File"
)

type patchOp struct {
	Kind   string // add, delete, update
	Path   string
	MoveTo string
	Lines  []string // add: the new file's lines
	Chunks []patchChunk
}

type patchChunk struct {
	Header   string // the text after @@, a line to seek to first
	Old, New []string
	AtEOF    bool
}

// parsePatch reads the envelope. It tolerates a surrounding code fence and
// stray blank lines between operations.
func parsePatch(text string) ([]patchOp, error) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	i := 0
	for i < len(lines) && strings.TrimSpace(lines[i]) != patchBegin {
		i++
	}
	if i == len(lines) {
		return nil, fmt.Errorf("the patch must start with %q", patchBegin)
	}
	i++
	var ops []patchOp
	for i < len(lines) {
		l := lines[i]
		switch {
		case strings.TrimSpace(l) == patchEnd:
			if len(ops) == 0 {
				return nil, fmt.Errorf("the patch has no file operations")
			}
			return ops, nil
		case strings.HasPrefix(l, patchAdd):
			op := patchOp{Kind: "add", Path: strings.TrimSpace(l[len(patchAdd):])}
			for i++; i < len(lines) && strings.HasPrefix(lines[i], "+"); i++ {
				op.Lines = append(op.Lines, lines[i][1:])
			}
			ops = append(ops, op)
			continue
		case strings.HasPrefix(l, patchDelete):
			ops = append(ops, patchOp{Kind: "delete", Path: strings.TrimSpace(l[len(patchDelete):])})
		case strings.HasPrefix(l, patchUpdate):
			op, next, err := parseUpdate(lines, i)
			if err != nil {
				return nil, err
			}
			ops = append(ops, op)
			i = next
			continue
		case strings.TrimSpace(l) == "":
		default:
			return nil, fmt.Errorf("line %d: expected a file operation (*** Add File:, *** Update File:, *** Delete File:) or %q, got %q", i+1, patchEnd, l)
		}
		i++
	}
	return nil, fmt.Errorf("the patch must end with %q", patchEnd)
}

func parseUpdate(lines []string, i int) (patchOp, int, error) {
	op := patchOp{Kind: "update", Path: strings.TrimSpace(lines[i][len(patchUpdate):])}
	i++
	if i < len(lines) && strings.HasPrefix(lines[i], patchMove) {
		op.MoveTo = strings.TrimSpace(lines[i][len(patchMove):])
		i++
	}
	var cur *patchChunk
	flush := func() {
		if cur != nil && (len(cur.Old) > 0 || len(cur.New) > 0) {
			op.Chunks = append(op.Chunks, *cur)
		}
		cur = nil
	}
	for ; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "*** ") && strings.TrimSpace(l) != patchEOF {
			break
		}
		switch {
		case strings.HasPrefix(l, "@@"):
			flush()
			cur = &patchChunk{Header: strings.TrimSpace(strings.TrimPrefix(l, "@@"))}
			continue
		case strings.TrimSpace(l) == patchEOF:
			if cur != nil {
				cur.AtEOF = true
			}
			continue
		}
		if cur == nil {
			cur = &patchChunk{}
		}
		switch {
		case l == "":
			cur.Old, cur.New = append(cur.Old, ""), append(cur.New, "")
		case l[0] == ' ':
			cur.Old, cur.New = append(cur.Old, l[1:]), append(cur.New, l[1:])
		case l[0] == '-':
			cur.Old = append(cur.Old, l[1:])
		case l[0] == '+':
			cur.New = append(cur.New, l[1:])
		default:
			return op, i, fmt.Errorf("line %d in the update of %s: a hunk line must start with ' ', '-' or '+', got %q", i+1, op.Path, l)
		}
	}
	flush()
	if len(op.Chunks) == 0 && op.MoveTo == "" {
		return op, i, fmt.Errorf("the update of %s has no hunks", op.Path)
	}
	return op, i, nil
}

// applyChunks applies an update's hunks to content, in order, each found
// after the previous one, with the same tolerance levels as edit_file.
func applyChunks(content string, chunks []patchChunk) (string, error) {
	crlf := strings.Contains(content, "\r\n")
	content = strings.ReplaceAll(content, "\r\n", "\n")
	trailingNL := strings.HasSuffix(content, "\n")
	lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	if content == "" {
		lines = nil
	}
	type repl struct {
		start, n int
		new      []string
	}
	var repls []repl
	cursor := 0
	for ci, ch := range chunks {
		if ch.Header != "" && !strings.HasPrefix(ch.Header, "-") {
			if at := seekHeader(lines, cursor, ch.Header); at >= 0 {
				cursor = at + 1
			}
		}
		if len(ch.Old) == 0 {
			repls = append(repls, repl{len(lines), 0, ch.New})
			continue
		}
		start, old, new, ok := findChunk(lines, cursor, ch)
		if !ok {
			return "", fmt.Errorf("hunk %d: these lines were not found:\n%s\n%s", ci+1, strings.Join(ch.Old, "\n"), noMatch(lines, ch.Old, "They are not in the file"))
		}
		repls = append(repls, repl{start, len(old), reindentBlock(new, old, lines[start:start+len(old)], lines)})
		cursor = start + len(old)
	}
	for k := len(repls) - 1; k >= 0; k-- {
		r := repls[k]
		tail := append([]string{}, lines[r.start+r.n:]...)
		lines = append(append(lines[:r.start], r.new...), tail...)
	}
	out := strings.Join(lines, "\n")
	if trailingNL || len(lines) > 0 {
		out += "\n"
	}
	if crlf {
		out = strings.ReplaceAll(out, "\n", "\r\n")
	}
	return out, nil
}

func seekHeader(lines []string, from int, header string) int {
	h := strings.TrimSpace(header)
	for i := from; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == h {
			return i
		}
	}
	return -1
}

// findChunk locates a hunk's old lines at or after cursor, strict level
// first; an end-of-file hunk prefers the last match. Models often add or
// drop a trailing blank context line, so that is retried without it.
func findChunk(lines []string, cursor int, ch patchChunk) (int, []string, []string, bool) {
	try := func(old []string) (int, bool) {
		norms := append([]func(string) string{func(s string) string { return s }}, levelNorms()...)
		for _, norm := range norms {
			starts := findLines(lines[cursor:], old, norm)
			if len(starts) == 0 {
				continue
			}
			s := starts[0]
			if ch.AtEOF {
				s = starts[len(starts)-1]
			}
			return cursor + s, true
		}
		return 0, false
	}
	if s, ok := try(ch.Old); ok {
		return s, ch.Old, ch.New, true
	}
	old, new := ch.Old, ch.New
	if len(old) > 1 && old[len(old)-1] == "" {
		old = old[:len(old)-1]
		if len(new) > 0 && new[len(new)-1] == "" {
			new = new[:len(new)-1]
		}
		if s, ok := try(old); ok {
			return s, old, new, true
		}
	}
	return 0, nil, nil, false
}

func levelNorms() []func(string) string {
	out := make([]func(string) string, len(lineLevels))
	for i, lv := range lineLevels {
		out[i] = lv.norm
	}
	return out
}
