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
		hits = append(hits, rag.SearchHit{Path: fmt.Sprintf("pkg/f%d.go", i), StartLine: 10, EndLine: 69,
			Symbol: "Run", Score: 0.86, Match: "strong", Text: strings.Join(long, "\n")})
	}
	hits[1].Kind, hits[1].Match, hits[1].Score = "test", "partial", 0.5
	hits[2].Match, hits[2].Score = "weak", 0.2
	s := &recordingSearcher{hits: hits}
	env.Searcher = s

	// About five hits by default, each cut to 25 lines with a pointer to the rest.
	r := mustOK(t, call(t, env, SearchSemanticToolName, SearchSemanticParams{Query: "where do we run steps"}))
	assert.Equal(t, 5, s.limit)
	assert.Contains(t, r.Output, "pkg/f0.go:10-69 Run (strong match, 0.86)\n\tstep(0)")
	assert.Contains(t, r.Output, "pkg/f1.go:10-69 Run (partial match, 0.50; test)")
	assert.Contains(t, r.Output, `[… 35 lines more of this chunk: read_file path="pkg/f0.go" offset=35 limit=35]`)
	assert.NotContains(t, r.Output, "step(25)")
	// A weak hit shows less: a glance, and the pointer to the rest.
	assert.Contains(t, r.Output, "pkg/f2.go:10-69 Run (weak match, 0.20)\n")
	assert.Contains(t, r.Output, `[… 50 lines more of this chunk: read_file path="pkg/f2.go" offset=20 limit=50]`)
	assert.Contains(t, r.Output, "it is not the rank")
	assert.Equal(t, 5, strings.Count(r.Output, "read_file path="))

	// Over the byte budget, whole hits are dropped, never cut: every hit
	// shown keeps its header and its pointer.
	r = mustOK(t, call(t, env, SearchSemanticToolName, SearchSemanticParams{Query: "steps", Limit: 20}))
	assert.Equal(t, 20, s.limit)
	shown := strings.Count(r.Output, ":10-69 Run (")
	require.Less(t, shown, 12)
	assert.Equal(t, shown, strings.Count(r.Output, "read_file path="))
	assert.Contains(t, r.Output, fmt.Sprintf("[%d hits more not shown", 12-shown))
	assert.LessOrEqual(t, len(r.Output), searchMaxBytes+200)
	assert.True(t, r.Truncated)

	// Nothing matched says so, with what to try instead.
	s.hits = nil
	r = mustOK(t, call(t, env, SearchSemanticToolName, SearchSemanticParams{Query: "purple elephants"}))
	assert.Contains(t, r.Output, "Nothing matched")
}
