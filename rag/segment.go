package rag

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// A segment is an immutable piece of a published index (the team index):
// some files of one repository, their chunks' ranking metadata, their
// chunks' text, and the postings of every term they contain. A published
// commit is a list of segments, each with the files of it that are no
// longer live (Part), so a republish after a commit adds one small segment
// for the files that changed rather than rewriting the index. Segments are
// never changed once written, which is what lets a reader cache their
// metadata for as long as it likes.
//
// Formats are rag's: a store keeps the bytes (Segment.MarshalBinary,
// TermPostings.Data) without looking into them.

// Segment is the ranking metadata of a segment: its files and, for each
// chunk (doc), what ranking reads besides postings. Docs are grouped by
// file, in file order; doc numbers are positions.
type Segment struct {
	ID    int64
	Files []SegmentFile // sorted by path
	// By doc.
	DocLen   []int32 // BM25 length (the chunk's terms, path and symbols weighed in)
	DocFile  []int32 // index into Files
	DocFlags []uint8
	DocStart []int32 // first line
}

// SegmentFile is a file of a segment.
type SegmentFile struct {
	Path       string // repository-relative, slash-separated
	Kind       uint8  // what the file is for (code, test, docs, generated)
	Hash       [16]byte
	FirstDoc   int32
	Docs       int32
	TotalLen   int64 // the sum of its docs' lengths
	kindParsed fileKind
}

// Docs is the number of chunks in the segment.
func (s *Segment) Docs() int { return len(s.DocLen) }

// TotalLen is the sum of the chunks' lengths.
func (s *Segment) TotalLen() int64 {
	var n int64
	for _, f := range s.Files {
		n += f.TotalLen
	}
	return n
}

// TermPostings are one term's postings in one segment.
type TermPostings struct {
	Segment int64
	Term    string
	DF      int    // postings in Data
	Data    []byte // (uvarint doc−previous−1, uvarint tf) pairs, docs ascending
}

// ChunkText is what a hit shows of a chunk besides its metadata.
type ChunkText struct {
	Segment int64
	Doc     int32
	End     int32 // last line
	Symbol  string
	Text    string
}

// SegmentData is a segment being published: its metadata, its chunks'
// text, its postings sorted by term, and (with an embedder) a vector per
// chunk.
type SegmentData struct {
	Segment
	Chunks   []ChunkText // by doc
	Postings []TermPostings
	// Vectors are the chunks' embeddings by doc (nil rows for chunks the
	// embedder gave none), from the model EmbedModel.
	Vectors    [][]float32
	EmbedModel string
}

const segmentMagic = "agentd-seg-v1\n"

// MarshalBinary encodes the segment's metadata (not its ID).
func (s *Segment) MarshalBinary() ([]byte, error) {
	var b []byte
	b = append(b, segmentMagic...)
	b = binary.AppendUvarint(b, uint64(len(s.Files)))
	for _, f := range s.Files {
		b = binary.AppendUvarint(b, uint64(len(f.Path)))
		b = append(b, f.Path...)
		b = append(b, f.Kind)
		b = append(b, f.Hash[:]...)
		b = binary.AppendUvarint(b, uint64(f.Docs))
	}
	b = binary.AppendUvarint(b, uint64(len(s.DocLen)))
	for d := range s.DocLen {
		b = binary.AppendUvarint(b, uint64(s.DocLen[d]))
		b = binary.AppendUvarint(b, uint64(s.DocStart[d]))
		b = append(b, s.DocFlags[d])
	}
	return b, nil
}

// UnmarshalSegment decodes a segment's metadata; every length is checked,
// so bad bytes give an error, never a crash.
func UnmarshalSegment(id int64, data []byte) (*Segment, error) {
	if !bytes.HasPrefix(data, []byte(segmentMagic)) {
		return nil, errors.New("segment: not a segment of this version")
	}
	r := reader{b: data[len(segmentMagic):]}
	s := &Segment{ID: id}
	nFiles := r.uvarint()
	if nFiles > uint64(len(r.b)) {
		return nil, errors.New("segment: bad file count")
	}
	s.Files = make([]SegmentFile, nFiles)
	var first int32
	for i := range s.Files {
		f := &s.Files[i]
		f.Path = string(r.bytes(int(r.uvarint())))
		f.Kind = r.byte()
		copy(f.Hash[:], r.bytes(16))
		f.Docs = int32(r.uvarint())
		f.FirstDoc = first
		f.kindParsed = fileKind(f.Kind)
		first += f.Docs
	}
	nDocs := r.uvarint()
	if r.err != nil || nDocs != uint64(first) || nDocs > uint64(len(r.b)) {
		return nil, errors.New("segment: bad doc table")
	}
	s.DocLen = make([]int32, nDocs)
	s.DocStart = make([]int32, nDocs)
	s.DocFlags = make([]uint8, nDocs)
	s.DocFile = make([]int32, nDocs)
	for d := range s.DocLen {
		s.DocLen[d] = int32(r.uvarint())
		s.DocStart[d] = int32(r.uvarint())
		s.DocFlags[d] = r.byte()
	}
	if r.err != nil {
		return nil, fmt.Errorf("segment: %w", r.err)
	}
	for i := range s.Files {
		f := &s.Files[i]
		for d := f.FirstDoc; d < f.FirstDoc+f.Docs; d++ {
			s.DocFile[d] = int32(i)
			f.TotalLen += int64(s.DocLen[d])
		}
	}
	return s, nil
}

func sha256Sum16(data []byte) [16]byte {
	sum := sha256.Sum256(data)
	return [16]byte(sum[:16])
}

