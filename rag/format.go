package rag

import (
	"fmt"
	"io"
	"strings"
)

// FormatOptions say how WriteHits renders an answer.
type FormatOptions struct {
	// Mark wraps the query's words in a snippet: ANSI bold for a terminal,
	// «» for a model, nothing for a pipe.
	MarkStart, MarkEnd string
	// BodyLines, when positive, shows that many lines of the first file's
	// best chunk in full, and a read hint for the rest: the answer's likely
	// place, whole.
	BodyLines int
	// ReadHint names the tool that reads more (read_file for the model);
	// empty: no hint.
	ReadHint string
}

// Marks for the ways an answer is read.
var (
	TerminalMarks = FormatOptions{MarkStart: "\x1b[1;31m", MarkEnd: "\x1b[0m"}
	ModelMarks    = FormatOptions{MarkStart: "«", MarkEnd: "»", BodyLines: 25, ReadHint: "read_file"}
)

// WriteHits renders an answer for a person or a model to read at a glance:
// each file once, with its label, then each matching chunk's lines and
// what it declares, then the lines that matched with the query's words
// marked.
//
//	cart/cart.go  strong 1.00
//	  10-14 Total
//	    12│ // Total sums the «prices» in the «cart».
func WriteHits(w io.Writer, hits []SearchHit, o FormatOptions) {
	for i, h := range hits {
		if i > 0 {
			fmt.Fprintln(w)
		}
		path := h.Path
		if h.Repo != "" {
			path = h.Repo + ": " + path
		}
		label := fmt.Sprintf("%s %.2f", h.Match, h.Score)
		if h.Kind != "" {
			label += ", " + h.Kind
		}
		fmt.Fprintf(w, "%s  (%s)\n", path, label)
		for k, c := range h.Chunks {
			fmt.Fprintf(w, "  %d-%d", c.StartLine, c.EndLine)
			if c.Symbol != "" {
				fmt.Fprintf(w, " %s", c.Symbol)
			}
			fmt.Fprintln(w)
			if i == 0 && k == 0 && o.BodyLines > 0 && h.Match == MatchStrong {
				writeBody(w, h, c, o)
				continue
			}
			width := len(fmt.Sprint(c.EndLine))
			for _, l := range c.Lines {
				fmt.Fprintf(w, "    %*d│ %s\n", width, l.Line, marked(l, o))
			}
		}
	}
}

// writeBody shows a chunk's first lines whole, marks included.
func writeBody(w io.Writer, h SearchHit, c ChunkHit, o FormatOptions) {
	lines := strings.Split(strings.TrimRight(c.Text, "\n"), "\n")
	marks := map[int]SnippetLine{}
	for _, l := range c.Lines {
		marks[l.Line] = l
	}
	width := len(fmt.Sprint(c.EndLine))
	shown := lines[:min(len(lines), o.BodyLines)]
	for i, l := range shown {
		n := c.StartLine + i
		if m, ok := marks[n]; ok && m.Text == l {
			l = marked(m, o)
		}
		fmt.Fprintf(w, "    %*d│ %s\n", width, n, l)
	}
	if rest := len(lines) - len(shown); rest > 0 && o.ReadHint != "" {
		next := c.StartLine + len(shown)
		fmt.Fprintf(w, "    [… %d more lines: %s path=%q offset=%d limit=%d]\n", rest, o.ReadHint, h.Path, next, c.EndLine-next+1)
	}
}

// marked is a snippet line with its marks wrapped.
func marked(l SnippetLine, o FormatOptions) string {
	if o.MarkStart == "" || len(l.Marks) == 0 {
		return l.Text
	}
	var b strings.Builder
	at := 0
	for _, m := range l.Marks {
		if m.Start < at || m.End > len(l.Text) || m.Start > m.End {
			continue
		}
		b.WriteString(l.Text[at:m.Start])
		b.WriteString(o.MarkStart)
		b.WriteString(l.Text[m.Start:m.End])
		b.WriteString(o.MarkEnd)
		at = m.End
	}
	b.WriteString(l.Text[at:])
	return b.String()
}
