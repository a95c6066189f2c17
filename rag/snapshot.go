package rag

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unsafe"
)

// The snapshot is everything needed to answer queries after a restart
// except the vectors (those live in the embedding cache): the manifest,
// the directories' mtimes, the chunks' metadata (not their text: hits read
// it from the files) and the BM25 index itself. Its layout is made to be
// searched in place, memory-mapped, by `agentd search` (View) without
// decoding it: fixed-size records, a string blob, an open-addressing hash
// table of terms, and delta-coded postings. The daemon (Open) decodes it
// into memory instead.
//
//	header    128 bytes: magic, counts, section offsets, file size
//	strings   paths, symbols and terms, referenced by (offset, length)
//	files     56 bytes each, sorted by path: path, size, mtime, hash, first chunk, chunk count, kind, link
//	dirs      16 bytes each: path, mtime
//	docs      52 bytes each, grouped by file in file order: file, lines, byte range, BM25 length, symbol, hash, flags
//	postings  per term: (uvarint doc delta, uvarint tf) pairs, docs ascending
//	terms     20 bytes each, a hash table (FNV-1a, linear probing, empty when df is 0): term, df, postings offset
//	magic again, to catch truncation
const snapshotMagic = "agentd-index-v3\n"

const (
	headerSize = 128
	fileRec    = 56
	dirRec     = 16
	docRec     = 52
	termRec    = 20
)

func (ix *Index) snapshotPath() string { return snapshotPathIn(ix.stateDir) }

func snapshotPathIn(stateDir string) string { return filepath.Join(stateDir, "index.snapshot") }

// snapFile is a parsed snapshot over its bytes (read or memory-mapped).
// Every access is bounds-checked, so a corrupt file yields wrong answers at
// worst, never a crash; Open and View also check the header and the end
// marker.
type snapFile struct {
	root                          string
	nFiles, nDirs, nDocs, nTerms  int
	totalLen                      int64
	strs, files, dirs, docs, post []byte
	terms                         []byte
}

func le32(b []byte, off int) uint32 { return binary.LittleEndian.Uint32(b[off:]) }
func le64(b []byte, off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }

// parseSnapshot checks the header and slices the sections.
func parseSnapshot(data []byte) (*snapFile, error) {
	if len(data) < headerSize+len(snapshotMagic) || string(data[:len(snapshotMagic)]) != snapshotMagic {
		return nil, errors.New("not an index snapshot of this version")
	}
	if le64(data, 120) != uint64(len(data)) || string(data[len(data)-len(snapshotMagic):]) != snapshotMagic {
		return nil, errors.New("snapshot truncated")
	}
	s := &snapFile{
		nFiles: int(le32(data, 20)), nDirs: int(le32(data, 24)), nDocs: int(le32(data, 28)), nTerms: int(le32(data, 32)),
		totalLen: int64(le64(data, 40)),
	}
	section := func(at, size uint64) ([]byte, error) {
		off := le64(data, int(at))
		if off > uint64(len(data)) || size > uint64(len(data))-off {
			return nil, fmt.Errorf("snapshot section at %d out of range", at)
		}
		return data[off : off+size], nil
	}
	var err error
	parts := []struct {
		dst  *[]byte
		at   uint64
		size uint64
	}{
		{&s.strs, 48, le64(data, 56)},
		{&s.files, 64, uint64(s.nFiles) * fileRec},
		{&s.dirs, 72, uint64(s.nDirs) * dirRec},
		{&s.docs, 80, uint64(s.nDocs) * docRec},
		{&s.post, 88, le64(data, 96)},
		{&s.terms, 104, uint64(s.nTerms) * termRec},
	}
	for _, p := range parts {
		if *p.dst, err = section(p.at, p.size); err != nil {
			return nil, err
		}
	}
	if s.nTerms&(s.nTerms-1) != 0 {
		return nil, errors.New("snapshot term table size is not a power of two")
	}
	s.root = s.str(le32(data, 112), le32(data, 116))
	return s, nil
}

// str returns a string of the blob without copying it.
func (s *snapFile) str(off, n uint32) string {
	if uint64(off)+uint64(n) > uint64(len(s.strs)) || n == 0 {
		return ""
	}
	return unsafe.String(&s.strs[off], int(n))
}

type snapFileRec struct {
	path            string
	size, mtime     int64
	hash            [16]byte
	firstDoc, nDocs int32
	kind            fileKind
	link            bool
}

func (s *snapFile) file(i int) snapFileRec {
	b := s.files[i*fileRec : (i+1)*fileRec]
	r := snapFileRec{
		path: s.str(le32(b, 0), le32(b, 4)), size: int64(le64(b, 8)), mtime: int64(le64(b, 16)),
		hash: [16]byte(b[24:40]), firstDoc: int32(le32(b, 40)), nDocs: int32(le32(b, 44)),
		kind: fileKind(b[48]), link: b[49] != 0,
	}
	if r.firstDoc < 0 || r.nDocs < 0 || int(r.firstDoc)+int(r.nDocs) > s.nDocs {
		r.firstDoc, r.nDocs = 0, 0
	}
	return r
}

