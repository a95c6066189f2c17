package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/agentd/agentd/tools"
)

// The Manager as tools.Language: each request goes to the server of its
// file's language, on the file's current content.

// Diagnostics asks each file's server; files without one say so in their
// Err. Each file is first given to its server as it is on disk, so fresh
// and not are the same here: the answer is for the current content, and
// ctx bounds the wait for it.
func (m *Manager) Diagnostics(ctx context.Context, files []string, fresh bool) ([]tools.FileDiagnostics, error) {
	byServer := map[*server][]string{}
	failed := map[string]error{}
	var order []*server
	for _, f := range files {
		s, err := m.serverFor(f)
		if err != nil {
			failed[f] = err
			continue
		}
		if _, ok := byServer[s]; !ok {
			order = append(order, s)
		}
		byServer[s] = append(byServer[s], f)
	}
	results := map[string]tools.FileDiagnostics{}
	var extra []tools.FileDiagnostics
	type answer struct {
		s   *server
		got map[string]fileResult
		rel []related
		err error
	}
	answers := make(chan answer, len(order))
	for _, s := range order {
		go func() {
			defer s.use()()
			if err := s.awaitReady(ctx); err != nil {
				answers <- answer{s: s, err: err}
				return
			}
			got, rel := s.diagnostics(ctx, byServer[s])
			answers <- answer{s: s, got: got, rel: rel}
		}()
	}
	for range order {
		a := <-answers
		for _, f := range byServer[a.s] {
			fd := tools.FileDiagnostics{Path: f, Server: a.s.name}
			r, ok := a.got[f]
			switch {
			case !a.s.alive():
				fd.Err = errors.New(a.s.exitText())
			case a.err != nil && errors.Is(a.err, context.DeadlineExceeded):
				fd.Pending = true // still starting
			case a.err != nil:
				fd.Err = a.err
			case ok && r.err != nil:
				fd.Err = r.err
			default:
				fd.Pending, fd.Diagnostics = r.pending, toolsDiagnostics(r.diags)
			}
			results[f] = fd
		}
		for _, r := range a.rel {
			if !hasNew(r.before, r.after) {
				continue
			}
			extra = append(extra, tools.FileDiagnostics{Path: r.path, Server: a.s.name, Related: true,
				Before: toolsDiagnostics(r.before), Diagnostics: toolsDiagnostics(r.after)})
		}
	}
	out := make([]tools.FileDiagnostics, 0, len(files))
	for _, f := range files {
		if err, ok := failed[f]; ok {
			out = append(out, tools.FileDiagnostics{Path: f, Err: err})
			continue
		}
		out = append(out, results[f])
	}
	sort.Slice(extra, func(i, j int) bool { return extra[i].Path < extra[j].Path })
	return append(out, extra...), nil
}

// prepare readies the file's server for a request at the file: started,
// initialized, serving the request (has), and holding the file's content.
func (m *Manager) prepare(ctx context.Context, file, what string, has func(serverCaps) bool) (*server, error) {
	s, err := m.ready(ctx, file)
	if err != nil {
		return nil, err
	}
	if !has(s.caps) {
		return nil, fmt.Errorf("%w: %s does not answer %s", tools.ErrNoLanguageServer, s.name, what)
	}
	s.refresh(ctx)
	if _, err := s.sync(ctx, file); err != nil {
		return nil, err
	}
	return s, nil
}

func position(at tools.TextPosition) protocol.TextDocumentPositionParams {
	return protocol.TextDocumentPositionParams{TextDocument: protocol.TextDocumentIdentifier{URI: fileURI(at.Path)},
		Position: protocol.Position{Line: uint32(at.Line), Character: uint32(at.Character)}}
}

