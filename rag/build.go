package rag

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
}

// fileResult is a file read and chunked outside the lock.
type fileResult struct {
	rel       string
	entry     *fileEntry
	slots     []*slot // new chunks; nil when the content is unchanged
	bags      []bag   // parallel to slots
	unchanged bool    // same hash: only size/mtime are updated
	skip      string  // why the file is not indexed
}

// Build brings the index up to date with the workspace: it walks the tree,
// re-reads files whose size or mtime changed, re-chunks those whose content
// hash changed, drops files that are gone or now ignored, embeds chunks the
// cache does not know, and saves a snapshot. progress, if not nil, receives
// (done, total) work units.
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

	cands, err := ix.walk(ctx)
	if err != nil {
		return err
	}
	walked := time.Since(start)
	todo, gone := ix.diff(cands)
	ix.mu.Lock()
	ix.lastRead = len(todo)
	ix.mu.Unlock()
	total := len(todo) + 1
	progress(0, total)
	ix.setProgress(0)

	bags := make(map[int32]bag) // bags of new chunks, reused for embedding
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
		ix.applyResults(ctx, out.results, bags)
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

	if err := ix.embedMissing(ctx, bags, func(frac float64) {
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
	files, chunks := len(ix.files), len(ix.byID)
	ix.mu.Unlock()
	ix.log.Info("index: built", "files", files, "chunks", chunks, "read", len(todo), "removed", len(gone),
		"took", time.Since(start).Round(time.Millisecond), "walk", walked.Round(time.Millisecond),
		"read", (readDone - walked).Round(time.Millisecond), "embed", (embedded - readDone).Round(time.Millisecond))
	return ix.saveIfDirty()
}

// walk lists the files to index. Unreadable directories, broken or looping
// symlinks and files that vanish mid-walk are noted and skipped.
func (ix *Index) walk(ctx context.Context) ([]candidate, error) {
	var out []candidate
	err := filepath.WalkDir(ix.root, func(p string, d fs.DirEntry, err error) error {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		rel, _ := ix.rel(p)
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
			return nil
		}
		if c, ok := ix.candidate(p, rel, d); ok {
			out = append(out, c)
		}
		return nil
	})
	if err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("walk %s: %w", ix.root, err)
	}
	return out, nil
}

// candidate checks one walked file. Symlinks to files are indexed under the
// link's name; links to directories are not followed, which rules out loops.
func (ix *Index) candidate(abs, rel string, d fs.DirEntry) (candidate, bool) {
	if ix.ig.ignored(rel, false) {
		return candidate{}, false
	}
	var info fs.FileInfo
	var err error
	if d.Type()&fs.ModeSymlink != 0 {
		info, err = os.Stat(abs)
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
	return candidate{rel: rel, size: info.Size(), mtime: info.ModTime().UnixNano()}, true
}

// diff splits the walk into files to read and manifest entries to drop.
func (ix *Index) diff(cands []candidate) (todo []candidate, gone []string) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	seen := make(map[string]bool, len(cands))
	for _, c := range cands {
		seen[c.rel] = true
		if e, ok := ix.files[c.rel]; ok && e.Size == c.size && e.Mtime == c.mtime {
			continue
		}
		todo = append(todo, c)
	}
	for rel := range ix.files {
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
	res := fileResult{rel: c.rel}
	data, err := os.ReadFile(ix.abs(c.rel))
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
		res.skip = "binary"
		return res
	case !utf8.Valid(data):
		res.skip = "invalid UTF-8"
		return res
	}
	sum := sha256.Sum256(data)
	res.entry = &fileEntry{Size: int64(len(data)), Mtime: c.mtime, Hash: [16]byte(sum[:16])}
	if old != nil && old.Hash == res.entry.Hash {
		res.entry.Chunks = old.Chunks
		res.unchanged = true
		return res
	}
	// data is never written again, so the string can share it; the chunks'
	// texts are substrings of it, and all of it is garbage after this call.
	chunks := chunkFile(c.rel, unsafe.String(unsafe.SliceData(data), len(data)))
	ids := make(map[string]int, len(chunks))
	res.entry.Chunks = make([]string, 0, len(chunks))
	res.slots = make([]*slot, 0, len(chunks))
	res.bags = make([]bag, 0, len(chunks))
	for i := range chunks {
		ch := &chunks[i]
		w.buf = appendIndexText(w.buf[:0], ch.Path, ch.Symbol, ch.Text)
		h := sha256.Sum256(w.buf)
		// Ids are content-addressed so an edit elsewhere in the file does
		// not renumber, and re-embed, every chunk below it.
		id := ch.Path + "#" + hex.EncodeToString(h[:6])
		if n := ids[id]; n > 0 {
			id = fmt.Sprintf("%s~%d", id, n)
		}
		ids[id]++
		res.entry.Chunks = append(res.entry.Chunks, id)
		res.slots = append(res.slots, newSlot(ch, id, [16]byte(h[:16])))
		res.bags = append(res.bags, w.tc.count(ch.Path, " ", ch.Symbol, "\n", ch.Text))
	}
	return res
}

