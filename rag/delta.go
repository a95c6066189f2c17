package rag

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// A delta is a small snapshot beside the base one (index.delta): the files
// changed since the base was written, whole (chunks, postings, stamps), and
// tombstones for the files gone. A search maps both and ranks their union
// (the base's changed files hidden), so one changed file costs a delta of
// that file's size, not a rewrite of the whole index; the next full save
// (the daemon's, or an `agentd index`) folds it in. A delta names the base
// it applies to; one over another base is ignored.

// maxDeltaFiles bounds a delta: past it a full snapshot is cheaper to
// search and to keep.
const maxDeltaFiles = 256

func deltaPathIn(stateDir string) string { return filepath.Join(stateDir, "index.delta") }

// deltaLayer is a mapped delta over a base snapshot.
type deltaLayer struct {
	s      *snapFile
	unmap  func() error
	hidden []bool // by base file: replaced or deleted by the delta
	// Totals of the union.
	nDocs, nFiles int
	total         int64
}

// attachDelta maps stateDir's delta when it applies to base; nil when
// there is none (or it is unusable: the base is then searched alone).
func attachDelta(base *snapFile, stateDir string) *deltaLayer {
	data, unmap, err := mapFile(deltaPathIn(stateDir))
	if err != nil {
		return nil
	}
	s, err := parseSnapshot(data)
	if err != nil || s.baseID == 0 || s.baseID != base.id || s.root != base.root {
		unmap()
		return nil
	}
	l := &deltaLayer{s: s, unmap: unmap, hidden: make([]bool, base.nFiles)}
	l.nDocs, l.total, l.nFiles = base.nDocs, base.totalLen, base.nChunked
	for i := range s.nFiles {
		b, ok := base.findFile(s.filePath(int32(i)))
		if !ok || l.hidden[b] {
			continue
		}
		l.hidden[b] = true
		r := base.file(b)
		l.nDocs -= int(r.nDocs)
		l.total -= int64(r.length)
		if r.nDocs > 0 {
			l.nFiles--
		}
	}
	l.nDocs += s.nDocs
	l.total += s.totalLen
	l.nFiles += s.nChunked
	return l
}

// findFile finds a path among the base's files, which are sorted by path.
func (s *snapFile) findFile(p string) (int, bool) {
	i := sort.Search(s.nFiles, func(i int) bool { return s.filePath(int32(i)) >= p })
	return i, i < s.nFiles && s.filePath(int32(i)) == p
}

// layeredCorpus ranks a base and its delta as one index: the delta's docs
// and files are numbered after the base's, the base's hidden files'
// chunks have length 0 (ranking skips them).
type layeredCorpus struct {
	base, delta  *snapFile
	l            *deltaLayer
	dbase, fbase int32
}

func newLayeredCorpus(base *snapFile, l *deltaLayer) *layeredCorpus {
	return &layeredCorpus{base: base, delta: l.s, l: l, dbase: int32(base.nDocs), fbase: int32(base.nFiles)}
}

func (c *layeredCorpus) numDocs() int { return c.l.nDocs }
func (c *layeredCorpus) avgDocLen() float64 {
	return float64(c.l.total) / float64(max(1, c.l.nDocs))
}
func (c *layeredCorpus) docSpace() int  { return c.base.nDocs + c.delta.nDocs }
func (c *layeredCorpus) fileSpace() int { return c.base.nFiles + c.delta.nFiles }
func (c *layeredCorpus) numFiles() int  { return c.l.nFiles }

func (c *layeredCorpus) postings(term string, buf *postingBuf) ([]int32, []uint16) {
	buf.docs, buf.tfs = buf.docs[:0], buf.tfs[:0]
	if i := c.base.lookup(term); i >= 0 {
		_, df, p := c.base.termAt(i)
		buf.docs, buf.tfs = c.base.decodePostings(p, df, buf.docs, buf.tfs)
	}
	if i := c.delta.lookup(term); i >= 0 {
		_, df, p := c.delta.termAt(i)
		n := len(buf.docs)
		buf.docs, buf.tfs = c.delta.decodePostings(p, df, buf.docs, buf.tfs)
		for k := n; k < len(buf.docs); k++ {
			buf.docs[k] += c.dbase
		}
	}
	return buf.docs, buf.tfs
}

func (c *layeredCorpus) docLen(d int32) int32 {
	if d >= c.dbase {
		return c.delta.docLen(d - c.dbase)
	}
	if c.l.hidden[c.base.docFile(d)] {
		return 0
	}
	return c.base.docLen(d)
}