func (m *Manager) Definition(ctx context.Context, at tools.TextPosition) ([]tools.TextLocation, error) {
	s, err := m.prepare(ctx, at.Path, "definitions", func(c serverCaps) bool { return provides(c.DefinitionProvider) })
	if err != nil {
		return nil, err
	}
	defer s.use()()
	var raw json.RawMessage
	if err := s.conn.call(ctx, "textDocument/definition", protocol.DefinitionParams{TextDocumentPositionParams: position(at)}, &raw); err != nil {
		return nil, s.failure("finding the definition", err)
	}
	return locations(raw)
}

func (m *Manager) References(ctx context.Context, at tools.TextPosition, decl bool) ([]tools.TextLocation, error) {
	s, err := m.prepare(ctx, at.Path, "references", func(c serverCaps) bool { return provides(c.ReferencesProvider) })
	if err != nil {
		return nil, err
	}
	defer s.use()()
	var raw json.RawMessage
	p := protocol.ReferenceParams{TextDocumentPositionParams: position(at), Context: protocol.ReferenceContext{IncludeDeclaration: decl}}
	if err := s.conn.call(ctx, "textDocument/references", p, &raw); err != nil {
		return nil, s.failure("finding references", err)
	}
	return locations(raw)
}

func (m *Manager) Hover(ctx context.Context, at tools.TextPosition) (string, error) {
	s, err := m.prepare(ctx, at.Path, "hovers", func(c serverCaps) bool { return provides(c.HoverProvider) })
	if err != nil {
		return "", err
	}
	defer s.use()()
	var h struct {
		Contents json.RawMessage `json:"contents"`
	}
	if err := s.conn.call(ctx, "textDocument/hover", protocol.HoverParams{TextDocumentPositionParams: position(at)}, &h); err != nil {
		return "", s.failure("describing the symbol", err)
	}
	return tools.HoverText(h.Contents), nil
}

func (m *Manager) DocumentSymbols(ctx context.Context, file string) ([]tools.Symbol, error) {
	s, err := m.prepare(ctx, file, "document symbols", func(c serverCaps) bool { return provides(c.DocumentSymbolProvider) })
	if err != nil {
		return nil, err
	}
	defer s.use()()
	var syms []symbol
	p := protocol.DocumentSymbolParams{TextDocument: protocol.TextDocumentIdentifier{URI: fileURI(file)}}
	if err := s.conn.call(ctx, "textDocument/documentSymbol", p, &syms); err != nil {
		return nil, s.failure("listing the file's symbols", err)
	}
	return toolsSymbols(file, syms), nil
}

// WorkspaceSymbols asks the servers of every language of the workspace
// that is installed, starting them if needed, and merges their answers.
func (m *Manager) WorkspaceSymbols(ctx context.Context, query string) ([]tools.Symbol, error) {
	var out []tools.Symbol
	var errs []error
	for _, lang := range m.present() {
		probe := m.cfg.Root + "/x" + anyExt(lang)
		s, err := m.ready(ctx, probe)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !provides(s.caps.WorkspaceSymbolProvider) {
			continue
		}
		done := s.use()
		s.refresh(ctx)
		var syms []symbol
		err = s.conn.call(ctx, "workspace/symbol", protocol.WorkspaceSymbolParams{Query: query}, &syms)
		done()
		if err != nil {
			errs = append(errs, s.failure("looking up symbols", err))
			continue
		}
		out = append(out, toolsSymbols("", syms)...)
	}
	if len(out) == 0 && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(out) == 0 && len(errs) == 0 && !m.Navigates() {
		return nil, fmt.Errorf("%w: none is installed for the workspace's languages", tools.ErrNoLanguageServer)
	}
	return out, nil
}

// anyExt is one of a language's file extensions.
func anyExt(lang language) string {
	exts := make([]string, 0, len(lang.IDs))
	for e := range lang.IDs {
		exts = append(exts, e)
	}
	sort.Strings(exts)
	return exts[0]
}

