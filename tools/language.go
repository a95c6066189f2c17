package tools

import (
	"context"
	"errors"
	"slices"
)

// Language is what language servers know of the workspace's code: the
// problems in a file, where a symbol is defined and used, its type. Two
// implement it: the editor (rpc asks it over the protocol, so its own
// servers answer, unsaved buffers included) and agentd's own servers
// (tools/lsp, for a front end without an editor, or files the editor has no
// server for). Chain puts the two together.
//
// Paths are absolute. Positions are LSP's: 0-based lines, and columns in
// UTF-16 code units of the line (UTF16Column converts). A method that
// cannot answer for a file (no server covers it, the editor declines)
// returns an error wrapping ErrNoLanguageServer.
type Language interface {
	// Diagnostics returns the problems the servers see in files. Fresh
	// asks for the files as they are now on disk, just changed: the
	// servers take them in and the answer waits for their new diagnostics,
	// until ctx ends (then it returns what is known, with Pending set).
	// Without Fresh, what the servers know now: the caller's ctx is short.
	Diagnostics(ctx context.Context, files []string, fresh bool) ([]FileDiagnostics, error)
	Definition(ctx context.Context, at TextPosition) ([]TextLocation, error)
	References(ctx context.Context, at TextPosition, includeDeclaration bool) ([]TextLocation, error)
	// Hover is what an editor shows over a symbol: its type or signature
	// and its documentation, as text (Markdown). "" when there is none.
	Hover(ctx context.Context, at TextPosition) (string, error)
	DocumentSymbols(ctx context.Context, file string) ([]Symbol, error)
	WorkspaceSymbols(ctx context.Context, query string) ([]Symbol, error)
	// Warm says files are being worked on (read): a server may start and
	// open them now, so that their diagnostics are ready when they change.
	// It never blocks.
	Warm(files []string)
	// Navigates says whether definitions, references and hovers can be
	// asked at all here (a session offers its tools only then). It never
	// starts a server.
	Navigates() bool
}

// ErrNoLanguageServer means no language server answers for the file: the
// editor has none for it or declined, or agentd has none installed.
var ErrNoLanguageServer = errors.New("no language server for this file")

// TextPosition is a place in a file, in LSP's terms.
type TextPosition struct {
	Path string
	// Line is 0-based; Character counts UTF-16 code units from the line's
	// start.
	Line, Character int
}

// TextRange is a span of a file, in LSP's terms (End exclusive).
type TextRange struct {
	Start, End struct{ Line, Character int }
}

// TextLocation is a span of a file.
type TextLocation struct {
	Path  string
	Range TextRange
}

// Severity is how bad a diagnostic is, as LSP numbers them.
type Severity int

// Severities.
const (
	SeverityError       Severity = 1
	SeverityWarning     Severity = 2
	SeverityInformation Severity = 3
	SeverityHint        Severity = 4
)

// String is the word the model and the editor read.
func (s Severity) String() string {
	switch s {
	case SeverityError:
		return "error"
	case SeverityWarning:
		return "warning"
	case SeverityInformation:
		return "info"
	case SeverityHint:
		return "hint"
	}
	return "error" // LSP: a missing severity is the client's to read; errors are the safe guess
}

// Diagnostic is one problem a server reports.
type Diagnostic struct {
	Range    TextRange
	Severity Severity
	// Source is who found it ("compiler", "typescript", "Pyright"); Code
	// its code, in words ("UndeclaredName", "2304").
	Source, Code string
	Message      string
}

// FileDiagnostics are one file's problems.
type FileDiagnostics struct {
	Path        string
	Diagnostics []Diagnostic
	// Server names who answered ("gopls", "the editor").
	Server string
	// Pending: the server did not answer for the file's current content
	// in time; Diagnostics are what it knew before, if anything.
	Pending bool
	// Err says why no server answered for the file (it wraps
	// ErrNoLanguageServer when none covers it).
	Err error
	// Related marks a file not asked about whose diagnostics the server
	// changed with the asked files' new content (a caller a rename broke);
	// Before are its diagnostics from before.
	Related bool
	Before  []Diagnostic
}

// Symbol is a named thing of the code: a function, a type, a field.
type Symbol struct {
	Name string
	// Kind is LSP's SymbolKind in words: "function", "class", "field".
	Kind string
	// Container is what holds it ("Cart" for a method of Cart), when the
	// server says.
	Container string
	Location  TextLocation
	// Selection is the symbol's name inside Location, when the server
	// says (document symbols); go to it for the definition.
	Selection *TextRange
	Children  []Symbol
}

