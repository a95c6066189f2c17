package rag

import (
	"context"
	"sync"
	"time"
)

// An overlay is a workspace index that holds only the files that differ
// from a published commit of the team index (Options.Published): the
// files as published are recorded as unread ("same as published") and
// left to the team index. Searching the two together (storeCorpus) hides
// the published version of every other file — changed, added, deleted or
// now ignored — so that results are those of the files on disk.

// skipPublished is the skip reason of a file whose content is the
// published one; it is not reported as skipped.
const skipPublished = "same as published"

// asPublished reports whether a file with this content hash is as
// published.
func (ix *Index) asPublished(rel string, hash [16]byte) bool {
	if ix.published == nil {
		return false
	}
	h, ok := ix.published(rel)
	return ok && h == hash
}

// takeSeeded records the candidates the seed knows to be as published
// without reading them, and returns the others. The seed serves the first
// Build only.
func (ix *Index) takeSeeded(todo []candidate) []candidate {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	seed := ix.seed
	ix.seed = nil
	if seed == nil || ix.published == nil {
		return todo
	}
	out := todo[:0]
	for _, c := range todo {
		if _, ok := ix.published(c.rel); ok && seed(c.rel) {
			ix.removeFileLocked(context.Background(), c.rel)
			ix.unread[c.rel] = fileStamp{c.size, c.mtime, c.link}
			ix.dirty = true
			ix.gen++
			continue
		}
		out = append(out, c)
	}
	return out
}

// forgetStaleSame drops, when the index opens, the "same as published"
// records the seed contradicts (the published commit moved since they
// were made), so those files are read again.
func (ix *Index) forgetStaleSame() {
	if ix.seed == nil || ix.published == nil {
		return
	}
	for rel := range ix.unread {
		if _, ok := ix.published(rel); ok && !ix.seed(rel) {
			delete(ix.unread, rel)
			ix.dirty = true
		}
	}
}

// Republished tells an overlay that these paths' published content
// changed (a new commit was published): they are compared again.
func (ix *Index) Republished(paths []string) {
	ix.mu.Lock()
	for _, p := range paths {
		ix.republished[p] = true
		if _, ok := ix.unread[p]; ok {
			delete(ix.unread, p)
			ix.dirty = true
			ix.gen++
		}
	}
	ix.mu.Unlock()
	ix.Changed(paths...)
}

// hiddenCache remembers which base files an overlay hides, until the
// overlay or the heads change.
type hiddenCache struct {
	mu     sync.Mutex
	key    string
	gen    uint64
	hidden []bool
}

// hidden returns, for the files of base b, which the overlay ix hides:
// every live file of head hi that the overlay does not hold as published.
// The caller holds ix.mu for reading.
func (hc *hiddenCache) get(ix *Index, b *baseView, hi int) []bool {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if hc.key == b.key && hc.gen == ix.gen && hc.hidden != nil {
		return hc.hidden
	}
	h := make([]bool, len(b.files))
	for path, f := range b.manifest(hi) {
		if _, same := ix.unread[path]; !same {
			h[f] = true
		}
	}
	hc.key, hc.gen, hc.hidden = b.key, ix.gen, h
	return h
}

// bonus is the editor's context for ranking, as Index.search weighs it:
// open files, and files changed in the last minutes. The caller holds
// ix.mu for reading while ranking calls it.
func (ix *Index) bonus(now time.Time) func(path string) float64 {
	return func(path string) float64 {
		b := 0.0
		if ix.open[path] {
			b += openBoost
		}
		if t, ok := ix.recent[path]; ok && now.Sub(t) < recentWindow {
			b += recentBoost
		}
		return b
	}
}
