package tools

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/rag"
)

// recordingSearcher answers with canned hits and remembers the limit asked.
type recordingSearcher struct {
	hits  []rag.SearchHit
	limit int
}

func (r *recordingSearcher) Search(_ context.Context, _ string, limit int) ([]rag.SearchHit, bool, error) {
	r.limit = limit
	return r.hits[:min(limit, len(r.hits))], false, nil
}

func TestSearchSemanticForTheModel(t *testing.T) {
	env := newEnv(t)
	long := make([]string, 60)
	for i := range long {
		long[i] = fmt.Sprintf("\tstep(%d) // a long function body line", i)
	}
	var hits []rag.SearchHit
	for i := range 12 {
		lines := []rag.SnippetLine{{Line: 12, Text: long[2], Marks: []rag.Span{{Start: 1, End: 5}}}, {Line: 30, Text: long[20]}}
		wide := rag.SnippetLine{Line: 85, Text: strings.Repeat("stop the steps ", 10)}
		hits = append(hits, rag.SearchHit{Path: fmt.Sprintf("pkg/f%d.go", i), Score: 1 - float64(i)/20, Match: "strong",
			Chunks: []rag.ChunkHit{{StartLine: 10, EndLine: 69, Symbol: "Run", Cover: 0.86, Lines: lines, Text: strings.Join(long, "\n")},
				{StartLine: 80, EndLine: 90, Symbol: "Stop", Cover: 0.4, Lines: []rag.SnippetLine{wide, wide, wide, wide}, Text: "x"},
				{StartLine: 100, EndLine: 110, Symbol: "Halt", Cover: 0.4, Lines: []rag.SnippetLine{wide, wide, wide, wide}, Text: "x"}}})
	}
	hits[1].Kind, hits[1].Match = "test", "partial"
	hits[2].Match = "weak"
	s := &recordingSearcher{hits: hits}
	env.Searcher = s

	// Five files by default; the first file's best chunk whole up to 25
	// lines with a pointer to the rest, every other chunk its matching
	// lines, the query's words marked.
	r := mustOK(t, call(t, env, SearchSemanticToolName, SearchSemanticParams{Query: "where do we run steps"}))
	assert.Equal(t, 5, s.limit)
	assert.Contains(t, r.Output, "pkg/f0.go  (strong 1.00)\n  10-69 Run\n    10│ \tstep(0)")
	assert.Contains(t, r.Output, `[… 35 more lines: read_file path="pkg/f0.go" offset=35 limit=35]`)
	assert.NotContains(t, r.Output, "step(25)")
	assert.Contains(t, r.Output, "pkg/f1.go  (partial 0.95, test)\n  10-69 Run\n    12│ \t«step»(2) // a long function body line\n    30│ \tstep(20) // a long function body line\n  80-90 Stop\n    85│ stop the steps")
	assert.Contains(t, r.Output, "pkg/f2.go  (weak 0.90)\n")
	assert.Equal(t, 1, strings.Count(r.Output, "read_file path="))

	// Over the byte budget, whole files are dropped, never cut.
	r = mustOK(t, call(t, env, SearchSemanticToolName, SearchSemanticParams{Query: "steps", Limit: 20}))
	assert.Equal(t, 20, s.limit)
	shown := strings.Count(r.Output, "  10-69 Run\n")
	require.Less(t, shown, 12)
	assert.Equal(t, shown, strings.Count(r.Output, "  80-90 Stop\n"))
	assert.Contains(t, r.Output, fmt.Sprintf("[%d files more not shown", 12-shown))
	assert.LessOrEqual(t, len(r.Output), searchMaxBytes+200)
	assert.True(t, r.Truncated)

	// Nothing matched says so, with what to try instead.
	s.hits = nil
	r = mustOK(t, call(t, env, SearchSemanticToolName, SearchSemanticParams{Query: "purple elephants"}))
	assert.Contains(t, r.Output, "Nothing matched")
}
