package main

import (
	"context"
	"sync"
	"time"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/rag"
)

// oneShotIndex is the workspace index of one `agentd run`: the daemon's live
// index (opened, brought up to date, watched), closed when the run ends.
type oneShotIndex struct {
	live    *rag.Live
	built   chan struct{}
	once    sync.Once
	waitEnd time.Time
}

// indexWait is how long after the start a search may wait for the index's
// first build: a one-shot run's first search on a fresh workspace should
// find something.
const indexWait = 10 * time.Second

func startRunIndex(cfg agent.Config, dir string) *oneShotIndex {
	idx := &oneShotIndex{built: make(chan struct{}), waitEnd: time.Now().Add(indexWait)}
	idx.live = rag.StartLive(ragOptions(cfg, cfg.Root, dir, cfg.Logger), rag.Progress{
		End: func(rag.Status, error) { idx.once.Do(func() { close(idx.built) }) },
	})
	return idx
}

// Search implements tools.Searcher: while the index is still being built
// it waits for the build (until indexWait after the start), then answers.
func (idx *oneShotIndex) Search(ctx context.Context, query string, limit int) ([]rag.SearchHit, bool, error) {
	hits, partial, err := idx.live.Search(ctx, query, limit)
	if err != nil || !partial {
		return hits, partial, err
	}
	wait := time.Until(idx.waitEnd)
	if wait <= 0 {
		return hits, partial, err
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-idx.built:
	case <-timer.C:
	case <-ctx.Done():
		return hits, partial, err
	}
	return idx.live.Search(ctx, query, limit)
}

func (idx *oneShotIndex) close() { within(2*time.Second, func() { _ = idx.live.Close() }) }
