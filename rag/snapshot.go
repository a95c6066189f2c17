package rag

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// snapshotVersion changes whenever chunking, tokenization or the layout
// below changes, so an old snapshot is rebuilt rather than misread.
const snapshotVersion = 2

const snapshotMagic = "agentd-index\n"

// snapshot is everything needed to answer queries after a restart, except
// the vectors, which live in the embedding cache: the manifest, the fitted
// model, the chunks' metadata (not their text: hits read it from the files)
// and the BM25 index itself (dictionary, postings, lengths), so reopening
// reads it back instead of re-tokenizing every chunk.
//
// On disk it is a flat binary stream (uvarints, length-prefixed strings,
// delta-coded postings) written through a buffer straight from the live
// structures: no intermediate copy of the index is built.
type snapshot struct {
	Files  map[string]*fileEntry
	Model  *localModel // the default embedder's fitted model; nil otherwise
	Slots  []*slot
	DocLen []int32
	Post   []postings // by term id of the dictionary filled while reading
}

func (ix *Index) snapshotPath() string { return filepath.Join(ix.stateDir, "index.snapshot") }

type snapWriter struct {
	w   *bufio.Writer
	tmp [binary.MaxVarintLen64]byte
}

func (w *snapWriter) uvarint(x uint64) {
	n := binary.PutUvarint(w.tmp[:], x)
	w.w.Write(w.tmp[:n])
}

func (w *snapWriter) varint(x int64) {
	n := binary.PutVarint(w.tmp[:], x)
	w.w.Write(w.tmp[:n])
}

func (w *snapWriter) str(s string) {
	w.uvarint(uint64(len(s)))
	w.w.WriteString(s)
}

func (w *snapWriter) f32(x float32) {
	binary.LittleEndian.PutUint32(w.tmp[:4], math.Float32bits(x))
	w.w.Write(w.tmp[:4])
}

type snapReader struct {
	r   *bufio.Reader
	err error
}

func (r *snapReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	x, err := binary.ReadUvarint(r.r)
	r.err = err
	return x
}

func (r *snapReader) varint() int64 {
	if r.err != nil {
		return 0
	}
	x, err := binary.ReadVarint(r.r)
	r.err = err
	return x
}

// count reads a length and checks it against a sanity bound, so a corrupt
// file fails instead of allocating wildly.
func (r *snapReader) count(limit int) int {
	n := r.uvarint()
	if r.err == nil && n > uint64(limit) {
		r.err = fmt.Errorf("snapshot: count %d over %d", n, limit)
		return 0
	}
	return int(n)
}

func (r *snapReader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	b := make([]byte, n)
	_, r.err = io.ReadFull(r.r, b)
	return b
}

func (r *snapReader) str() string {
	return string(r.bytes(r.count(1 << 30)))
}

func (r *snapReader) f32() float32 {
	b := r.bytes(4)
	if r.err != nil {
		return 0
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(b))
}

