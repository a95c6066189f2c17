package tools

import (
	"fmt"
	"sync"
	"time"
)

// ReadTracker remembers the files a run has read and their modification
// time then, so that an edit of a file the model never saw, or one that
// changed on disk since, is refused.
type ReadTracker struct {
	mu   sync.Mutex // guards seen
	seen map[string]time.Time
}

// NewReadTracker returns an empty tracker.
func NewReadTracker() *ReadTracker { return &ReadTracker{seen: map[string]time.Time{}} }

// Mark records that path (workspace-relative) was read when its mtime was mtime.
func (r *ReadTracker) Mark(path string, mtime time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen[path] = mtime
}

// Seen reports the mtime path had when it was last read.
func (r *ReadTracker) Seen(path string) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.seen[path]
	return t, ok
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
