package wire

import "encoding/json"

// Daemon → editor requests of language intelligence
// (docs/protocol.md#language-intelligence): the editor answers them with
// its own language servers, for the requests it declared in
// capabilities.experimental.agentd.language.
const (
	MethodEditorDiagnostics      = "editor/diagnostics"
	MethodEditorDefinition       = "editor/definition"
	MethodEditorReferences       = "editor/references"
	MethodEditorHover            = "editor/hover"
	MethodEditorDocumentSymbols  = "editor/documentSymbols"
	MethodEditorWorkspaceSymbols = "editor/workspaceSymbols"
	MethodEditorContext          = "editor/context"
	MethodEditorReadFile         = "editor/readFile"
)

// LanguageCapabilities is capabilities.experimental.agentd.language in
// initialize: the daemon → editor requests the editor answers. A request
// the editor does not declare is never sent: agentd asks its own language
// servers instead.
type LanguageCapabilities struct {
	Diagnostics      bool `json:"diagnostics,omitempty"`
	Definition       bool `json:"definition,omitempty"`
	References       bool `json:"references,omitempty"`
	Hover            bool `json:"hover,omitempty"`
	DocumentSymbols  bool `json:"documentSymbols,omitempty"`
	WorkspaceSymbols bool `json:"workspaceSymbols,omitempty"`
	// Context: editor/context (the open files and the selection).
	Context bool `json:"context,omitempty"`
	// Buffers: editor/readFile; the model reads the editor's unsaved
	// buffers.
	Buffers bool `json:"buffers,omitempty"`
}

// The shapes below are LSP's (3.17), with only the fields agentd reads.
// Lines and characters are 0-based; characters count UTF-16 code units.

// Position is LSP's Position.
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Range is LSP's Range (end exclusive).
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Location is LSP's Location. A LocationLink decodes into it too: its
// targetUri and targetSelectionRange (the name) are taken.
type Location struct {
	URI   string `json:"uri"`
	Range Range  `json:"range"`
}

// UnmarshalJSON reads a Location or a LocationLink.
func (l *Location) UnmarshalJSON(b []byte) error {
	var v struct {
		URI                  string `json:"uri"`
		Range                *Range `json:"range"`
		TargetURI            string `json:"targetUri"`
		TargetRange          *Range `json:"targetRange"`
		TargetSelectionRange *Range `json:"targetSelectionRange"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	l.URI = v.URI
	if v.Range != nil {
		l.Range = *v.Range
	}
	if v.TargetURI != "" {
		l.URI = v.TargetURI
		switch {
		case v.TargetSelectionRange != nil:
			l.Range = *v.TargetSelectionRange
		case v.TargetRange != nil:
			l.Range = *v.TargetRange
		}
	}
	return nil
}

// TextDocument is LSP's TextDocumentIdentifier.
type TextDocument struct {
	URI string `json:"uri"`
}

// TextDocumentPosition is LSP's TextDocumentPositionParams: the params of
// editor/definition and editor/hover.
type TextDocumentPosition struct {
	TextDocument TextDocument `json:"textDocument"`
	Position     Position     `json:"position"`
}

// ReferencesParams are editor/references' params.
type ReferencesParams struct {
	TextDocument TextDocument      `json:"textDocument"`
	Position     Position          `json:"position"`
	Context      ReferencesContext `json:"context"`
}

// ReferencesContext is LSP's ReferenceContext.
type ReferencesContext struct {
	IncludeDeclaration bool `json:"includeDeclaration"`
}

// DiagnosticsParams are editor/diagnostics' params.
type DiagnosticsParams struct {
	URIs []string `json:"uris"`
	// Fresh: agentd has just written the files on disk. The editor makes
	// its language servers take in their current content and answers once
	// they published diagnostics for it, or near TimeoutMs with what it has.
	// Without it, the editor answers at once with what it knows.
	Fresh     bool `json:"fresh"`
	TimeoutMs int  `json:"timeoutMs"`
}

// DiagnosticsResult is editor/diagnostics' result.
type DiagnosticsResult struct {
	Items []FileDiagnostics `json:"items"`
}

// FileDiagnostics are one file's diagnostics in editor/diagnostics' result.
type FileDiagnostics struct {
	URI string `json:"uri"`
	// Covered false: no language server of the editor handles the file
	// (agentd asks its own). Absent means true.
	Covered *bool `json:"covered,omitempty"`
	// Pending: the servers had not answered for the current content when
	// the time was up; Diagnostics are the ones from before.
	Pending     bool         `json:"pending,omitempty"`
	Diagnostics []Diagnostic `json:"diagnostics"`
}

// Diagnostic is LSP's Diagnostic.
type Diagnostic struct {
	Range    Range  `json:"range"`
	Severity int    `json:"severity,omitempty"`
	Code     any    `json:"code,omitempty"` // number or string
	Source   string `json:"source,omitempty"`
	Message  string `json:"message"`
}

// Hover is LSP's Hover; Contents is MarkupContent, a MarkedString or a list
// of MarkedStrings, as JSON.
type Hover struct {
	Contents json.RawMessage `json:"contents"`
}

// DocumentSymbolsParams are editor/documentSymbols' params.
type DocumentSymbolsParams struct {
	TextDocument TextDocument `json:"textDocument"`
}

// Symbol is LSP's DocumentSymbol or SymbolInformation (or WorkspaceSymbol),
// whichever the editor sends: a DocumentSymbol has Range, SelectionRange
// and Children; the others a Location.
type Symbol struct {
	Name           string    `json:"name"`
	Kind           int       `json:"kind"`
	Detail         string    `json:"detail,omitempty"`
	ContainerName  string    `json:"containerName,omitempty"`
	Range          *Range    `json:"range,omitempty"`
	SelectionRange *Range    `json:"selectionRange,omitempty"`
	Location       *Location `json:"location,omitempty"`
	Children       []Symbol  `json:"children,omitempty"`
}

// WorkspaceSymbolsParams are editor/workspaceSymbols' params.
type WorkspaceSymbolsParams struct {
	Query string `json:"query"`
}

// EditorContext is editor/context's result: what the user has in front of
// them.
type EditorContext struct {
	OpenFiles  []string   `json:"openFiles,omitempty"`
	ActiveFile string     `json:"activeFile,omitempty"`
	Selection  *Selection `json:"selection,omitempty"`
}

// Selection is the user's selection in EditorContext.
type Selection struct {
	URI   string `json:"uri"`
	Range Range  `json:"range"`
	Text  string `json:"text,omitempty"`
}

// ReadFileParams are editor/readFile's params.
type ReadFileParams struct {
	URI string `json:"uri"`
}

// ReadFileResult is editor/readFile's result: the buffer's text. The
// editor answers null for a file it does not have open (agentd reads the
// disk).
type ReadFileResult struct {
	Text    string `json:"text"`
	Version int    `json:"version,omitempty"`
	Dirty   bool   `json:"dirty,omitempty"`
}
