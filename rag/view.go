package rag

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
)

// View answers queries straight from a saved snapshot, memory-mapped: it
// reads no more of it than a query touches and walks nothing, so a search
// from the command line costs milliseconds where loading the index would
// cost a second. It ranks exactly as the index does (keyword search; a
// View has no vectors). Fresh says whether the workspace still matches the
// snapshot; when it does not, use Open and Build.
type View struct {
	root  string
	fsys  *os.Root
	s     *snapFile
	unmap func() error
}

// ErrNoSnapshot means the state directory holds no usable snapshot of the
// workspace.
var ErrNoSnapshot = errors.New("no index snapshot")

// OpenView maps the snapshot of root kept in stateDir.
func OpenView(root, stateDir string) (*View, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("open view: %w", err)
	}
	data, unmap, err := mapFile(snapshotPathIn(stateDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNoSnapshot
	}
	if err != nil {
		return nil, fmt.Errorf("open view: %w", err)
	}
	s, err := parseSnapshot(data)
	if err == nil && s.root != abs {
		err = fmt.Errorf("snapshot is for %s", s.root)
	}
	var fsys *os.Root
	if err == nil {
		fsys, err = os.OpenRoot(abs)
	}
	if err != nil {
		unmap()
		return nil, fmt.Errorf("%w: %v", ErrNoSnapshot, err)
	}
	return &View{root: abs, fsys: fsys, s: s, unmap: unmap}, nil
}

// Close unmaps the snapshot. Hits already returned stay valid (they hold
// copies).
func (v *View) Close() error {
	v.fsys.Close()
	return v.unmap()
}

// Status reports the snapshot's size.
func (v *View) Status() Status {
	return Status{State: StateReady, Files: v.s.nIndexed, Chunks: v.s.nDocs, Progress: 1}
}

// Fresh reports whether every directory and file of the snapshot still has
// the mtime (and files the size) it had when indexed. A file added or
// removed changes its directory's mtime, so this catches every change the
// index would see, with one stat per path and no reads: files are stat'ed
// relative to their directory, opened once, on all CPUs.
func (v *View) Fresh(ctx context.Context) bool {
	groups := v.byDir()
	var next atomic.Int64
	var stale atomic.Bool
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0)*2, max(1, len(groups))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stale.Load() && ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(groups) {
					return
				}
				if !v.dirUnchanged(&groups[i]) {
					stale.Store(true)
				}
			}
		}()
	}
	wg.Wait()
	return !stale.Load() && ctx.Err() == nil
}

// dirGroup is a directory of the snapshot and the files directly in it.
type dirGroup struct {
	dir   int   // index into the snapshot's dirs; -1 for files whose directory is not listed
	files []int // indexes into its files
}

func (v *View) byDir() []dirGroup {
	idx := make(map[string]int, v.s.nDirs)
	groups := make([]dirGroup, v.s.nDirs, v.s.nDirs+1)
	for i := range v.s.nDirs {
		p, _ := v.s.dir(i)
		idx[p] = i
		groups[i].dir = i
	}
	orphans := dirGroup{dir: -1}
	for i := range v.s.nFiles {
		if d, ok := idx[parentDir(v.s.filePath(int32(i)))]; ok {
			groups[d].files = append(groups[d].files, i)
		} else {
			orphans.files = append(orphans.files, i)
		}
	}
	if len(orphans.files) > 0 {
		groups = append(groups, orphans)
	}
	return groups
}

// Search answers like Index.Search.
func (v *View) Search(ctx context.Context, query string, limit int) ([]SearchHit, error) {
	p := defaultRank
	if limit <= 0 {
		limit = 10
	}
	rs := rank(viewCorpus{v.s}, parseQuery(query, &p), nil, &p, limit, nil)
	hits := make([]SearchHit, 0, len(rs))
	for _, r := range rs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		sl := v.s.doc(r.doc)
		m := hitMeta{path: v.s.filePath(sl.file), kind: v.s.fileKind(sl.file), slot: sl, cover: r.cover}
		text, _ := readChunkText(v.fsys, m.path, &m.slot)
		h := m.hit(text)
		// The mapped strings die with the view.
		h.Path, h.Symbol = string([]byte(h.Path)), string([]byte(h.Symbol))
		hits = append(hits, h)
	}
	return hits, nil
}

// viewCorpus is a snapshot as ranking sees it.
type viewCorpus struct{ s *snapFile }

func (c viewCorpus) numDocs() int { return c.s.nDocs }
func (c viewCorpus) avgDocLen() float64 {
	return float64(c.s.totalLen) / float64(max(1, c.s.nDocs))
}
func (c viewCorpus) docSpace() int  { return c.s.nDocs }
func (c viewCorpus) fileSpace() int { return c.s.nFiles }
func (c viewCorpus) postings(term string, buf *postingBuf) ([]int32, []uint16) {
	i := c.s.lookup(term)
	if i < 0 {
		return nil, nil
	}
	_, df, p := c.s.termAt(i)
	buf.docs, buf.tfs = c.s.decodePostings(p, df, buf.docs[:0], buf.tfs[:0])
	return buf.docs, buf.tfs
}
func (c viewCorpus) docLen(d int32) int32      { return c.s.docLen(d) }
func (c viewCorpus) docFile(d int32) int32     { return c.s.docFile(d) }
func (c viewCorpus) docFlags(d int32) uint8    { return c.s.docFlags(d) }
func (c viewCorpus) fileKind(f int32) fileKind { return c.s.fileKind(f) }
func (c viewCorpus) filePath(f int32) string   { return c.s.filePath(f) }
func (c viewCorpus) numFiles() int             { return c.s.nChunked }
func (c viewCorpus) fileLen(f int32) int32     { return c.s.fileLen(f) }
func (c viewCorpus) docStart(d int32) int32    { return int32(le32(c.s.docs, int(d)*docRec+4)) }

// filesUnchanged stats files by path.
func (v *View) filesUnchanged(files []int) bool {
	for _, i := range files {
		f := v.s.file(i)
		stat := os.Lstat
		if f.link {
			stat = os.Stat
		}
		fi, err := stat(filepath.Join(v.root, filepath.FromSlash(f.path)))
		if err != nil || !fi.Mode().IsRegular() || fi.Size() != f.size || fi.ModTime().UnixNano() != f.mtime {
			return false
		}
	}
	return true
}
