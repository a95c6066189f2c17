package rag

import (
	"encoding/binary"
	"slices"
)

// BM25 parameters: the usual k1 and b (Zed's experimental index uses the same).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// postings is one term's list, varint-coded: (zigzag doc delta, tf) pairs,
// about two and a half bytes a posting. Deltas are signed because a reused
// slot can be lower than the last one; readers do not need the order.
type postings struct {
	data []byte
	last int32 // the doc of the last posting: the next delta's base
	n    int32 // postings in data, removed docs included
}

func (p *postings) append(doc int32, tf uint16) {
	p.data = binary.AppendVarint(p.data, int64(doc)-int64(p.last))
	p.data = binary.AppendUvarint(p.data, uint64(tf))
	p.last = doc
	p.n++
}

// decode appends the postings to docs and tfs.
func (p *postings) decode(docs []int32, tfs []uint16) ([]int32, []uint16) {
	d := int64(0)
	for b := p.data; len(b) > 0; {
		delta, n := binary.Varint(b)
		tf, m := binary.Uvarint(b[n:])
		if n <= 0 || m <= 0 {
			break
		}
		b = b[n+m:]
		d += delta
		docs = append(docs, int32(d))
		tfs = append(tfs, uint16(tf))
	}
	return docs, tfs
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
	docFile  []int32    // by slot: its file id (a dense copy of slot.file, for ranking's inner loop)
	docFlags []uint8    // by slot: a dense copy of slot.flags
	nDocs    int
	totalLen int64
	stale    int // removed docs still in postings
}

func newBM25(d *termDict) *bm25 {
	return &bm25{dict: d}
}

func (b *bm25) add(doc, file int32, flags uint8, bg bag) {
	for int(doc) >= len(b.docLen) {
		b.docLen = append(b.docLen, 0)
		b.docFile = append(b.docFile, -1)
		b.docFlags = append(b.docFlags, 0)
	}
	b.docFile[doc], b.docFlags[doc] = file, flags
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
	b.post[t].append(doc, tf)
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
	var docs []int32
	var tfs []uint16
	for t := range b.post {
		p := &b.post[t]
		docs, tfs = p.decode(docs[:0], tfs[:0])
		*p = postings{}
		for i, d := range docs {
			if b.docLen[d] != 0 {
				p.append(d, tfs[i])
			}
		}
	}
	b.stale = 0
}

// compact gives every posting list its exact size: appends leave up to half
// of a list's capacity unused, which is worth reclaiming after a build.
func (b *bm25) compact() {
	for t := range b.post {
		p := &b.post[t]
		if cap(p.data)-len(p.data) > len(p.data)/8 {
			p.data = slices.Clip(slices.Clone(p.data))
		}
	}
}
