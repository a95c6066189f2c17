package rag

import (
	"bufio"
	"crypto/rand"
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
//	header    160 bytes: magic, counts, section offsets, file size
//	strings   the root, paths, symbols and terms, referenced by (offset, length)
//	files     56 bytes each, sorted by path: path, size, mtime, hash, first chunk, chunk count, kind, link, unread,
//	          deleted (a delta's tombstone), length
//	dirs      16 bytes each: path, mtime
//	docs      52 bytes each, grouped by file in file order: file, lines, byte range, BM25 length, symbol, hash, flags
//	postings  per term: (uvarint doc delta, uvarint tf) pairs, docs ascending
//	slots     4 bytes each, a hash table of terms (FNV-1a, linear probing): 1 + term record, or 0
//	terms     20 bytes each: term, df, postings offset
//	magic again, to catch truncation
//
// Unread files (binary, not UTF-8) are listed with no chunks so a rebuild
// does not read them again until they change.
const snapshotMagic = "agentd-index-v4\n"

const (
	headerSize = 160
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
	root                                 string
	nFiles, nDirs, nDocs, nSlots, nTerms int
	nIndexed                             int // files with chunks or none, not unread ones
	nChunked                             int // files with chunks
	// id names this snapshot; a delta names the base it applies to.
	id, baseID                           uint64
	totalLen                             int64
	strs, files, dirs, docs, post, slots []byte
	terms                                []byte
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
		nFiles: int(le32(data, 20)), nDirs: int(le32(data, 24)), nDocs: int(le32(data, 28)),
		nSlots: int(le32(data, 32)), nTerms: int(le32(data, 36)), totalLen: int64(le64(data, 40)),
		nIndexed: int(le32(data, 132)), id: le64(data, 136), baseID: le64(data, 144),
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
		{&s.slots, 104, uint64(s.nSlots) * 4},
		{&s.terms, 112, uint64(s.nTerms) * termRec},
	}
	for _, p := range parts {
		if *p.dst, err = section(p.at, p.size); err != nil {
			return nil, err
		}
	}
	if s.nSlots&(s.nSlots-1) != 0 || s.nTerms > s.nSlots {
		return nil, errors.New("snapshot term table is malformed")
	}
	s.root = s.str(0, le32(data, 128))
	for i := range s.nFiles {
		if le32(s.files, i*fileRec+44) > 0 {
			s.nChunked++
		}
	}
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
	link, unread    bool
	deleted         bool   // in a delta: the file is gone (or now ignored)
	length          uint32 // the sum of its chunks' BM25 lengths
}

