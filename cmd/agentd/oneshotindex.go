package main

import (
	"context"
	"sync"
	"time"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/rag"
)

// oneShotIndex is the workspace index of one `agentd run`: the daemon's live
// index (opened, brought up to date, then watched), started by the model's
// first search and closed when the run ends.
//
// It starts late because a one-shot run that never searches should not pay
// for it: the walk and the build compete with the run for the CPU, and a
// watcher alone adds 10–30 ms to the process's exit (the kernel waits for an
// RCU grace period when an inotify instance is released).
type oneShotIndex struct {
	open func() searchIndex

	mu      sync.Mutex // guards live, built, waitEnd
	live    searchIndex
	built   chan struct{}
	waitEnd time.Time
}

// indexWait is how long a search may wait for the index's first build from
// the moment the first search started it: the first search of a run should
// find something, even on a workspace indexed for the first time.
const indexWait = 10 * time.Second

func newOneShotIndex(cfg agent.Config, dir string) *oneShotIndex {
	idx := &oneShotIndex{}
	idx.open = func() searchIndex {
		built := idx.built
		var once sync.Once
		p := rag.Progress{End: func(rag.Status, error) { once.Do(func() { close(built) }) }}
		if t := startTeam(cfg, ragOptions(cfg, cfg.Root, dir, cfg.Logger), p); t != nil {
			return t
		}
		return rag.StartLive(ragOptions(cfg, cfg.Root, dir, cfg.Logger), p)
	}
	return idx
}

// searchIndex is the local index (rag.Live) or the team index's (teamIndex).
type searchIndex interface {
	Search(ctx context.Context, query string, limit int) ([]rag.SearchHit, bool, error)
	Close() error
}

// started returns the live index, starting it the first time.
func (idx *oneShotIndex) started() (searchIndex, <-chan struct{}, time.Time) {
	idx.mu.Lock()
	defer idx.mu.Unlock()
	if idx.live == nil {
		idx.built, idx.waitEnd = make(chan struct{}), time.Now().Add(indexWait)
		idx.live = idx.open()
	}
	return idx.live, idx.built, idx.waitEnd
}

// Search implements tools.Searcher: while the index is still being built
// it waits for the build (until indexWait after the first search), then
// answers.
func (idx *oneShotIndex) Search(ctx context.Context, query string, limit int) ([]rag.SearchHit, bool, error) {
	live, built, waitEnd := idx.started()
	hits, partial, err := live.Search(ctx, query, limit)
	if err != nil || !partial {
		return hits, partial, err
	}
	wait := time.Until(waitEnd)
	if wait <= 0 {
		return hits, partial, err
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-built:
	case <-timer.C:
	case <-ctx.Done():
		return hits, partial, err
	}
	return live.Search(ctx, query, limit)
}

// close stops the index if a search started it.
func (idx *oneShotIndex) close() {
	idx.mu.Lock()
	live := idx.live
	idx.mu.Unlock()
	if live == nil {
		return
	}
	// At most 2 s: what is left of it ends with the process.
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		_ = live.Close()
	}()
	select {
	case <-closed:
	case <-time.After(2 * time.Second):
	}
}
