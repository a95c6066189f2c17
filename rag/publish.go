package rag

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// PublishOptions says what Publish indexes.
type PublishOptions struct {
	// Root is the tree: a git repository's top level (its checked-out
	// commit is published; the work tree must be clean), or any
	// directory, with Commit naming what it holds.
	Root string
	// Repo is the repository's name in the index; "" = RepoName(Root).
	Repo string
	// Commit is the commit published; "" = the checked-out one.
	Commit string
	// Full rebuilds every segment rather than adding the changes since
	// the published commit.
	Full     bool
	Embedder Embedder // vectors are stored with the chunks; nil: none
	Hidden   []string // as Options.Hidden
	Logger   *slog.Logger
	// WorkDir holds the temporary index; "" = the system's temp dir.
	WorkDir  string
	Progress func(done, total int)
}

// PublishResult says what a publish did.
type PublishResult struct {
	Repo, Commit string
	From         string // the previous published commit; "" for the first
	Unchanged    bool   // Commit was published already: nothing was written
	Incremental  bool   // only the files that changed since From were read
	// Files and Chunks are those of the new segment (the changed files,
	// or every file of a full publish); Retired counts the previous
	// commit's files that are no longer live.
	Files, Chunks, Retired int
	// Live is the chunks of the published commit; Segments its segments.
	Live, Segments int
	Took           time.Duration
}

// maxParts bounds a commit's segments: past it, the smaller segments'
// files are published again into the new one, so a query reads few
// segments however many commits were published incrementally.
const maxParts = 8

