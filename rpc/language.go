package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/rpc/wire"
	"github.com/agentd/agentd/tools"
)

// editorLanguage is tools.Language answered by the editor: agentd asks it
// with the editor/* requests it declared in initialize, and its language
// servers answer (unsaved buffers included). What it did not declare, or
// declines (null), is ErrNoLanguageServer, and agentd's own servers answer
// instead (tools.Chain).
type editorLanguage struct {
	s    *Server
	caps wire.LanguageCapabilities
}

// editorName is how the model and the editor read who answered.
const editorName = "the editor"

// call sends a request to the editor and decodes its result into out. A
// null result is ErrNoLanguageServer. When ctx ends first, the editor is
// told with $/cancelRequest.
func (l *editorLanguage) call(ctx context.Context, method string, params, out any) error {
	var raw json.RawMessage
	id, err := l.s.conn.Call(ctx, method, params, &raw)
	if ctx.Err() != nil {
		_ = l.s.conn.Notify(context.WithoutCancel(ctx), wire.MethodCancelRequest, map[string]any{"id": id})
		return fmt.Errorf("the editor did not answer %s in time: %w", method, ctx.Err())
	}
	var we *jsonrpc2.Error
	if errors.As(err, &we) {
		return fmt.Errorf("%w: the editor answered %s with error %d: %s", tools.ErrNoLanguageServer, method, we.Code, we.Message)
	}
	if err != nil {
		return fmt.Errorf("asking the editor (%s): %w", method, err)
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return fmt.Errorf("%w: the editor has none for it", tools.ErrNoLanguageServer)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("the editor's answer to %s does not decode: %w", method, err)
	}
	return nil
}

func (l *editorLanguage) Diagnostics(ctx context.Context, files []string, fresh bool) ([]tools.FileDiagnostics, error) {
	if !l.caps.Diagnostics {
		return nil, fmt.Errorf("%w: the editor does not answer editor/diagnostics", tools.ErrNoLanguageServer)
	}
	p := wire.DiagnosticsParams{URIs: make([]string, len(files)), Fresh: fresh}
	for i, f := range files {
		p.URIs[i] = fileURI(f)
	}
	if dl, ok := ctx.Deadline(); ok {
		// The editor answers a little before agentd stops waiting, with
		// what it has then.
		p.TimeoutMs = max(int(time.Until(dl).Milliseconds())-100, 0)
	}
	var res wire.DiagnosticsResult
	if err := l.call(ctx, wire.MethodEditorDiagnostics, p, &res); err != nil {
		return nil, err
	}
	byPath := map[string]wire.FileDiagnostics{}
	for _, it := range res.Items {
		byPath[uriPath(it.URI)] = it
	}
	out := make([]tools.FileDiagnostics, 0, len(files))
	for _, f := range files {
		it, ok := byPath[f]
		fd := tools.FileDiagnostics{Path: f, Server: editorName, Pending: it.Pending}
		switch {
		case !ok:
			fd.Err = fmt.Errorf("%w: the editor did not answer for it", tools.ErrNoLanguageServer)
		case it.Covered != nil && !*it.Covered:
			fd.Err = fmt.Errorf("%w: the editor has none for it", tools.ErrNoLanguageServer)
		}
		for _, d := range it.Diagnostics {
			fd.Diagnostics = append(fd.Diagnostics, tools.Diagnostic{Range: toolsRange(d.Range), Severity: tools.Severity(d.Severity),
				Source: d.Source, Code: tools.DiagnosticCode(d.Code), Message: d.Message})
		}
		out = append(out, fd)
	}
	return out, nil
}

func (l *editorLanguage) Definition(ctx context.Context, at tools.TextPosition) ([]tools.TextLocation, error) {
	if !l.caps.Definition {
		return nil, fmt.Errorf("%w: the editor does not answer editor/definition", tools.ErrNoLanguageServer)
	}
	return l.locations(ctx, wire.MethodEditorDefinition, positionParams(at))
}

func (l *editorLanguage) References(ctx context.Context, at tools.TextPosition, decl bool) ([]tools.TextLocation, error) {
	if !l.caps.References {
		return nil, fmt.Errorf("%w: the editor does not answer editor/references", tools.ErrNoLanguageServer)
	}
	p := positionParams(at)
	return l.locations(ctx, wire.MethodEditorReferences, wire.ReferencesParams{TextDocument: p.TextDocument, Position: p.Position,
		Context: wire.ReferencesContext{IncludeDeclaration: decl}})
}

// locations reads a Location, a list of Locations or of LocationLinks.
func (l *editorLanguage) locations(ctx context.Context, method string, params any) ([]tools.TextLocation, error) {
	var raw json.RawMessage
	if err := l.call(ctx, method, params, &raw); err != nil {
		return nil, err
	}
	var list []wire.Location
	if err := json.Unmarshal(raw, &list); err != nil {
		var one wire.Location
		if err := json.Unmarshal(raw, &one); err != nil {
			return nil, fmt.Errorf("the editor's answer to %s is not a list of locations: %w", method, err)
		}
		list = []wire.Location{one}
	}
	out := make([]tools.TextLocation, 0, len(list))
	for _, loc := range list {
		if p := uriPath(loc.URI); p != "" {
			out = append(out, tools.TextLocation{Path: p, Range: toolsRange(loc.Range)})
		}
	}
	return out, nil
}