func readSnapshot(path, root string, dict *termDict) (*snapshot, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read snapshot: %w", err)
	}
	defer f.Close()
	r := &snapReader{r: bufio.NewReaderSize(f, 1<<20)}
	if magic := r.bytes(len(snapshotMagic)); string(magic) != snapshotMagic {
		return nil, fmt.Errorf("read snapshot: not an index snapshot")
	}
	if v := r.uvarint(); r.err != nil || v != snapshotVersion {
		return nil, fmt.Errorf("snapshot is version %d", v)
	}
	if sroot := r.str(); r.err == nil && sroot != root {
		return nil, fmt.Errorf("snapshot is for %s", sroot)
	}
	s := &snapshot{}
	if r.uvarint() == 1 {
		s.Model = readModel(r)
	}
	nFiles := r.count(1 << 26)
	s.Files = make(map[string]*fileEntry, nFiles)
	paths := make([]string, 0, nFiles)
	for range nFiles {
		if r.err != nil {
			break
		}
		p := r.str()
		e := &fileEntry{Size: int64(r.uvarint()), Mtime: r.varint()}
		copy(e.Hash[:], r.bytes(16))
		e.Chunks = make([]string, r.count(1<<24))
		for i := range e.Chunks {
			e.Chunks[i] = p + r.str() // ids are path + suffix
		}
		s.Files[p] = e
		paths = append(paths, p)
	}
	nSlots := r.count(1 << 28)
	s.Slots = make([]*slot, nSlots)
	s.DocLen = make([]int32, nSlots)
	langs := map[string]string{}
	for i := range s.Slots {
		if r.err != nil {
			break
		}
		fi := r.count(len(paths) - 1)
		sl := &slot{Path: paths[fi], Symbol: r.str()}
		lang := r.str()
		if l, ok := langs[lang]; ok {
			sl.Lang = l
		} else {
			langs[lang], sl.Lang = lang, lang
		}
		sl.Start = int32(r.uvarint())
		sl.End = sl.Start + int32(r.uvarint())
		sl.Off = int32(r.uvarint())
		sl.Len = int32(r.uvarint())
		sl.id = sl.Path + r.str()
		copy(sl.hash[:], r.bytes(16))
		s.DocLen[i] = int32(r.uvarint())
		s.Slots[i] = sl
	}
	nTerms := r.count(1 << 28)
	s.Post = make([]postings, nTerms)
	var tb []byte
	for t := range s.Post {
		if r.err != nil {
			break
		}
		n := r.count(1 << 16)
		if tb = append(tb[:0], r.bytes(n)...); r.err != nil {
			break
		}
		if id := dict.intern(tb); int(id) != t {
			return nil, fmt.Errorf("snapshot: duplicate term %q", tb)
		}
		k := r.count(nSlots)
		p := postings{docs: make([]int32, k), tfs: make([]uint16, k)}
		d := int64(-1)
		for i := range k {
			d += int64(r.uvarint()) + 1
			if d >= int64(nSlots) {
				r.err = fmt.Errorf("snapshot: posting %d out of range", d)
				break
			}
			p.docs[i] = int32(d)
			p.tfs[i] = uint16(r.uvarint())
		}
		s.Post[t] = p
	}
	if end := r.bytes(len(snapshotMagic)); r.err == nil && string(end) != snapshotMagic {
		r.err = errors.New("no end marker")
	}
	if r.err != nil {
		return nil, fmt.Errorf("decode snapshot: %w", r.err)
	}
	return s, nil
}

func writeModel(w *snapWriter, m *localModel) {
	w.uvarint(uint64(m.Docs))
	w.uvarint(uint64(len(m.Vocab)))
	for i, t := range m.Vocab {
		w.str(t)
		w.f32(m.IDF[i])
	}
	w.uvarint(uint64(len(m.Scale)))
	for _, x := range m.Scale {
		w.f32(x)
	}
	w.w.Write(m.Ctx)
}

func readModel(r *snapReader) *localModel {
	m := &localModel{Docs: int(r.uvarint())}
	n := r.count(1 << 24)
	m.Vocab = make([]string, 0, n)
	m.IDF = make([]float32, 0, n)
	for range n {
		if r.err != nil {
			return nil
		}
		m.Vocab = append(m.Vocab, r.str())
		m.IDF = append(m.IDF, r.f32())
	}
	rows := r.count(n)
	m.Scale = make([]float32, rows)
	for i := range m.Scale {
		m.Scale[i] = r.f32()
	}
	m.Ctx = r.bytes(rows * localDim)
	if r.err != nil {
		return nil
	}
	return m
}

// restore loads a snapshot into an empty index (Open, before anyone else
// sees it). Vectors come from the embedding cache afterwards.
func (ix *Index) restore(s *snapshot) {
	ix.files = s.Files
	ix.slots = s.Slots
	ix.bm.post = s.Post
	ix.bm.docLen = s.DocLen
	for n, sl := range s.Slots {
		ix.byID[sl.id] = int32(n)
		ix.bm.nDocs++
		ix.bm.totalLen += int64(s.DocLen[n])
		for _, k := range symbolKeys(sl.Symbol) {
			ix.symbols[k] = append(ix.symbols[k], int32(n))
		}
	}
	// The manifest's ids share the slots' strings.
	for _, e := range ix.files {
		for i, id := range e.Chunks {
			if n, ok := ix.byID[id]; ok {
				e.Chunks[i] = ix.slots[n].id
			}
		}
	}
}

// saveIfDirty writes the snapshot and the embedding cache. The caller holds
// ix.work, so nothing changes the index meanwhile; queries go on (the
// snapshot is encoded under the read lock, straight from the live index).
func (ix *Index) saveIfDirty() error {
	ix.mu.RLock()
	dirty := ix.dirty
	ix.mu.RUnlock()
	if !dirty {
		return nil
	}
	if err := writeAtomic(ix.snapshotPath(), ix.encodeSnapshot); err != nil {
		return fmt.Errorf("save index: %w", err)
	}
	ix.mu.RLock()
	live := make(map[[16]byte]bool, len(ix.byID))
	for _, sl := range ix.slots {
		if sl != nil {
			live[sl.hash] = true
		}
	}
	ix.mu.RUnlock()
	ix.cache.prune(live)
	if err := ix.cache.save(); err != nil {
		return fmt.Errorf("save index: %w", err)
	}
	ix.mu.Lock()
	ix.dirty = false
	ix.mu.Unlock()
	return nil
}