// symbolKinds are LSP's SymbolKind numbers in words.
var symbolKinds = []string{"", "file", "module", "namespace", "package", "class", "method", "property", "field",
	"constructor", "enum", "interface", "function", "variable", "constant", "string", "number", "boolean", "array",
	"object", "key", "null", "enum member", "struct", "event", "operator", "type parameter"}

// SymbolKindName names LSP's SymbolKind n.
func SymbolKindName(n int) string {
	if n > 0 && n < len(symbolKinds) {
		return symbolKinds[n]
	}
	return "symbol"
}

// Chain asks first and, for what first has no server for (or first is
// nil), second. A file the editor covers is answered by the editor; one it
// does not, by agentd's own servers.
func Chain(first, second Language) Language {
	switch {
	case first == nil:
		return second
	case second == nil:
		return first
	}
	return chain{first, second}
}

type chain struct{ first, second Language }

func (c chain) Diagnostics(ctx context.Context, files []string, fresh bool) ([]FileDiagnostics, error) {
	out, err := c.first.Diagnostics(ctx, files, fresh)
	if err != nil && !errors.Is(err, ErrNoLanguageServer) {
		return out, err
	}
	var rest []string
	if err != nil {
		rest, out = files, nil
	} else {
		for _, f := range out {
			if errors.Is(f.Err, ErrNoLanguageServer) {
				rest = append(rest, f.Path)
			}
		}
		out = slices.DeleteFunc(out, func(f FileDiagnostics) bool { return errors.Is(f.Err, ErrNoLanguageServer) })
	}
	if len(rest) == 0 {
		return out, nil
	}
	more, err := c.second.Diagnostics(ctx, rest, fresh)
	return append(out, more...), err
}

func (c chain) Definition(ctx context.Context, at TextPosition) ([]TextLocation, error) {
	return either(func(l Language) ([]TextLocation, error) { return l.Definition(ctx, at) }, c)
}

func (c chain) References(ctx context.Context, at TextPosition, decl bool) ([]TextLocation, error) {
	return either(func(l Language) ([]TextLocation, error) { return l.References(ctx, at, decl) }, c)
}

func (c chain) Hover(ctx context.Context, at TextPosition) (string, error) {
	return either(func(l Language) (string, error) { return l.Hover(ctx, at) }, c)
}

func (c chain) DocumentSymbols(ctx context.Context, file string) ([]Symbol, error) {
	return either(func(l Language) ([]Symbol, error) { return l.DocumentSymbols(ctx, file) }, c)
}

// WorkspaceSymbols merges both: the editor may know one language and
// agentd's servers another.
func (c chain) WorkspaceSymbols(ctx context.Context, query string) ([]Symbol, error) {
	a, errA := c.first.WorkspaceSymbols(ctx, query)
	if errA != nil && !errors.Is(errA, ErrNoLanguageServer) {
		return a, errA
	}
	if len(a) > 0 {
		return a, nil
	}
	b, errB := c.second.WorkspaceSymbols(ctx, query)
	if errB != nil && errA == nil {
		return a, nil
	}
	return b, errB
}

// Warm warms the second only when the first does not check files itself:
// an editor that answers diagnostics runs its own servers, and agentd's
// would duplicate them (they start when the editor declines a file).
func (c chain) Warm(files []string) {
	c.first.Warm(files)
	if d, ok := c.first.(interface{ ChecksFiles() bool }); ok && d.ChecksFiles() {
		return
	}
	c.second.Warm(files)
}

func (c chain) Navigates() bool { return c.first.Navigates() || c.second.Navigates() }

// either asks c.first, then c.second when the first has no server.
func either[T any](ask func(Language) (T, error), c chain) (T, error) {
	v, err := ask(c.first)
	if !errors.Is(err, ErrNoLanguageServer) {
		return v, err
	}
	return ask(c.second)
}

// UTF16Column is the LSP column of the byte offset col in line.
func UTF16Column(line string, col int) int {
	n := 0
	for i, r := range line {
		if i >= col {
			break
		}
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// ByteColumn is the byte offset in line of the LSP column char (the line's
// length when char is past its end).
func ByteColumn(line string, char int) int {
	n := 0
	for i, r := range line {
		if n >= char {
			return i
		}
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return len(line)
}
