package tools

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/rag"
)

func TestBuiltins(t *testing.T) {
	var names []string
	for _, tl := range Builtins() {
		info := tl.Info()
		names = append(names, info.Name)
		assert.NotEmpty(t, info.Description, info.Name)
		assert.Positive(t, info.Timeout, info.Name)
		assert.Contains(t, []Kind{KindRead, KindEdit, KindSearch, KindExecute, KindFetch}, info.Kind, info.Name)
		var schema map[string]any
		require.NoError(t, json.Unmarshal(info.Parameters, &schema), info.Name)
		assert.Equal(t, "object", schema["type"], info.Name)
	}
	assert.Equal(t, []string{"list_dir", "read_file", "glob_file_search", "grep", "edit_file", "apply_patch",
		"write_file", "undo_patch", "run_cmd", "process", "search_semantic", "go_to_definition", "find_references", "hover",
		"web_fetch", "web_search"}, names)
}

// TestBuiltinEffects: every built-in tool declares an effect, and its
// calls carry it.
func TestBuiltinEffects(t *testing.T) {
	want := map[string]Effect{ListDirToolName: EffectRead, ReadFileToolName: EffectRead, GlobFileSearchToolName: EffectRead,
		GrepToolName: EffectRead, SearchSemanticToolName: EffectRead, EditFileToolName: EffectEdit,
		ApplyPatchToolName: EffectEdit, WriteFileToolName: EffectEdit, UndoPatchToolName: EffectEdit, RunCmdToolName: EffectExecute,
		GoToDefinitionToolName: EffectRead, FindReferencesToolName: EffectRead, HoverToolName: EffectRead,
		ProcessToolName: EffectRead, WebFetchToolName: EffectNetwork, WebSearchToolName: EffectNetwork}
	for _, tl := range Builtins() {
		in := tl.Info()
		assert.Equal(t, want[in.Name], in.Effect, in.Name)
	}
	env := newEnv(t)
	c, refusal := Prepare(context.Background(), runCmdTool{}, env, json.RawMessage(`{"command":"true"}`))
	require.Nil(t, refusal)
	assert.Equal(t, EffectExecute, c.Effect)
	assert.Equal(t, RunCmdToolName, c.Tool)
	assert.Equal(t, KindExecute, c.Kind)
}

type fakeSearcher struct {
	hits []rag.SearchHit
	err  error
}

func (f fakeSearcher) Search(ctx context.Context, q string, limit int) ([]rag.SearchHit, bool, error) {
	return f.hits, true, f.err
}

func TestSearchSemantic(t *testing.T) {
	env := newEnv(t)
	r := mustErr(t, call(t, env, SearchSemanticToolName, SearchSemanticParams{Query: "retries"}))
	assert.Contains(t, r.Output, "the workspace index is not available")

	env.Searcher = fakeSearcher{hits: []rag.SearchHit{
		{Path: "a.go", Score: 1, Match: rag.MatchStrong, Chunks: []rag.ChunkHit{{StartLine: 3, EndLine: 4, Symbol: "Retry", Cover: 1,
			Lines: []rag.SnippetLine{{Line: 3, Text: "// Retry retries.", Marks: []rag.Span{{Start: 9, End: 16}}}},
			Text:  "// Retry retries.\nfunc Retry() {}"}}},
		{Path: "b_test.go", Kind: "test", Score: 0.4, Match: rag.MatchWeak, Chunks: []rag.ChunkHit{{StartLine: 7, EndLine: 9, Cover: 0.5,
			Lines: []rag.SnippetLine{{Line: 8, Text: "\tretries := 3", Marks: []rag.Span{{Start: 1, End: 8}}}}, Text: "x\n\tretries := 3\ny"}}},
	}}
	r = mustOK(t, call(t, env, SearchSemanticToolName, SearchSemanticParams{Query: "retries"}))
	assert.Contains(t, r.Output, "still being built")
	// The best file's best chunk whole; the others' matching lines, marked.
	assert.Contains(t, r.Output, "a.go  (strong 1.00)\n  3-4 Retry\n    3│ // Retry «retries».\n    4│ func Retry() {}\n")
	assert.Contains(t, r.Output, "b_test.go  (weak 0.40, test)\n  7-9\n    8│ \t«retries» := 3")

	env.Searcher = fakeSearcher{err: errors.New("boom")}
	mustErr(t, call(t, env, SearchSemanticToolName, SearchSemanticParams{Query: "retries"}))
	mustErr(t, call(t, env, SearchSemanticToolName, SearchSemanticParams{}))
}
