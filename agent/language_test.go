package agent

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentd/agentd/tools"
)

// fakeLanguage answers as a language server would about a workspace: the
// definitions, references and hovers it is given by symbol name, and
// diagnostics by file name (before and after an edit).
type fakeLanguage struct {
	root string
	mu   sync.Mutex
	// defs and refs by symbol name; positions in slash paths relative to
	// root, "path:line:col" (1-based, as written in tests).
	defs, refs map[string][]string
	hovers     map[string]string
	// before and after are each file's problems, by relative path; after
	// is answered once a fresh check is asked.
	before, after map[string][]tools.Diagnostic
	pending       map[string]bool
	// related are other files' problems a fresh check reports as changed
	// (they had none before).
	related map[string][]tools.Diagnostic
	fresh   int // fresh checks asked
}

func (f *fakeLanguage) loc(s string) tools.TextLocation {
	var path string
	var line, col int
	parts := strings.Split(s, ":")
	path = parts[0]
	fmt.Sscan(parts[1], &line)
	fmt.Sscan(parts[2], &col)
	var r tools.TextRange
	r.Start.Line, r.Start.Character = line-1, col-1
	r.End = r.Start
	if !filepath.IsAbs(path) {
		path = filepath.Join(f.root, path)
	}
	return tools.TextLocation{Path: path, Range: r}
}

// symbolAt names the symbol at a position from the file's text.
func (f *fakeLanguage) symbolAt(at tools.TextPosition) string {
	data, _, err := tools.ReadWorkspaceFile(f.root, strings.TrimPrefix(at.Path, f.root+"/"), 1<<20)
	if err != nil {
		return ""
	}
	lines := strings.Split(string(data), "\n")
	line := lines[at.Line]
	i := tools.ByteColumn(line, at.Character)
	j := i
	for j < len(line) && (line[j] == '_' || line[j] >= 'a' && line[j] <= 'z' || line[j] >= 'A' && line[j] <= 'Z' || line[j] >= '0' && line[j] <= '9') {
		j++
	}
	return line[i:j]
}

func (f *fakeLanguage) Diagnostics(ctx context.Context, files []string, fresh bool) ([]tools.FileDiagnostics, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fresh {
		f.fresh++
	}
	var out []tools.FileDiagnostics
	for _, abs := range files {
		rel := strings.TrimPrefix(abs, f.root+"/")
		fd := tools.FileDiagnostics{Path: abs, Server: "fakels"}
		switch {
		case !strings.HasSuffix(rel, ".go"):
			fd.Err = fmt.Errorf("%w: fakels knows only Go", tools.ErrNoLanguageServer)
		case fresh && f.pending[rel]:
			fd.Pending, fd.Diagnostics = true, f.before[rel]
		case fresh:
			fd.Diagnostics = f.after[rel]
		default:
			fd.Diagnostics = f.before[rel]
		}
		out = append(out, fd)
	}
	if fresh {
		for rel, ds := range f.related {
			out = append(out, tools.FileDiagnostics{Path: filepath.Join(f.root, rel), Server: "fakels", Related: true, Diagnostics: ds})
		}
	}
	return out, nil
}

func (f *fakeLanguage) Definition(ctx context.Context, at tools.TextPosition) ([]tools.TextLocation, error) {
	var out []tools.TextLocation
	for _, s := range f.defs[f.symbolAt(at)] {
		out = append(out, f.loc(s))
	}
	return out, nil
}

func (f *fakeLanguage) References(ctx context.Context, at tools.TextPosition, decl bool) ([]tools.TextLocation, error) {
	var out []tools.TextLocation
	for _, s := range f.refs[f.symbolAt(at)] {
		out = append(out, f.loc(s))
	}
	return out, nil
}

func (f *fakeLanguage) Hover(ctx context.Context, at tools.TextPosition) (string, error) {
	return f.hovers[f.symbolAt(at)], nil
}

func (f *fakeLanguage) DocumentSymbols(ctx context.Context, file string) ([]tools.Symbol, error) {
	var out []tools.Symbol
	for name, defs := range f.defs {
		for _, d := range defs {
			if l := f.loc(d); l.Path == file {
				out = append(out, tools.Symbol{Name: name, Kind: "function", Location: l})
			}
		}
	}
	return out, nil
}

func (f *fakeLanguage) WorkspaceSymbols(ctx context.Context, query string) ([]tools.Symbol, error) {
	var out []tools.Symbol
	for _, d := range f.defs[query] {
		out = append(out, tools.Symbol{Name: query, Kind: "function", Location: f.loc(d)})
	}
	return out, nil
}

func (f *fakeLanguage) Warm([]string)   {}
func (f *fakeLanguage) Navigates() bool { return true }

func diag(line, col int, sev tools.Severity, source, code, msg string) tools.Diagnostic {
	var r tools.TextRange
	r.Start.Line, r.Start.Character = line-1, col-1
	r.End = r.Start
	return tools.Diagnostic{Range: r, Severity: sev, Source: source, Code: code, Message: msg}
}