func (s *snapFile) dir(i int) (string, int64) {
	b := s.dirs[i*dirRec:]
	return s.str(le32(b, 0), le32(b, 4)), int64(le64(b, 8))
}

// docFile, docLen and docFlags read single fields for ranking.
func (s *snapFile) docFile(d int32) int32 {
	f := int32(le32(s.docs, int(d)*docRec))
	if f < 0 || int(f) >= s.nFiles {
		return 0
	}
	return f
}

func (s *snapFile) docLen(d int32) int32 { return int32(le32(s.docs, int(d)*docRec+20) & 0x7fffffff) }

func (s *snapFile) docFlags(d int32) uint8 { return s.docs[int(d)*docRec+48] }

func (s *snapFile) doc(d int32) slot {
	b := s.docs[int(d)*docRec : int(d+1)*docRec]
	return slot{file: s.docFile(d), Start: int32(le32(b, 4)), End: int32(le32(b, 8)), Off: int32(le32(b, 12)),
		Len: int32(le32(b, 16)), Symbol: s.str(le32(b, 24), le32(b, 28)), hash: [16]byte(b[32:48]), flags: b[48]}
}

func (s *snapFile) fileKind(f int32) fileKind { return fileKind(s.files[int(f)*fileRec+48]) }

func (s *snapFile) filePath(f int32) string {
	b := s.files[int(f)*fileRec:]
	return s.str(le32(b, 0), le32(b, 4))
}

func termHash(t string) uint64 {
	h := uint64(fnvOffset)
	for i := 0; i < len(t); i++ {
		h ^= uint64(t[i])
		h *= fnvPrime
	}
	return h
}

// FNV-1a, 64 bits, inlined: hash/fnv allocates behind its interface.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// lookup finds term in the hash table: its record index, or -1.
func (s *snapFile) lookup(term string) int {
	if s.nTerms == 0 {
		return -1
	}
	mask := s.nTerms - 1
	for i, probes := int(termHash(term))&mask, 0; probes < s.nTerms; i, probes = (i+1)&mask, probes+1 {
		b := s.terms[i*termRec:]
		if le32(b, 8) == 0 {
			return -1
		}
		if s.str(le32(b, 0), le32(b, 4)) == term {
			return i
		}
	}
	return -1
}

// termAt returns record i's term, df and postings bytes.
func (s *snapFile) termAt(i int) (term string, df int, post []byte) {
	b := s.terms[i*termRec:]
	df = int(le32(b, 8))
	off := le64(b, 12)
	end := uint64(len(s.post))
	if off > end {
		return "", 0, nil
	}
	return s.str(le32(b, 0), le32(b, 4)), df, s.post[off:end]
}

// decodePostings appends the df postings at the start of p, dropping any
// that point outside the docs.
func (s *snapFile) decodePostings(p []byte, df int, docs []int32, tfs []uint16) ([]int32, []uint16) {
	d := int64(-1)
	for range df {
		delta, n := binary.Uvarint(p)
		if n <= 0 {
			break
		}
		p = p[n:]
		tf, m := binary.Uvarint(p)
		if m <= 0 {
			break
		}
		p = p[m:]
		d += int64(delta) + 1
		if d >= int64(s.nDocs) {
			break
		}
		docs = append(docs, int32(d))
		tfs = append(tfs, uint16(min(tf, 65535)))
	}
	return docs, tfs
}