func (s *snapFile) file(i int) snapFileRec {
	b := s.files[i*fileRec : (i+1)*fileRec]
	r := snapFileRec{
		path: s.str(le32(b, 0), le32(b, 4)), size: int64(le64(b, 8)), mtime: int64(le64(b, 16)),
		hash: [16]byte(b[24:40]), firstDoc: int32(le32(b, 40)), nDocs: int32(le32(b, 44)),
		kind: fileKind(b[48]), link: b[49] != 0, unread: b[50] != 0, deleted: b[51] != 0, length: le32(b, 52),
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

func (s *snapFile) fileLen(f int32) int32 {
	return int32(le32(s.files, int(f)*fileRec+52) & 0x7fffffff)
}

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
	if s.nSlots == 0 {
		return -1
	}
	mask := s.nSlots - 1
	for i, probes := int(termHash(term))&mask, 0; probes < s.nSlots; i, probes = (i+1)&mask, probes+1 {
		r := int(le32(s.slots, i*4)) - 1
		if r < 0 || r >= s.nTerms {
			return -1
		}
		b := s.terms[r*termRec:]
		if s.str(le32(b, 0), le32(b, 4)) == term {
			return r
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
	ix.fileTab = make([]*fileEntry, 0, s.nFiles)
	ix.fileKinds = make([]fileKind, s.nFiles)
	ix.fileLens = make([]int32, s.nFiles)
	for i := range s.nFiles {
		r := s.file(i)
		if r.unread {
			ix.unread[strings.Clone(r.path)] = fileStamp{r.size, r.mtime, r.link}
			ix.freeFiles = append(ix.freeFiles, int32(len(ix.fileTab)))
			ix.fileTab = append(ix.fileTab, nil)
			continue
		}
		e := &fileEntry{Size: r.size, Mtime: r.mtime, Hash: r.hash, Kind: r.kind, Link: r.link, id: int32(i),
			path: strings.Clone(r.path), slots: make([]int32, r.nDocs)}
		for k := range e.slots {
			e.slots[k] = r.firstDoc + int32(k)
		}
		if e.path == "" || ix.files[e.path] != nil {
			return errors.New("snapshot: bad file table")
		}
		ix.fileTab = append(ix.fileTab, e)
		ix.fileKinds[i] = e.Kind
		ix.fileLens[i] = int32(r.length)
		if r.nDocs > 0 {
			ix.chunked++
		}
		ix.files[e.path] = e
	}
	for i := range s.nDirs {
		p, mtime := s.dir(i)
		ix.dirs[strings.Clone(p)] = mtime
	}
	ix.slots = make([]slot, s.nDocs)
	ix.bm.docLen = make([]int32, s.nDocs)
	ix.bm.docFile = make([]int32, s.nDocs)
	ix.bm.docFlags = make([]uint8, s.nDocs)
	for d := range int32(s.nDocs) {
		sl := s.doc(d)
		sl.Symbol = strings.Clone(sl.Symbol)
		ix.slots[d] = sl
		ix.bm.docFile[d], ix.bm.docFlags[d] = sl.file, sl.flags
		ix.bm.docLen[d] = max(1, s.docLen(d))
		ix.bm.totalLen += int64(ix.bm.docLen[d])
	}
	ix.live, ix.bm.nDocs = s.nDocs, s.nDocs
	var docs []int32
	var tfs []uint16
	for i := range s.nTerms {
		t, df, p := s.termAt(i)
		id := ix.dict.internString(t)
		if int(id) != len(ix.bm.post) {
			return fmt.Errorf("snapshot: duplicate term %q", t)
		}
		docs, tfs = s.decodePostings(p, df, docs[:0], tfs[:0])
		var pl postings
		pl.data = make([]byte, 0, 3*len(docs))
		for j, d := range docs {
			pl.append(d, tfs[j])
		}
		ix.bm.post = append(ix.bm.post, pl)
	}
	ix.baseID = s.id
	return ix.restoreDelta(s.id)
}

// saveIfDirty writes the snapshot and the embedding cache. The caller holds
// ix.work, so nothing changes the index meanwhile; queries go on (the
// snapshot is encoded under the read lock, straight from the live index).
func (ix *Index) saveIfDirty() error {
	ix.mu.RLock()
	dirty := ix.dirty && !ix.ephemeral
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
// writeSnapshot writes a new base and drops the delta it folds in.
func (ix *Index) writeSnapshot() error {
	id := newSnapID()
	if err := ix.writeSnapshotAs(ix.snapshotPath(), snapEncoding{id: id}); err != nil {
		return err
	}
	ix.baseID = id
	if err := os.Remove(deltaPathIn(ix.stateDir)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// snapEncoding says what a snapshot file holds: the whole index (a base),
// or only some files and the tombstones of others (a delta over base
// baseID).
type snapEncoding struct {
	only       map[string]bool // nil: every file
	tombs      []string
	id, baseID uint64
}

func newSnapID() uint64 {
	var b [8]byte
	rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:]) | 1
}

func (ix *Index) writeSnapshotAs(path string, enc snapEncoding) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // no-op after the rename
	err = ix.encodeSnapshot(f, enc)
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

// encodeSnapshot writes the live index: files sorted by path, chunks
// renumbered densely file by file, removed chunks and terms without a live
// posting left out.
func (ix *Index) encodeSnapshot(f *os.File, enc snapEncoding) error {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.live >= 1<<31 {
		return errors.New("too many chunks")
	}
	paths := make([]string, 0, len(ix.files)+len(ix.unread)+len(enc.tombs))
	for p := range ix.files {
		if enc.only == nil || enc.only[p] {
			paths = append(paths, p)
		}
	}
	for p := range ix.unread {
		if enc.only == nil || enc.only[p] {
			paths = append(paths, p)
		}
	}
	tomb := map[string]bool{}
	for _, p := range enc.tombs {
		if ix.files[p] == nil && ix.unread[p] == (fileStamp{}) && !tomb[p] {
			tomb[p] = true
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	remap := make([]int32, len(ix.slots))
	for i := range remap {
		remap[i] = -1
	}
	fileIdx := make([]uint32, len(ix.fileTab))
	var order []int32 // new doc → old slot
	var totalLen int64
	for i, p := range paths {
		if e := ix.files[p]; e != nil {
			fileIdx[e.id] = uint32(i)
			for _, n := range e.slots {
				remap[n] = int32(len(order))
				order = append(order, n)
				totalLen += int64(ix.bm.docLen[n])
			}
		}
	}
	// Terms with a live posting, placed in a hash table twice their number.
	terms := make([]string, len(ix.bm.post))
	var live []int32
	var buf postingBuf
	for t := range ix.bm.post {
		buf.docs, buf.tfs = ix.bm.post[t].decode(buf.docs[:0], buf.tfs[:0])
		for _, d := range buf.docs {
			if remap[d] >= 0 && ix.bm.docLen[d] > 0 {
				live = append(live, int32(t))
				terms[t] = ix.dict.term(int32(t))
				break
			}
		}
	}
	nSlots := 0
	if len(live) > 0 {
		nSlots = 1
		for nSlots < 2*len(live) {
			nSlots *= 2
		}
	}
	table := make([]uint32, nSlots) // 1 + index into live
	for r, t := range live {
		for i := int(termHash(terms[t])) & (nSlots - 1); ; i = (i + 1) & (nSlots - 1) {
			if table[i] == 0 {
				table[i] = uint32(r + 1)
				break
			}
		}
	}
	dirs := make([]string, 0, len(ix.dirs))
	for d := range ix.dirs {
		dirs = append(dirs, d)
	}

	w := &snapWriter{w: bufio.NewWriterSize(f, 1<<20)}
	var hdr [headerSize]byte
	w.write(hdr[:]) // filled in at the end
	// Strings, in the order the records below refer to them.
	strOff := w.off
	str := func(s string) uint32 {
		off := uint32(w.off - strOff)
		w.w.WriteString(s)
		w.off += uint64(len(s))
		return off
	}
	str(ix.root)
	pathOff := make([]uint32, len(paths))
	for i, p := range paths {
		pathOff[i] = str(p)
	}
	dirOff := make([]uint32, len(dirs))
	for i, d := range dirs {
		dirOff[i] = str(d)
	}
	symOff := make([]uint32, len(order))
	for i, n := range order {
		symOff[i] = str(ix.slots[n].Symbol)
	}
	termOff := make([]uint32, len(live))
	for i, t := range live {
		termOff[i] = str(terms[t])
	}
	strLen := w.off - strOff
	if strLen >= 1<<32 {
		return errors.New("snapshot strings over 4 GiB")
	}
	put32 := binary.LittleEndian.PutUint32
	put64 := binary.LittleEndian.PutUint64

	filesOff := w.off
	nIndexed := 0
	for i, p := range paths {
		b := w.rec[:fileRec]
		clear(b)
		put32(b[0:], pathOff[i])
		put32(b[4:], uint32(len(p)))
		if e := ix.files[p]; e != nil {
			nIndexed++
			put64(b[8:], uint64(e.Size))
			put64(b[16:], uint64(e.Mtime))
			copy(b[24:40], e.Hash[:])
			if len(e.slots) > 0 {
				put32(b[40:], uint32(remap[e.slots[0]]))
			}
			put32(b[44:], uint32(len(e.slots)))
			b[48] = byte(e.Kind)
			b[49] = boolByte(e.Link)
			put32(b[52:], uint32(ix.fileLens[e.id]))
		} else if tomb[p] {
			b[51] = 1
		} else {
			u := ix.unread[p]
			put64(b[8:], uint64(u.Size))
			put64(b[16:], uint64(u.Mtime))
			b[49] = boolByte(u.Link)
			b[50] = 1
		}
		w.write(b)
	}
	dirsOff := w.off
	for i, d := range dirs {
		b := w.rec[:dirRec]
		put32(b[0:], dirOff[i])
		put32(b[4:], uint32(len(d)))
		put64(b[8:], uint64(ix.dirs[d]))
		w.write(b)
	}
	docsOff := w.off
	for i, n := range order {
		sl := &ix.slots[n]
		b := w.rec[:docRec]
		clear(b)
		put32(b[0:], fileIdx[sl.file])
		put32(b[4:], uint32(sl.Start))
		put32(b[8:], uint32(sl.End))
		put32(b[12:], uint32(sl.Off))
		put32(b[16:], uint32(sl.Len))
		put32(b[20:], uint32(ix.bm.docLen[n]))
		put32(b[24:], symOff[i])
		put32(b[28:], uint32(len(sl.Symbol)))
		copy(b[32:48], sl.hash[:])
		b[48] = sl.flags
		w.write(b)
	}
	postOff := w.off
	postStart := make([]uint64, len(live))
	dfs := make([]uint32, len(live))
	var pairs []posting
	for r, t := range live {
		buf.docs, buf.tfs = ix.bm.post[t].decode(buf.docs[:0], buf.tfs[:0])
		pairs = pairs[:0]
		for j, d := range buf.docs {
			if nd := remap[d]; nd >= 0 && ix.bm.docLen[d] > 0 {
				pairs = append(pairs, posting{nd, buf.tfs[j]})
			}
		}
		// Slot reuse and renumbering leave lists out of order.
		if !slices.IsSortedFunc(pairs, cmpPosting) {
			slices.SortFunc(pairs, cmpPosting)
		}
		postStart[r], dfs[r] = w.off-postOff, uint32(len(pairs))
		prev := int32(-1)
		for _, q := range pairs {
			w.uvarint(uint64(q.doc - prev - 1))
			w.uvarint(uint64(q.tf))
			prev = q.doc
		}
	}
	postLen := w.off - postOff
	slotsOff := w.off
	for _, x := range table {
		put32(w.rec[:4], x)
		w.write(w.rec[:4])
	}
	termsOff := w.off
	for r, t := range live {
		b := w.rec[:termRec]
		put32(b[0:], termOff[r])
		put32(b[4:], uint32(len(terms[t])))
		put32(b[8:], dfs[r])
		put64(b[12:], postStart[r])
		w.write(b)
	}
	w.write([]byte(snapshotMagic))
	if err := w.w.Flush(); err != nil {
		return err
	}
	copy(hdr[:], snapshotMagic)
	put32(hdr[16:], 4)
	put32(hdr[20:], uint32(len(paths)))
	put32(hdr[24:], uint32(len(dirs)))
	put32(hdr[28:], uint32(len(order)))
	put32(hdr[32:], uint32(nSlots))
	put32(hdr[36:], uint32(len(live)))
	put64(hdr[40:], uint64(totalLen))
	put64(hdr[48:], strOff)
	put64(hdr[56:], strLen)
	put64(hdr[64:], filesOff)
	put64(hdr[72:], dirsOff)
	put64(hdr[80:], docsOff)
	put64(hdr[88:], postOff)
	put64(hdr[96:], postLen)
	put64(hdr[104:], slotsOff)
	put64(hdr[112:], termsOff)
	put64(hdr[120:], w.off)
	put32(hdr[128:], uint32(len(ix.root)))
	put32(hdr[132:], uint32(nIndexed))
	put64(hdr[136:], enc.id)
	put64(hdr[144:], enc.baseID)
	_, err := f.WriteAt(hdr[:], 0)
	return err
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
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
