package rag

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// TeamOptions configures a Team.
type TeamOptions struct {
	// Options is the workspace: Root, StateDir (the overlay keeps its
	// state in a folder of it; the fallback index is the workspace's usual
	// one), Hidden, Logger; Embedder serves the fallback alone (the team
	// index's vectors are not searched: docs/index.md).
	Options
	Store Store
	// Repo is the workspace's repository in the store; "" = RepoName(Root).
	Repo string
	// Retry is how often a store found unreachable is tried again
	// (default 30 s); meanwhile the local index answers.
	Retry time.Duration
	// Timeout bounds a query of the store (default 10 s) before the local
	// index answers it instead.
	Timeout time.Duration
	// NoWatch leaves the workspace unwatched (a one-shot search).
	NoWatch bool
}

// Team searches the team index for the workspace's repository at its
// published commit, overlaid with the workspace's own differences from
// that commit (files changed, added, deleted or unsaved to git since) from
// a small local index: results are those of the files on disk. When the
// store cannot be reached (or the repository was never published), the
// workspace's full local index answers instead, built on first need, and
// Status says so; the store is tried again every Retry. It offers what
// Live offers, so a daemon uses one or the other.
type Team struct {
	opts  TeamOptions
	cache *storeCache
	log   *slog.Logger
	ctx   context.Context
	stop  context.CancelFunc

	started chan struct{} // closed once the first contact with the store ended

	mu          sync.Mutex
	overlay     *Live
	built       bool            // the overlay's first build is done
	seed        map[string]bool // git's changed files at the start; nil without git
	headKey     string          // the head the manifest is of
	commit      string
	fallback    *Live
	notice      string // why the local index answers; "" when the team index does
	unpublished bool   // the store answers, but has not the workspace's repository
	reason      string // what went wrong, in a few words
	nextTry     time.Time
	trying      bool
	open        []string

	manifest atomic.Pointer[map[string][16]byte] // the head's files and their content hashes
	hc       hiddenCache
}