// applyResults makes read files searchable (BM25 at once, vectors when the
// cache has them) and records the bags of chunks still to embed.
func (ix *Index) applyResults(ctx context.Context, results []fileResult, bags map[int32]bag) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, r := range results {
		if r.skip != "" {
			ix.log.Info("index: skipped", "path", r.rel, "reason", r.skip)
			ix.skipped[r.rel] = r.skip
			ix.removeFileLocked(ctx, r.rel)
			continue
		}
		delete(ix.skipped, r.rel)
		ix.dirty = true
		if r.unchanged {
			ix.files[r.rel] = r.entry
			continue
		}
		ix.removeFileLocked(ctx, r.rel)
		ix.files[r.rel] = r.entry
		for i, sl := range r.slots {
			n := ix.addSlotLocked(sl, r.bags[i])
			if v, ok := ix.cache.vecs[sl.hash]; ok {
				ix.setVecLocked(ctx, n, v)
			}
			if !sl.hasVec && bags != nil {
				bags[n] = r.bags[i]
			}
		}
	}
	ix.purgeIfStaleLocked()
}

// setVecLocked gives slot n the vector v (normalised) and points the
// cache entry at the stored row, so the vector exists once.
func (ix *Index) setVecLocked(ctx context.Context, n int32, v []float32) error {
	sl := ix.slots[n]
	row, err := ix.vec.add(ctx, n, sl.id, v)
	if err != nil {
		return err
	}
	sl.hasVec = true
	ix.cache.vecs[sl.hash] = row
	return nil
}

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

// addSlotLocked indexes a chunk for BM25 and symbol lookup.
func (ix *Index) addSlotLocked(sl *slot, bg bag) int32 {
	var n int32
	if k := len(ix.free); k > 0 {
		n, ix.free = ix.free[k-1], ix.free[:k-1]
		ix.slots[n] = sl
	} else {
		n = int32(len(ix.slots))
		ix.slots = append(ix.slots, sl)
	}
	ix.byID[sl.id] = n
	ix.bm.add(n, bg)
	for _, s := range symbolKeys(sl.Symbol) {
		ix.symbols[s] = append(ix.symbols[s], n)
	}
	return n
}

// removeFileLocked drops a file and its chunks from every structure.
func (ix *Index) removeFileLocked(ctx context.Context, rel string) {
	e, ok := ix.files[rel]
	if !ok {
		return
	}
	delete(ix.files, rel)
	ix.dirty = true
	for _, id := range e.Chunks {
		n, ok := ix.byID[id]
		if !ok {
			continue
		}
		sl := ix.slots[n]
		ix.bm.remove(n) // lazily: the slot waits in limbo for the purge
		for _, s := range symbolKeys(sl.Symbol) {
			ix.symbols[s] = removeValue(ix.symbols[s], n)
			if len(ix.symbols[s]) == 0 {
				delete(ix.symbols, s)
			}
		}
		if sl.hasVec {
			// The cache keeps the vector (a switch back is free), as a copy
			// once the row can be reused.
			if v, ok := ix.cache.vecs[sl.hash]; ok && len(v) > 0 && ix.vec.mat.has(n) && &v[0] == &ix.vec.mat.row(n)[0] {
				ix.cache.vecs[sl.hash] = slices.Clone(v)
			}
			if err := ix.vec.remove(ctx, n, id); err != nil {
				ix.log.Warn("index: drop vector", "path", rel, "err", err)
			}
		}
		delete(ix.byID, id)
		ix.slots[n] = nil
		ix.limbo = append(ix.limbo, n)
	}
}

// symbolKeys are the lookup keys of a chunk's symbols: each name lowercased,
// and for methods also the bare method name.
func symbolKeys(symbol string) []string {
	if symbol == "" {
		return nil
	}
	var keys []string
	for _, s := range strings.Split(symbol, ", ") {
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

func removeValue(s []int32, v int32) []int32 {
	for i, x := range s {
		if x == v {
			return append(s[:i], s[i+1:]...)
		}
	}
	return s
}
