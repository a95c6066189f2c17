package rag

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
)

// Progress reports one build of a Live index; every hook is optional.
type Progress struct {
	Begin  func()
	Report func(done, total int)
	End    func(st Status, err error)
}

// Live is an index opened, brought up to date and then watched in the
// background, so that nothing ever waits for it: until it is open, Search
// answers an empty partial result. Both front ends (the native protocol and
// ACP) run the index this way.
type Live struct {
	mu     sync.Mutex // guards ix, err, closed, stopBuild
	ix     *Index
	err    error
	closed bool
	// stopBuild cancels the build in progress (the editor cancelled its
	// progress); the watch goes on.
	stopBuild context.CancelFunc
	cancel    context.CancelFunc
	done      chan struct{}
	built     chan struct{} // closed when the first build ended (or the open failed)
}

// StartLive opens opts' index in the background, builds it and watches the
// workspace until Close.
func StartLive(opts Options, p Progress) *Live {
	return startLive(opts, p, true)
}

// startLive is StartLive, without the watch for a one-shot search.
func startLive(opts Options, p Progress, watch bool) *Live {
	ctx, cancel := context.WithCancel(context.Background())
	l := &Live{cancel: cancel, done: make(chan struct{}), built: make(chan struct{})}
	go l.run(ctx, opts, p, watch)
	return l
}

func (l *Live) run(ctx context.Context, opts Options, p Progress, watch bool) {
	defer close(l.done)
	builtOnce := sync.OnceFunc(func() { close(l.built) })
	defer builtOnce()
	ix, err := Open(ctx, opts)
	buildCtx, stop := context.WithCancel(ctx)
	defer stop()
	l.mu.Lock()
	if l.closed && ix != nil {
		ix.Close()
		ix = nil
	}
	l.ix, l.err, l.stopBuild = ix, err, stop
	l.mu.Unlock()
	if err != nil || ix == nil {
		return
	}
	if p.Begin != nil {
		p.Begin()
	}
	err = ix.Build(buildCtx, p.Report)
	builtOnce()
	if p.End != nil {
		p.End(ix.Status(), err)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err != nil && buildCtx.Err() == nil {
		log.Error("building index", "err", err)
	}
	if watch && ctx.Err() == nil {
		if err := ix.Watch(ctx); err != nil && ctx.Err() == nil {
			log.Warn("watching workspace", "err", err)
		}
	}
}

func (l *Live) get() (*Index, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ix, l.err
}

// WaitBuilt waits for the end of the first build (or of a failed open).
func (l *Live) WaitBuilt(ctx context.Context) error {
	select {
	case <-l.built:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Err reports why the index could not be opened, if it could not.
func (l *Live) Err() error {
	_, err := l.get()
	return err
}

// Search answers from what is indexed; partial until the index is built.
func (l *Live) Search(ctx context.Context, query string, limit int) ([]SearchHit, bool, error) {
	ix, err := l.get()
	if err != nil {
		return nil, false, fmt.Errorf("the workspace index could not be opened: %w", err)
	}
	if ix == nil {
		return nil, true, nil
	}
	return ix.Search(ctx, query, limit)
}

// Status reports indexing progress; "indexing" while still opening.
func (l *Live) Status() Status {
	ix, err := l.get()
	switch {
	case err != nil:
		return Status{State: StateFailed, Error: err.Error()}
	case ix == nil:
		return Status{State: StateIndexing}
	}
	return ix.Status()
}

// Changed re-indexes files the editor saved.
func (l *Live) Changed(paths ...string) {
	if ix, _ := l.get(); ix != nil {
		ix.Changed(paths...)
	}
}

// SetOpen tells the index which files are open in the editor.
func (l *Live) SetOpen(paths []string) {
	if ix, _ := l.get(); ix != nil {
		ix.SetOpen(paths)
	}
}

// StopBuild cancels the build in progress; watching goes on.
func (l *Live) StopBuild() {
	l.mu.Lock()
	stop := l.stopBuild
	l.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// Close stops the background work and closes the index.
func (l *Live) Close() error {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.cancel()
	<-l.done
	ix, _ := l.get()
	if ix != nil {
		return ix.Close()
	}
	return nil
}
