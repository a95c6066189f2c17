package rag

import (
	"container/heap"
	"math"
	"slices"
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

// postings is one term's list: parallel doc ids and term frequencies, six
// bytes a posting.
type postings struct {
	docs []int32
	tfs  []uint16
}

// bm25 is an in-memory inverted index over chunk slots. It is not safe for
// concurrent use; Index guards it (the dictionary has its own lock).
//
// Removal is lazy: a removed doc gets length 0 and is skipped by search; its
// postings stay until purge sweeps every list, when enough have piled up.
// Until then the index keeps the slot out of reuse (Index.limbo), so a stale
// posting can never be mistaken for a new chunk. This avoids keeping every
// chunk's term list or re-tokenizing its text on removal.
type bm25 struct {
	dict     *termDict
	post     []postings // by term id
	docLen   []int32    // by slot; 0 for an empty or removed slot
	nDocs    int
	totalLen int64
	stale    int       // removed docs still in postings
	scratch  sync.Pool // *[]float32 score accumulators (pointers: a slice in an interface allocates)
}

func newBM25(d *termDict) *bm25 {
	return &bm25{dict: d}
}

func (b *bm25) add(doc int32, bg bag) {
	for int(doc) >= len(b.docLen) {
		b.docLen = append(b.docLen, 0)
	}
	total := bg.total
	if total == 0 {
		total = 1 // keeps the slot live so remove stays symmetric
	}
	b.docLen[doc] = total
	b.nDocs++
	b.totalLen += int64(total)
	for i, t := range bg.ids {
		if int(t) >= len(b.post) {
			b.post = append(b.post, make([]postings, int(t)+1-len(b.post))...)
		}
		p := &b.post[t]
		p.docs = append(p.docs, doc)
		p.tfs = append(p.tfs, uint16(min(bg.freqs[i], 65535)))
	}
}

// remove marks doc removed; purge drops its postings later.
func (b *bm25) remove(doc int32) {
	if int(doc) >= len(b.docLen) || b.docLen[doc] == 0 {
		return
	}
	b.nDocs--
	b.totalLen -= int64(b.docLen[doc])
	b.docLen[doc] = 0
	b.stale++
}

// needsPurge reports whether stale postings are worth a sweep.
func (b *bm25) needsPurge() bool {
	return b.stale >= 1024 && b.stale*8 >= b.nDocs
}

// purge drops the postings of removed docs: one pass over every list.
func (b *bm25) purge() {
	for t := range b.post {
		p := &b.post[t]
		k := 0
		for i, d := range p.docs {
			if b.docLen[d] != 0 {
				p.docs[k], p.tfs[k] = d, p.tfs[i]
				k++
			}
		}
		if k == 0 {
			*p = postings{}
		} else {
			p.docs, p.tfs = p.docs[:k], p.tfs[:k]
		}
	}
	b.stale = 0
}

// compact gives every posting list its exact size: appends leave up to half
// of a list's capacity unused, which is worth reclaiming after a build.
func (b *bm25) compact() {
	for t := range b.post {
		p := &b.post[t]
		if cap(p.docs)-len(p.docs) > len(p.docs)/8 {
			p.docs = slices.Clone(p.docs)
			p.tfs = slices.Clone(p.tfs)
		}
	}
}

// bags rebuilds the bags of the wanted docs by transposing the postings, so
// the text is not needed (the embedder and the model fit work from bags).
// Terms come in id order rather than order of first occurrence.
func (b *bm25) bags(want func(doc int32) bool) map[int32]bag {
	out := make(map[int32]bag)
	for t := range b.post {
		p := &b.post[t]
		for i, d := range p.docs {
			if b.docLen[d] == 0 || !want(d) {
				continue
			}
			bg := out[d]
			bg.ids = append(bg.ids, int32(t))
			bg.freqs = append(bg.freqs, int32(p.tfs[i]))
			bg.total += int32(p.tfs[i])
			out[d] = bg
		}
	}
	return out
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
	accp, _ := b.scratch.Get().(*[]float32)
	if accp == nil || len(*accp) < len(b.docLen) {
		fresh := make([]float32, len(b.docLen))
		accp = &fresh
	}
	defer b.scratch.Put(accp)
	acc := *accp
	avg := float64(b.totalLen) / float64(b.nDocs)
	var touched []int32
	seen := make(map[string]bool, len(terms))
	for _, t := range terms {
		if seen[t] {
			continue
		}
		seen[t] = true
		id, ok := b.dict.lookup(t)
		if !ok || int(id) >= len(b.post) {
			continue
		}
		ps := &b.post[id]
		if len(ps.docs) == 0 {
			continue
		}
		idf := math.Log(1 + (float64(b.nDocs)-float64(len(ps.docs))+0.5)/(float64(len(ps.docs))+0.5))
		for i, d := range ps.docs {
			dl := b.docLen[d]
			if dl == 0 {
				continue // removed, not yet purged
			}
			tf := float64(ps.tfs[i])
			norm := tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*float64(dl)/avg))
			if acc[d] == 0 {
				touched = append(touched, d)
			}
			acc[d] += float32(idf * norm)
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