func (l *editorLanguage) Hover(ctx context.Context, at tools.TextPosition) (string, error) {
	if !l.caps.Hover {
		return "", fmt.Errorf("%w: the editor does not answer editor/hover", tools.ErrNoLanguageServer)
	}
	var h wire.Hover
	if err := l.call(ctx, wire.MethodEditorHover, positionParams(at), &h); err != nil {
		return "", err
	}
	return tools.HoverText(h.Contents), nil
}

func (l *editorLanguage) DocumentSymbols(ctx context.Context, file string) ([]tools.Symbol, error) {
	if !l.caps.DocumentSymbols {
		return nil, fmt.Errorf("%w: the editor does not answer editor/documentSymbols", tools.ErrNoLanguageServer)
	}
	var syms []wire.Symbol
	if err := l.call(ctx, wire.MethodEditorDocumentSymbols, wire.DocumentSymbolsParams{TextDocument: wire.TextDocument{URI: fileURI(file)}}, &syms); err != nil {
		return nil, err
	}
	return toolsSymbols(file, syms), nil
}

func (l *editorLanguage) WorkspaceSymbols(ctx context.Context, query string) ([]tools.Symbol, error) {
	if !l.caps.WorkspaceSymbols {
		return nil, fmt.Errorf("%w: the editor does not answer editor/workspaceSymbols", tools.ErrNoLanguageServer)
	}
	var syms []wire.Symbol
	if err := l.call(ctx, wire.MethodEditorWorkspaceSymbols, wire.WorkspaceSymbolsParams{Query: query}, &syms); err != nil {
		return nil, err
	}
	return toolsSymbols("", syms), nil
}

// Warm does nothing: the editor's servers already run for what it shows.
func (l *editorLanguage) Warm([]string) {}

// ChecksFiles says the editor answers diagnostics itself (tools.Chain
// then leaves agentd's own servers unstarted until it declines a file).
func (l *editorLanguage) ChecksFiles() bool { return l.caps.Diagnostics }

func (l *editorLanguage) Navigates() bool {
	return l.caps.Definition || l.caps.References || l.caps.Hover
}

func positionParams(at tools.TextPosition) wire.TextDocumentPosition {
	return wire.TextDocumentPosition{TextDocument: wire.TextDocument{URI: fileURI(at.Path)},
		Position: wire.Position{Line: at.Line, Character: at.Character}}
}

func toolsRange(r wire.Range) tools.TextRange {
	var t tools.TextRange
	t.Start.Line, t.Start.Character = r.Start.Line, r.Start.Character
	t.End.Line, t.End.Character = r.End.Line, r.End.Character
	return t
}

// toolsSymbols reads DocumentSymbols (file is theirs) or
// SymbolInformation (each names its file).
func toolsSymbols(file string, syms []wire.Symbol) []tools.Symbol {
	out := make([]tools.Symbol, 0, len(syms))
	for _, s := range syms {
		t := tools.Symbol{Name: s.Name, Kind: tools.SymbolKindName(s.Kind), Container: s.ContainerName}
		switch {
		case s.Location != nil:
			t.Location = tools.TextLocation{Path: uriPath(s.Location.URI), Range: toolsRange(s.Location.Range)}
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

// fileURI is the file:// URI of an absolute path.
func fileURI(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

// editorFiles reads file content through editor/readFile, so the model
// reads the editor's unsaved buffers; a file the editor does not have open
// (null) and every write go to the disk.
type editorFiles struct {
	lang *editorLanguage
	root string
}

// readFileTimeout bounds the editor's answer to editor/readFile.
const readFileTimeout = 5 * time.Second

func (f editorFiles) ReadFile(ctx context.Context, abs string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, readFileTimeout)
	defer cancel()
	var res wire.ReadFileResult
	err := f.lang.call(ctx, wire.MethodEditorReadFile, wire.ReadFileParams{URI: fileURI(abs)}, &res)
	if errors.Is(err, tools.ErrNoLanguageServer) {
		return tools.DiskAt(f.root).ReadFile(ctx, abs)
	}
	if err != nil {
		return nil, err
	}
	return []byte(res.Text), nil
}

func (f editorFiles) WriteFile(ctx context.Context, abs string, data []byte) error {
	return tools.DiskAt(f.root).WriteFile(ctx, abs, data)
}

// contextTimeout bounds the editor's answer to editor/context: a run's
// start waits for it.
const contextTimeout = time.Second

// editorContext fills a run's context from editor/context: the selection,
// and the files open in the editor (which replace those didOpen told).
// An editor that does not answer in time leaves the run without.
func (s *Server) editorContext(ctx context.Context, p *agent.RunParams) {
	s.mu.Lock()
	l := s.lang
	s.mu.Unlock()
	if l == nil || !l.caps.Context {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, contextTimeout)
	defer cancel()
	var ec wire.EditorContext
	if err := l.call(ctx, wire.MethodEditorContext, struct{}{}, &ec); err != nil {
		s.log.Debug("no editor context", "err", err)
		return
	}
	if len(ec.OpenFiles) > 0 {
		s.replaceOpen(ec.OpenFiles)
	}
	sel := ec.Selection
	if sel == nil || uriPath(sel.URI) == "" || sel.Range.End.Line < sel.Range.Start.Line {
		return
	}
	end := sel.Range.End.Line
	if sel.Range.End.Character == 0 && end > sel.Range.Start.Line {
		end-- // a selection of whole lines ends at the start of the next
	}
	p.Context = &agent.RunContext{Selection: &agent.Selection{Path: uriPath(sel.URI), StartLine: sel.Range.Start.Line + 1,
		EndLine: end + 1, Text: sel.Text}}
}
