package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
)

// FindReferencesToolName lists where a symbol is used.
const FindReferencesToolName = "find_references"

//go:embed find_references.md
var findReferencesDescription string

// FindReferencesParams are find_references' arguments.
type FindReferencesParams struct {
	Symbol             string `json:"symbol" min:"1" jsonschema:"The identifier as written in the code, e.g. Total (for cart.Total, just Total)."`
	Path               string `json:"path,omitempty" jsonschema:"A file where the symbol appears, relative to the workspace root. Without it the symbol's declaration is looked up by name in the whole workspace."`
	Line               int    `json:"line,omitempty" min:"1" jsonschema:"The line of path where the symbol appears (1-based). Without it: where path declares the symbol."`
	IncludeDeclaration bool   `json:"include_declaration,omitempty" jsonschema:"Also list the declaration itself; default false."`
}

func (p FindReferencesParams) symbol() SymbolParams {
	return SymbolParams{Symbol: p.Symbol, Path: p.Path, Line: p.Line}
}

var findReferencesSchema = SchemaOf(FindReferencesParams{})

type findReferencesTool struct{}

func (findReferencesTool) Info() Info {
	return Info{Name: FindReferencesToolName, Description: findReferencesDescription,
		Parameters: findReferencesSchema, Kind: KindSearch, Effect: EffectRead, Timeout: navToolTimeout}
}

func (findReferencesTool) Prepare(ctx context.Context, env *Env, args json.RawMessage) (*Call, *Result) {
	var p FindReferencesParams
	if r := decodeArgs(args, &p); r != nil {
		return nil, r
	}
	sp := p.symbol()
	return prepareNavigation(env, &sp, "references to ", func(ctx context.Context, lang Language, src *sources, at TextPosition) Result {
		return references(ctx, lang, src, at, sp.Symbol, p.IncludeDeclaration)
	})
}

func references(ctx context.Context, lang Language, src *sources, at TextPosition, symbol string, includeDecl bool) Result {
	locs, err := lang.References(ctx, at, includeDecl)
	if err != nil {
		return *languageFailure(err, "finding the references to "+symbol)
	}
	locs = sortLocations(locs)
	from := src.head(ctx, at)
	decl := "declaration not included"
	if includeDecl {
		decl = "declaration included"
	}
	if len(locs) == 0 {
		return Result{Output: fmt.Sprintf("No references to %s (at %s) found (%s).", symbol, from, decl)}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s to %s (at %s), %s:", countOf(len(locs), "reference", "references"), symbol, from, decl)
	for _, l := range locs[:min(len(locs), maxReferences)] {
		b.WriteString("\n" + src.locationLine(ctx, l))
	}
	if len(locs) > maxReferences {
		fmt.Fprintf(&b, "\n(%d more not shown: grep for %s in the directories you need)", len(locs)-maxReferences, symbol)
	}
	return Result{Output: b.String()}
}
