package tools

import (
	"errors"
	"fmt"
	"go/parser"
	"go/scanner"
	"go/token"
	"strings"
	"unicode/utf8"
)

// The syntax gate: a change that would add Go syntax errors is not applied.
// The model gets the errors and the proposed lines around the first one, so
// it can redo the change; the user still approved the diff it was shown.
// Other checks (gofmt, go vet) only follow a change that landed, as a hint.

// gateMaxErrors bounds the errors listed per file; gateContext is the number
// of lines shown either side of the first one.
const (
	gateMaxErrors = 3
	gateContext   = 3
)

// goBreak is one Go file a change would break.
type goBreak struct {
	c      fileChange
	before int              // syntax errors in the old content (0 for a new file)
	added  []*scanner.Error // errors of the new content the old one did not have
}

// syntaxGate parses, for every Go file chs would write, the old content and
// the new one. A change is refused when the new content has a syntax error
// whose message (position ignored, counted per message) the old content did
// not have, unless it has fewer errors in all than the old one (fixing one
// error can uncover another). So a clean file must stay clean, and a broken
// file can still be edited and fixed. It returns nil when every file passes.
func syntaxGate(tool string, chs []fileChange) *Result {
	var breaks []goBreak
	for _, c := range chs {
		if c.After == nil || !gatedPath(c.Rel) {
			continue
		}
		after := goSyntaxErrors(c.Rel, *c.After)
		if len(after) == 0 {
			continue
		}
		var before scanner.ErrorList
		// A file moved here from a non-Go name was not Go before: its old
		// content excuses nothing.
		if c.Before != nil && (!c.moved() || strings.HasSuffix(c.OldRel, ".go")) {
			before = goSyntaxErrors(c.Rel, *c.Before)
		}
		added := addedErrors(before, after)
		if len(added) == 0 || len(after) < len(before) {
			continue
		}
		breaks = append(breaks, goBreak{c: c, before: len(before), added: added})
	}
	if len(breaks) == 0 {
		return nil
	}
	return Errorf("%s", gateReport(tool, chs, breaks))
}

// gatedPath reports whether the gate checks a file: Go source outside
// testdata directories, which the go tool ignores and which often hold
// deliberately broken Go.
func gatedPath(rel string) bool {
	if !strings.HasSuffix(rel, ".go") {
		return false
	}
	for _, seg := range strings.Split(rel, "/") {
		if seg == "testdata" {
			return false
		}
	}
	return true
}

// goSyntaxErrors parses src as a Go file and returns all its syntax errors
// in position order, without exact repeats. All of them, not go/parser's
// default of one per line: an error added on a line that already had one
// must count.
func goSyntaxErrors(name, src string) scanner.ErrorList {
	_, err := parser.ParseFile(token.NewFileSet(), name, src, parser.AllErrors|parser.SkipObjectResolution)
	if err == nil {
		return nil
	}
	var list scanner.ErrorList
	if !errors.As(err, &list) {
		return scanner.ErrorList{{Pos: token.Position{Filename: name}, Msg: err.Error()}}
	}
	out := list[:0:0]
	for i, e := range list {
		if i > 0 && e.Pos == list[i-1].Pos && e.Msg == list[i-1].Msg {
			continue
		}
		out = append(out, e)
	}
	return out
}

// addedErrors returns the errors of after whose message is not among
// before's, each message of before excusing one error of after.
func addedErrors(before, after scanner.ErrorList) []*scanner.Error {
	had := map[string]int{}
	for _, e := range before {
		had[e.Msg]++
	}
	var out []*scanner.Error
	for _, e := range after {
		if had[e.Msg] > 0 {
			had[e.Msg]--
			continue
		}
		out = append(out, e)
	}
	return out
}

func gateReport(tool string, chs []fileChange, breaks []goBreak) string {
	var b strings.Builder
	names := make([]string, len(breaks))
	for i, br := range breaks {
		names[i] = br.c.Rel
	}
	fmt.Fprintf(&b, "NOT applied: this %s call would add Go syntax errors to %s, so nothing was written", tool, strings.Join(names, ", "))
	if len(chs) == 1 {
		what := "is unchanged on disk"
		if chs[0].Before == nil {
			what = "was not created"
		}
		fmt.Fprintf(&b, "; %s %s.\n", chs[0].Rel, what)
	} else {
		fmt.Fprintf(&b, "; none of its %d files changed.\n", len(chs))
	}
	for _, br := range breaks {
		b.WriteString("\n")
		if br.before == 0 {
			fmt.Fprintf(&b, "%s would not parse:\n", br.c.Rel)
		} else {
			fmt.Fprintf(&b, "%s already had %s; the change adds %d:\n", br.c.Rel, plural(br.before, "syntax error"), len(br.added))
		}
		for i, e := range br.added {
			if i == gateMaxErrors {
				fmt.Fprintf(&b, "… and %d more (often follow-on errors of the first)\n", len(br.added)-i)
				break
			}
			fmt.Fprintf(&b, "%s:%d:%d: %s\n", br.c.Rel, e.Pos.Line, e.Pos.Column, e.Msg)
		}
		b.WriteString(gateSnippet(br.c, br.added[0].Pos))
	}
	fmt.Fprintf(&b, "\nFix the syntax and call %s again with the corrected change.", tool)
	return b.String()
}

