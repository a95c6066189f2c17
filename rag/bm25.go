package rag

import "slices"

// BM25 parameters: the usual k1 and b (Zed's experimental index uses the same).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

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
	stale    int // removed docs still in postings
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
		b.addPosting(t, doc, uint16(min(bg.freqs[i], 65535)))
	}
	for _, t := range bg.syms {
		b.addPosting(t, doc, 1)
	}
}

func (b *bm25) addPosting(t, doc int32, tf uint16) {
	if int(t) >= len(b.post) {
		b.post = append(b.post, make([]postings, int(t)+1-len(b.post))...)
	}
	p := &b.post[t]
	p.docs = append(p.docs, doc)
	p.tfs = append(p.tfs, tf)
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
