package tools

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

// DiagnosticsReport is what the model is told of the problems in the files
// one reply changed, once, after the reply's last edit; the editor shows
// the same under that edit. Text is exactly what the model read.
type DiagnosticsReport struct {
	// Files are the files asked about, workspace-relative.
	Files []string         `json:"files"`
	Items []DiagnosticItem `json:"items,omitempty"`
	// New counts the problems the reply's edits brought (shown or not);
	// Others those of them in files the reply did not change.
	New    int `json:"new"`
	Others int `json:"others,omitempty"`
	// Omitted counts the errors and warnings past the bound; Quiet the
	// infos and hints, which are never shown.
	Omitted int `json:"omitted,omitempty"`
	Quiet   int `json:"quiet,omitempty"`
	// Servers name who answered: "the editor", "gopls".
	Servers []string `json:"servers,omitempty"`
	// Notes say what is missing: a server that did not answer in time or
	// failed.
	Notes []string `json:"notes,omitempty"`
	Text  string   `json:"text"`
}

// DiagnosticItem is one problem as the model and the editor read it.
type DiagnosticItem struct {
	Path string `json:"path"`
	// Line and Column are 1-based (the column counts UTF-16 units, as
	// LSP does: characters, for most text).
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
	Source   string `json:"source,omitempty"`
	Code     string `json:"code,omitempty"`
	// New: not there before the reply's edits.
	New bool `json:"new,omitempty"`
	// Other: in a file the reply did not change (a caller its edit
	// broke); only new problems of such files are reported.
	Other bool `json:"other,omitempty"`
}

// Bounds of a report: it is a hint in a tool result, not a build log.
const (
	reportMaxItems   = 20
	reportMaxMessage = 240
)

