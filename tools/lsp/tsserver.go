package lsp

import (
	"context"
	"fmt"

	"go.lsp.dev/protocol"
)

// typescript-language-server publishes a file's diagnostics kind by kind
// (syntax, then semantics, then suggestions), 50 ms apart at least, and
// not at all for a kind that stays empty: a publish says neither that the
// check is over nor, after a change that leaves a file clean, that it
// happened. So its diagnostics are asked of tsserver itself, synchronously,
// through the server's typescript.tsserverRequest command.

// tsDiagnostics asks tsserver for path's syntactic and semantic
// diagnostics, on the content the server was last sent.
func tsDiagnostics(ctx context.Context, s *server, path string) ([]protocol.Diagnostic, error) {
	var out []protocol.Diagnostic
	for _, cmd := range []string{"syntacticDiagnosticsSync", "semanticDiagnosticsSync"} {
		var res struct {
			Success bool     `json:"success"`
			Message string   `json:"message"`
			Body    []tsDiag `json:"body"`
		}
		p := protocol.ExecuteCommandParams{Command: "typescript.tsserverRequest",
			Arguments: []any{cmd, map[string]any{"file": string(fileURI(path)), "includeLinePosition": false}}}
		if err := s.conn.call(ctx, "workspace/executeCommand", p, &res); err != nil {
			return nil, err
		}
		if !res.Success {
			return nil, fmt.Errorf("tsserver %s: %s", cmd, res.Message)
		}
		for _, d := range res.Body {
			out = append(out, d.lsp())
		}
	}
	return out, nil
}

// tsDiag is a diagnostic as tsserver gives it: 1-based lines and offsets.
type tsDiag struct {
	Start    tsPos  `json:"start"`
	End      tsPos  `json:"end"`
	Text     string `json:"text"`
	Code     int    `json:"code"`
	Category string `json:"category"`
	Source   string `json:"source"`
}

type tsPos struct {
	Line   int `json:"line"`
	Offset int `json:"offset"`
}

func (p tsPos) lsp() protocol.Position {
	return protocol.Position{Line: uint32(max(p.Line-1, 0)), Character: uint32(max(p.Offset-1, 0))}
}

var tsSeverity = map[string]protocol.DiagnosticSeverity{"error": protocol.DiagnosticSeverityError,
	"warning": protocol.DiagnosticSeverityWarning, "suggestion": protocol.DiagnosticSeverityHint, "message": protocol.DiagnosticSeverityInformation}

func (d tsDiag) lsp() protocol.Diagnostic {
	source := d.Source
	if source == "" {
		source = "typescript"
	}
	sev, ok := tsSeverity[d.Category]
	if !ok {
		sev = protocol.DiagnosticSeverityError
	}
	return protocol.Diagnostic{Range: protocol.Range{Start: d.Start.lsp(), End: d.End.lsp()}, Severity: sev,
		Code: float64(d.Code), Source: source, Message: d.Text}
}