// encodeSnapshot writes the live index. Slots are renumbered densely in
// order, and postings of removed chunks are left out.
func (ix *Index) encodeSnapshot(out io.Writer) error {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	w := &snapWriter{w: out.(*bufio.Writer)}
	w.w.WriteString(snapshotMagic)
	w.uvarint(snapshotVersion)
	w.str(ix.root)
	if le, ok := ix.emb.(*localEmbedder); ok && le.model != nil {
		w.uvarint(1)
		writeModel(w, le.model)
	} else {
		w.uvarint(0)
	}
	paths := make([]string, 0, len(ix.files))
	for p := range ix.files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	fileIdx := make(map[string]int, len(paths))
	w.uvarint(uint64(len(paths)))
	for i, p := range paths {
		e := ix.files[p]
		fileIdx[p] = i
		w.str(p)
		w.uvarint(uint64(e.Size))
		w.varint(e.Mtime)
		w.w.Write(e.Hash[:])
		w.uvarint(uint64(len(e.Chunks)))
		for _, id := range e.Chunks {
			w.str(strings.TrimPrefix(id, p))
		}
	}
	remap := make([]int32, len(ix.slots))
	live := 0
	for n, sl := range ix.slots {
		remap[n] = -1
		if sl != nil {
			remap[n] = int32(live)
			live++
		}
	}
	w.uvarint(uint64(live))
	for n, sl := range ix.slots {
		if sl == nil {
			continue
		}
		w.uvarint(uint64(fileIdx[sl.Path]))
		w.str(sl.Symbol)
		w.str(sl.Lang)
		w.uvarint(uint64(sl.Start))
		w.uvarint(uint64(sl.End - sl.Start))
		w.uvarint(uint64(sl.Off))
		w.uvarint(uint64(sl.Len))
		w.str(strings.TrimPrefix(sl.id, sl.Path))
		w.w.Write(sl.hash[:])
		w.uvarint(uint64(ix.bm.docLen[n]))
	}
	// Terms with no live posting are dropped, so the dictionary is
	// renumbered too; postings stay in their order, with remapped docs.
	terms := ix.dict.all()
	var nTerms int
	for t := range ix.bm.post {
		if ix.liveCount(t, remap) > 0 {
			nTerms++
		}
	}
	w.uvarint(uint64(nTerms))
	var pairs []posting
	for t := range ix.bm.post {
		p := &ix.bm.post[t]
		pairs = pairs[:0]
		for i, d := range p.docs {
			if nd := remap[d]; nd >= 0 && ix.bm.docLen[d] != 0 {
				pairs = append(pairs, posting{nd, p.tfs[i]})
			}
		}
		if len(pairs) == 0 {
			continue
		}
		// Slot reuse can leave a list out of order; the file has it sorted
		// (scores do not depend on the order).
		if !slices.IsSortedFunc(pairs, cmpPosting) {
			slices.SortFunc(pairs, cmpPosting)
		}
		w.str(terms[t])
		w.uvarint(uint64(len(pairs)))
		prev := int32(-1)
		for _, q := range pairs {
			w.uvarint(uint64(q.doc - prev - 1))
			w.uvarint(uint64(q.tf))
			prev = q.doc
		}
	}
	w.w.WriteString(snapshotMagic)
	return nil
}

type posting struct {
	doc int32
	tf  uint16
}

func cmpPosting(a, b posting) int { return int(a.doc - b.doc) }

func (ix *Index) liveCount(t int, remap []int32) int {
	k := 0
	for _, d := range ix.bm.post[t].docs {
		if remap[d] >= 0 && ix.bm.docLen[d] != 0 {
			k++
		}
	}
	return k
}

// writeAtomic writes path through a temporary file in the same directory,
// synced and renamed over the old one: a crash leaves the old or the new
// file, never a torn one.
func writeAtomic(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // no-op after the rename
	bw := bufio.NewWriterSize(f, 1<<20)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return os.Rename(f.Name(), path)
}

// embedCache maps chunk hashes to normalised vectors for one embedder. It is
// written as a flat binary file, one per embedder name, because gob encodes
// floats one by one and is an order of magnitude slower on millions of them.
// In memory, the entry of an indexed chunk is the chunk's matrix row itself
// (no copy); only vectors of chunks no longer indexed own their memory.
type embedCache struct {
	name string
	path string
	vecs map[[16]byte][]float32
}

const cacheMagic = "agentd-vectors-1"