// reader decodes with bounds checks; the first error sticks.
type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errors.New("truncated")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b) {
		r.err = errors.New("truncated")
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) byte() byte {
	b := r.bytes(1)
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

// encodePostings encodes docs (ascending) and their term frequencies.
func encodePostings(docs []int32, tfs []uint16) []byte {
	out := make([]byte, 0, 3*len(docs))
	prev := int32(-1)
	for i, d := range docs {
		out = binary.AppendUvarint(out, uint64(d-prev-1))
		out = binary.AppendUvarint(out, uint64(tfs[i]))
		prev = d
	}
	return out
}

// decodePostingsInto appends df postings of data to docs and tfs, each doc
// plus base; docs at or past limit (bad data) end the list.
func decodePostingsInto(data []byte, df int, base, limit int32, docs []int32, tfs []uint16) ([]int32, []uint16) {
	d := int64(-1)
	for range df {
		delta, n := binary.Uvarint(data)
		if n <= 0 {
			break
		}
		data = data[n:]
		tf, m := binary.Uvarint(data)
		if m <= 0 {
			break
		}
		data = data[m:]
		d += int64(delta) + 1
		if d >= int64(limit) {
			break
		}
		docs = append(docs, base+int32(d))
		tfs = append(tfs, uint16(min(tf, 65535)))
	}
	return docs, tfs
}

// exportSegment turns the files of the index (every one, in path order)
// into a segment to publish: metadata, text (read back from the files) and
// postings. The caller holds ix.work, so nothing changes meanwhile.
func (ix *Index) exportSegment() (*SegmentData, error) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	paths := make([]string, 0, len(ix.files))
	for p := range ix.files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	seg := &SegmentData{}
	remap := make([]int32, len(ix.slots))
	for i := range remap {
		remap[i] = -1
	}
	var vecs bool
	for fi, p := range paths {
		e := ix.files[p]
		f := SegmentFile{Path: p, Kind: uint8(e.Kind), Hash: e.Hash, FirstDoc: int32(len(seg.DocLen)), kindParsed: e.Kind}
		texts, err := ix.slotTexts(e)
		if err != nil {
			return nil, err
		}
		for k, n := range e.slots {
			sl := &ix.slots[n]
			doc := int32(len(seg.DocLen))
			remap[n] = doc
			dl := ix.bm.docLen[n]
			seg.DocLen = append(seg.DocLen, dl)
			seg.DocFile = append(seg.DocFile, int32(fi))
			seg.DocFlags = append(seg.DocFlags, sl.flags)
			seg.DocStart = append(seg.DocStart, sl.Start)
			seg.Chunks = append(seg.Chunks, ChunkText{Doc: doc, End: sl.End, Symbol: sl.Symbol, Text: texts[k]})
			f.TotalLen += int64(dl)
			var v []float32
			if ix.vec != nil && sl.hasVec && ix.vec.mat.has(n) {
				v = slices.Clone(ix.vec.mat.row(n))
				vecs = true
			}
			seg.Vectors = append(seg.Vectors, v)
		}
		f.Docs = int32(len(seg.DocLen)) - f.FirstDoc
		seg.Files = append(seg.Files, f)
	}
	if !vecs {
		seg.Vectors = nil
	} else if ix.emb != nil {
		seg.EmbedModel = ix.emb.Name()
	}
	var buf postingBuf
	var ps []posting
	docs := make([]int32, 0, 64)
	tfs := make([]uint16, 0, 64)
	for t := range ix.bm.post {
		buf.docs, buf.tfs = ix.bm.post[t].decode(buf.docs[:0], buf.tfs[:0])
		ps = ps[:0]
		for i, n := range buf.docs {
			if remap[n] >= 0 && ix.bm.docLen[n] > 0 {
				ps = append(ps, posting{remap[n], buf.tfs[i]})
			}
		}
		if len(ps) == 0 {
			continue
		}
		// Slot reuse leaves lists out of order. A chunk declaring one
		// name twice (a function and a method of that name) has two
		// postings of its symbol key, as in the index: kept, so that
		// ranking counts them alike (a delta of −1 wraps to 0).
		slices.SortStableFunc(ps, cmpPosting)
		docs, tfs = docs[:0], tfs[:0]
		for _, p := range ps {
			docs = append(docs, p.doc)
			tfs = append(tfs, p.tf)
		}
		seg.Postings = append(seg.Postings, TermPostings{Term: strings.Clone(ix.dict.term(int32(t))), DF: len(docs), Data: encodePostings(docs, tfs)})
	}
	slices.SortFunc(seg.Postings, func(a, b TermPostings) int { return strings.Compare(a.Term, b.Term) })
	return seg, nil
}

// slotTexts reads a file once and cuts its chunks' text out of it. A file
// that changed since it was indexed is an error: a publish must be of one
// state of the tree.
func (ix *Index) slotTexts(e *fileEntry) ([]string, error) {
	data, err := readRegular(ix.fsys, local(e.path))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", e.path, err)
	}
	if sum := sha256Sum16(data); sum != e.Hash {
		return nil, fmt.Errorf("%s changed while it was being published", e.path)
	}
	out := make([]string, len(e.slots))
	for k, n := range e.slots {
		sl := &ix.slots[n]
		end := int(sl.Off) + int(sl.Len)
		if int(sl.Off) < 0 || end > len(data) || int(sl.Off) > end {
			return nil, fmt.Errorf("%s: chunk out of range", e.path)
		}
		out[k] = cleanText(string(data[sl.Off:end]))
	}
	return out, nil
}
