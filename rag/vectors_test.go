package rag

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hashEmbedder is a deterministic stand-in for an embedding model: a
// 64-dimension hashed bag of the text's terms.
type hashEmbedder struct{}

func (hashEmbedder) Name() string { return "test-hash64" }

func (hashEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var tk tokenizer
	for i, t := range texts {
		v := make([]float32, 64)
		tk.each(t, func(b []byte) { v[termHash(string(b))%64]++ })
		out[i] = v
	}
	return out, nil
}

func openBuiltWith(t *testing.T, root, state string, emb Embedder) *Index {
	t.Helper()
	ctx := context.Background()
	ix, err := Open(ctx, Options{Root: root, StateDir: state, Embedder: emb})
	require.NoError(t, err)
	require.NoError(t, ix.Build(ctx, nil))
	return ix
}

// TestVectorScanMatchesChromem checks the packed-matrix scan against
// chromem-go's own exhaustive QueryEmbedding over the same documents.
func TestVectorScanMatchesChromem(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	for i := range 40 {
		files[fmt.Sprintf("p%d/f.go", i)] = fmt.Sprintf("package p%d\n\n// Handler%d parses request number %d and writes a reply.\nfunc Handler%d(n int) int { return n * %d }\n", i, i, i, i, i)
	}
	writeTree(t, root, files)
	ix := openBuiltWith(t, root, t.TempDir(), hashEmbedder{})
	ctx := context.Background()
	for _, q := range []string{"parse a request", "write reply", "Handler7 number"} {
		vs, _ := hashEmbedder{}.Embed(ctx, []string{q})
		qv := vs[0]
		require.True(t, normalize(qv))
		ix.mu.RLock()
		ours := ix.vec.query(qv, 10, -1)
		res, err := ix.vec.coll.QueryEmbedding(ctx, qv, 10, nil, nil)
		require.NoError(t, err)
		require.Len(t, ours, len(res))
		for i, r := range res {
			assert.InDelta(t, r.Similarity, ours[i].score, 1e-5, "rank %d of %q", i, q)
			// Ids must agree where the rank is not a tie (these files are
			// near copies of each other, and the order of ties differs).
			tied := i > 0 && res[i-1].Similarity-r.Similarity < 1e-5 || i+1 < len(res) && r.Similarity-res[i+1].Similarity < 1e-5
			if !tied {
				assert.Equal(t, r.ID, chunkID(ours[i].doc), "rank %d of %q", i, q)
			}
		}
		assert.Equal(t, ix.vec.count(), ix.vec.mat.n)
		ix.mu.RUnlock()
	}
}

// TestPurgeAndReopen removes enough chunks to trigger the BM25 purge, reuses
// the freed slots, and checks search before and after a snapshot round trip.
func TestPurgeAndReopen(t *testing.T) {
	ctx := context.Background()
	root, state := t.TempDir(), t.TempDir()
	files := map[string]string{}
	for i := range 1300 {
		files[fmt.Sprintf("d/f%04d.go", i)] = fmt.Sprintf("package d\n\n// Gadget%04d frobs widget %d.\nfunc Gadget%04d() {}\n", i, i, i)
	}
	writeTree(t, root, files)
	ix := openBuiltWith(t, root, state, hashEmbedder{})
	var gone []string
	for i := range 1200 {
		p := filepath.Join(root, fmt.Sprintf("d/f%04d.go", i))
		require.NoError(t, os.Remove(p))
		gone = append(gone, p)
	}
	ix.Changed(gone...)
	ix.Update(ctx)
	ix.mu.RLock()
	assert.Zero(t, ix.bm.stale, "purged")
	assert.Equal(t, 100, ix.live)
	ix.mu.RUnlock()
	// New chunks take the freed slots.
	writeTree(t, root, map[string]string{"e/new.go": "package e\n\n// Sprocket turns the crank.\nfunc Sprocket() {}\n"})
	ix.Changed(filepath.Join(root, "e/new.go"))
	ix.Update(ctx)
	assert.Contains(t, search(t, ix, "sprocket crank")[0], "e/new.go")
	assert.Contains(t, search(t, ix, "Gadget1250")[0], "d/f1250.go")
	assert.False(t, found(t, ix, "Gadget0003", "Gadget0003"))
	require.NoError(t, ix.Close())

	ix2, err := Open(ctx, Options{Root: root, StateDir: state, Embedder: hashEmbedder{}})
	require.NoError(t, err)
	assert.Equal(t, 101, ix2.Status().Chunks)
	assert.Contains(t, search(t, ix2, "sprocket crank")[0], "e/new.go")
	assert.Contains(t, search(t, ix2, "Gadget1250")[0], "d/f1250.go")
	ix2.mu.RLock()
	assert.Equal(t, 101, ix2.vec.mat.n, "every restored chunk has its vector")
	ix2.mu.RUnlock()
	require.NoError(t, ix2.Build(ctx, nil))
	assert.Equal(t, 0, ix2.lastRead)
}

// TestHitTextFromFile checks that hits read their text back from the file,
// CRLF included, and fall back to the current lines when the file changed.
func TestHitTextFromFile(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"a.md": "# Intro\r\n\r\nThe quokka smiles.\r\n\r\n# Other\r\n\r\nUnrelated words here.\r\n",
	})
	ix := openBuilt(t, root, t.TempDir())
	hits, _, err := ix.Search(context.Background(), "quokka", 1)
	require.NoError(t, err)
	require.Len(t, hits, 1)
	assert.Equal(t, "# Intro\n\nThe quokka smiles.", hits[0].Chunks[0].Text[:len("# Intro\n\nThe quokka smiles.")])
	assert.NotContains(t, hits[0].Chunks[0].Text, "\r")
	// Changed behind the index's back: the covered lines as they are now.
	writeTree(t, root, map[string]string{"a.md": "# Intro\n\nThe wombat smiles.\n"})
	hits, _, err = ix.Search(context.Background(), "quokka", 1)
	require.NoError(t, err)
	require.Len(t, hits, 1)
	assert.Contains(t, hits[0].Chunks[0].Text, "wombat")
}

// TestDotKernel checks the assembly dot product (when the CPU has it)
// against the portable one, on lengths around its 32-lane blocks.
func TestDotKernel(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 31, 32, 33, 64, 255, 256, 257, 768} {
		a, b := make([]float32, n), make([]float32, n)
		for i := range a {
			a[i], b[i] = r.Float32()-0.5, r.Float32()-0.5
		}
		assert.InDelta(t, dotGeneric(a, b), dot(a, b), 1e-4, "n=%d", n)
	}
}

// BenchmarkVectorScan is the query-time scan alone: 50k random unit
// vectors of 256 dimensions, top 50.
func BenchmarkVectorScan(b *testing.B) {
	var m matrix
	r := rand.New(rand.NewPCG(1, 2))
	v := make([]float32, 256)
	for n := range 50000 {
		for j := range v {
			v[j] = r.Float32() - 0.5
		}
		normalize(v)
		m.set(int32(n), v)
	}
	for j := range v {
		v[j] = r.Float32() - 0.5
	}
	normalize(v)
	for b.Loop() {
		m.search(v, vecCandidates, 0)
	}
}