// Publish indexes a repository at its commit into a team index: the first
// time (or with Full) every file; then only the files that changed since
// the published commit (git's diff when the repository has that commit,
// else by content hash), added as one new segment, with the previous
// segments' changed and deleted files marked dead. Readers see the
// previous commit until the store commits the new one. Publishers of
// different repositories run side by side; the store serialises those of
// one.
func Publish(ctx context.Context, pub Publisher, opts PublishOptions) (*PublishResult, error) {
	start := time.Now()
	root, err := filepath.Abs(opts.Root)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	commit, err := publishedCommit(ctx, root, opts.Commit)
	if err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	repo := opts.Repo
	if repo == "" {
		repo = RepoName(ctx, root)
	}
	tx, err := pub.BeginPublish(ctx, repo)
	if err != nil {
		return nil, fmt.Errorf("publish %s: %w", repo, err)
	}
	done := false
	defer func() {
		if !done {
			tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	res := &PublishResult{Repo: repo, Commit: commit}
	head := tx.Head()
	if head != nil {
		res.From = head.Commit
	}
	if head != nil && head.Commit == commit && !opts.Full {
		res.Unchanged, res.Took = true, time.Since(start)
		return res, tx.Rollback(ctx)
	}
	p := &publisher{ctx: ctx, tx: tx, opts: opts, root: root, res: res}
	if head != nil && !opts.Full {
		if err := p.loadPrevious(head); err != nil {
			return nil, err
		}
	}
	parts, err := p.build(head)
	if err != nil {
		return nil, err
	}
	if err := tx.Commit(ctx, Head{Repo: repo, Commit: commit, Parts: parts}); err != nil {
		return nil, fmt.Errorf("publish %s: %w", repo, err)
	}
	done = true
	res.Segments = len(parts)
	res.Took = time.Since(start)
	return res, nil
}

// publishedCommit checks the tree and names its commit.
func publishedCommit(ctx context.Context, root, commit string) (string, error) {
	top := gitTopLevel(ctx, root)
	if top == "" {
		if commit == "" {
			return "", fmt.Errorf("%s is not a git repository: name the commit it holds", root)
		}
		return commit, nil
	}
	if top != root {
		return "", fmt.Errorf("%s is inside the repository %s: publish its top level", root, top)
	}
	if commit == "" {
		head, err := gitHead(ctx, root)
		if err != nil {
			return "", err
		}
		commit = head
	}
	dirty, err := gitDirty(ctx, root)
	if err != nil {
		return "", err
	}
	if len(dirty) > 0 {
		return "", fmt.Errorf("the work tree differs from the commit (%s): publish a clean checkout", strings.Join(dirty[:min(3, len(dirty))], ", "))
	}
	return commit, nil
}

// publisher is one publish in progress.
type publisher struct {
	ctx  context.Context
	tx   PublishTx
	opts PublishOptions
	root string
	res  *PublishResult

	prev     []*Segment // the previous head's segments, by part
	prevDead [][]int32
	manifest map[string][16]byte // the previous head's live files
}

func (p *publisher) loadPrevious(head *Head) error {
	p.manifest = map[string][16]byte{}
	for _, part := range head.Parts {
		seg, err := p.tx.Segment(p.ctx, part.Segment)
		if err != nil {
			return fmt.Errorf("publish: read segment %d: %w", part.Segment, err)
		}
		p.prev = append(p.prev, seg)
		p.prevDead = append(p.prevDead, part.Dead)
		for f, sf := range seg.Files {
			if !slices.Contains(part.Dead, int32(f)) {
				p.manifest[sf.Path] = sf.Hash
			}
		}
	}
	p.res.Incremental = true
	return nil
}

// build indexes what changed and returns the new commit's parts.
func (p *publisher) build(head *Head) ([]Part, error) {
	work, err := os.MkdirTemp(p.opts.WorkDir, "agentd-publish-")
	if err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	defer os.RemoveAll(work)
	opts := Options{Root: p.root, StateDir: work, Embedder: p.opts.Embedder, Hidden: p.opts.Hidden,
		Logger: p.opts.Logger, ephemeral: true}
	if p.res.Incremental {
		opts.Published = func(rel string) ([16]byte, bool) { h, ok := p.manifest[rel]; return h, ok }
		if gitHasCommit(p.ctx, p.root, head.Commit) {
			changed, err := gitChanged(p.ctx, p.root, head.Commit)
			if err != nil {
				return nil, fmt.Errorf("publish: %w", err)
			}
			opts.Seed = func(rel string) bool { return !changed[rel] }
		}
	}
	ix, err := Open(p.ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	defer ix.Close()
	if err := ix.Build(p.ctx, p.opts.Progress); err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	var parts []Part
	if p.res.Incremental {
		parts = p.carried(ix)
		if len(parts) >= maxParts {
			parts = p.merge(ix, parts)
		}
	}
	ix.work.Lock()
	seg, err := ix.exportSegment()
	ix.work.Unlock()
	if err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	p.res.Files, p.res.Chunks = len(seg.Files), seg.Docs()
	if seg.Docs() > 0 || len(seg.Files) > 0 {
		id, err := p.tx.AddSegment(p.ctx, seg)
		if err != nil {
			return nil, fmt.Errorf("publish: %w", err)
		}
		seg.ID = id
		parts = append(parts, Part{Segment: id})
	}
	for _, part := range parts {
		p.res.Live += p.liveDocs(part, seg)
	}
	return parts, nil
}

// carried are the previous head's parts, with the files the new commit
// does not have as they were marked dead: every live file the index does
// not hold as published (changed, deleted, now ignored). Parts left with
// no live file are dropped.
func (p *publisher) carried(ix *Index) []Part {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var parts []Part
	for i, seg := range p.prev {
		dead := slices.Clone(p.prevDead[i])
		live := 0
		for f, sf := range seg.Files {
			if slices.Contains(p.prevDead[i], int32(f)) {
				continue
			}
			if _, same := ix.unread[sf.Path]; same && p.manifest[sf.Path] == sf.Hash {
				live++
				continue
			}
			dead = append(dead, int32(f))
			p.res.Retired++
		}
		if live > 0 {
			slices.Sort(dead)
			parts = append(parts, Part{Segment: seg.ID, Dead: dead})
		}
	}
	return parts
}

// merge keeps the largest part and publishes the live files of the others
// again, in the new segment; when the largest is mostly dead, everything
// is published again.
func (p *publisher) merge(ix *Index, parts []Part) []Part {
	largest, most := 0, -1
	for i, part := range parts {
		if n := p.liveDocs(part, nil); n > most {
			largest, most = i, n
		}
	}
	keep := []Part{parts[largest]}
	if seg := p.segment(parts[largest].Segment); 2*most < seg.Docs() {
		keep = nil // mostly dead: it is published again too
	}
	var again []string
	for _, part := range parts {
		if len(keep) > 0 && part.Segment == keep[0].Segment {
			continue
		}
		seg := p.segment(part.Segment)
		for f, sf := range seg.Files {
			if !slices.Contains(part.Dead, int32(f)) {
				again = append(again, sf.Path)
				delete(p.manifest, sf.Path) // read and indexed this time
			}
		}
	}
	ix.Republished(again)
	ix.Update(p.ctx)
	return keep
}

func (p *publisher) segment(id int64) *Segment {
	for _, s := range p.prev {
		if s.ID == id {
			return s
		}
	}
	return nil
}

// liveDocs counts a part's live chunks; fresh is the new segment.
func (p *publisher) liveDocs(part Part, fresh *SegmentData) int {
	seg := p.segment(part.Segment)
	if seg == nil {
		if fresh != nil && fresh.ID == part.Segment {
			return fresh.Docs()
		}
		return 0
	}
	n := seg.Docs()
	for _, f := range part.Dead {
		if f >= 0 && int(f) < len(seg.Files) {
			n -= int(seg.Files[f].Docs)
		}
	}
	return n
}

// ErrNotPublished means the repository has no published commit.
var ErrNotPublished = errors.New("not published in the team index")