// restore loads the snapshot into an empty index (Open, before anyone else
// sees it). Vectors come from the embedding cache afterwards. A missing
// snapshot is not an error; an unusable one is (the caller rebuilds).
func (ix *Index) restore(path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read snapshot: %w", err)
	}
	s, err := parseSnapshot(data)
	if err != nil {
		return err
	}
	if s.root != ix.root {
		return fmt.Errorf("snapshot is for %s", s.root)
	}
	// Strings are copied: data is dropped after this.
	ix.fileTab = make([]*fileEntry, s.nFiles)
	for i := range s.nFiles {
		r := s.file(i)
		e := &fileEntry{Size: r.size, Mtime: r.mtime, Hash: r.hash, Kind: r.kind, Link: r.link, id: int32(i),
			path: strings.Clone(r.path), slots: make([]int32, r.nDocs)}
		for k := range e.slots {
			e.slots[k] = r.firstDoc + int32(k)
		}
		if e.path == "" || ix.files[e.path] != nil {
			return errors.New("snapshot: bad file table")
		}
		ix.fileTab[i], ix.files[e.path] = e, e
	}
	for i := range s.nDirs {
		p, mtime := s.dir(i)
		ix.dirs[strings.Clone(p)] = mtime
	}
	ix.slots = make([]slot, s.nDocs)
	ix.bm.docLen = make([]int32, s.nDocs)
	for d := range int32(s.nDocs) {
		sl := s.doc(d)
		sl.Symbol = strings.Clone(sl.Symbol)
		ix.slots[d] = sl
		ix.bm.docLen[d] = max(1, s.docLen(d))
		ix.bm.totalLen += int64(ix.bm.docLen[d])
	}
	ix.live, ix.bm.nDocs = s.nDocs, s.nDocs
	for i := range s.nTerms {
		t, df, p := s.termAt(i)
		if df == 0 {
			continue
		}
		id := ix.dict.internString(t)
		if int(id) != len(ix.bm.post) {
			return fmt.Errorf("snapshot: duplicate term %q", t)
		}
		docs, tfs := s.decodePostings(p, df, make([]int32, 0, df), make([]uint16, 0, df))
		ix.bm.post = append(ix.bm.post, postings{docs, tfs})
	}
	return nil
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
	if err := ix.writeSnapshot(); err != nil {
		return fmt.Errorf("save index: %w", err)
	}
	if ix.cache != nil {
		ix.mu.RLock()
		live := make(map[[16]byte]bool, ix.live)
		for n := range ix.slots {
			if sl := &ix.slots[n]; sl.file >= 0 {
				live[sl.hash] = true
			}
		}
		ix.mu.RUnlock()
		ix.cache.prune(live)
		if err := ix.cache.save(); err != nil {
			return fmt.Errorf("save index: %w", err)
		}
	}
	ix.mu.Lock()
	ix.dirty = false
	ix.mu.Unlock()
	return nil
}

// snapWriter streams sections, tracking the offset.
type snapWriter struct {
	w   *bufio.Writer
	off uint64
	rec [64]byte
	tmp [binary.MaxVarintLen64]byte
}

func (w *snapWriter) write(b []byte) {
	w.w.Write(b)
	w.off += uint64(len(b))
}

func (w *snapWriter) uvarint(x uint64) { w.write(w.tmp[:binary.PutUvarint(w.tmp[:], x)]) }

// writeSnapshot encodes the live index under the read lock into a
// temporary file, then renames it over the snapshot.
func (ix *Index) writeSnapshot() error {
	path := ix.snapshotPath()
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // no-op after the rename
	err = ix.encodeSnapshot(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write snapshot: %w", err)
	}
	return os.Rename(f.Name(), path)
}

// strTable lays out the strings blob.
type strTable struct {
	off  map[string]uint32
	list []string
	size uint64
}

func (t *strTable) add(s string) {
	if _, ok := t.off[s]; ok || s == "" {
		return
	}
	t.off[s] = uint32(t.size)
	t.list = append(t.list, s)
	t.size += uint64(len(s))
}

func (t *strTable) ref(b []byte, at int, s string) {
	binary.LittleEndian.PutUint32(b[at:], t.off[s])
	binary.LittleEndian.PutUint32(b[at+4:], uint32(len(s)))
}

