package rag

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"unsafe"
)

// applyBatch is how many files are read before their chunks become
// searchable: small enough that queries during the first build see
// progress, large enough that the write lock is rare.
const applyBatch = 256

// candidate is a file the walk found.
type candidate struct {
	rel   string
	size  int64
	mtime int64
	link  bool
}

// fileResult is a file read and chunked outside the lock.
type fileResult struct {
	rel       string
	entry     *fileEntry
	slots     []slot // new chunks; nil when the content is unchanged
	bags      []bag  // parallel to slots
	unchanged bool   // same hash: only size/mtime are updated
	skip      string // why the file is not indexed
	stamp     fileStamp
	unread    bool // skipped for its content: not read again until it changes
}

// Build brings the index up to date with the workspace: it walks the tree,
// re-reads files whose size or mtime changed, re-chunks those whose content
// hash changed, drops files that are gone or now ignored, embeds chunks the
// cache does not know (with an embedder), and saves a snapshot. progress,
// if not nil, receives (done, total) work units.
func (ix *Index) Build(ctx context.Context, progress func(done, total int)) error {
	ix.work.Lock()
	defer ix.work.Unlock()
	err := ix.build(ctx, progress)
	ix.mu.Lock()
	ix.lastErr = ""
	if err != nil {
		ix.lastErr = err.Error()
	}
	ix.mu.Unlock()
	return err
}

func (ix *Index) build(ctx context.Context, progress func(done, total int)) error {
	if progress == nil {
		progress = func(int, int) {}
	}
	ix.mu.Lock()
	ix.state = StateIndexing
	ix.mu.Unlock()
	ix.drainPending() // a full pass covers them
	ix.ig.forget()
	start := time.Now()

	cands, dirs, err := ix.walk(ctx)
	if err != nil {
		return err
	}
	walked := time.Since(start)
	todo, gone := ix.diff(cands)
	todo = ix.takeSeeded(todo)
	ix.mu.Lock()
	ix.lastRead = len(todo)
	if !maps.Equal(ix.dirs, dirs) {
		ix.dirs = dirs
		ix.dirty = true
	}
	ix.mu.Unlock()
	total := len(todo) + 1
	progress(0, total)
	ix.setProgress(0)

	rd := ix.newReaders()
	// One batch is read while the previous one is applied.
	type batchOut struct {
		results []fileResult
		err     error
	}
	read := func(from int) chan batchOut {
		ch := make(chan batchOut, 1)
		go func() {
			r, err := rd.readFiles(ctx, todo[from:min(from+applyBatch, len(todo))])
			ch <- batchOut{r, err}
		}()
		return ch
	}
	var next chan batchOut
	if len(todo) > 0 {
		next = read(0)
	}
	for startIdx := 0; startIdx < len(todo); startIdx += applyBatch {
		out := <-next
		if out.err != nil {
			return out.err
		}
		if startIdx+applyBatch < len(todo) {
			next = read(startIdx + applyBatch)
		}
		ix.applyResults(ctx, out.results)
		done := min(startIdx+applyBatch, len(todo))
		progress(done, total)
		ix.setProgress(0.9 * float64(done) / float64(total))
	}
	rd = nil // the word memos are garbage now
	readDone := time.Since(start)
	ix.mu.Lock()
	for _, rel := range gone {
		ix.removeFileLocked(ctx, rel)
	}
	ix.purgeIfStaleLocked()
	ix.mu.Unlock()

	if err := ix.embedMissing(ctx, func(frac float64) {
		ix.setProgress(0.9 + 0.1*frac)
	}); err != nil {
		return err
	}
	embedded := time.Since(start)
	progress(total, total)
	ix.mu.Lock()
	if len(todo) > applyBatch {
		ix.bm.compact()
	}
	ix.state = StateReady
	ix.progress = 1
	files, chunks := len(ix.files), ix.live
	ix.mu.Unlock()
	ix.log.Info("index: built", "files", files, "chunks", chunks, "read", len(todo), "removed", len(gone),
		"took", time.Since(start).Round(time.Millisecond), "walk", walked.Round(time.Millisecond),
		"read", (readDone - walked).Round(time.Millisecond), "embed", (embedded - readDone).Round(time.Millisecond))
	return ix.saveIfDirty()
}