// gateSnippet shows the proposed content where the parser stopped and where
// the change is: the parser often notices a mistake lines after it was
// made (a missing brace at the end of the function), so the model needs to
// see both. Near each other they share one window.
func gateSnippet(c fileChange, pos token.Position) string {
	after := *c.After
	n := lineCount(after)
	line := max(1, pos.Line)
	var change hunk
	if c.Before != nil {
		if hunks := changedHunks(*c.Before, after); len(hunks) > 0 {
			change = nearest(hunks, line)
		}
	}
	if change.first == 0 {
		return fmt.Sprintf("\nProposed %s around line %d:\n%s", c.Rel, line, errorWindow(after, line-gateContext, line+gateContext, line, pos.Column))
	}
	what := "is line " + change.String()
	switch {
	case change.added == 0:
		what = fmt.Sprintf("removed %s after line %d", plural(change.removed, "line"), change.first-1)
	case change.first != change.last:
		what = "is lines " + change.String()
	}
	from, to := max(1, min(change.first, line)-gateContext), min(max(n, line), max(change.last, line)+gateContext)
	if to-from <= gateMaxWindow {
		return fmt.Sprintf("\nProposed %s, lines %d-%d (your change %s; > marks where the parser stopped):\n%s",
			c.Rel, from, to, what, errorWindow(after, from, to, line, pos.Column))
	}
	to = min(change.last+1, change.first+gateMaxWindow/2)
	if change.added == 0 && change.removed <= gateContext {
		what += ":\n" + removedLines(change.old) + "so that it now reads"
	}
	return fmt.Sprintf("\nYour change to %s %s:\n%s\nWhere the parser stopped, line %d:\n%s",
		c.Rel, what, errorWindow(after, change.first-1, to, 0, 0), line, errorWindow(after, line-gateContext, line+gateContext, line, pos.Column))
}

// removedLines shows lines a change removed, as a diff shows them.
func removedLines(old string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(strings.TrimSuffix(old, "\n"), "\n") {
		b.WriteString("-" + strings.TrimSuffix(l, "\n") + "\n")
	}
	return b.String()
}

// gateMaxWindow bounds the lines of one window of the gate's snippet.
const gateMaxWindow = 24

// nearest returns the hunk closest to line.
func nearest(spans []hunk, line int) hunk {
	best, dist := spans[0], -1
	for _, s := range spans {
		d := 0
		switch {
		case line < s.first:
			d = s.first - line
		case line > s.last:
			d = line - s.last
		}
		if dist < 0 || d < dist {
			best, dist = s, d
		}
	}
	return best
}

// errorWindow numbers lines from..to (1-based, clamped to the content) as
// read_file does, marks the error line with ">" and puts a caret under its
// column; line 0 marks none.
func errorWindow(content string, from, to, line, col int) string {
	lines := strings.Split(strings.ReplaceAll(content, "\r\n", "\n"), "\n")
	if n := len(lines); n > 1 && lines[n-1] == "" && line < n {
		lines = lines[:n-1] // the final newline does not start a line
	}
	from, to = max(1, from), min(len(lines), to)
	var b strings.Builder
	for n := from; n <= to; n++ {
		l := truncateLine(lines[n-1])
		mark := " "
		if n == line {
			mark = ">"
		}
		fmt.Fprintf(&b, "%s%5d\t%s\n", mark, n, l)
		if n == line && col >= 1 {
			fmt.Fprintf(&b, " %5s\t%s^\n", "", caretPad(l, col))
		}
	}
	return b.String()
}

// caretPad is the whitespace that puts a caret under byte column col
// (1-based) of l, keeping tabs so it lines up however tabs are shown.
func caretPad(l string, col int) string {
	prefix := l[:min(col-1, len(l))]
	var b strings.Builder
	for len(prefix) > 0 {
		r, size := utf8.DecodeRuneInString(prefix)
		if r == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
		prefix = prefix[size:]
	}
	return b.String()
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
