package rpc

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agentd/agentd/rag"
	"github.com/agentd/agentd/rpc/wire"
)

// Index is the workspace index running in the background; cmd plugs in the
// rag package through an IndexStarter. It answers while it is still being
// built (partial results), in the index's words (search_semantic reads
// them); index/status and index/search carry the wire's own (toWire*).
type Index interface {
	Search(ctx context.Context, query string, limit int) ([]rag.SearchHit, bool, error)
	Status() rag.Status
	// Err says why the index could not be opened, if it could not.
	Err() error
	Changed(paths ...string)
	SetOpen(paths []string)
	// StopBuild cancels the build in progress; watching goes on.
	StopBuild()
	Close() error
}

// IndexProgress receives the progress of a build.
type IndexProgress struct {
	Begin  func()
	Report func(done, total int)
	End    func(st rag.Status, err error)
}

// IndexStarter starts the index of root, keeping its files in dir.
type IndexStarter func(root, dir string, p IndexProgress) Index

// startIndexing starts the index in the background, reporting its build
// with $/progress when the editor supports it.
func (s *Server) startIndexing() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opts.OpenIndex == nil || s.index != nil || s.cacheDir == "" {
		return
	}
	rep := &progressReporter{s: s, enabled: s.progress, lastPct: -1}
	s.index = s.opts.OpenIndex(s.root, s.cacheDir, IndexProgress{Begin: rep.begin, Report: rep.report, End: rep.end})
}

func (s *Server) liveIndex() Index {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.index
}

// Search implements tools.Searcher for search_semantic: partial and empty
// until the index starts.
func (s *Server) Search(ctx context.Context, query string, limit int) ([]rag.SearchHit, bool, error) {
	idx := s.liveIndex()
	if idx == nil {
		if s.opts.OpenIndex == nil {
			return nil, false, fmt.Errorf("%w: this daemon runs without a workspace index", errIndexUnavailable)
		}
		return nil, true, nil
	}
	return idx.Search(ctx, query, limit)
}

// LSP's work-done progress, as agentd sends it: window/workDoneProgress/create
// and $/progress with a begin, reports and an end.
type (
	progressCreate struct {
		Token string `json:"token"`
	}
	progressParams struct {
		Token string `json:"token"`
		Value any    `json:"value" contract:"ProgressValue"`
	}
	progressValue struct {
		Kind        string `json:"kind"`
		Title       string `json:"title,omitempty"`
		Cancellable bool   `json:"cancellable,omitempty"`
		Message     string `json:"message,omitempty"`
		Percentage  int    `json:"percentage,omitempty"`
	}
)

// progressReporter sends $/progress for one indexing pass.
type progressReporter struct {
	s       *Server
	enabled bool
	token   string
	last    time.Time
	lastPct int
}

