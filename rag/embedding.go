package rag

import (
	"context"
	"math"
)

// Embedder turns texts into vectors for the similarity side of search: an
// embedding model behind an endpoint (NewOpenAIEmbedder). Implementations
// must be safe for concurrent use. Vectors need not be normalised: the
// index normalises them, because chromem-go trusts that they are and would
// otherwise report similarities above 1.
type Embedder interface {
	// Name identifies the model; it keys the embedding cache, so it must
	// change whenever the vectors would.
	Name() string
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// normalize scales v to unit length in place and reports whether it was
// non-zero.
func normalize(v []float32) bool {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return false
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
	return true
}
