package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agentd/agentd/rag"
)

// SearchSemanticToolName queries the workspace index.
const SearchSemanticToolName = "search_semantic"

//go:embed search_semantic.md
var searchSemanticDescription string

// SearchSemanticParams are search_semantic's arguments.
type SearchSemanticParams struct {
	Query string `json:"query" min:"1" jsonschema:"What you are looking for, in words: \"where are retries configured\"."`
	Limit int    `json:"limit,omitempty" min:"1" max:"20" jsonschema:"Number of hits to return; default 5."`
}

// What the model gets: a few hits, each short enough to judge and with a
// pointer to read the rest. Hits are kept or dropped whole, never cut in
// the middle, so every one keeps its path:lines header.
const (
	searchDefaultHits = 5
	searchMaxBytes    = 10 << 10
)

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
		return nil, Errorf("query is blank: say in words what you are looking for")
	}
	limit := p.Limit // 1 to 20: the schema's bounds
	if limit == 0 {
		limit = searchDefaultHits
	}
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
	var b strings.Builder
	if partial {
		b.WriteString("[the index is still being built; results may be incomplete]\n")
	}
	if len(hits) == 0 {
		b.WriteString("Nothing matched: no chunk of the workspace has two of the query's words or half of its weight. " +
			"Try other words, or grep for an exact identifier.")
		return Result{Output: b.String()}
	}
	fmt.Fprintf(&b, "%s, most likely first; under each, its matching chunks (lines, declarations) and the lines that matched, the query's words in «». The word after a file (strong, partial, weak) says how likely it is the place; the number is its score against the best.\n\n",
		plural(len(hits), "file"))
	shown := 0
	for _, h := range hits {
		var blk strings.Builder
		rag.WriteHits(&blk, []rag.SearchHit{h}, formatFor(shown))
		if shown > 0 && b.Len()+blk.Len() > searchMaxBytes {
			break // whole files only
		}
		if shown > 0 {
			b.WriteString("\n")
		}
		b.WriteString(blk.String())
		shown++
	}
	if shown < len(hits) {
		fmt.Fprintf(&b, "\n[%s more not shown to keep this short; ask for fewer with limit, or read the files above]\n",
			plural(len(hits)-shown, "file"))
	}
	return Result{Output: strings.TrimRight(b.String(), "\n"), Truncated: shown < len(hits)}
}

// formatFor shows the best file's best chunk whole (when strong), the
// others' matching lines.
func formatFor(i int) rag.FormatOptions {
	o := rag.ModelMarks
	if i > 0 {
		o.BodyLines = 0
	}
	return o
}
