package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"time"
)

// collectGrace spares contents younger than this: another process (agentd
// undo beside a daemon) may have stored them for a checkpoint it has not
// written yet.
var collectGrace = time.Hour

// collectAfter is how much the manifest and the sessions may have let go of
// before a collection is worth its scan of the store.
const collectAfter = 64 << 20

// Collected is what a collection freed.
type Collected struct {
	Blobs int
	Bytes int64
}

// Collect deletes the contents that neither the manifest nor any
// checkpoint names (and that are older than an hour).
func (w *Workspace) Collect() (Collected, error) {
	defer w.lock()()
	return w.collectLocked()
}

func (w *Workspace) collectLocked() (Collected, error) {
	w.loadLocked()
	live := make(map[Hash]bool, len(w.man))
	for _, e := range w.man {
		if !e.hash.IsZero() {
			live[e.hash] = true
		}
	}
	sessions, err := w.Sessions()
	if err != nil {
		return Collected{}, err
	}
	for _, s := range sessions {
		list, err := w.listLocked(s)
		if err != nil {
			return Collected{}, err
		}
		for _, cp := range list {
			for _, c := range cp.Changes {
				for _, st := range []*State{c.Before, c.After} {
					if st != nil && !st.Hash.IsZero() {
						live[st.Hash] = true
					}
				}
			}
		}
	}
	var out Collected
	var dead []Hash
	err = w.store.walk(collectGrace, func(h Hash, size int64, mtime time.Time) {
		if !live[h] && time.Since(mtime) > collectGrace {
			dead = append(dead, h)
			out.Bytes += size
		}
	})
	for _, h := range dead {
		if w.store.remove(h) == nil {
			out.Blobs++
		}
	}
	w.garbage, w.lastGC = 0, time.Now()
	return out, err
}

// Maintain is the background upkeep the agent runs when a session starts
// working: bring the manifest up to date (the first fill, or what changed
// since the daemon last looked) and collect unreferenced contents when
// enough have piled up. keep says which sessions still exist; the
// checkpoints of the others are dropped with them. Then every session's
// checkpoints together are kept within TotalBytes and Sessions, the
// sessions changed longest ago losing theirs first.
func (w *Workspace) Maintain(ctx context.Context, keep func(session string) bool) error {
	if keep != nil {
		sessions, err := w.Sessions()
		if err != nil {
			return err
		}
		for _, s := range sessions {
			if !keep(s) {
				_ = w.DropSession(s)
			}
		}
	}
	if err := w.boundSessions(); err != nil {
		return err
	}
	err := w.Warm(ctx)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	defer w.lock()()
	if w.garbage >= collectAfter || (w.garbage > 0 && time.Since(w.lastGC) > collectGrace) {
		if _, cerr := w.collectLocked(); err == nil {
			err = cerr
		}
	}
	return err
}

// DiskUsage is what the checkpoints take under the state directory.
func (w *Workspace) DiskUsage() (int64, error) {
	var n int64
	err := filepath.Walk(w.dir, func(_ string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n, err
}