func (c *layeredCorpus) docFile(d int32) int32 {
	if d >= c.dbase {
		return c.delta.docFile(d-c.dbase) + c.fbase
	}
	return c.base.docFile(d)
}

func (c *layeredCorpus) docFlags(d int32) uint8 {
	if d >= c.dbase {
		return c.delta.docFlags(d - c.dbase)
	}
	return c.base.docFlags(d)
}

func (c *layeredCorpus) docStart(d int32) int32 {
	if d >= c.dbase {
		return int32(le32(c.delta.docs, int(d-c.dbase)*docRec+4))
	}
	return int32(le32(c.base.docs, int(d)*docRec+4))
}

func (c *layeredCorpus) fileKind(f int32) fileKind {
	if f >= c.fbase {
		return c.delta.fileKind(f - c.fbase)
	}
	return c.base.fileKind(f)
}

func (c *layeredCorpus) filePath(f int32) string {
	if f >= c.fbase {
		return c.delta.filePath(f - c.fbase)
	}
	return c.base.filePath(f)
}

func (c *layeredCorpus) fileLen(f int32) int32 {
	if f >= c.fbase {
		return c.delta.fileLen(f - c.fbase)
	}
	if c.l.hidden[f] {
		return 0
	}
	return c.base.fileLen(f)
}

// doc returns doc d's slot and the snapshot holding it.
func (c *layeredCorpus) doc(d int32) (slot, *snapFile) {
	if d >= c.dbase {
		return c.delta.doc(d - c.dbase), c.delta
	}
	return c.base.doc(d), c.base
}

// errDeltaTooBig means the changes are better folded into a new base: too
// many files, a directory added or removed, an ignore file changed.
var errDeltaTooBig = errors.New("too many changes for a delta")

// loadSnap adds a snapshot's files to the index, replacing files of the
// same path: a delta over the base restore loaded, or a delta read back
// to be extended. Tombstones remove their file and are returned. Chunks get
// their bags back from the postings (a delta is small).
func (ix *Index) loadSnap(s *snapFile) (tombs []string, err error) {
	bags := make([]bag, s.nDocs)
	var docs []int32
	var tfs []uint16
	for i := range s.nTerms {
		t, df, p := s.termAt(i)
		id := ix.dict.internString(strings.Clone(t))
		docs, tfs = s.decodePostings(p, df, docs[:0], tfs[:0])
		sym := strings.HasPrefix(t, symbolPrefix)
		for j, d := range docs {
			if sym {
				bags[d].syms = append(bags[d].syms, id)
			} else {
				bags[d].ids = append(bags[d].ids, id)
				bags[d].freqs = append(bags[d].freqs, int32(tfs[j]))
			}
		}
	}
	for d := range bags {
		bags[d].total = s.docLen(int32(d))
	}
	for i := range s.nFiles {
		r := s.file(i)
		path := strings.Clone(r.path)
		if path == "" {
			return nil, errors.New("delta: bad file table")
		}
		ix.removeFileLocked(context.Background(), path)
		switch {
		case r.deleted:
			tombs = append(tombs, path)
			continue
		case r.unread:
			ix.unread[path] = fileStamp{r.size, r.mtime, r.link}
			continue
		}
		e := &fileEntry{Size: r.size, Mtime: r.mtime, Hash: r.hash, Kind: r.kind, Link: r.link, path: path}
		ix.addFileLocked(e)
		for d := r.firstDoc; d < r.firstDoc+r.nDocs; d++ {
			sl := s.doc(d)
			sl.Symbol = strings.Clone(sl.Symbol)
			sl.file = e.id
			n := ix.addSlotLocked(sl, bags[d])
			e.slots = append(e.slots, n)
			ix.fileLens[e.id] += ix.bm.docLen[n]
		}
		if len(e.slots) > 0 {
			ix.chunked++
		}
	}
	if s.nDirs > 0 {
		clear(ix.dirs)
		for i := range s.nDirs {
			p, mtime := s.dir(i)
			ix.dirs[strings.Clone(p)] = mtime
		}
	}
	return tombs, nil
}