// StartTeam starts searching the team index for the workspace: it reads
// the repository's published commit and starts the overlay in the
// background. p reports the overlay's (or the fallback's) first build.
func StartTeam(opts TeamOptions, p Progress) *Team {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Retry <= 0 {
		opts.Retry = 30 * time.Second
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := &Team{opts: opts, cache: newStoreCache(opts.Store), log: opts.Logger, ctx: ctx, stop: cancel,
		started: make(chan struct{})}
	go t.start(p)
	return t
}

func (t *Team) start(p Progress) {
	defer close(t.started)
	if t.opts.Repo == "" {
		t.opts.Repo = RepoName(t.ctx, t.opts.Root)
	}
	if err := t.connect(p); err != nil {
		t.useFallback(err, p)
	}
}

// connect reads the head and starts the overlay on it.
func (t *Team) connect(p Progress) error {
	ctx, cancel := context.WithTimeout(t.ctx, t.opts.Timeout)
	defer cancel()
	res, err := t.cache.st.Fetch(ctx, FetchRequest{Repos: []string{t.opts.Repo}})
	if err != nil {
		return err
	}
	if len(res.Heads) == 0 {
		return fmt.Errorf("%w: %s", ErrNotPublished, t.opts.Repo)
	}
	b, err := t.cache.base(ctx, t.opts.Repo, res.Heads)
	if err != nil {
		return err
	}
	head := b.heads[0]
	var seed map[string]bool
	if gitHasCommit(ctx, t.opts.Root, head.Commit) {
		if changed, err := gitChanged(ctx, t.opts.Root, head.Commit); err == nil {
			seed = changed
		}
	}
	t.setManifest(b, 0)
	t.mu.Lock()
	t.seed = seed
	t.mu.Unlock()
	o := t.opts.Options
	o.StateDir = filepath.Join(t.opts.StateDir, "team-overlay")
	o.Embedder = nil
	o.Published = func(rel string) ([16]byte, bool) {
		m := t.manifest.Load()
		h, ok := (*m)[rel]
		return h, ok
	}
	if seed != nil {
		o.Seed = func(rel string) bool { return !seed[rel] }
	}
	end := p.End
	p.End = func(st Status, err error) {
		t.mu.Lock()
		t.built = true
		t.mu.Unlock()
		if end != nil {
			end(t.Status(), err)
		}
	}
	live := startLive(o, p, !t.opts.NoWatch)
	t.mu.Lock()
	t.overlay = live
	if t.open != nil {
		live.SetOpen(t.open)
	}
	t.mu.Unlock()
	return nil
}

// setManifest makes head hi of b the published state the overlay compares
// with, and tells the overlay which files' published content changed.
func (t *Team) setManifest(b *baseView, hi int) {
	m := map[string][16]byte{}
	for path, f := range b.manifest(hi) {
		m[path] = b.files[f].Hash
	}
	t.mu.Lock()
	old := t.manifest.Load()
	t.headKey, t.commit = headsKey(b.heads[hi:hi+1]), b.heads[hi].Commit
	overlay := t.overlay
	t.mu.Unlock()
	t.manifest.Store(&m)
	if old == nil || overlay == nil {
		return
	}
	var changed []string
	for p, h := range m {
		if oh, ok := (*old)[p]; !ok || oh != h {
			changed = append(changed, p)
		}
	}
	for p := range *old {
		if _, ok := m[p]; !ok {
			changed = append(changed, p)
		}
	}
	if ix, _ := overlay.get(); ix != nil && len(changed) > 0 {
		ix.Republished(changed)
	}
}

// useFallback makes the workspace's full local index answer, and says why.
func (t *Team) useFallback(err error, p Progress) {
	t.mu.Lock()
	t.reason = reasonOf(err)
	t.unpublished = errors.Is(err, ErrNotPublished)
	t.mu.Unlock()
	notice := "the team index is unreachable: searching this machine's index"
	if errors.Is(err, ErrNotPublished) {
		notice = "this repository is not in the team index: searching this machine's index"
	} else if !errors.Is(err, ErrUnreachable) && !errors.Is(err, context.DeadlineExceeded) {
		notice = "the team index failed: searching this machine's index"
	}
	t.log.Warn("team index: "+notice, "repo", t.opts.Repo, "err", err)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.notice = notice
	t.nextTry = time.Now().Add(t.opts.Retry)
	if t.fallback == nil {
		t.fallback = startLive(t.opts.Options, p, !t.opts.NoWatch)
		if t.open != nil {
			t.fallback.SetOpen(t.open)
		}
	}
}

// Wait waits until the first contact with the store ended (a one-shot
// search waits for it; the daemon never does).
func (t *Team) Wait(ctx context.Context) error {
	select {
	case <-t.started:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// WaitBuilt waits until the index answering now (the overlay, or the
// local index when the team index cannot answer) has ended its first
// build: a search then is complete.
func (t *Team) WaitBuilt(ctx context.Context) error {
	if err := t.Wait(ctx); err != nil {
		return err
	}
	t.mu.Lock()
	l := t.overlay
	if t.notice != "" || l == nil {
		l = t.fallback
	}
	t.mu.Unlock()
	return l.WaitBuilt(ctx)
}

// Search answers from the team index and the overlay, or from the local
// index when the store cannot be reached; partial while the overlay (or
// the local index) is still being built.
func (t *Team) Search(ctx context.Context, query string, limit int) ([]SearchHit, bool, error) {
	select {
	case <-t.started:
	default:
		return nil, true, nil // not yet in touch with the store
	}
	t.mu.Lock()
	overlay, fallback, notice := t.overlay, t.fallback, t.notice
	if notice != "" && !t.trying && time.Now().After(t.nextTry) {
		t.trying = true
		go t.retry()
	}
	t.mu.Unlock()
	if notice == "" && overlay != nil && !t.fallbackBetter(fallback) {
		hits, partial, err := t.searchRepos(ctx, overlay, []string{t.opts.Repo}, query, limit)
		if err == nil || ctx.Err() != nil {
			return hits, partial, err
		}
		t.useFallback(err, Progress{})
		t.mu.Lock()
		fallback = t.fallback
		t.mu.Unlock()
	}
	return fallback.Search(ctx, query, limit)
}

// fallbackBetter: while the overlay's first build goes on after the store
// came back, a complete local index still answers better.
func (t *Team) fallbackBetter(fallback *Live) bool {
	if fallback == nil {
		return false
	}
	t.mu.Lock()
	built := t.built
	t.mu.Unlock()
	return !built && fallback.Status().State == StateReady
}

// SearchRepos answers from repositories of the team index (exact names;
// nil: every one), the workspace's own overlaid when it is among them.
// When the team index cannot answer, the local index answers for the
// workspace alone (Status says why).
func (t *Team) SearchRepos(ctx context.Context, repos []string, query string, limit int) ([]SearchHit, bool, error) {
	if err := t.Wait(ctx); err != nil {
		return nil, false, err
	}
	t.mu.Lock()
	overlay, fallback, notice, unpublished := t.overlay, t.fallback, t.notice, t.unpublished
	t.mu.Unlock()
	if notice != "" && unpublished && fallback != nil {
		hits, partial, err := t.searchUnpublished(ctx, fallback, repos, query, limit)
		if err == nil || ctx.Err() != nil {
			return hits, partial, err
		}
	}
	if notice == "" && overlay != nil {
		hits, partial, err := t.searchRepos(ctx, overlay, repos, query, limit)
		if err == nil || ctx.Err() != nil {
			return hits, partial, err
		}
		t.useFallback(err, Progress{})
		t.mu.Lock()
		fallback = t.fallback
		t.mu.Unlock()
	}
	return fallback.Search(ctx, query, limit)
}

// Repos lists the repositories published in the team index.
func (t *Team) Repos(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, t.opts.Timeout)
	defer cancel()
	res, err := t.cache.st.Fetch(ctx, FetchRequest{})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, h := range res.Heads {
		out = append(out, h.Repo)
	}
	slices.Sort(out)
	return out, nil
}

// ResolveRepos finds the repositories each pattern names among names: the
// name itself, or its last path elements ("api" or "acme/api" for
// "github.com/acme/api"); "all" names every one (nil).
func ResolveRepos(names, patterns []string) ([]string, error) {
	var out []string
	for _, p := range patterns {
		if p == "all" {
			return nil, nil
		}
		var found []string
		for _, n := range names {
			if n == p || strings.HasSuffix(n, "/"+strings.Trim(p, "/")) {
				found = append(found, n)
			}
		}
		switch {
		case len(found) == 0:
			return nil, fmt.Errorf("no repository %q in the team index (it has %s)", p, strings.Join(names, ", "))
		case len(found) > 1 && !slices.Contains(found, p):
			return nil, fmt.Errorf("%q names several repositories: %s", p, strings.Join(found, ", "))
		case slices.Contains(found, p):
			found = []string{p}
		}
		out = append(out, found...)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func (t *Team) searchRepos(ctx context.Context, overlay *Live, repos []string, query string, limit int) ([]SearchHit, bool, error) {
	ix, err := overlay.get()
	if err != nil {
		return nil, false, err
	}
	if ix == nil {
		return nil, true, nil
	}
	qctx, cancel := context.WithTimeout(ctx, t.opts.Timeout)
	defer cancel()
	t.mu.Lock()
	built := t.built
	t.mu.Unlock()
	q := storeQuery{repos: repos, text: query, limit: limit}
	if repos == nil || slices.Contains(repos, t.opts.Repo) {
		q.over = &overlaySource{repo: t.opts.Repo, ix: ix, hidden: t.hidden}
		q.bonus = ix.bonus(time.Now())
	}
	hits, b, err := searchStoreBase(qctx, t.cache, q)
	if err != nil {
		return nil, false, err
	}
	if hi := b.headIndex(t.opts.Repo); hi >= 0 && headsKey(b.heads[hi:hi+1]) != t.currentHead() {
		t.setManifest(b, hi) // a new commit was published: the overlay compares with it now
		built = false
	}
	return hits, !built, nil
}

// searchUnpublished answers a search of repositories when the store
// answers but has not the workspace's own: the others from the store, the
// workspace's from this machine's full index (every file of its
// repository's head hidden, should it be published meanwhile).
func (t *Team) searchUnpublished(ctx context.Context, local *Live, repos []string, query string, limit int) ([]SearchHit, bool, error) {
	ix, err := local.get()
	if err != nil || ix == nil {
		return nil, ix == nil, err
	}
	partial := false
	select {
	case <-local.built:
	default:
		partial = true
	}
	qctx, cancel := context.WithTimeout(ctx, t.opts.Timeout)
	defer cancel()
	q := storeQuery{repos: repos, text: query, limit: limit}
	if repos == nil || slices.Contains(repos, t.opts.Repo) {
		q.over = &overlaySource{repo: t.opts.Repo, ix: ix, hidden: func(b *baseView, hi int) []bool {
			h := make([]bool, len(b.files))
			for _, f := range b.manifest(hi) {
				h[f] = true
			}
			return h
		}}
		q.bonus = ix.bonus(time.Now())
	}
	hits, _, err := searchStoreBase(qctx, t.cache, q)
	return hits, partial, err
}

func (t *Team) currentHead() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.headKey
}

// hidden is the overlay's rule for which files of the head it hides: once
// its first build is done, every file it does not hold as published;
// before, the files git said changed (or, without git, the same rule on
// what it has read so far).
func (t *Team) hidden(b *baseView, hi int) []bool {
	t.mu.Lock()
	built, seed := t.built, t.seed
	o := t.overlay
	t.mu.Unlock()
	ix, _ := o.get()
	if !built && seed != nil {
		h := make([]bool, len(b.files))
		for path, f := range b.manifest(hi) {
			if seed[path] {
				h[f] = true
			}
		}
		return h
	}
	return t.hc.get(ix, b, hi)
}

// retry tries the store again after it was found unreachable.
func (t *Team) retry() {
	defer func() {
		t.mu.Lock()
		t.trying = false
		t.mu.Unlock()
	}()
	t.mu.Lock()
	overlay := t.overlay
	t.mu.Unlock()
	var err error
	if overlay == nil {
		err = t.connect(Progress{})
	} else {
		ctx, cancel := context.WithTimeout(t.ctx, t.opts.Timeout)
		_, err = t.cache.st.Fetch(ctx, FetchRequest{Repos: []string{t.opts.Repo}})
		cancel()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		t.nextTry = time.Now().Add(t.opts.Retry)
		return
	}
	t.log.Info("team index: reachable again", "repo", t.opts.Repo)
	t.notice = ""
}

// Status reports the overlay (or the fallback) with the team index's part.
func (t *Team) Status() Status {
	select {
	case <-t.started:
	default:
		return Status{State: StateIndexing, Team: &TeamStatus{Repo: t.opts.Repo}}
	}
	t.mu.Lock()
	overlay, fallback, notice, commit, reason := t.overlay, t.fallback, t.notice, t.commit, t.reason
	t.mu.Unlock()
	if notice != "" || overlay == nil {
		st := fallback.Status()
		st.Team = &TeamStatus{Repo: t.opts.Repo, Notice: notice, Reason: reason}
		return st
	}
	st := overlay.Status()
	ts := &TeamStatus{Repo: t.opts.Repo, Commit: commit, LocalFiles: st.Files}
	if b := t.cache.lastBase(t.opts.Repo); b != nil && len(b.heads) == 1 {
		st.Chunks += b.live
		st.Files = len(b.manifest(0))
	}
	st.Team = ts
	return st
}

// Err reports why neither index could be opened.
func (t *Team) Err() error {
	t.mu.Lock()
	overlay, fallback := t.overlay, t.fallback
	t.mu.Unlock()
	if fallback != nil {
		return fallback.Err()
	}
	if overlay != nil {
		return overlay.Err()
	}
	return nil
}

// Changed re-indexes files the editor saved.
func (t *Team) Changed(paths ...string) {
	for _, l := range t.lives() {
		l.Changed(paths...)
	}
}

// SetOpen tells the indexes which files are open in the editor.
func (t *Team) SetOpen(paths []string) {
	t.mu.Lock()
	t.open = slices.Clone(paths)
	t.mu.Unlock()
	for _, l := range t.lives() {
		l.SetOpen(paths)
	}
}

// StopBuild cancels the builds in progress.
func (t *Team) StopBuild() {
	for _, l := range t.lives() {
		l.StopBuild()
	}
}

// Close stops everything and saves the local indexes.
func (t *Team) Close() error {
	t.stop()
	<-t.started
	var errs []error
	for _, l := range t.lives() {
		errs = append(errs, l.Close())
	}
	return errors.Join(errs...)
}

func (t *Team) lives() []*Live {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*Live
	for _, l := range []*Live{t.overlay, t.fallback} {
		if l != nil {
			out = append(out, l)
		}
	}
	return out
}

// TeamStatus is the team index's part of a Status.
type TeamStatus struct {
	Repo string `json:"repo"`
	// Commit is the published commit searched; LocalFiles the workspace's
	// files that differ from it, searched from this machine.
	Commit     string `json:"commit,omitempty"`
	LocalFiles int    `json:"localFiles"`
	// Notice says why this machine's index answers instead (the team
	// index is unreachable, the repository is not published); empty when
	// the team index answers.
	Notice string `json:"notice,omitempty"`
	// Reason is what went wrong, in the store's words (never a password).
	Reason string `json:"reason,omitempty"`
}

// reasonOf is an error's last words: the cause, without the layers of
// context above it.
func reasonOf(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 && len(msg)-i > 12 {
		msg = msg[i+2:]
	}
	return msg
}
