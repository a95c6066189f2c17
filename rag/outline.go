package rag

import (
	"strings"
)

// Symbol is one declaration of a file's outline, with its lines (1-based,
// inclusive).
type Symbol struct {
	Name string `json:"name"`
	// Kind is func, method, type, var or const for Go, heading for
	// Markdown, and empty for a block of another language named by its
	// first line.
	Kind      string `json:"kind,omitempty"`
	StartLine int    `json:"startLine"`
	EndLine   int    `json:"endLine"`
}

// Outline lists a file's declarations with their line ranges, from the
// same reading of the file the index chunks it by: Go's top-level
// declarations (each name of a group on its own, a method as Type.Method;
// doc comments and imports left out), a Markdown file's headings (each to
// the line before the next heading of its level or above), and for other
// files the blank-line blocks whose first line looks like a definition.
func Outline(rel string, src []byte) []Symbol {
	text := string(src)
	lines, _ := splitLines(text)
	switch languageOf(rel) {
	case "go":
		if out, ok := goOutline(text, lines); ok {
			return out
		}
	case "markdown":
		return markdownOutline(lines)
	}
	var out []Symbol
	for _, s := range trimBlank(blockSegments(lines, languageOf(rel)), lines) {
		for _, name := range s.symbols {
			out = append(out, Symbol{Name: name, StartLine: s.start, EndLine: s.end})
		}
	}
	return out
}

func goOutline(src string, lines []string) ([]Symbol, bool) {
	_, _, decls, ok := goDecls(src)
	if !ok {
		return nil, false
	}
	var out []Symbol
	for _, d := range decls {
		kind := goKind(lines, d)
		if kind == "import" {
			continue
		}
		for _, name := range d.symbols {
			k := kind
			if k == "func" && strings.Contains(name, ".") {
				k = "method"
			}
			out = append(out, Symbol{Name: name, Kind: k, StartLine: d.first, EndLine: min(d.last, len(lines))})
		}
	}
	return out, true
}

// goKind is the keyword that starts a declaration.
func goKind(lines []string, d goDecl) string {
	if d.isFunc {
		return "func"
	}
	if d.first < 1 || d.first > len(lines) {
		return ""
	}
	kw, _, _ := strings.Cut(strings.TrimSpace(lines[d.first-1]), " ")
	kw, _, _ = strings.Cut(kw, "(")
	return kw
}

// markdownOutline lists the headings outside code fences, each spanning
// its section.
func markdownOutline(lines []string) []Symbol {
	type heading struct {
		Symbol
		level int
	}
	var hs []heading
	fence := false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = !fence
			continue
		}
		if fence || !strings.HasPrefix(t, "#") {
			continue
		}
		level := len(t) - len(strings.TrimLeft(t, "#"))
		name := strings.TrimSpace(t[level:])
		if level > 6 || name == "" || t[level] != ' ' && t[level] != '\t' {
			continue
		}
		hs = append(hs, heading{Symbol{Name: name, Kind: "heading", StartLine: i + 1, EndLine: len(lines)}, level})
	}
	out := make([]Symbol, len(hs))
	for i := range hs {
		for j := i + 1; j < len(hs); j++ {
			if hs[j].level <= hs[i].level {
				hs[i].EndLine = hs[j].StartLine - 1
				break
			}
		}
		for hs[i].EndLine > hs[i].StartLine && strings.TrimSpace(lines[hs[i].EndLine-1]) == "" {
			hs[i].EndLine--
		}
		out[i] = hs[i].Symbol
	}
	return out
}
