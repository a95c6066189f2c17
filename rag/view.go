package rag

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
)

// View answers queries straight from a saved snapshot, memory-mapped: it
// reads no more of it than a query touches and walks nothing, so a search
// from the command line costs milliseconds where loading the index would
// cost a second. It ranks exactly as the index does (keyword search; a
// View has no vectors). A delta beside the snapshot (delta.go) is mapped
// too and ranked with it. Fresh says whether the workspace still matches;
// Update brings a few changed files into the delta.
type View struct {
	root     string
	stateDir string
	fsys     *os.Root
	s        *snapFile
	d        *deltaLayer // nil: the base alone
	unmap    func() error
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
	return &View{root: abs, stateDir: stateDir, fsys: fsys, s: s, d: attachDelta(s, stateDir), unmap: unmap}, nil
}

// Close unmaps the snapshot. Hits already returned stay valid (they hold
// copies).
func (v *View) Close() error {
	v.fsys.Close()
	if v.d != nil {
		v.d.unmap()
	}
	return v.unmap()
}

// Status reports the snapshot's size.
func (v *View) Status() Status {
	if v.d != nil {
		return Status{State: StateReady, Files: v.s.nIndexed + v.d.s.nIndexed, Chunks: v.d.nDocs, Progress: 1}
	}
	return Status{State: StateReady, Files: v.s.nIndexed, Chunks: v.s.nDocs, Progress: 1}
}

// viewRec is a file as the view knows it: the delta's record, else the
// base's.
type viewRec struct {
	path        string
	size, mtime int64
	link        bool
}

// dirGroup is a directory of the view and the files directly in it.
type dirGroup struct {
	dir    string
	mtime  int64
	listed bool // the directory is in the view's list (its mtime is known)
	files  []viewRec
}

// groups lists the view's directories with their files: the delta's
// records over the base's, the delta's directory list over the base's.
func (v *View) groups() []dirGroup {
	dirsOf := v.s
	if v.d != nil && v.d.s.nDirs > 0 {
		dirsOf = v.d.s
	}
	idx := make(map[string]int, dirsOf.nDirs)
	groups := make([]dirGroup, dirsOf.nDirs, dirsOf.nDirs+1)
	for i := range dirsOf.nDirs {
		p, mtime := dirsOf.dir(i)
		idx[p] = i
		groups[i] = dirGroup{dir: p, mtime: mtime, listed: true}
	}
	orphans := dirGroup{}
	add := func(r snapFileRec) {
		rec := viewRec{r.path, r.size, r.mtime, r.link}
		if d, ok := idx[parentDir(r.path)]; ok {
			groups[d].files = append(groups[d].files, rec)
		} else {
			orphans.files = append(orphans.files, rec)
		}
	}
	for i := range v.s.nFiles {
		if v.d == nil || !v.d.hidden[i] {
			add(v.s.file(i))
		}
	}
	if v.d != nil {
		for i := range v.d.s.nFiles {
			if r := v.d.s.file(i); !r.deleted {
				add(r)
			}
		}
	}
	if len(orphans.files) > 0 {
		groups = append(groups, orphans)
	}
	return groups
}

// Fresh reports whether every directory and file of the view still has
// the mtime (and files the size) it had when indexed. A file added or
// removed changes its directory's mtime, so this catches every change the
// index would see, with one stat per path and no reads: files are stat'ed
// relative to their directory, opened once, on all CPUs.
func (v *View) Fresh(ctx context.Context) bool {
	changed, dirs, ok := v.scan(ctx, false)
	return ok && len(changed) == 0 && len(dirs) == 0
}

// scan checks every group on all CPUs. With all, it lists every changed
// file and directory; without, it stops at the first change. ok is false
// when ctx ended first.
func (v *View) scan(ctx context.Context, all bool) (files []string, dirs []*dirGroup, ok bool) {
	groups := v.groups()
	var next atomic.Int64
	var stale atomic.Bool
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0)*2, max(1, len(groups))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for (all || !stale.Load()) && ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(groups) {
					return
				}
				dirChanged, changed := v.checkDir(&groups[i], all)
				if dirChanged || len(changed) > 0 {
					stale.Store(true)
					mu.Lock()
					files = append(files, changed...)
					if dirChanged {
						dirs = append(dirs, &groups[i])
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if !all && stale.Load() {
		return nil, []*dirGroup{nil}, ctx.Err() == nil
	}
	return files, dirs, ctx.Err() == nil
}

// checkFiles stats files by path.
func (v *View) checkFiles(files []viewRec, all bool) []string {
	var changed []string
	for _, f := range files {
		stat := os.Lstat
		if f.link {
			stat = os.Stat
		}
		fi, err := stat(filepath.Join(v.root, filepath.FromSlash(f.path)))
		if err != nil || !fi.Mode().IsRegular() || fi.Size() != f.size || fi.ModTime().UnixNano() != f.mtime {
			changed = append(changed, f.path)
			if !all {
				break
			}
		}
	}
	return changed
}

// Search answers like Index.Search.
func (v *View) Search(ctx context.Context, query string, limit int) ([]SearchHit, error) {
	p := defaultRank
	if limit <= 0 {
		limit = 10
	}
	var c corpus = viewCorpus{v.s}
	var lc *layeredCorpus
	if v.d != nil {
		lc = newLayeredCorpus(v.s, v.d)
		c = lc
	}
	q := parseQuery(query, &p)
	rs := rank(c, q, nil, &p, limit, nil)
	metas := make([]hitMeta, len(rs))
	texts := make([]string, len(rs))
	for i, r := range rs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var sl slot
		s := v.s
		if lc != nil {
			sl, s = lc.doc(r.doc)
		} else {
			sl = v.s.doc(r.doc)
		}
		// The mapped strings die with the view.
		sl.Symbol = strings.Clone(sl.Symbol)
		metas[i] = newHitMeta(strings.Clone(s.filePath(sl.file)), s.fileKind(sl.file), sl, r)
		texts[i], _ = readChunkText(v.fsys, metas[i].path, &metas[i].slot)
	}
	return assembleHits(q, metas, texts), nil
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