func cachePath(stateDir, name string) string {
	h := fnv.New64a()
	h.Write([]byte(name))
	return filepath.Join(stateDir, fmt.Sprintf("vectors-%016x.bin", h.Sum64()))
}

// loadCacheLocked makes the cache of embedder name the index's cache and
// reads its file, putting each vector straight into the row of the chunk it
// belongs to; vectors of chunks not indexed are kept aside. The caller holds
// ix.mu (or owns the index, in Open).
func (ix *Index) loadCacheLocked(ctx context.Context, name string) *embedCache {
	c := &embedCache{name: name, path: cachePath(ix.stateDir, name), vecs: make(map[[16]byte][]float32)}
	ix.cache = c
	byHash := make(map[[16]byte]int32, len(ix.byID))
	for n, sl := range ix.slots {
		if sl != nil && !sl.hasVec {
			byHash[sl.hash] = int32(n)
		}
	}
	err := c.load(func(h [16]byte, v []float32) bool {
		n, ok := byHash[h]
		return ok && ix.setVecLocked(ctx, n, v) == nil
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		ix.log.Warn("embedding cache unusable, starting with what was read", "err", err)
	}
	// Chunks sharing a hash (identical blocks in one file) got one row above.
	for n, sl := range ix.slots {
		if sl != nil && !sl.hasVec {
			if v, ok := c.vecs[sl.hash]; ok {
				ix.setVecLocked(ctx, int32(n), v)
			}
		}
	}
	return c
}

// loadCache is loadCacheLocked for Open.
func (ix *Index) loadCache(ctx context.Context, name string) *embedCache {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.loadCacheLocked(ctx, name)
}

// load reads the file; place stores a vector in the index (and the cache
// entry as its row) and reports whether it did; otherwise the cache keeps a
// copy.
func (c *embedCache) load(place func(h [16]byte, v []float32) bool) error {
	f, err := os.Open(c.path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var hdr struct {
		Magic [len(cacheMagic)]byte
		Dim   uint32
		Count uint32
		NameN uint32
	}
	if err := binary.Read(r, binary.LittleEndian, &hdr); err != nil {
		return fmt.Errorf("read cache header: %w", err)
	}
	if hdr.NameN > 1<<16 || hdr.Dim > 1<<16 {
		return fmt.Errorf("cache %s: bad header", c.path)
	}
	name := make([]byte, hdr.NameN)
	if _, err := io.ReadFull(r, name); err != nil || string(hdr.Magic[:]) != cacheMagic || string(name) != c.name {
		return fmt.Errorf("cache %s is not for %s", c.path, c.name)
	}
	buf := make([]byte, 16+4*int(hdr.Dim))
	v := make([]float32, hdr.Dim)
	for i := 0; i < int(hdr.Count); i++ {
		if _, err := io.ReadFull(r, buf); err != nil {
			return fmt.Errorf("read cache: %w", err)
		}
		for j := range v {
			v[j] = math.Float32frombits(binary.LittleEndian.Uint32(buf[16+4*j:]))
		}
		h := [16]byte(buf[:16])
		if !place(h, v) {
			c.vecs[h] = slices.Clone(v)
		}
	}
	return nil
}

func (c *embedCache) save() error {
	dim, count := 0, 0
	for _, v := range c.vecs {
		dim = len(v)
		break
	}
	for _, v := range c.vecs {
		if len(v) == dim {
			count++
		}
	}
	return writeAtomic(c.path, func(w io.Writer) error {
		hdr := struct {
			Magic [len(cacheMagic)]byte
			Dim   uint32
			Count uint32
			NameN uint32
		}{Dim: uint32(dim), Count: uint32(count), NameN: uint32(len(c.name))}
		copy(hdr.Magic[:], cacheMagic)
		if err := binary.Write(w, binary.LittleEndian, &hdr); err != nil {
			return err
		}
		if _, err := io.WriteString(w, c.name); err != nil {
			return err
		}
		buf := make([]byte, 16+4*dim)
		for k, v := range c.vecs {
			if len(v) != dim {
				continue // a corrupt entry is dropped, not fatal
			}
			copy(buf, k[:])
			for j, x := range v {
				binary.LittleEndian.PutUint32(buf[16+4*j:], math.Float32bits(x))
			}
			if _, err := w.Write(buf); err != nil {
				return err
			}
		}
		return nil
	})
}

// prune bounds the cache: entries of chunks no longer indexed are kept (a
// branch switch back is then free) until they outnumber the live ones.
func (c *embedCache) prune(live map[[16]byte]bool) {
	if len(c.vecs) <= 2*len(live)+1024 {
		return
	}
	for k := range c.vecs {
		if !live[k] {
			delete(c.vecs, k)
		}
	}
}
