package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
)

// HoverToolName shows a symbol's type and documentation.
const HoverToolName = "hover"

//go:embed hover.md
var hoverDescription string

var hoverSchema = SchemaOf(SymbolParams{})

type hoverTool struct{}

func (hoverTool) Info() Info {
	return Info{Name: HoverToolName, Description: hoverDescription,
		Parameters: hoverSchema, Kind: KindRead, Effect: EffectRead, Timeout: navToolTimeout}
}

func (hoverTool) Prepare(ctx context.Context, env *Env, args json.RawMessage) (*Call, *Result) {
	var p SymbolParams
	if r := decodeArgs(args, &p); r != nil {
		return nil, r
	}
	return prepareNavigation(env, &p, "type of ", func(ctx context.Context, lang Language, abs, rel string) Result {
		return hover(ctx, env, lang, p, abs, rel)
	})
}

func hover(ctx context.Context, env *Env, lang Language, p SymbolParams, abs, rel string) Result {
	src := newSources(env)
	at, r := src.target(ctx, lang, p, abs, rel)
	if r != nil {
		return *r
	}
	text, err := lang.Hover(ctx, at)
	if err != nil {
		return *languageFailure(err, "describing "+p.Symbol)
	}
	from := headOf(src.locationLine(ctx, TextLocation{Path: at.Path, Range: pointRange(at)}))
	text = strings.TrimSpace(text)
	if text == "" {
		return Result{Output: fmt.Sprintf("The language server has nothing to say about %s at %s.", p.Symbol, from)}
	}
	if len(text) > maxHoverBytes {
		text = cutAtRune(text, maxHoverBytes) + "\n[… the rest of the documentation is not shown]"
	}
	return Result{Output: fmt.Sprintf("%s at %s:\n%s", p.Symbol, from, text)}
}