// encodeSnapshot writes the live index: files sorted by path, chunks
// renumbered densely file by file, removed chunks and terms without a live
// posting left out.
func (ix *Index) encodeSnapshot(f *os.File) error {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.live >= 1<<31 {
		return errors.New("too many chunks")
	}
	paths := make([]string, 0, len(ix.files))
	for p := range ix.files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	remap := make([]int32, len(ix.slots))
	for i := range remap {
		remap[i] = -1
	}
	var order []int32 // new doc → old slot
	for _, p := range paths {
		for _, n := range ix.files[p].slots {
			remap[n] = int32(len(order))
			order = append(order, n)
		}
	}
	// Terms with a live posting, placed in a hash table twice their number.
	terms := ix.dict.all()
	var live []int32
	for t := range ix.bm.post {
		for _, d := range ix.bm.post[t].docs {
			if remap[d] >= 0 && ix.bm.docLen[d] > 0 {
				live = append(live, int32(t))
				break
			}
		}
	}
	tableSize := 1
	for tableSize < 2*len(live) {
		tableSize *= 2
	}
	if len(live) == 0 {
		tableSize = 0
	}
	table := make([]int32, tableSize) // term id + 1
	for _, t := range live {
		for i := int(termHash(terms[t])) & (tableSize - 1); ; i = (i + 1) & (tableSize - 1) {
			if table[i] == 0 {
				table[i] = t + 1
				break
			}
		}
	}
	st := &strTable{off: make(map[string]uint32)}
	st.add(ix.root)
	for _, p := range paths {
		st.add(p)
	}
	for d := range ix.dirs {
		st.add(d)
	}
	for _, n := range order {
		st.add(ix.slots[n].Symbol)
	}
	for _, t := range live {
		st.add(terms[t])
	}

	w := &snapWriter{w: bufio.NewWriterSize(f, 1<<20)}
	var hdr [headerSize]byte
	w.write(hdr[:]) // filled in at the end
	strOff := w.off
	for _, s := range st.list {
		w.w.WriteString(s)
		w.off += uint64(len(s))
	}
	filesOff := w.off
	for _, p := range paths {
		e := ix.files[p]
		b := w.rec[:fileRec]
		clear(b)
		st.ref(b, 0, p)
		binary.LittleEndian.PutUint64(b[8:], uint64(e.Size))
		binary.LittleEndian.PutUint64(b[16:], uint64(e.Mtime))
		copy(b[24:40], e.Hash[:])
		if len(e.slots) > 0 {
			binary.LittleEndian.PutUint32(b[40:], uint32(remap[e.slots[0]]))
		}
		binary.LittleEndian.PutUint32(b[44:], uint32(len(e.slots)))
		b[48] = byte(e.Kind)
		if e.Link {
			b[49] = 1
		}
		w.write(b)
	}
	dirsOff := w.off
	for d, mtime := range ix.dirs {
		b := w.rec[:dirRec]
		st.ref(b, 0, d)
		binary.LittleEndian.PutUint64(b[8:], uint64(mtime))
		w.write(b)
	}
	docsOff := w.off
	fileIdx := make(map[int32]uint32, len(paths))
	for i, p := range paths {
		fileIdx[ix.files[p].id] = uint32(i)
	}
	for _, n := range order {
		sl := &ix.slots[n]
		b := w.rec[:docRec]
		clear(b)
		binary.LittleEndian.PutUint32(b[0:], fileIdx[sl.file])
		binary.LittleEndian.PutUint32(b[4:], uint32(sl.Start))
		binary.LittleEndian.PutUint32(b[8:], uint32(sl.End))
		binary.LittleEndian.PutUint32(b[12:], uint32(sl.Off))
		binary.LittleEndian.PutUint32(b[16:], uint32(sl.Len))
		binary.LittleEndian.PutUint32(b[20:], uint32(ix.bm.docLen[n]))
		st.ref(b, 24, sl.Symbol)
		copy(b[32:48], sl.hash[:])
		b[48] = sl.flags
		w.write(b)
	}
	postOff := w.off
	postStart := make([]uint64, tableSize)
	dfs := make([]uint32, tableSize)
	var pairs []posting
	for i, t1 := range table {
		if t1 == 0 {
			continue
		}
		p := &ix.bm.post[t1-1]
		pairs = pairs[:0]
		for j, d := range p.docs {
			if nd := remap[d]; nd >= 0 && ix.bm.docLen[d] > 0 {
				pairs = append(pairs, posting{nd, p.tfs[j]})
			}
		}
		// Slot reuse and renumbering leave lists out of order.
		if !slices.IsSortedFunc(pairs, cmpPosting) {
			slices.SortFunc(pairs, cmpPosting)
		}
		postStart[i], dfs[i] = w.off-postOff, uint32(len(pairs))
		prev := int32(-1)
		for _, q := range pairs {
			w.uvarint(uint64(q.doc - prev - 1))
			w.uvarint(uint64(q.tf))
			prev = q.doc
		}
	}
	postLen := w.off - postOff
	termsOff := w.off
	for i, t1 := range table {
		b := w.rec[:termRec]
		clear(b)
		if t1 != 0 {
			st.ref(b, 0, terms[t1-1])
			binary.LittleEndian.PutUint32(b[8:], dfs[i])
			binary.LittleEndian.PutUint64(b[12:], postStart[i])
		}
		w.write(b)
	}
	w.write([]byte(snapshotMagic))
	if err := w.w.Flush(); err != nil {
		return err
	}
	copy(hdr[:], snapshotMagic)
	put32 := func(at int, x int) { binary.LittleEndian.PutUint32(hdr[at:], uint32(x)) }
	put64 := func(at int, x uint64) { binary.LittleEndian.PutUint64(hdr[at:], x) }
	put32(16, 3)
	put32(20, len(paths))
	put32(24, len(ix.dirs))
	put32(28, len(order))
	put32(32, tableSize)
	put64(40, uint64(ix.bm.totalLen))
	put64(48, strOff)
	put64(56, st.size)
	put64(64, filesOff)
	put64(72, dirsOff)
	put64(80, docsOff)
	put64(88, postOff)
	put64(96, postLen)
	put64(104, termsOff)
	put32(112, int(st.off[ix.root]))
	put32(116, len(ix.root))
	put64(120, w.off)
	_, err := f.WriteAt(hdr[:], 0)
	return err
}

type posting struct {
	doc int32
	tf  uint16
}

func cmpPosting(a, b posting) int { return int(a.doc - b.doc) }

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