// restoreDelta applies stateDir's delta over the base restore loaded, when
// it names that base.
func (ix *Index) restoreDelta(baseID uint64) error {
	data, err := os.ReadFile(deltaPathIn(ix.stateDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read delta: %w", err)
	}
	s, err := parseSnapshot(data)
	if err != nil || s.baseID != baseID || s.root != ix.root {
		return nil // another base's, or torn: the walk will see the changes
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	_, err = ix.loadSnap(s)
	return err
}

// Update brings the view up to date with a few changed files without
// rewriting the snapshot: it reads only the files whose stamps moved (and
// new files of directories whose mtime did), writes them into the delta,
// and maps the new delta. hidden are directories never indexed, as for
// Options.Hidden. It returns errDeltaTooBig when a full update is the
// better answer (a directory added or removed, an ignore file changed,
// more than maxDeltaFiles files in the delta): use Open and Build then.
func (v *View) Update(ctx context.Context, hidden ...string) error {
	files, dirs, ok := v.scan(ctx, true)
	if !ok {
		return ctx.Err()
	}
	if len(files) == 0 && len(dirs) == 0 {
		return nil
	}
	ix, err := newIndex(Options{Root: v.root, StateDir: v.stateDir, Hidden: hidden})
	if err != nil {
		return err
	}
	defer ix.fsys.Close()
	paths, err := v.added(ix, dirs)
	if err != nil {
		return err
	}
	paths = append(paths, files...)
	for _, p := range paths {
		if isIgnoreFile(p) {
			return errDeltaTooBig
		}
	}
	ix.mu.Lock()
	var tombs []string
	if v.d != nil {
		tombs, err = ix.loadSnap(v.d.s)
	} else {
		for i := range v.s.nDirs {
			p, mtime := v.s.dir(i)
			ix.dirs[strings.Clone(p)] = mtime
		}
	}
	var cands []candidate
	for _, p := range paths {
		cands = append(cands, ix.changedLocked(ctx, p)...)
	}
	ix.mu.Unlock()
	if err != nil {
		return err
	}
	results, err := ix.newReaders().readFiles(ctx, cands)
	if err != nil {
		return err
	}
	ix.applyResults(ctx, results)
	ix.touchDirs(paths)
	for _, g := range dirs {
		if fi, err := ix.fsys.Lstat(local(g.dir)); err == nil && g.listed {
			ix.dirs[g.dir] = fi.ModTime().UnixNano()
		}
	}
	for _, p := range paths {
		if ix.files[p] == nil && ix.unread[p] == (fileStamp{}) {
			if _, inBase := v.s.findFile(p); inBase {
				tombs = append(tombs, p)
			}
		}
	}
	if len(ix.files)+len(ix.unread)+len(tombs) > maxDeltaFiles {
		return errDeltaTooBig
	}
	enc := snapEncoding{tombs: tombs, id: newSnapID(), baseID: v.s.id}
	if err := ix.writeSnapshotAs(deltaPathIn(v.stateDir), enc); err != nil {
		return fmt.Errorf("write delta: %w", err)
	}
	if v.d != nil {
		v.d.unmap()
	}
	v.d = attachDelta(v.s, v.stateDir)
	if v.d == nil {
		return errors.New("the delta just written is unreadable")
	}
	return nil
}

// added lists the files that appeared in changed directories (and the
// records they lost, which the stat pass already reports). A directory that
// appeared or vanished needs a walk: errDeltaTooBig.
func (v *View) added(ix *Index, dirs []*dirGroup) ([]string, error) {
	known := map[string]bool{}
	for _, g := range v.groups() {
		if g.listed {
			known[g.dir] = true
		}
	}
	var out []string
	for _, g := range dirs {
		if !g.listed {
			continue
		}
		ents, err := os.ReadDir(filepath.Join(v.root, filepath.FromSlash(g.dir)))
		if err != nil {
			return nil, errDeltaTooBig // the directory itself went
		}
		have := map[string]bool{}
		for _, f := range g.files {
			have[f.path] = true
		}
		for _, e := range ents {
			rel := e.Name()
			if g.dir != "" {
				rel = g.dir + "/" + rel
			}
			switch {
			case e.IsDir():
				if !known[rel] && !ix.ig.ignored(rel, true) {
					return nil, errDeltaTooBig
				}
			case !have[rel] && !ix.ig.ignored(rel, false):
				out = append(out, rel)
			}
		}
		for _, f := range g.files {
			if _, err := os.Lstat(filepath.Join(v.root, filepath.FromSlash(f.path))); err != nil {
				out = append(out, f.path)
			}
		}
	}
	return out, nil
}

// ErrTooManyChanges is Update's answer when a full update (Open, Build)
// is the better one.
var ErrTooManyChanges = errDeltaTooBig
