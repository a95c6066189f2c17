package rag

import (
	"context"
	"errors"
	"fmt"

	chromem "github.com/philippgille/chromem-go"
)

// vectorStore wraps the chromem-go collection so its types stay out of the
// API and its sharp edges are handled in one place: deletes always pass
// where=nil (a non-nil empty map deletes everything), nResults is clamped to
// the collection size, and vectors arrive normalised.
type vectorStore struct {
	coll *chromem.Collection
}

var errNoEmbed = errors.New("rag: vectors are computed by the index, not by chromem")

func newVectorStore() *vectorStore {
	// The embedding func is never called: documents always carry vectors and
	// queries go through QueryEmbedding. It must not be nil, or chromem
	// falls back to OpenAI.
	noEmbed := func(context.Context, string) ([]float32, error) { return nil, errNoEmbed }
	coll, err := chromem.NewDB().CreateCollection("chunks", nil, noEmbed)
	if err != nil {
		panic(fmt.Sprintf("rag: in-memory chromem collection: %v", err)) // only fails on an empty name
	}
	return &vectorStore{coll: coll}
}

// add stores vec (already normalised) under id, replacing any previous one.
func (s *vectorStore) add(ctx context.Context, id string, vec []float32) error {
	if err := s.coll.AddDocument(ctx, chromem.Document{ID: id, Embedding: vec}); err != nil {
		return fmt.Errorf("add vector %s: %w", id, err)
	}
	return nil
}

func (s *vectorStore) delete(ctx context.Context, ids ...string) error {
	if len(ids) == 0 {
		return nil // with no ids and no filter chromem returns an error
	}
	if err := s.coll.Delete(ctx, nil, nil, ids...); err != nil {
		return fmt.Errorf("delete vectors: %w", err)
	}
	return nil
}

func (s *vectorStore) count() int { return s.coll.Count() }

// query returns the ids of the n nearest vectors, best first.
func (s *vectorStore) query(ctx context.Context, vec []float32, n int) ([]string, []float32, error) {
	n = min(n, s.coll.Count())
	if n <= 0 {
		return nil, nil, nil
	}
	res, err := s.coll.QueryEmbedding(ctx, vec, n, nil, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("vector query: %w", err)
	}
	ids := make([]string, len(res))
	sims := make([]float32, len(res))
	for i, r := range res {
		ids[i], sims[i] = r.ID, r.Similarity
	}
	return ids, sims, nil
}
