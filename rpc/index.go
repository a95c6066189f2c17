package rpc

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/protocol"

	"github.com/agentd/agentd/rpc/wire"
)

// Index is the workspace index as the daemon drives it; cmd plugs in the
// rag package through an IndexOpener.
type Index interface {
	Build(ctx context.Context, progress func(done, total int)) error
	Watch(ctx context.Context) error
	Changed(paths ...string)
	SetOpen(paths []string)
	Status() wire.IndexStatus
	Search(ctx context.Context, query string, limit int) ([]wire.SearchHit, bool, error)
	Close() error
}

// IndexOpener opens the index of root, keeping its files in dir.
type IndexOpener func(ctx context.Context, root, dir string) (Index, error)

// indexState holds the index once it is open. Start-up never waits for it:
// until it opens, search answers an empty partial result.
type indexState struct {
	dir string

	mu     sync.Mutex // guards idx, err, cancel, token
	idx    Index
	err    error
	cancel context.CancelFunc
	token  string
	closed bool
}

func newIndexState(dir string) *indexState { return &indexState{dir: dir} }

func (st *indexState) get() (Index, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.idx, st.err
}

// Search implements tools.Searcher for search_semantic.
func (st *indexState) Search(ctx context.Context, query string, limit int) ([]wire.SearchHit, bool, error) {
	idx, err := st.get()
	if err != nil {
		return nil, false, fmt.Errorf("the workspace index could not be opened: %w", err)
	}
	if idx == nil {
		return nil, true, nil
	}
	return idx.Search(ctx, query, limit)
}

func (st *indexState) close() {
	st.mu.Lock()
	idx, cancel := st.idx, st.cancel
	st.idx, st.closed = nil, true
	st.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	if idx != nil {
		_ = idx.Close()
	}
}

// startIndexing opens, builds and then watches the index in the background,
// reporting progress with $/progress when the editor supports it.
func (s *Server) startIndexing() {
	s.mu.Lock()
	st, root, open := s.index, s.root, s.opts.OpenIndex
	if open == nil || st == nil || s.stopBg != nil {
		s.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.stopBg = cancel
	progress := s.progress
	s.mu.Unlock()
	go s.index.run(ctx, s, open, root, progress)
}

func (st *indexState) run(ctx context.Context, s *Server, open IndexOpener, root string, progress bool) {
	idx, err := open(ctx, root, st.dir)
	st.mu.Lock()
	if st.closed {
		st.mu.Unlock()
		if idx != nil {
			_ = idx.Close()
		}
		return
	}
	st.idx, st.err = idx, err
	buildCtx, cancel := context.WithCancel(ctx)
	st.cancel = cancel
	st.mu.Unlock()
	if err != nil {
		s.log.Error("opening index", "err", err)
		return
	}
	rep := s.newProgress(ctx, progress, st)
	err = idx.Build(buildCtx, rep.report)
	rep.end(idx.Status(), err)
	if err != nil && buildCtx.Err() == nil {
		s.log.Error("building index", "err", err)
	}
	if ctx.Err() == nil {
		if err := idx.Watch(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("watching workspace", "err", err)
		}
	}
}

// progressReporter sends $/progress for one indexing pass.
type progressReporter struct {
	s       *Server
	token   string
	last    time.Time
	lastPct int
	begun   bool
}

func (s *Server) newProgress(ctx context.Context, enabled bool, st *indexState) *progressReporter {
	rep := &progressReporter{s: s, lastPct: -1}
	if !enabled {
		return rep
	}
	token := "agentd-index-" + fmt.Sprint(time.Now().UnixNano())
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	// Pointers: ProgressToken marshals through a pointer method, and a field
	// of a struct passed by value would encode as {}.
	if _, err := s.conn.Call(cctx, wire.MethodProgressCreate, &protocol.WorkDoneProgressCreateParams{Token: *protocol.NewProgressToken(token)}, nil); err != nil {
		s.log.Debug("progress token refused", "err", err)
		return rep
	}
	st.mu.Lock()
	st.token = token
	st.mu.Unlock()
	rep.token = token
	rep.send(protocol.WorkDoneProgressBegin{Kind: protocol.WorkDoneProgressKindBegin, Title: "Indexing workspace", Cancellable: true})
	rep.begun = true
	return rep
}

func (r *progressReporter) send(v any) {
	if r.token == "" {
		return
	}
	_ = r.s.conn.Notify(context.Background(), wire.MethodProgress, &protocol.ProgressParams{Token: *protocol.NewProgressToken(r.token), Value: v})
}

func (r *progressReporter) report(done, total int) {
	if !r.begun || total == 0 {
		return
	}
	pct := done * 100 / total
	if pct == r.lastPct || time.Since(r.last) < 100*time.Millisecond && done != total {
		return
	}
	r.lastPct, r.last = pct, time.Now()
	r.send(protocol.WorkDoneProgressReport{Kind: protocol.WorkDoneProgressKindReport, Message: fmt.Sprintf("%d/%d files", done, total), Percentage: uint32(pct)})
}

func (r *progressReporter) end(st wire.IndexStatus, err error) {
	if !r.begun {
		return
	}
	msg := fmt.Sprintf("%d files, %d chunks", st.Files, st.Chunks)
	if err != nil {
		msg = "indexing stopped: " + err.Error()
	}
	r.send(protocol.WorkDoneProgressEnd{Kind: protocol.WorkDoneProgressKindEnd, Message: msg})
}

func progressCancel(ctx context.Context, s *Server, params json.RawMessage) error {
	var p struct {
		Token json.RawMessage `json:"token"`
	}
	if err := decode(params, &p); err != nil {
		return err
	}
	st := s.index
	if st == nil {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.token != "" && strings.Trim(string(p.Token), `"`) == st.token && st.cancel != nil {
		st.cancel()
	}
	return nil
}

func indexStatusHandler(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	st, err := s.indexOrErr()
	if err != nil {
		return nil, err
	}
	idx, _ := st.get()
	if idx == nil {
		return wire.IndexStatus{State: "indexing"}, nil
	}
	return idx.Status(), nil
}

func indexSearchHandler(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p wire.IndexSearchParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.Query) == "" {
		return nil, fmt.Errorf("%w: query is required", errInvalidParams)
	}
	switch {
	case p.Limit <= 0:
		p.Limit = 10
	case p.Limit > 100:
		p.Limit = 100
	}
	st, err := s.indexOrErr()
	if err != nil {
		return nil, err
	}
	hits, partial, err := st.Search(ctx, p.Query, p.Limit)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errIndexUnavailable, err)
	}
	if hits == nil {
		hits = []wire.SearchHit{}
	}
	return wire.IndexSearchResult{Hits: hits, Partial: partial}, nil
}

func (s *Server) indexOrErr() (*indexState, error) {
	s.mu.Lock()
	st, open := s.index, s.opts.OpenIndex
	s.mu.Unlock()
	if open == nil || st == nil {
		return nil, fmt.Errorf("%w: this daemon was started without a workspace index", errIndexUnavailable)
	}
	if _, err := st.get(); err != nil {
		return nil, fmt.Errorf("%w: %v", errIndexUnavailable, err)
	}
	return st, nil
}
