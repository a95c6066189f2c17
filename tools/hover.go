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
	return prepareNavigation(env, &p, "type of ", func(ctx context.Context, lang Language, src *sources, at TextPosition) Result {
		return hover(ctx, lang, src, at, p.Symbol)
	})
}

func hover(ctx context.Context, lang Language, src *sources, at TextPosition, symbol string) Result {
	text, err := lang.Hover(ctx, at)
	if err != nil {
		return *languageFailure(err, "describing "+symbol)
	}
	from := src.head(ctx, at)
	text = strings.TrimSpace(text)
	if text == "" {
		return Result{Output: fmt.Sprintf("The language server has nothing to say about %s at %s.", symbol, from)}
	}
	if len(text) > maxHoverBytes {
		text = cutAtRune(text, maxHoverBytes) + "\n[… the rest of the documentation is not shown]"
	}
	return Result{Output: fmt.Sprintf("%s at %s:\n%s", symbol, from, text)}
}
