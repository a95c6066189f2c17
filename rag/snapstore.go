package rag

import (
	"context"
	"errors"
	"slices"
)

// SnapshotStore is a workspace's saved index (its snapshot, mapped by a
// View) as a Store: one repository whose published commit is the
// snapshot, in one segment. It is the embedded implementation of Store:
// what the team index answers can be checked against it, query by query,
// and a tool that speaks Store can search a workspace with no database.
type SnapshotStore struct {
	v    *View
	repo string
}

// snapshotSegment is the one segment of a SnapshotStore.
const snapshotSegment = 1

// NewSnapshotStore serves v as the repository repo. v stays the caller's.
func NewSnapshotStore(v *View, repo string) *SnapshotStore {
	return &SnapshotStore{v: v, repo: repo}
}

func (s *SnapshotStore) corpus() viewCorpus { return viewCorpus{s.v.s} }

// Fetch implements Store.
func (s *SnapshotStore) Fetch(ctx context.Context, req FetchRequest) (*FetchResult, error) {
	res := &FetchResult{}
	if len(req.Repos) == 0 || slices.Contains(req.Repos, s.repo) {
		res.Heads = []Head{{Repo: s.repo, Commit: "snapshot", Parts: []Part{{Segment: snapshotSegment}}}}
	}
	for _, id := range req.Segments {
		if id != snapshotSegment {
			res.Gone = append(res.Gone, id)
			continue
		}
		c := s.corpus()
		var buf postingBuf
		for _, t := range req.Terms {
			docs, tfs := c.postings(t, &buf)
			if len(docs) == 0 {
				continue
			}
			res.Postings = append(res.Postings, TermPostings{Segment: id, Term: t, DF: len(docs), Data: encodePostings(docs, tfs)})
		}
	}
	return res, ctx.Err()
}

// Segment implements Store. The snapshot's files are in path order and
// its chunks grouped by file, as a segment's are.
func (s *SnapshotStore) Segment(ctx context.Context, id int64) (*Segment, error) {
	if id != snapshotSegment {
		return nil, errors.New("snapshot store: no such segment")
	}
	c := s.corpus()
	seg := &Segment{ID: id}
	fileOf := map[int32]int32{} // snapshot file → segment file
	for d := range int32(c.docSpace()) {
		f := c.docFile(d)
		sf, ok := fileOf[f]
		if !ok {
			sf = int32(len(seg.Files))
			fileOf[f] = sf
			seg.Files = append(seg.Files, SegmentFile{Path: c.filePath(f), Kind: uint8(c.fileKind(f)), kindParsed: c.fileKind(f), FirstDoc: d})
		}
		file := &seg.Files[sf]
		file.Docs++
		file.TotalLen += int64(c.docLen(d))
		seg.DocLen = append(seg.DocLen, c.docLen(d))
		seg.DocFile = append(seg.DocFile, sf)
		seg.DocFlags = append(seg.DocFlags, c.docFlags(d))
		seg.DocStart = append(seg.DocStart, c.docStart(d))
	}
	return seg, ctx.Err()
}

// Chunks implements Store: the text comes from the workspace's files.
func (s *SnapshotStore) Chunks(ctx context.Context, refs []ChunkRef) ([]ChunkText, error) {
	var out []ChunkText
	for _, r := range refs {
		if r.Segment != snapshotSegment || r.Doc < 0 || int(r.Doc) >= s.v.s.nDocs {
			continue
		}
		sl := s.v.s.doc(r.Doc)
		text, _ := readChunkText(s.v.fsys, s.v.s.filePath(sl.file), &sl)
		out = append(out, ChunkText{Segment: r.Segment, Doc: r.Doc, End: sl.End, Symbol: string([]byte(sl.Symbol)), Text: text})
	}
	return out, ctx.Err()
}

// Close implements Store; the view stays open.
func (s *SnapshotStore) Close() error { return nil }

// SearchStore answers query from the published heads of repos (every
// repository when empty) of a store, ranked as the embedded index ranks.
// For repeated queries, keep a StoreSearcher, which caches what never
// changes.
func SearchStore(ctx context.Context, st Store, repos []string, query string, limit int) ([]SearchHit, error) {
	return NewStoreSearcher(st).Search(ctx, repos, query, limit)
}

// StoreSearcher searches a store, keeping the segments' metadata it has
// read (segments never change).
type StoreSearcher struct{ c *storeCache }

// NewStoreSearcher returns a searcher of st.
func NewStoreSearcher(st Store) *StoreSearcher { return &StoreSearcher{newStoreCache(st)} }

// Search answers query from the published heads of repos (exact names;
// every repository when empty).
func (s *StoreSearcher) Search(ctx context.Context, repos []string, query string, limit int) ([]SearchHit, error) {
	return searchStore(ctx, s.c, storeQuery{repos: repos, text: query, limit: limit})
}