// NewDiagnosticsReport compares the problems after a reply's edits with
// those before (before[path]; a file without an entry has no known
// earlier problems to compare with, and a file the reply created has an
// empty entry) and renders the report: errors and warnings, new ones
// first, errors before warnings, at most reportMaxItems, saying what was
// left out.
func NewDiagnosticsReport(root string, after []FileDiagnostics, before map[string][]Diagnostic) DiagnosticsReport {
	var rep DiagnosticsReport
	var items []DiagnosticItem
	for _, f := range after {
		rel := shownPath(root, f.Path)
		if f.Related {
			items = append(items, rep.newIn(rel, f)...)
			continue
		}
		rep.Files = append(rep.Files, rel)
		if f.Err != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("no diagnostics for %s: %s", rel, errText(f.Err)))
			continue
		}
		if f.Server != "" && !slices.Contains(rep.Servers, f.Server) {
			rep.Servers = append(rep.Servers, f.Server)
		}
		if f.Pending {
			rep.Notes = append(rep.Notes, pendingNote(f, rel))
		}
		prev, known := before[f.Path]
		if !known && hasProblems(f.Diagnostics) {
			rep.Notes = append(rep.Notes, fmt.Sprintf("which problems of %s are new is not known: it was not checked before your edits", rel))
		}
		old := map[string]int{}
		for _, d := range prev {
			old[diagKey(d)]++
		}
		for _, d := range f.Diagnostics {
			if d.Severity == SeverityInformation || d.Severity == SeverityHint {
				rep.Quiet++
				continue
			}
			it := DiagnosticItem{Path: rel, Line: d.Range.Start.Line + 1, Column: d.Range.Start.Character + 1,
				Severity: d.Severity.String(), Message: d.Message, Source: d.Source, Code: d.Code}
			if k := diagKey(d); old[k] > 0 {
				old[k]--
			} else if known {
				it.New = true
				rep.New++
			}
			items = append(items, it)
		}
	}
	slices.SortStableFunc(items, func(a, b DiagnosticItem) int {
		if a.New != b.New {
			return boolOrder(a.New)
		}
		if a.Severity != b.Severity {
			return boolOrder(a.Severity == "error")
		}
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	if len(items) > reportMaxItems {
		rep.Omitted = len(items) - reportMaxItems
		items = items[:reportMaxItems]
	}
	rep.Items = items
	rep.Text = rep.render()
	return rep
}

// newIn are the errors and warnings a file the reply did not change has
// now and did not have before.
func (rep *DiagnosticsReport) newIn(rel string, f FileDiagnostics) []DiagnosticItem {
	old := map[string]int{}
	for _, d := range f.Before {
		old[diagKey(d)]++
	}
	var out []DiagnosticItem
	for _, d := range f.Diagnostics {
		if d.Severity == SeverityInformation || d.Severity == SeverityHint {
			continue
		}
		if k := diagKey(d); old[k] > 0 {
			old[k]--
			continue
		}
		out = append(out, DiagnosticItem{Path: rel, Line: d.Range.Start.Line + 1, Column: d.Range.Start.Character + 1,
			Severity: d.Severity.String(), Message: d.Message, Source: d.Source, Code: d.Code, New: true, Other: true})
		rep.New++
		rep.Others++
		if f.Server != "" && !slices.Contains(rep.Servers, f.Server) {
			rep.Servers = append(rep.Servers, f.Server)
		}
	}
	return out
}

// hasProblems says whether ds hold an error or a warning.
func hasProblems(ds []Diagnostic) bool {
	return slices.ContainsFunc(ds, func(d Diagnostic) bool {
		return d.Severity != SeverityInformation && d.Severity != SeverityHint
	})
}

// boolOrder sorts true first.
func boolOrder(first bool) int {
	if first {
		return -1
	}
	return 1
}

// diagKey identifies a problem across edits that move it: its words, not
// its place.
func diagKey(d Diagnostic) string {
	return fmt.Sprintf("%d\x00%s\x00%s\x00%s", d.Severity, d.Source, d.Code, d.Message)
}

func pendingNote(f FileDiagnostics, rel string) string {
	if len(f.Diagnostics) > 0 {
		return fmt.Sprintf("%s did not finish checking %s in time: its diagnostics from before are shown", f.Server, rel)
	}
	return fmt.Sprintf("%s did not finish checking %s in time: no diagnostics yet", f.Server, rel)
}

func errText(err error) string {
	if errors.Is(err, ErrNoLanguageServer) {
		return strings.TrimPrefix(err.Error(), ErrNoLanguageServer.Error()+": ")
	}
	return err.Error()
}

// render is the report in the model's words.
func (rep DiagnosticsReport) render() string {
	var b strings.Builder
	by := ""
	if len(rep.Servers) > 0 {
		by = " (" + strings.Join(rep.Servers, ", ") + ")"
	}
	shown := len(rep.Items) + rep.Omitted - rep.Others
	newHere := rep.New - rep.Others
	switch {
	case len(rep.Servers) == 0:
		b.WriteString("Diagnostics after your edits: none available")
	case shown == 0:
		fmt.Fprintf(&b, "Diagnostics after your edits%s: no errors or warnings in %s", by, strings.Join(rep.checked(), ", "))
	case newHere == 0:
		fmt.Fprintf(&b, "Diagnostics after your edits%s: %s in the files you changed, none of them new", by, countOf(shown, "problem", "problems"))
	default:
		fmt.Fprintf(&b, "Diagnostics after your edits%s: %s in the files you changed, %d of them new", by, countOf(shown, "problem", "problems"), newHere)
	}
	if rep.Others > 0 {
		fmt.Fprintf(&b, "; %s in other files", countOf(rep.Others, "new problem", "new problems"))
	}
	b.WriteString(".")
	for _, it := range rep.Items {
		fmt.Fprintf(&b, "\n%s:%d:%d: %s: %s", it.Path, it.Line, it.Column, it.Severity, oneLine(it.Message))
		if src := strings.TrimSpace(it.Source + " " + it.Code); src != "" {
			b.WriteString(" [" + src + "]")
		}
		if it.New {
			b.WriteString(" (new)")
		}
	}
	var left []string
	if rep.Omitted > 0 {
		left = append(left, fmt.Sprintf("%s not shown", countOf(rep.Omitted, "more problem", "more problems")))
	}
	if rep.Quiet > 0 {
		left = append(left, fmt.Sprintf("%s not shown", countOf(rep.Quiet, "info or hint", "infos and hints")))
	}
	if len(left) > 0 {
		b.WriteString("\n(" + strings.Join(left, "; ") + ".)")
	}
	for _, n := range rep.Notes {
		b.WriteString("\n(" + n + ".)")
	}
	return b.String()
}

// checked lists the files a server answered for.
func (rep DiagnosticsReport) checked() []string {
	var out []string
	for _, f := range rep.Files {
		if !slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.HasPrefix(n, "no diagnostics for "+f+":") }) {
			out = append(out, f)
		}
	}
	return out
}

// oneLine is a message's first line, bounded; the rest of a long message
// is said to be left out.
func oneLine(msg string) string {
	msg = strings.TrimSpace(msg)
	first, rest, more := strings.Cut(msg, "\n")
	first = strings.TrimSpace(first)
	if len(first) > reportMaxMessage {
		first = cutAtRune(first, reportMaxMessage) + "…"
	} else if more && strings.TrimSpace(rest) != "" {
		first += " …"
	}
	return first
}

// cutAtRune cuts s to at most n bytes at a character boundary.
func cutAtRune(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// shownPath is path relative to root, slashed; a path outside root stays
// absolute.
func shownPath(root, path string) string {
	if rel, err := filepath.Rel(root, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(rel)
	}
	return path
}