// walk lists the files to index and the mtimes of the directories it
// entered. It goes through the workspace's os.Root, so it never leaves the
// workspace: links to directories are not followed (which also rules out
// loops), and links to files count only when they resolve inside the
// workspace. Unreadable directories, broken links and files that vanish
// mid-walk are noted and skipped.
func (ix *Index) walk(ctx context.Context) ([]candidate, map[string]int64, error) {
	var out []candidate
	dirs := make(map[string]int64)
	err := fs.WalkDir(ix.fsys.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		rel := p
		if rel == "." {
			rel = ""
		}
		if err != nil {
			if rel != "" {
				ix.note(rel, err.Error())
			}
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if rel != "" && ix.ig.ignored(rel, true) {
				return fs.SkipDir
			}
			if fi, err := d.Info(); err == nil {
				dirs[rel] = fi.ModTime().UnixNano()
			}
			return nil
		}
		if c, ok := ix.candidate(rel, d); ok {
			out = append(out, c)
		}
		return nil
	})
	if err != nil && ctx.Err() != nil {
		return nil, nil, ctx.Err()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("walk %s: %w", ix.root, err)
	}
	return out, dirs, nil
}

// candidate checks one walked file.
func (ix *Index) candidate(rel string, d fs.DirEntry) (candidate, bool) {
	if ix.ig.ignored(rel, false) {
		return candidate{}, false
	}
	var info fs.FileInfo
	var err error
	link := d.Type()&fs.ModeSymlink != 0
	if link {
		// os.Root refuses a link that leads out of the workspace.
		info, err = ix.fsys.Stat(local(rel))
		if err == nil && info.IsDir() {
			return candidate{}, false
		}
	} else {
		info, err = d.Info()
	}
	switch {
	case err != nil:
		ix.note(rel, err.Error())
		return candidate{}, false
	case !info.Mode().IsRegular():
		return candidate{}, false
	case info.Size() > maxFileSize:
		ix.note(rel, fmt.Sprintf("larger than %d bytes", maxFileSize))
		return candidate{}, false
	}
	return candidate{rel: rel, size: info.Size(), mtime: info.ModTime().UnixNano(), link: link}, true
}

// diff splits the walk into files to read and manifest entries to drop.
func (ix *Index) diff(cands []candidate) (todo []candidate, gone []string) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	seen := make(map[string]bool, len(cands))
	for _, c := range cands {
		seen[c.rel] = true
		if e, ok := ix.files[c.rel]; ok && e.Size == c.size && e.Mtime == c.mtime && e.Link == c.link {
			continue
		}
		if ix.unread[c.rel] == (fileStamp{c.size, c.mtime, c.link}) {
			continue
		}
		todo = append(todo, c)
	}
	for rel := range ix.files {
		if !seen[rel] {
			gone = append(gone, rel)
		}
	}
	for rel := range ix.unread {
		if !seen[rel] {
			gone = append(gone, rel)
		}
	}
	return todo, gone
}

// readers is a bounded pool of file readers, one per CPU, each with its
// own term counter (and word memo) and scratch buffer, kept for a whole
// Build so the memos pay off across batches.
type readers struct {
	ix *Index
	ws []*fileReader
}

type fileReader struct {
	tc  *termCounter
	buf []byte
	dir dirHandle
}

func (ix *Index) newReaders() *readers {
	rd := &readers{ix: ix}
	for range runtime.GOMAXPROCS(0) {
		rd.ws = append(rd.ws, &fileReader{tc: newTermCounter(ix.dict)})
	}
	return rd
}

// readFiles reads and chunks files, one goroutine per reader taking the next
// file as it finishes one.
func (rd *readers) readFiles(ctx context.Context, cands []candidate) ([]fileResult, error) {
	ix := rd.ix
	results := make([]fileResult, len(cands))
	ix.mu.RLock()
	old := make([]*fileEntry, len(cands))
	for i, c := range cands {
		old[i] = ix.files[c.rel]
	}
	ix.mu.RUnlock()
	var next atomic.Int64
	var wg sync.WaitGroup
	for _, w := range rd.ws[:min(len(rd.ws), max(1, len(cands)))] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.dir.close()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(cands) || ctx.Err() != nil {
					return
				}
				results[i] = ix.readFile(w, cands[i], old[i])
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return results, nil
}

