package rag

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	chromem "github.com/philippgille/chromem-go"
)

// vectorStore keeps the chunk vectors in two views of the same memory:
//
//   - a chromem-go collection, the store of record: one document per chunk
//     id, added, replaced and deleted with the chunks, so it can answer
//     QueryEmbedding and GetByID and a consistency test can check our scan
//     against it;
//   - a packed matrix, rows by chunk slot in blocks of blockRows×dim
//     contiguous float32, which the query scans with a bounded top-k heap
//     on all CPUs.
//
// chromem keeps a document's Embedding slice as given when it is already
// normalised, so each document's Embedding is the matrix row itself: the
// vectors exist once. Rows never move (blocks are not reallocated), and a row
// is only rewritten after its document was deleted from chromem.
//
// chromem's own QueryEmbedding is not used on the query path: it copies the
// documents map, computes every similarity in goroutines behind a mutex per
// document and sorts, which cost 30–60 ms on 50k chunks; the scan here does
// the same exhaustive cosine in a few ms. Its sharp edges stay handled here:
// deletes always pass where=nil (a non-nil empty map deletes everything),
// vectors arrive normalised.
type vectorStore struct {
	coll *chromem.Collection
	mat  matrix
}

var errNoEmbed = errors.New("rag: vectors are computed by the index, not by chromem")

func newVectorStore() *vectorStore {
	// The embedding func is never called: documents always carry vectors and
	// queries never go through chromem's text path. It must not be nil, or
	// chromem falls back to OpenAI.
	noEmbed := func(context.Context, string) ([]float32, error) { return nil, errNoEmbed }
	coll, err := chromem.NewDB().CreateCollection("chunks", nil, noEmbed)
	if err != nil {
		panic(fmt.Sprintf("rag: in-memory chromem collection: %v", err)) // only fails on an empty name
	}
	return &vectorStore{coll: coll}
}

// add stores vec (already normalised) as slot n's row and as chromem
// document id, replacing any previous one. It returns the row.
func (s *vectorStore) add(ctx context.Context, n int32, id string, vec []float32) ([]float32, error) {
	row, err := s.mat.set(n, vec)
	if err != nil {
		return nil, fmt.Errorf("add vector %s: %w", id, err)
	}
	if err := s.coll.AddDocument(ctx, chromem.Document{ID: id, Embedding: row}); err != nil {
		s.mat.clear(n)
		return nil, fmt.Errorf("add vector %s: %w", id, err)
	}
	return row, nil
}

// remove drops slot n's vector, stored under id.
func (s *vectorStore) remove(ctx context.Context, n int32, id string) error {
	s.mat.clear(n)
	if err := s.coll.Delete(ctx, nil, nil, id); err != nil {
		return fmt.Errorf("delete vector: %w", err)
	}
	return nil
}

func (s *vectorStore) count() int { return s.coll.Count() }

// query returns the slots of the n nearest vectors with cosine ≥ minSim,
// best first.
func (s *vectorStore) query(vec []float32, n int, minSim float32) []scored {
	return s.mat.search(vec, n, minSim)
}

// blockRows rows make a block: 1 MiB at 256 dimensions.
const blockRows = 1024

// matrix holds one row per chunk slot.
type matrix struct {
	dim    int
	blocks [][]float32
	live   []bool // by slot: the row holds a vector
	n      int    // live rows
}

func (m *matrix) row(n int32) []float32 {
	b, r := int(n)/blockRows, int(n)%blockRows
	return m.blocks[b][r*m.dim : (r+1)*m.dim : (r+1)*m.dim]
}

func (m *matrix) set(n int32, v []float32) ([]float32, error) {
	if m.dim == 0 {
		m.dim = len(v)
	}
	if len(v) != m.dim || len(v) == 0 {
		return nil, fmt.Errorf("vector of %d dimensions, index has %d", len(v), m.dim)
	}
	for int(n)/blockRows >= len(m.blocks) {
		m.blocks = append(m.blocks, make([]float32, blockRows*m.dim))
	}
	for int(n) >= len(m.live) {
		m.live = append(m.live, false)
	}
	row := m.row(n)
	copy(row, v)
	if !m.live[n] {
		m.live[n] = true
		m.n++
	}
	return row, nil
}

func (m *matrix) clear(n int32) {
	if int(n) < len(m.live) && m.live[n] {
		m.live[n] = false
		m.n--
	}
}

func (m *matrix) has(n int32) bool { return int(n) < len(m.live) && m.live[n] }

// search is the exhaustive scan: blocks are split between GOMAXPROCS
// goroutines, each keeping its own top-k, merged at the end.
func (m *matrix) search(q []float32, k int, minSim float32) []scored {
	if k <= 0 || m.n == 0 || len(q) != m.dim {
		return nil
	}
	workers := min(runtime.GOMAXPROCS(0), len(m.blocks))
	tops := make([]topK, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := topK{k: k, min: minSim}
			for b := w; b < len(m.blocks); b += workers {
				blk := m.blocks[b]
				base := b * blockRows
				rows := min(blockRows, len(m.live)-base)
				live := m.live[base : base+rows]
				for r, ok := range live {
					if !ok {
						continue
					}
					s := dot(q, blk[r*m.dim:(r+1)*m.dim])
					t.push(int32(base+r), s)
				}
			}
			tops[w] = t
		}()
	}
	wg.Wait()
	all := tops[0]
	for _, t := range tops[1:] {
		for _, e := range t.h {
			all.push(e.doc, float32(e.score))
		}
	}
	return all.sorted()
}

// dotGeneric is a float32 dot product with four accumulators, which lets
// the CPU overlap the additions.
func dotGeneric(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// scored is a chunk with a score.
type scored struct {
	doc   int32
	score float64
}

// topK is a bounded min-heap of the best k scores seen.
type topK struct {
	k   int
	min float32
	h   []scored
}

func (t *topK) push(doc int32, s float32) {
	if s < t.min {
		return
	}
	e := scored{doc, float64(s)}
	if len(t.h) < t.k {
		t.h = append(t.h, e)
		t.up(len(t.h) - 1)
		return
	}
	if !lessScored(t.h[0], e) {
		return
	}
	t.h[0] = e
	t.down(0)
}

func lessScored(a, b scored) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.doc > b.doc
}

func (t *topK) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !lessScored(t.h[i], t.h[p]) {
			return
		}
		t.h[i], t.h[p] = t.h[p], t.h[i]
		i = p
	}
}

func (t *topK) down(i int) {
	n := len(t.h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		c := l
		if r := l + 1; r < n && lessScored(t.h[r], t.h[l]) {
			c = r
		}
		if !lessScored(t.h[c], t.h[i]) {
			return
		}
		t.h[i], t.h[c] = t.h[c], t.h[i]
		i = c
	}
}

// sorted returns the entries best first.
func (t *topK) sorted() []scored {
	out := make([]scored, len(t.h))
	h := t.h
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = h[0]
		h[0] = h[len(h)-1]
		h = h[:len(h)-1]
		t.h = h
		t.down(0)
	}
	return out
}
