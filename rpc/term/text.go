package term

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/rpc/term/termmd"
	"github.com/agentd/agentd/tools"
)

func splitLines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
}

// lastLines is the end of s from its n-th last line, so a preview costs
// the same however long the text grows.
func lastLines(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	if len(s) > 1000 {
		s = s[len(s)-1000:]
		if i := strings.IndexAny(s, " \n"); i >= 0 {
			s = s[i+1:] // from a whole word on
		}
	}
	i := len(s)
	for ; n > 0 && i > 0; n-- {
		i = strings.LastIndexByte(s[:i], '\n')
		if i < 0 {
			return s
		}
	}
	return s[i+1:]
}

func lastN(lines []string, n int) []string {
	if len(lines) > n {
		return append([]string(nil), lines[len(lines)-n:]...)
	}
	return append([]string(nil), lines...)
}

// headTail keeps the first head and last tail lines, saying how many were
// left out between.
func headTail(lines []string, head, tail int) []string {
	if len(lines) <= head+tail {
		return lines
	}
	out := append([]string(nil), lines[:head]...)
	out = append(out, fmt.Sprintf("… %d lines …", len(lines)-head-tail))
	return append(out, lines[len(lines)-tail:]...)
}

func indent(text, prefix string) string {
	lines := strings.SplitAfter(text, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			b.WriteString(prefix + l)
		}
	}
	return b.String()
}

// wrapPlain wraps text without markup at width.
func wrapPlain(text string, width int) []string {
	out := strings.Split(strings.TrimSpace(termmd.Render(text, width, false)), "\n")
	if len(out) == 1 && out[0] == "" {
		return nil
	}
	return out
}

func expandTabs(s string) string { return strings.ReplaceAll(s, "\t", "    ") }

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

func compactCount(n int) string {
	if n < 1000 {
		return strconv.Itoa(n)
	}
	return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + "k"
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// visible shows the control characters of text the model wrote as escapes
// (\x1b), so that it can neither move the cursor nor hide a part of what a
// prompt shows; newlines and tabs stay.
func visible(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r <= 0xff && isControl(r):
			fmt.Fprintf(&b, "\\x%02x", r)
		case isControl(r):
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isControl: the C0 and C1 controls, and the invisible format characters
// (bidi overrides and isolates, zero-width marks) with which a terminal
// that reorders text would show a line other than the one that runs.
func isControl(r rune) bool {
	return r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f ||
		r == 0x061c || r >= 0x200b && r <= 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2060 && r <= 0x2069 || r == 0xfeff
}

// visibleWriter writes through visible: for plain listings (agentd undo)
// made of what commands and the model wrote (command lines, file names,
// diffs). Each write is one whole formatted line or more.
type visibleWriter struct{ w io.Writer }

func (v visibleWriter) Write(b []byte) (int, error) {
	if _, err := io.WriteString(v.w, visible(string(b))); err != nil {
		return 0, err
	}
	return len(b), nil
}

// plainLines is a command's output without escape sequences or control
// characters, line by line.
func plainLines(text string) string {
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		nl := strings.HasSuffix(l, "\n")
		lines[i] = termmd.Plain(strings.TrimSuffix(l, "\n"))
		if nl {
			lines[i] += "\n"
		}
	}
	return strings.Join(lines, "")
}

// visibleUpdate is up with what the model wrote made visible (see
// visible); command output is made plain where it is shown.
func visibleUpdate(up agent.Update) agent.Update {
	up.Text, up.Title, up.Explanation = visible(up.Text), visible(up.Title), visible(up.Explanation)
	if len(up.Entries) > 0 {
		entries := slices.Clone(up.Entries)
		for i := range entries {
			entries[i].Content = visible(entries[i].Content)
		}
		up.Entries = entries
	}
	up.Files = visibleFiles(up.Files)
	return up
}

func visibleFiles(files []tools.FileDiff) []tools.FileDiff {
	if len(files) == 0 {
		return files
	}
	out := slices.Clone(files)
	for i := range out {
		out[i].Path, out[i].OldPath, out[i].Diff = visible(out[i].Path), visible(out[i].OldPath), visible(out[i].Diff)
	}
	return out
}

// visibleRequest is req with what the model wrote made visible: a command
// line or a diff can hide nothing from the person who approves it.
func visibleRequest(req agent.InputRequest) agent.InputRequest {
	req.Title, req.Message, req.Context = visible(req.Title), visible(req.Message), visible(req.Context)
	req.Command, req.Cwd, req.Default, req.Rule = visible(req.Command), visible(req.Cwd), visible(req.Default), visible(req.Rule)
	if len(req.Options) > 0 {
		opts := slices.Clone(req.Options)
		for i := range opts {
			opts[i].Label, opts[i].Description = visible(opts[i].Label), visible(opts[i].Description)
		}
		req.Options = opts
	}
	if len(req.GrantCovers) > 0 { // they quote the command
		covers := make([]string, len(req.GrantCovers))
		for i, c := range req.GrantCovers {
			covers[i] = visible(c)
		}
		req.GrantCovers = covers
	}
	req.Diff = visibleFiles(req.Diff)
	return req
}

// wrapWords breaks text into lines of at most width columns at spaces (a
// word longer than a line is cut), keeping the text's own line breaks. It
// is for agentd's own sentences, which are not markdown.
func wrapWords(text string, width int) []string {
	width = max(width, 10)
	var out []string
	for _, para := range strings.Split(text, "\n") {
		line := ""
		for _, w := range strings.Fields(para) {
			for termmd.Width(w) > width {
				if line != "" {
					out, line = append(out, line), ""
				}
				cut := cutColumns(w, width)
				out, w = append(out, w[:cut]), w[cut:]
			}
			switch {
			case line == "":
				line = w
			case termmd.Width(line)+1+termmd.Width(w) <= width:
				line += " " + w
			default:
				out, line = append(out, line), w
			}
		}
		out = append(out, line)
	}
	return out
}

// cutColumns is the length in bytes of the longest prefix of s that fits in
// width columns (at least one rune, so a cut always makes progress).
func cutColumns(s string, width int) int {
	cols := 0
	for i, r := range s {
		cols += termmd.RuneWidth(r)
		if cols > width && i > 0 {
			return i
		}
	}
	return len(s)
}

// Visible is visible, for the plain listings of agentd's other commands.
func Visible(s string) string { return visible(s) }

// NewVisibleWriter is a visibleWriter on w.
func NewVisibleWriter(w io.Writer) io.Writer { return visibleWriter{w} }