func (r *progressReporter) begin() {
	if !r.enabled {
		return
	}
	token := fmt.Sprintf("agentd-index-%d", time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := r.s.conn.Call(ctx, wire.MethodProgressCreate, progressCreate{Token: token}, nil); err != nil {
		r.s.log.Debug("progress token refused", "err", err)
		return
	}
	r.s.mu.Lock()
	r.s.progressToken = token
	r.s.mu.Unlock()
	r.token = token
	r.send(progressValue{Kind: "begin", Title: "Indexing workspace", Cancellable: true})
}

func (r *progressReporter) send(v any) {
	if r.token == "" {
		return
	}
	_ = r.s.conn.Notify(context.Background(), wire.MethodProgress, progressParams{Token: r.token, Value: v})
}

func (r *progressReporter) report(done, total int) {
	if r.token == "" || total == 0 {
		return
	}
	pct := done * 100 / total
	if pct == r.lastPct || time.Since(r.last) < 100*time.Millisecond && done != total {
		return
	}
	r.lastPct, r.last = pct, time.Now()
	r.send(progressValue{Kind: "report", Message: fmt.Sprintf("%d/%d files", done, total), Percentage: pct})
}

func (r *progressReporter) end(st rag.Status, err error) {
	msg := fmt.Sprintf("%d files, %d chunks", st.Files, st.Chunks)
	if err != nil {
		msg = "indexing stopped: " + err.Error()
	}
	r.send(progressValue{Kind: "end", Message: msg})
}

// progressToken is what window/workDoneProgress/cancel carries.
type progressToken struct {
	// Token is the one window/workDoneProgress/create gave: a string.
	Token json.RawMessage `json:"token"`
}

func progressCancel(ctx context.Context, s *Server, p progressToken) error {
	s.mu.Lock()
	idx, token := s.index, s.progressToken
	s.mu.Unlock()
	if idx != nil && token != "" && strings.Trim(string(p.Token), `"`) == token {
		idx.StopBuild()
	}
	return nil
}

func indexStatusHandler(ctx context.Context, s *Server, _ struct{}) (wire.IndexStatus, error) {
	idx, err := s.indexOrErr()
	if err != nil {
		return wire.IndexStatus{}, err
	}
	if idx == nil {
		return wire.IndexStatus{State: rag.StateIndexing}, nil
	}
	return wireStatus(idx.Status()), nil
}

func wireStatus(st rag.Status) wire.IndexStatus {
	out := wire.IndexStatus{State: st.State, Files: st.Files, Chunks: st.Chunks, Progress: st.Progress, Embedder: st.Embedder, Error: st.Error}
	if t := st.Team; t != nil {
		out.Team = &wire.IndexTeam{Repo: t.Repo, Commit: t.Commit, LocalFiles: t.LocalFiles, Notice: t.Notice, Reason: t.Reason}
	}
	return out
}

func wireHits(hits []rag.SearchHit) []wire.SearchHit {
	out := make([]wire.SearchHit, len(hits))
	for i, h := range hits {
		out[i] = wire.SearchHit{Repo: h.Repo, Path: h.Path, Kind: h.Kind, Score: h.Score, Match: h.Match,
			Chunks: make([]wire.SearchChunk, len(h.Chunks))}
		for k, c := range h.Chunks {
			lines := make([]wire.SnippetLine, len(c.Lines))
			for j, l := range c.Lines {
				lines[j] = wire.SnippetLine{Line: l.Line, Text: l.Text}
				for _, m := range l.Marks {
					lines[j].Marks = append(lines[j].Marks, wire.Span{Start: m.Start, End: m.End})
				}
			}
			out[i].Chunks[k] = wire.SearchChunk{StartLine: c.StartLine, EndLine: c.EndLine, Symbol: c.Symbol, Cover: c.Cover,
				Lines: lines, Text: c.Text}
		}
	}
	return out
}

func indexSearchHandler(ctx context.Context, s *Server, p wire.IndexSearchParams) (wire.IndexSearchResult, error) {
	if strings.TrimSpace(p.Query) == "" {
		return wire.IndexSearchResult{}, fmt.Errorf("%w: query is required", errInvalidParams)
	}
	p.Limit = min(max(p.Limit, 0), 100)
	if p.Limit == 0 {
		p.Limit = 10
	}
	if _, err := s.indexOrErr(); err != nil {
		return wire.IndexSearchResult{}, err
	}
	hits, partial, err := s.Search(ctx, p.Query, p.Limit)
	if err != nil {
		return wire.IndexSearchResult{}, fmt.Errorf("%w: %v", errIndexUnavailable, err)
	}
	return wire.IndexSearchResult{Hits: wireHits(hits), Partial: partial}, nil
}

// indexOrErr returns the running index (nil while it has not started), or
// IndexUnavailable when there is none or it could not be opened.
func (s *Server) indexOrErr() (Index, error) {
	if s.opts.OpenIndex == nil {
		return nil, fmt.Errorf("%w: this daemon runs without a workspace index", errIndexUnavailable)
	}
	idx := s.liveIndex()
	if idx != nil && idx.Err() != nil {
		return nil, fmt.Errorf("%w: %v", errIndexUnavailable, idx.Err())
	}
	return idx, nil
}