// locations reads a Location, a list of Locations or of LocationLinks.
func locations(raw json.RawMessage) ([]tools.TextLocation, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return nil, nil
	}
	var list []json.RawMessage
	if strings.HasPrefix(s, "[") {
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("the server's locations do not decode: %w", err)
		}
	} else {
		list = []json.RawMessage{raw}
	}
	var out []tools.TextLocation
	for _, item := range list {
		var l struct {
			URI                  string          `json:"uri"`
			Range                *protocol.Range `json:"range"`
			TargetURI            string          `json:"targetUri"`
			TargetSelectionRange *protocol.Range `json:"targetSelectionRange"`
		}
		if err := json.Unmarshal(item, &l); err != nil {
			continue
		}
		uri, r := l.URI, l.Range
		if l.TargetURI != "" {
			uri, r = l.TargetURI, l.TargetSelectionRange
		}
		if p := uriPath(uri); p != "" && r != nil {
			out = append(out, tools.TextLocation{Path: p, Range: toolsRange(*r)})
		}
	}
	return out, nil
}

// symbol is a DocumentSymbol or a SymbolInformation (WorkspaceSymbol).
type symbol struct {
	Name           string          `json:"name"`
	Kind           int             `json:"kind"`
	ContainerName  string          `json:"containerName"`
	Range          *protocol.Range `json:"range"`
	SelectionRange *protocol.Range `json:"selectionRange"`
	Location       *struct {
		URI   string          `json:"uri"`
		Range *protocol.Range `json:"range"`
	} `json:"location"`
	Children []symbol `json:"children"`
}

func toolsSymbols(file string, syms []symbol) []tools.Symbol {
	out := make([]tools.Symbol, 0, len(syms))
	for _, s := range syms {
		t := tools.Symbol{Name: s.Name, Kind: tools.SymbolKindName(s.Kind), Container: s.ContainerName}
		switch {
		case s.Location != nil && s.Location.Range != nil:
			t.Location = tools.TextLocation{Path: uriPath(s.Location.URI), Range: toolsRange(*s.Location.Range)}
		case s.Location != nil: // a WorkspaceSymbol without a range
			var r tools.TextRange
			t.Location = tools.TextLocation{Path: uriPath(s.Location.URI), Range: r}
		case s.Range != nil:
			t.Location = tools.TextLocation{Path: file, Range: toolsRange(*s.Range)}
		}
		if s.SelectionRange != nil {
			sel := toolsRange(*s.SelectionRange)
			t.Selection = &sel
		}
		if t.Location.Path == "" {
			continue
		}
		t.Children = toolsSymbols(t.Location.Path, s.Children)
		out = append(out, t)
	}
	return out
}

func toolsRange(r protocol.Range) tools.TextRange {
	var t tools.TextRange
	t.Start.Line, t.Start.Character = int(r.Start.Line), int(r.Start.Character)
	t.End.Line, t.End.Character = int(r.End.Line), int(r.End.Character)
	return t
}

func toolsDiagnostics(ds []protocol.Diagnostic) []tools.Diagnostic {
	out := make([]tools.Diagnostic, 0, len(ds))
	for _, d := range ds {
		out = append(out, tools.Diagnostic{Range: toolsRange(d.Range), Severity: tools.Severity(d.Severity),
			Source: d.Source, Code: tools.DiagnosticCode(d.Code), Message: d.Message})
	}
	return out
}

// hasNew says whether after holds an error or a warning before did not.
func hasNew(before, after []protocol.Diagnostic) bool {
	seen := map[string]int{}
	key := func(d protocol.Diagnostic) string { return fmt.Sprint(d.Severity, d.Source, d.Code, d.Message) }
	for _, d := range before {
		seen[key(d)]++
	}
	for _, d := range after {
		if d.Severity != protocol.DiagnosticSeverityError && d.Severity != protocol.DiagnosticSeverityWarning {
			continue
		}
		if seen[key(d)] > 0 {
			seen[key(d)]--
			continue
		}
		return true
	}
	return false
}
