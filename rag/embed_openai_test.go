package rag

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOpenAIEmbedder(t *testing.T) {
	var requests int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests++
		assert.Equal(t, "/v1/embeddings", r.URL.Path)
		assert.Equal(t, "Bearer k", r.Header.Get("Authorization"))
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		require.NoError(t, json.NewDecoder(r.Body).Decode(&req))
		assert.Equal(t, "m", req.Model)
		assert.LessOrEqual(t, len(req.Input), openAIBatch)
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []item
		for i := len(req.Input) - 1; i >= 0; i-- { // out of order, as servers may answer
			data = append(data, item{i, []float32{float32(len(req.Input[i])), 1}})
		}
		json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	defer srv.Close()

	e := NewOpenAIEmbedder(srv.URL, "k", "m")
	assert.Equal(t, "openai:m", e.Name())
	texts := make([]string, 100)
	for i := range texts {
		texts[i] = string(make([]byte, i))
	}
	vecs, err := e.Embed(context.Background(), texts)
	require.NoError(t, err)
	assert.Equal(t, 2, requests, "batched")
	require.Len(t, vecs, 100)
	assert.Equal(t, float32(99), vecs[99][0])

	// An index over a remote embedder embeds, caches and searches.
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.go": "package a\n\nfunc Alpha() {}\n"})
	ix, err := Open(context.Background(), Options{Root: root, StateDir: t.TempDir(), Embedder: e})
	require.NoError(t, err)
	require.NoError(t, ix.Build(context.Background(), nil))
	assert.Equal(t, "openai:m", ix.Status().Embedder)
	hits, _, err := ix.Search(context.Background(), "alpha", 3)
	require.NoError(t, err)
	require.NotEmpty(t, hits)

	// A failing endpoint degrades search to BM25, it does not break it.
	srv.Close()
	hits, _, err = ix.Search(context.Background(), "alpha", 3)
	require.NoError(t, err)
	assert.Equal(t, "a.go", hits[0].Path)
}
