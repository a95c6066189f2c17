package rag

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// storeCache keeps what a process has read from a store that never
// changes: segments' metadata, and the flat view over the segments of a
// set of heads, which every query of those heads shares.
type storeCache struct {
	st Store

	mu    sync.Mutex
	segs  map[int64]*Segment
	bases map[string]*baseView // by repositories asked for (Repos joined): the last heads seen for them
}

func newStoreCache(st Store) *storeCache {
	return &storeCache{st: st, segs: map[int64]*Segment{}, bases: map[string]*baseView{}}
}

// segment returns a segment's metadata, read once.
func (c *storeCache) segment(ctx context.Context, id int64) (*Segment, error) {
	c.mu.Lock()
	s := c.segs[id]
	c.mu.Unlock()
	if s != nil {
		return s, nil
	}
	s, err := c.st.Segment(ctx, id)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.segs[id] = s
	c.mu.Unlock()
	return s, nil
}

// baseView is the segments of some heads laid end to end: one doc and file
// numbering, the metadata ranking reads in flat arrays, dead files' chunks
// at length 0.
type baseView struct {
	key   string
	heads []Head
	parts []basePart // by docBase
	// By doc.
	docLen   []int32
	docFile  []int32
	docFlags []uint8
	docStart []int32
	// By file.
	files    []*SegmentFile
	fileHead []int32 // index into heads
	fileDead []bool
	live     int // live docs
	liveLen  int64
	segPart  map[int64]int

	manifests sync.Map // head index → map[path]file number, built when an overlay asks
}

type basePart struct {
	seg               *Segment
	head              int
	docBase, fileBase int32
}

