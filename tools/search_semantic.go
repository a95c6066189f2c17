package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// SearchSemanticToolName queries the workspace index.
const SearchSemanticToolName = "search_semantic"

//go:embed search_semantic.md
var searchSemanticDescription string

// SearchSemanticParams are search_semantic's arguments.
type SearchSemanticParams struct {
	Query string `json:"query" jsonschema:"What you are looking for, in words: \"where are retries configured\"."`
	Limit int    `json:"limit,omitempty" min:"1" max:"20" jsonschema:"Number of chunks to return; default 8."`
}

var searchSemanticSchema = SchemaOf(SearchSemanticParams{})

type searchSemanticTool struct{}

func (searchSemanticTool) Info() Info {
	return Info{Name: SearchSemanticToolName, Description: searchSemanticDescription,
		Parameters: searchSemanticSchema, Kind: KindSearch, Effect: EffectRead, Timeout: 30 * time.Second}
}

func (searchSemanticTool) Prepare(ctx context.Context, env *Env, args json.RawMessage) (*Call, *Result) {
	var p SearchSemanticParams
	if r := decodeArgs(args, &p); r != nil {
		return nil, r
	}
	if strings.TrimSpace(p.Query) == "" {
		return nil, Errorf("query is required")
	}
	limit := p.Limit
	if limit <= 0 {
		limit = 8
	}
	limit = min(limit, 20)
	return &Call{
		Tool: SearchSemanticToolName, Title: "search " + p.Query, Kind: KindSearch,
		Run: func(ctx context.Context) (Result, error) {
			return searchSemantic(ctx, env, p.Query, limit), nil
		},
	}, nil
}

func searchSemantic(ctx context.Context, env *Env, query string, limit int) Result {
	if env.Searcher == nil {
		return *Errorf("the workspace index is not available; use grep or glob_file_search instead")
	}
	hits, partial, err := env.Searcher.Search(ctx, query, limit)
	if err != nil {
		return *Errorf("the workspace index failed: %v; use grep instead", err)
	}
	if len(hits) == 0 {
		return Result{Output: "no results"}
	}
	var b strings.Builder
	if partial {
		b.WriteString("[the index is still being built; results may be incomplete]\n")
	}
	for _, h := range hits {
		fmt.Fprintf(&b, "%s:%d-%d", h.Path, h.StartLine, h.EndLine)
		if h.Symbol != "" {
			fmt.Fprintf(&b, " %s", h.Symbol)
		}
		fmt.Fprintf(&b, " (score %.2f)\n%s\n\n", h.Score, strings.TrimRight(h.Text, "\n"))
	}
	s := strings.TrimRight(b.String(), "\n")
	capped, cut := capOutput(s)
	res := Result{Output: capped, Truncated: cut}
	if cut {
		res.Full = s
	}
	return res
}