// readFile reads, hashes and chunks one file. Bad input is a skip reason,
// never an error.
func (ix *Index) readFile(w *fileReader, c candidate, old *fileEntry) fileResult {
	res := fileResult{rel: c.rel, stamp: fileStamp{c.size, c.mtime, c.link}}
	var data []byte
	var err error
	if c.link {
		data, err = readRegular(ix.fsys, local(c.rel)) // may lead anywhere in the workspace
	} else {
		data, err = w.dir.readFile(ix.fsys, c.rel)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		res.skip = "deleted while indexing"
		return res
	case err != nil:
		res.skip = err.Error()
		return res
	case len(data) > maxFileSize:
		res.skip = fmt.Sprintf("larger than %d bytes", maxFileSize)
		return res
	case bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0:
		res.skip, res.unread = "binary", true
		return res
	case !utf8.Valid(data):
		res.skip, res.unread = "invalid UTF-8", true
		return res
	}
	sum := sha256.Sum256(data)
	res.entry = &fileEntry{Size: int64(len(data)), Mtime: c.mtime, Hash: [16]byte(sum[:16]), Link: c.link, path: c.rel}
	if ix.asPublished(c.rel, res.entry.Hash) {
		res.entry = nil
		res.skip, res.unread = skipPublished, true
		return res
	}
	if old != nil && old.Hash == res.entry.Hash {
		res.entry.Kind = old.Kind
		res.unchanged = true
		return res
	}
	// data is never written again, so the string can share it; the chunks'
	// texts are substrings of it, and all of it is garbage after this call.
	src := unsafe.String(unsafe.SliceData(data), len(data))
	res.entry.Kind = kindOf(c.rel)
	switch {
	case isGenerated(src):
		res.entry.Kind = kindGenerated
	case res.entry.Kind == kindCode && strings.HasSuffix(c.rel, ".go"):
		res.entry.Kind = goKindOf(src)
	}
	chunks := chunkFile(c.rel, src)
	res.slots = make([]slot, 0, len(chunks))
	res.bags = make([]bag, 0, len(chunks))
	for i := range chunks {
		ch := &chunks[i]
		w.buf = appendIndexText(w.buf[:0], ch.Path, ch.Symbol, ch.Text)
		h := sha256.Sum256(w.buf)
		res.slots = append(res.slots, slot{Start: int32(ch.Start), End: int32(ch.End), Off: int32(ch.Off),
			Len: int32(ch.Len), flags: ch.Flags, Symbol: strings.Clone(ch.Symbol), hash: [16]byte(h[:16])})
		bg := w.tc.countFields(ch.Path, ch.Names, ch.Symbol, ch.Text)
		if res.entry.Kind != kindGenerated {
			// Generated code defines names nobody asks for by name.
			for _, k := range nameKeys(ch.Names) {
				bg.syms = append(bg.syms, ix.dict.internString(symbolTerm(k)))
			}
		}
		res.bags = append(res.bags, bg)
	}
	return res
}

// applyResults makes read files searchable (BM25 at once, vectors when the
// cache has them).
func (ix *Index) applyResults(ctx context.Context, results []fileResult) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, r := range results {
		if r.skip != "" {
			if r.skip != skipPublished {
				ix.log.Info("index: skipped", "path", r.rel, "reason", r.skip)
				ix.skipped[r.rel] = r.skip
			}
			ix.removeFileLocked(ctx, r.rel)
			if r.unread {
				ix.unread[r.rel] = r.stamp
				ix.dirty = true
				ix.gen++
			}
			continue
		}
		delete(ix.skipped, r.rel)
		delete(ix.unread, r.rel)
		ix.dirty = true
		ix.gen++
		if r.unchanged {
			e := ix.files[r.rel]
			e.Size, e.Mtime, e.Link = r.entry.Size, r.entry.Mtime, r.entry.Link
			continue
		}
		ix.removeFileLocked(ctx, r.rel)
		e := r.entry
		ix.addFileLocked(e)
		e.slots = make([]int32, 0, len(r.slots))
		if len(r.slots) > 0 {
			ix.chunked++
		}
		for i := range r.slots {
			sl := r.slots[i]
			sl.file = e.id
			n := ix.addSlotLocked(sl, r.bags[i])
			e.slots = append(e.slots, n)
			ix.fileLens[e.id] += ix.bm.docLen[n]
			if ix.cache != nil {
				if v, ok := ix.cache.vecs[sl.hash]; ok {
					ix.setVecLocked(ctx, n, v)
				}
			}
		}
	}
	ix.purgeIfStaleLocked()
}

// addFileLocked gives e a file id and enters it in the manifest.
func (ix *Index) addFileLocked(e *fileEntry) {
	if k := len(ix.freeFiles); k > 0 {
		e.id, ix.freeFiles = ix.freeFiles[k-1], ix.freeFiles[:k-1]
		ix.fileTab[e.id] = e
		ix.fileKinds[e.id] = e.Kind
		ix.fileLens[e.id] = 0
	} else {
		e.id = int32(len(ix.fileTab))
		ix.fileTab = append(ix.fileTab, e)
		ix.fileKinds = append(ix.fileKinds, e.Kind)
		ix.fileLens = append(ix.fileLens, 0)
	}
	ix.files[e.path] = e
}

