package rag

import (
	"container/heap"
	"math"
	"sync"
)

// BM25 parameters: the usual k1 and b (Zed's experimental index uses the same).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// termFreqs is a chunk's bag of terms.
type termFreqs struct {
	terms []string
	freqs []int32
	total int32 // number of term occurrences: the BM25 document length
}

// countTerms tokenizes text into a bag of terms.
func countTerms(tk *tokenizer, text string) termFreqs {
	var tf termFreqs
	index := make(map[string]int32, 64)
	tk.each(text, func(b []byte) {
		tf.total++
		if i, ok := index[string(b)]; ok {
			tf.freqs[i]++
			return
		}
		t := string(b)
		index[t] = int32(len(tf.terms))
		tf.terms = append(tf.terms, t)
		tf.freqs = append(tf.freqs, 1)
	})
	return tf
}

type posting struct {
	doc int32
	tf  int32
}

// bm25 is an in-memory inverted index over chunk slots. It is not safe for
// concurrent use; Index guards it.
type bm25 struct {
	postings map[string][]posting
	docLen   []int32 // by slot; 0 for an empty slot
	nDocs    int
	totalLen int64
	scratch  sync.Pool // []float32 score accumulators
}

func newBM25() *bm25 {
	return &bm25{postings: make(map[string][]posting)}
}

func (b *bm25) add(doc int32, tf termFreqs) {
	for int(doc) >= len(b.docLen) {
		b.docLen = append(b.docLen, 0)
	}
	if tf.total == 0 {
		tf.total = 1 // keeps the slot live so remove stays symmetric
	}
	b.docLen[doc] = tf.total
	b.nDocs++
	b.totalLen += int64(tf.total)
	for i, t := range tf.terms {
		b.postings[t] = append(b.postings[t], posting{doc: doc, tf: tf.freqs[i]})
	}
}

// remove takes doc out of the posting lists of its terms. A linear scan of a
// list is cheap next to re-tokenizing, and keeps add an append.
func (b *bm25) remove(doc int32, terms []string) {
	if int(doc) >= len(b.docLen) || b.docLen[doc] == 0 {
		return
	}
	for _, t := range terms {
		ps := b.postings[t]
		for i := range ps {
			if ps[i].doc == doc {
				ps[i] = ps[len(ps)-1]
				ps = ps[:len(ps)-1]
				break
			}
		}
		if len(ps) == 0 {
			delete(b.postings, t)
		} else {
			b.postings[t] = ps
		}
	}
	b.nDocs--
	b.totalLen -= int64(b.docLen[doc])
	b.docLen[doc] = 0
}

type scored struct {
	doc   int32
	score float64
}

// search returns up to n docs by descending BM25 score.
func (b *bm25) search(terms []string, n int) []scored {
	if b.nDocs == 0 || n <= 0 {
		return nil
	}
	acc, _ := b.scratch.Get().([]float32)
	if len(acc) < len(b.docLen) {
		acc = make([]float32, len(b.docLen))
	}
	defer b.scratch.Put(acc)
	avg := float64(b.totalLen) / float64(b.nDocs)
	var touched []int32
	seen := make(map[string]bool, len(terms))
	for _, t := range terms {
		if seen[t] {
			continue
		}
		seen[t] = true
		ps := b.postings[t]
		if len(ps) == 0 {
			continue
		}
		idf := math.Log(1 + (float64(b.nDocs)-float64(len(ps))+0.5)/(float64(len(ps))+0.5))
		for _, p := range ps {
			tf := float64(p.tf)
			norm := tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*float64(b.docLen[p.doc])/avg))
			if acc[p.doc] == 0 {
				touched = append(touched, p.doc)
			}
			acc[p.doc] += float32(idf * norm)
		}
	}
	h := &minHeap{}
	for _, d := range touched {
		s := float64(acc[d])
		acc[d] = 0
		if h.Len() < n {
			heap.Push(h, scored{d, s})
		} else if s > (*h)[0].score {
			(*h)[0] = scored{d, s}
			heap.Fix(h, 0)
		}
	}
	out := make([]scored, h.Len())
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(h).(scored)
	}
	return out
}

type minHeap []scored

func (h minHeap) Len() int { return len(h) }
func (h minHeap) Less(i, j int) bool {
	if h[i].score != h[j].score {
		return h[i].score < h[j].score
	}
	return h[i].doc > h[j].doc // ties: lower slot (earlier file) ranks first
}
func (h minHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)   { *h = append(*h, x.(scored)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
