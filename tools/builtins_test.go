package tools

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/rpc/wire"
)

func TestBuiltins(t *testing.T) {
	var names []string
	for _, tl := range Builtins() {
		info := tl.Info()
		names = append(names, info.Name)
		assert.NotEmpty(t, info.Description, info.Name)
		assert.Positive(t, info.Timeout, info.Name)
		assert.Contains(t, []Kind{KindRead, KindEdit, KindSearch, KindExecute}, info.Kind, info.Name)
		var schema map[string]any
		require.NoError(t, json.Unmarshal(info.Parameters, &schema), info.Name)
		assert.Equal(t, "object", schema["type"], info.Name)
	}
	assert.Equal(t, []string{"list_dir", "read_file", "glob_file_search", "grep", "edit_file", "apply_patch",
		"write_file", "undo_patch", "run_cmd", "search_semantic"}, names)
}

type fakeSearcher struct {
	hits []wire.SearchHit
	err  error
}

func (f fakeSearcher) Search(ctx context.Context, q string, limit int) ([]wire.SearchHit, bool, error) {
	return f.hits, true, f.err
}

func TestSearchSemantic(t *testing.T) {
	env := newEnv(t)
	r := mustErr(t, call(t, env, SearchSemanticToolName, SearchSemanticParams{Query: "retries"}))
	assert.Contains(t, r.Output, "the workspace index is not available")

	env.Searcher = fakeSearcher{hits: []wire.SearchHit{{Path: "a.go", StartLine: 3, EndLine: 9, Symbol: "Retry", Score: 0.91, Text: "func Retry() {}"}}}
	r = mustOK(t, call(t, env, SearchSemanticToolName, SearchSemanticParams{Query: "retries"}))
	assert.Contains(t, r.Output, "still being built")
	assert.Contains(t, r.Output, "a.go:3-9 Retry (score 0.91)\nfunc Retry() {}")

	env.Searcher = fakeSearcher{err: errors.New("boom")}
	mustErr(t, call(t, env, SearchSemanticToolName, SearchSemanticParams{Query: "retries"}))
	mustErr(t, call(t, env, SearchSemanticToolName, SearchSemanticParams{}))
}
