package tools

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// ReadTracker remembers the files a run has read: their modification time
// then, so that an edit of a file the model never saw, or one that changed
// on disk since, is refused; which of their lines were shown, so that
// overwriting a file seen only in part is refused; and what the run itself
// last wrote to them, so that the run's own earlier edit in a batch is not
// mistaken for someone else's change.
type ReadTracker struct {
	mu    sync.Mutex // guards files
	files map[string]*readState
}

type readState struct {
	mtime time.Time
	total int    // lines in the file as last seen; 0 when unknown
	seen  []span // lines shown, merged, in order
	wrote [sha256.Size]byte
	own   bool // wrote holds the hash of what this run last wrote
}

// span is a range of lines, 1-based and inclusive.
type span struct{ first, last int }

// NewReadTracker returns an empty tracker.
func NewReadTracker() *ReadTracker { return &ReadTracker{files: map[string]*readState{}} }

func (r *ReadTracker) state(path string) *readState {
	st := r.files[path]
	if st == nil {
		st = &readState{}
		r.files[path] = st
	}
	return st
}

// Mark records that the whole of path (workspace-relative) was seen when its
// mtime was mtime.
func (r *ReadTracker) Mark(path string, mtime time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.state(path)
	st.mtime, st.total, st.seen = mtime, 0, nil
}

// MarkLines records that lines first..last of path's total were shown when
// its mtime was mtime. Lines seen of an older version are forgotten.
func (r *ReadTracker) MarkLines(path string, mtime time.Time, first, last, total int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.state(path)
	if !st.mtime.Equal(mtime) || st.total != total {
		st.seen = nil
	}
	st.mtime, st.total = mtime, total
	st.seen = addSpan(st.seen, span{first, last})
}

// markWrite records what the run itself just wrote to path: its mtime and
// content, and the lines the model knows of it (every line for a file it
// wrote whole; else what it saw before, with the lines shown after the
// change).
func (r *ReadTracker) markWrite(path string, mtime time.Time, content string, whole bool, shown []span) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.state(path)
	st.mtime, st.total = mtime, lineCount(content)
	st.wrote, st.own = sha256.Sum256([]byte(content)), true
	if whole {
		st.seen = []span{{1, st.total}}
		return
	}
	for _, s := range shown {
		st.seen = addSpan(st.seen, s)
	}
}

// Seen reports the mtime path had when it was last read.
func (r *ReadTracker) Seen(path string) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st, ok := r.files[path]
	if !ok {
		return time.Time{}, false
	}
	return st.mtime, true
}

// unseen describes the lines of path the model has not been shown ("" when
// it saw them all, or the tracker cannot tell) and the first of them.
func (r *ReadTracker) unseen(path string) (string, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st, ok := r.files[path]
	if !ok || st.total == 0 || len(st.seen) == 0 {
		return "", 0
	}
	first := 1
	for _, s := range st.seen {
		if s.first > first {
			break
		}
		first = s.last + 1
	}
	if first > st.total {
		return "", 0
	}
	parts := make([]string, len(st.seen))
	for i, s := range st.seen {
		parts[i] = s.String()
	}
	return fmt.Sprintf("you have seen only lines %s of its %d", strings.Join(parts, ", "), st.total), first
}

// ownWrite reports whether content is what this run last wrote to path.
func (r *ReadTracker) ownWrite(path, content string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	st, ok := r.files[path]
	return ok && st.own && st.wrote == sha256.Sum256([]byte(content))
}

func (s span) String() string {
	if s.first == s.last {
		return fmt.Sprint(s.first)
	}
	return fmt.Sprintf("%d-%d", s.first, s.last)
}

// addSpan merges s into the ordered, disjoint spans.
func addSpan(spans []span, s span) []span {
	if s.last < s.first {
		return spans
	}
	out := make([]span, 0, len(spans)+1)
	for _, x := range spans {
		switch {
		case x.last+1 < s.first:
			out = append(out, x)
		case s.last+1 < x.first:
			out = append(out, s)
			s = x
		default:
			s = span{min(s.first, x.first), max(s.last, x.last)}
		}
	}
	out = append(out, s)
	slices.SortFunc(out, func(a, b span) int { return a.first - b.first })
	return out
}

// lineCount is the number of lines read_file numbers in content.
func lineCount(content string) int {
	if content == "" {
		return 0
	}
	return strings.Count(strings.TrimSuffix(strings.ReplaceAll(content, "\r\n", "\n"), "\n"), "\n") + 1
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
