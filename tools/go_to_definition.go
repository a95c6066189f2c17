package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
)

// GoToDefinitionToolName finds where a symbol is defined.
const GoToDefinitionToolName = "go_to_definition"

//go:embed go_to_definition.md
var goToDefinitionDescription string

var goToDefinitionSchema = SchemaOf(SymbolParams{})

type goToDefinitionTool struct{}

func (goToDefinitionTool) Info() Info {
	return Info{Name: GoToDefinitionToolName, Description: goToDefinitionDescription,
		Parameters: goToDefinitionSchema, Kind: KindSearch, Effect: EffectRead, Timeout: navToolTimeout}
}

// navToolTimeout is the loop's bound on a navigation call; the call itself
// gives up on its server sooner (Env.LanguageTimeout) and says so.
const navToolTimeout = 10 * DefaultLanguageTimeout

func (goToDefinitionTool) Prepare(ctx context.Context, env *Env, args json.RawMessage) (*Call, *Result) {
	var p SymbolParams
	if r := decodeArgs(args, &p); r != nil {
		return nil, r
	}
	return prepareNavigation(env, &p, "definition of ", func(ctx context.Context, lang Language, src *sources, at TextPosition) Result {
		return definition(ctx, lang, src, at, p.Symbol)
	})
}

func definition(ctx context.Context, lang Language, src *sources, at TextPosition, symbol string) Result {
	locs, err := lang.Definition(ctx, at)
	if err != nil {
		return *languageFailure(err, "finding the definition of "+symbol)
	}
	locs = sortLocations(locs)
	from := src.head(ctx, at)
	if len(locs) == 0 {
		return Result{Output: fmt.Sprintf("The language server knows no definition of %s at %s (a keyword, a literal, or code it cannot resolve).", symbol, from)}
	}
	var b strings.Builder
	if len(locs) == 1 {
		fmt.Fprintf(&b, "%s (at %s) is defined at:", symbol, from)
	} else {
		fmt.Fprintf(&b, "%s (at %s) has %d definitions:", symbol, from, len(locs))
	}
	for _, l := range locs[:min(len(locs), maxDefinitions)] {
		b.WriteString("\n" + src.locationLine(ctx, l))
	}
	if len(locs) > maxDefinitions {
		fmt.Fprintf(&b, "\n(%d more not shown)", len(locs)-maxDefinitions)
	}
	return Result{Output: b.String()}
}

// pointRange is the empty range at a position.
func pointRange(at TextPosition) TextRange {
	var r TextRange
	r.Start.Line, r.Start.Character = at.Line, at.Character
	r.End = r.Start
	return r
}

// headOf is the path:line:column part of a location line.
func headOf(line string) string {
	if i := strings.Index(line, ": "); i >= 0 {
		return line[:i]
	}
	return strings.TrimSuffix(line, " (outside the workspace)")
}
