package rag

import (
	"context"
	"errors"
	"slices"
	"sync"
)

// memStore is a Store and Publisher in memory, for testing what rag does
// with a store (publishing, ranking, overlays) without a database; the
// PostgreSQL store is tested against a real server in rag/pgstore.
type memStore struct {
	mu     sync.Mutex
	nextID int64
	segs   map[int64]*SegmentData
	heads  map[string]Head
	locks  map[string]*sync.Mutex
	down   bool // every call fails as unreachable
	fetchN int
}

func newMemStore() *memStore {
	return &memStore{segs: map[int64]*SegmentData{}, heads: map[string]Head{}, locks: map[string]*sync.Mutex{}}
}

func (m *memStore) check() error {
	if m.down {
		return ErrUnreachable
	}
	return nil
}

func (m *memStore) Fetch(ctx context.Context, req FetchRequest) (*FetchResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(); err != nil {
		return nil, err
	}
	m.fetchN++
	res := &FetchResult{}
	for name, h := range m.heads {
		if len(req.Repos) == 0 || slices.Contains(req.Repos, name) {
			res.Heads = append(res.Heads, h)
		}
	}
	for _, id := range req.Segments {
		s := m.segs[id]
		if s == nil {
			res.Gone = append(res.Gone, id)
			continue
		}
		for _, tp := range s.Postings {
			if slices.Contains(req.Terms, tp.Term) {
				tp.Segment = id
				res.Postings = append(res.Postings, tp)
			}
		}
	}
	return res, nil
}

func (m *memStore) Segment(ctx context.Context, id int64) (*Segment, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(); err != nil {
		return nil, err
	}
	s := m.segs[id]
	if s == nil {
		return nil, errors.New("no such segment")
	}
	// Through the encoding, as a real store does.
	b, _ := s.Segment.MarshalBinary()
	return UnmarshalSegment(id, b)
}

func (m *memStore) Chunks(ctx context.Context, refs []ChunkRef) ([]ChunkText, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(); err != nil {
		return nil, err
	}
	var out []ChunkText
	for _, r := range refs {
		if s := m.segs[r.Segment]; s != nil && int(r.Doc) < len(s.Chunks) {
			c := s.Chunks[r.Doc]
			c.Segment = r.Segment
			out = append(out, c)
		}
	}
	return out, nil
}

func (m *memStore) Close() error { return nil }

func (m *memStore) BeginPublish(ctx context.Context, repo string) (PublishTx, error) {
	m.mu.Lock()
	if err := m.check(); err != nil {
		m.mu.Unlock()
		return nil, err
	}
	l := m.locks[repo]
	if l == nil {
		l = &sync.Mutex{}
		m.locks[repo] = l
	}
	m.mu.Unlock()
	l.Lock()
	m.mu.Lock()
	defer m.mu.Unlock()
	tx := &memTx{m: m, repo: repo, lock: l}
	if h, ok := m.heads[repo]; ok {
		tx.head = &h
	}
	return tx, nil
}

type memTx struct {
	m     *memStore
	repo  string
	lock  *sync.Mutex
	head  *Head
	added []int64
	ended bool
}

func (t *memTx) Head() *Head { return t.head }

func (t *memTx) Segment(ctx context.Context, id int64) (*Segment, error) {
	return t.m.Segment(ctx, id)
}

func (t *memTx) AddSegment(ctx context.Context, seg *SegmentData) (int64, error) {
	t.m.mu.Lock()
	defer t.m.mu.Unlock()
	t.m.nextID++
	id := t.m.nextID
	t.m.segs[id] = seg
	t.added = append(t.added, id)
	return id, nil
}

func (t *memTx) Commit(ctx context.Context, head Head) error {
	t.m.mu.Lock()
	defer t.m.mu.Unlock()
	t.m.heads[t.repo] = head
	used := map[int64]bool{}
	for _, h := range t.m.heads {
		for _, p := range h.Parts {
			used[p.Segment] = true
		}
	}
	for id := range t.m.segs {
		if !used[id] {
			delete(t.m.segs, id)
		}
	}
	t.end()
	return nil
}

func (t *memTx) Rollback(ctx context.Context) error {
	t.m.mu.Lock()
	defer t.m.mu.Unlock()
	for _, id := range t.added {
		delete(t.m.segs, id)
	}
	t.end()
	return nil
}

func (t *memTx) end() {
	if !t.ended {
		t.ended = true
		t.lock.Unlock()
	}
}

func (m *memStore) segCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.segs)
}