// headsKey identifies a set of heads down to their parts.
func headsKey(heads []Head) string {
	var b strings.Builder
	for _, h := range heads {
		b.WriteString(h.Repo)
		b.WriteByte('@')
		b.WriteString(h.Commit)
		for _, p := range h.Parts {
			b.WriteByte(' ')
			b.WriteString(strconv.FormatInt(p.Segment, 10))
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(len(p.Dead)))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// base returns the view of heads, building it (and reading the segments it
// lacks) when the heads changed since the last query of the same
// repositories.
func (c *storeCache) base(ctx context.Context, reposKey string, heads []Head) (*baseView, error) {
	heads = slices.Clone(heads)
	sort.Slice(heads, func(i, j int) bool { return heads[i].Repo < heads[j].Repo })
	key := headsKey(heads)
	c.mu.Lock()
	b := c.bases[reposKey]
	c.mu.Unlock()
	if b != nil && b.key == key {
		return b, nil
	}
	if err := c.readSegments(ctx, heads); err != nil {
		return nil, err
	}
	b = &baseView{key: key, heads: heads, segPart: map[int64]int{}}
	for hi, h := range heads {
		for _, p := range h.Parts {
			s, err := c.segment(ctx, p.Segment)
			if errors.Is(err, ErrSegmentGone) {
				return nil, errRetired
			}
			if err != nil {
				return nil, err
			}
			b.add(s, hi, p.Dead)
		}
	}
	c.mu.Lock()
	c.bases[reposKey] = b
	c.dropUnusedLocked()
	c.mu.Unlock()
	return b, nil
}

// readSegments reads the heads' segments not yet cached in one round trip
// when the store can (the others are read one by one after).
func (c *storeCache) readSegments(ctx context.Context, heads []Head) error {
	sr, ok := c.st.(SegmentsReader)
	if !ok {
		return nil
	}
	var missing []int64
	c.mu.Lock()
	for _, h := range heads {
		for _, p := range h.Parts {
			if c.segs[p.Segment] == nil {
				missing = append(missing, p.Segment)
			}
		}
	}
	c.mu.Unlock()
	if len(missing) < 2 {
		return nil
	}
	segs, err := sr.Segments(ctx, missing)
	if err != nil {
		return err
	}
	c.mu.Lock()
	for _, s := range segs {
		c.segs[s.ID] = s
	}
	c.mu.Unlock()
	return nil
}

// dropUnusedLocked forgets segments no current view uses.
func (c *storeCache) dropUnusedLocked() {
	used := map[int64]bool{}
	for _, b := range c.bases {
		for _, p := range b.parts {
			used[p.seg.ID] = true
		}
	}
	for id := range c.segs {
		if !used[id] {
			delete(c.segs, id)
		}
	}
}

// lastBase is the view the latest query of these repositories used.
func (c *storeCache) lastBase(reposKey string) *baseView {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bases[reposKey]
}

func (b *baseView) add(s *Segment, head int, dead []int32) {
	p := basePart{seg: s, head: head, docBase: int32(len(b.docLen)), fileBase: int32(len(b.files))}
	b.segPart[s.ID] = len(b.parts)
	b.parts = append(b.parts, p)
	isDead := make([]bool, len(s.Files))
	for _, f := range dead {
		if f >= 0 && int(f) < len(isDead) {
			isDead[f] = true
		}
	}
	for i := range s.Files {
		b.files = append(b.files, &s.Files[i])
		b.fileHead = append(b.fileHead, int32(head))
		b.fileDead = append(b.fileDead, isDead[i])
	}
	for d := range s.DocLen {
		f := s.DocFile[d]
		dl := s.DocLen[d]
		if isDead[f] {
			dl = 0
		} else {
			b.live++
			b.liveLen += int64(dl)
		}
		b.docLen = append(b.docLen, dl)
		b.docFile = append(b.docFile, p.fileBase+f)
		b.docFlags = append(b.docFlags, s.DocFlags[d])
		b.docStart = append(b.docStart, s.DocStart[d])
	}
}

// partOf returns the part holding doc d.
func (b *baseView) partOf(d int32) *basePart {
	i := sort.Search(len(b.parts), func(i int) bool { return b.parts[i].docBase > d }) - 1
	return &b.parts[i]
}

// manifest maps the live files of head hi by path.
func (b *baseView) manifest(hi int) map[string]int32 {
	if m, ok := b.manifests.Load(hi); ok {
		return m.(map[string]int32)
	}
	m := map[string]int32{}
	for f, sf := range b.files {
		if b.fileHead[f] == int32(hi) && !b.fileDead[f] {
			m[sf.Path] = int32(f)
		}
	}
	b.manifests.Store(hi, m)
	return m
}

// headIndex is the index of repo's head, or -1.
func (b *baseView) headIndex(repo string) int {
	for i, h := range b.heads {
		if h.Repo == repo {
			return i
		}
	}
	return -1
}

// storeCorpus is what one query ranks: the base view with the postings
// fetched for the query, less the files an overlay hides, plus the
// overlay's own chunks (the workspace's files that differ from the
// published commit, from the small local index) numbered after the base.
type storeCorpus struct {
	b      *baseView
	hidden []bool // by base file; nil: none
	nDocs  int
	nFiles int
	total  int64
	post   map[string]*postingBuf
	local  *Index // read-locked by the caller; nil: none
	lbase  int32  // first local doc number
	fbase  int32  // first local file number
}

func newStoreCorpus(b *baseView, hidden []bool, local *Index) *storeCorpus {
	c := &storeCorpus{b: b, hidden: hidden, post: map[string]*postingBuf{}, local: local,
		lbase: int32(len(b.docLen)), fbase: int32(len(b.files)), nDocs: b.live, total: b.liveLen}
	for f, h := range hidden {
		if h && !b.fileDead[f] {
			c.nDocs -= int(b.files[f].Docs)
			c.total -= b.files[f].TotalLen
		}
	}
	for f := range b.files {
		if !c.baseFileGone(int32(f)) && b.files[f].Docs > 0 {
			c.nFiles++
		}
	}
	if local != nil {
		c.nDocs += local.bm.nDocs
		c.total += local.bm.totalLen
		c.nFiles += local.chunked
	}
	return c
}

// addPostings decodes fetched postings, leaving out dead and hidden
// chunks.
func (c *storeCorpus) addPostings(tps []TermPostings) {
	for _, tp := range tps {
		pi, ok := c.b.segPart[tp.Segment]
		if !ok {
			continue
		}
		p := &c.b.parts[pi]
		pl := c.post[tp.Term]
		if pl == nil {
			pl = &postingBuf{}
			c.post[tp.Term] = pl
		}
		n := len(pl.docs)
		pl.docs, pl.tfs = decodePostingsInto(tp.Data, tp.DF, p.docBase, int32(p.seg.Docs()), pl.docs, pl.tfs)
		k := n
		for i := n; i < len(pl.docs); i++ {
			d := pl.docs[i]
			if c.b.docLen[d] == 0 || c.hidden != nil && c.hidden[c.b.docFile[d]] {
				continue
			}
			pl.docs[k], pl.tfs[k] = d, pl.tfs[i]
			k++
		}
		pl.docs, pl.tfs = pl.docs[:k], pl.tfs[:k]
	}
}

func (c *storeCorpus) numDocs() int  { return c.nDocs }
func (c *storeCorpus) numFiles() int { return c.nFiles }

// baseFileGone: a base file retired by its head or hidden by the overlay.
func (c *storeCorpus) baseFileGone(f int32) bool {
	return c.b.fileDead[f] || c.hidden != nil && c.hidden[f]
}

func (c *storeCorpus) fileLen(f int32) int32 {
	if f >= c.fbase {
		return c.local.fileLens[f-c.fbase]
	}
	if c.baseFileGone(f) {
		return 0
	}
	return int32(min(c.b.files[f].TotalLen, 1<<31-1))
}
func (c *storeCorpus) avgDocLen() float64 {
	return float64(c.total) / float64(max(1, c.nDocs))
}
func (c *storeCorpus) docSpace() int {
	if c.local == nil {
		return int(c.lbase)
	}
	return int(c.lbase) + len(c.local.slots)
}
func (c *storeCorpus) fileSpace() int {
	if c.local == nil {
		return int(c.fbase)
	}
	return int(c.fbase) + len(c.local.fileTab)
}

func (c *storeCorpus) postings(term string, buf *postingBuf) ([]int32, []uint16) {
	pl := c.post[term]
	if c.local == nil {
		if pl == nil {
			return nil, nil
		}
		return pl.docs, pl.tfs
	}
	buf.docs, buf.tfs = buf.docs[:0], buf.tfs[:0]
	if pl != nil {
		buf.docs = append(buf.docs, pl.docs...)
		buf.tfs = append(buf.tfs, pl.tfs...)
	}
	b := c.local.bm
	if id, ok := b.dict.lookup(term); ok && int(id) < len(b.post) {
		n := len(buf.docs)
		buf.docs, buf.tfs = b.post[id].decode(buf.docs, buf.tfs)
		for i := n; i < len(buf.docs); i++ {
			buf.docs[i] += c.lbase
		}
	}
	return buf.docs, buf.tfs
}

func (c *storeCorpus) docLen(d int32) int32 {
	if d < c.lbase {
		return c.b.docLen[d]
	}
	return c.local.bm.docLen[d-c.lbase]
}
func (c *storeCorpus) docFile(d int32) int32 {
	if d < c.lbase {
		return c.b.docFile[d]
	}
	return c.local.bm.docFile[d-c.lbase] + c.fbase
}
func (c *storeCorpus) docFlags(d int32) uint8 {
	if d < c.lbase {
		return c.b.docFlags[d]
	}
	return c.local.bm.docFlags[d-c.lbase]
}
func (c *storeCorpus) docStart(d int32) int32 {
	if d < c.lbase {
		return c.b.docStart[d]
	}
	return c.local.slots[d-c.lbase].Start
}
func (c *storeCorpus) fileKind(f int32) fileKind {
	if f < c.fbase {
		return c.b.files[f].kindParsed
	}
	return c.local.fileKinds[f-c.fbase]
}
func (c *storeCorpus) filePath(f int32) string {
	if f < c.fbase {
		return c.b.files[f].Path
	}
	return c.local.fileTab[f-c.fbase].path
}

// errRetired is a query's hit in a segment a publish retired meanwhile:
// the query runs again on the new heads.
var errRetired = errors.New("a segment was retired during the query")

// overlaySource is the workspace's side of a query of its own repository:
// the small local index of the files that differ from the published commit
// and which of the head's files it hides. Its methods are called with the
// local index's read lock held.
type overlaySource struct {
	repo   string
	ix     *Index
	hidden func(b *baseView, head int) []bool
}

// storeQuery is one query against a store.
type storeQuery struct {
	repos []string // exact names; empty: every repository
	text  string
	limit int
	over  *overlaySource // nil: the store alone
	bonus func(path string) float64
}

// searchStore answers a query from a store with the ranking of the
// embedded index. A publish that retires the segments the query read
// makes it start again, once.
func searchStore(ctx context.Context, c *storeCache, q storeQuery) ([]SearchHit, error) {
	hits, _, err := searchStoreBase(ctx, c, q)
	return hits, err
}

// searchStoreBase is searchStore, also returning the heads it searched.
func searchStoreBase(ctx context.Context, c *storeCache, q storeQuery) ([]SearchHit, *baseView, error) {
	hits, b, err := searchStoreOnce(ctx, c, q)
	if errors.Is(err, errRetired) {
		hits, b, err = searchStoreOnce(ctx, c, q)
	}
	return hits, b, err
}

func searchStoreOnce(ctx context.Context, c *storeCache, q storeQuery) ([]SearchHit, *baseView, error) {
	p := defaultRank
	if q.limit <= 0 {
		q.limit = 10
	}
	pq := parseQuery(q.text, &p)
	terms := queryTerms(pq)
	reposKey := strings.Join(q.repos, "\x00")
	var known []int64
	if b := c.lastBase(reposKey); b != nil {
		for _, part := range b.parts {
			known = append(known, part.seg.ID)
		}
	}
	res, err := c.st.Fetch(ctx, FetchRequest{Repos: q.repos, Segments: known, Terms: terms})
	if err != nil {
		return nil, nil, err
	}
	b, err := c.base(ctx, reposKey, res.Heads)
	if err != nil {
		return nil, nil, err
	}
	post := res.Postings
	// Segments of the heads whose postings were not asked for.
	var more []int64
	for _, part := range b.parts {
		if !slices.Contains(known, part.seg.ID) {
			more = append(more, part.seg.ID)
		}
	}
	if len(more) > 0 {
		res2, err := c.st.Fetch(ctx, FetchRequest{Repos: q.repos, Segments: more, Terms: terms})
		if err != nil {
			return nil, nil, err
		}
		if len(res2.Gone) > 0 {
			return nil, nil, errRetired
		}
		post = append(post, res2.Postings...)
	}
	for _, g := range res.Gone {
		if _, used := b.segPart[g]; used {
			return nil, nil, errRetired
		}
	}
	var local *Index
	var hidden []bool
	overHead := -1
	if q.over != nil {
		overHead = b.headIndex(q.over.repo)
		local = q.over.ix
		local.mu.RLock()
		if overHead >= 0 {
			hidden = q.over.hidden(b, overHead)
		}
	}
	corp := newStoreCorpus(b, hidden, local)
	corp.addPostings(post)
	rs := rank(corp, pq, nil, &p, q.limit, q.bonus)
	hs := collectHits(corp, rs, overHead)
	if local != nil {
		local.mu.RUnlock()
	}
	hits, err := hs.read(ctx, pq, c.st, local)
	return hits, b, err
}

// storeHits are a query's hits before their text is read.
type storeHits struct {
	metas []hitMeta
	repos []string
	refs  []ChunkRef // by hit; Segment 0 for the overlay's
}

// collectHits copies what the hits need from the corpus (under the
// overlay's lock). Hits of the workspace's own repository carry no Repo.
func collectHits(c *storeCorpus, rs []ranked, overHead int) *storeHits {
	hs := &storeHits{metas: make([]hitMeta, len(rs)), repos: make([]string, len(rs)), refs: make([]ChunkRef, len(rs))}
	for i, r := range rs {
		if r.doc >= c.lbase {
			sl := c.local.slots[r.doc-c.lbase]
			f := c.local.fileTab[sl.file]
			hs.metas[i] = newHitMeta(f.path, f.Kind, sl, r)
			continue
		}
		p := c.b.partOf(r.doc)
		f := c.b.files[c.b.docFile[r.doc]]
		hs.metas[i] = newHitMeta(f.Path, f.kindParsed, slot{Start: c.b.docStart[r.doc]}, r)
		if p.head != overHead {
			hs.repos[i] = c.b.heads[p.head].Repo
			hs.metas[i].repo = hs.repos[i]
		}
		hs.refs[i] = ChunkRef{Segment: p.seg.ID, Doc: r.doc - p.docBase}
	}
	return hs
}

// read fills in the hits' text: the store's chunks from the store (one
// round trip), the overlay's from the workspace's files.
func (hs *storeHits) read(ctx context.Context, q *parsedQuery, st Store, local *Index) ([]SearchHit, error) {
	var refs []ChunkRef
	for _, r := range hs.refs {
		if r.Segment != 0 {
			refs = append(refs, r)
		}
	}
	var texts map[ChunkRef]ChunkText
	if len(refs) > 0 {
		got, err := st.Chunks(ctx, refs)
		if err != nil {
			return nil, err
		}
		texts = make(map[ChunkRef]ChunkText, len(got))
		for _, t := range got {
			texts[ChunkRef{t.Segment, t.Doc}] = t
		}
	}
	out := make([]string, len(hs.metas))
	for i := range hs.metas {
		m := &hs.metas[i]
		var text string
		if r := hs.refs[i]; r.Segment == 0 {
			text, _ = readChunkText(local.fsys, m.path, &m.slot)
		} else {
			t, ok := texts[r]
			if !ok {
				return nil, fmt.Errorf("%w: %s", errRetired, m.path)
			}
			m.slot.End, m.slot.Symbol, text = t.End, t.Symbol, t.Text
		}
		out[i] = text
	}
	return assembleHits(q, hs.metas, out), nil
}
