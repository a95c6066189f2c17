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
	searchHitLines    = 25
	// A weak hit is there for completeness: a glance tells whether it is
	// the one, read_file gives the rest.
	searchWeakLines = 10
	searchMaxBytes  = 10 << 10
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
	fmt.Fprintf(&b, "%s, most relevant first (ranked by file: a file's other chunks count too). Match = share of the query's words (rarer words weigh more) the chunk contains; it is not the rank.\n",
		plural(len(hits), "hit"))
	shown := 0
	for _, h := range hits {
		block := formatHit(h)
		if shown > 0 && b.Len()+len(block) > searchMaxBytes {
			break // whole hits only: a cut hit loses its place in the file
		}
		b.WriteString(block)
		shown++
	}
	if shown < len(hits) {
		fmt.Fprintf(&b, "\n[%s more not shown to keep this short; ask for fewer with limit, or read the files above]\n",
			plural(len(hits)-shown, "hit"))
	}
	return Result{Output: strings.TrimRight(b.String(), "\n"), Truncated: shown < len(hits)}
}

// formatHit renders one hit: a path:lines header with what the chunk
// declares and how well it matches, then at most searchHitLines lines.
func formatHit(h rag.SearchHit) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s:%d-%d", h.Path, h.StartLine, h.EndLine)
	if h.Symbol != "" {
		fmt.Fprintf(&b, " %s", h.Symbol)
	}
	if h.Match != "" {
		fmt.Fprintf(&b, " (%s match, %.2f", h.Match, h.Score)
	} else {
		fmt.Fprintf(&b, " (score %.2f", h.Score)
	}
	if h.Kind != "" {
		fmt.Fprintf(&b, "; %s", h.Kind)
	}
	b.WriteString(")\n")
	lines := strings.Split(strings.TrimRight(h.Text, "\n"), "\n")
	most := searchHitLines
	if h.Match == rag.MatchWeak {
		most = searchWeakLines
	}
	shownLines := lines[:min(len(lines), most)]
	b.WriteString(strings.Join(shownLines, "\n"))
	b.WriteString("\n")
	if rest := len(lines) - len(shownLines); rest > 0 {
		next := h.StartLine + len(shownLines)
		fmt.Fprintf(&b, "[… %s more of this chunk: read_file path=%q offset=%d limit=%d]\n",
			plural(rest, "line"), h.Path, next, h.EndLine-next+1)
	}
	return b.String()
}