// setVecLocked gives slot n the vector v (normalised) and points the
// cache entry at the stored row, so the vector exists once.
func (ix *Index) setVecLocked(ctx context.Context, n int32, v []float32) error {
	sl := &ix.slots[n]
	row, err := ix.vec.add(ctx, n, chunkID(n), v)
	if err != nil {
		return err
	}
	sl.hasVec = true
	ix.cache.vecs[sl.hash] = row
	return nil
}

// chunkID names slot n in the vector store; slots are stable while the
// index is open, and the store is rebuilt on every open.
func chunkID(n int32) string { return fmt.Sprintf("chunk-%d", n) }

// purgeIfStaleLocked sweeps removed chunks out of the BM25 postings once
// enough have piled up, and frees their slots for reuse.
func (ix *Index) purgeIfStaleLocked() {
	if !ix.bm.needsPurge() {
		return
	}
	ix.bm.purge()
	ix.free = append(ix.free, ix.limbo...)
	ix.limbo = ix.limbo[:0]
}

// addSlotLocked indexes a chunk.
func (ix *Index) addSlotLocked(sl slot, bg bag) int32 {
	var n int32
	if k := len(ix.free); k > 0 {
		n, ix.free = ix.free[k-1], ix.free[:k-1]
		ix.slots[n] = sl
	} else {
		n = int32(len(ix.slots))
		ix.slots = append(ix.slots, sl)
	}
	ix.live++
	ix.bm.add(n, sl.file, sl.flags, bg)
	return n
}

// removeFileLocked drops a file and its chunks from every structure.
func (ix *Index) removeFileLocked(ctx context.Context, rel string) {
	if _, ok := ix.unread[rel]; ok {
		delete(ix.unread, rel)
		ix.dirty = true
		ix.gen++
	}
	e, ok := ix.files[rel]
	if !ok {
		return
	}
	delete(ix.files, rel)
	if len(e.slots) > 0 {
		ix.chunked--
	}
	ix.fileTab[e.id] = nil
	ix.fileLens[e.id] = 0
	ix.freeFiles = append(ix.freeFiles, e.id)
	ix.dirty = true
	ix.gen++
	for _, n := range e.slots {
		sl := &ix.slots[n]
		ix.bm.remove(n) // lazily: the slot waits in limbo for the purge
		if sl.hasVec {
			// The cache keeps the vector (a switch back is free), as a copy
			// once the row can be reused.
			if v, ok := ix.cache.vecs[sl.hash]; ok && len(v) > 0 && ix.vec.mat.has(n) && &v[0] == &ix.vec.mat.row(n)[0] {
				ix.cache.vecs[sl.hash] = slices.Clone(v)
			}
			if err := ix.vec.remove(ctx, n, chunkID(n)); err != nil {
				ix.log.Warn("index: drop vector", "path", rel, "err", err)
			}
		}
		*sl = slot{file: -1}
		ix.live--
		ix.limbo = append(ix.limbo, n)
	}
}

// nameKeys are the lookup keys of a chunk's declarations: each name
// lowercased, and for methods also the bare method name.
func nameKeys(names []string) []string {
	var keys []string
	for _, s := range names {
		if s == "…" || strings.ContainsRune(s, ' ') {
			continue
		}
		s = strings.ToLower(s)
		keys = append(keys, s)
		if i := strings.LastIndexByte(s, '.'); i >= 0 {
			keys = append(keys, s[i+1:])
		}
	}
	return keys
}

// dirHandle keeps the os.Root of the directory a reader last read from, so
// reading the files of one directory costs one openat each rather than a
// walk down from the workspace root per file.
type dirHandle struct {
	dir  string
	root *os.Root
}

func (h *dirHandle) readFile(ws *os.Root, rel string) ([]byte, error) {
	dir, name := path.Split(rel)
	dir = strings.TrimSuffix(dir, "/")
	if h.root == nil || h.dir != dir {
		h.close()
		r, err := ws.OpenRoot(local(dir))
		if err != nil {
			return nil, err
		}
		h.root, h.dir = r, dir
	}
	return readRegular(h.root, name)
}

func (h *dirHandle) close() {
	if h.root != nil {
		h.root.Close()
		h.root = nil
	}
}
