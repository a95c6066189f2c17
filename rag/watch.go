package rag

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watch timing. The debounce coalesces an editor's write-rename-chmod burst
// and a git checkout's storm while keeping a save searchable well under a
// tenth of a second; the snapshot is written once things settle; the periodic
// reconcile catches events the kernel dropped.
const (
	debounce     = 30 * time.Millisecond
	maxDebounce  = 500 * time.Millisecond
	saveDelay    = 2 * time.Second
	reconcileDur = 5 * time.Minute
)

// Watch follows changes to the workspace (fsnotify, debounced) and the
// editor's Changed notifications until ctx is done, then saves.
func (ix *Index) Watch(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	defer w.Close()
	ix.watchTree(w, "")

	fire := time.NewTimer(time.Hour)
	fire.Stop()
	save := time.NewTimer(time.Hour)
	save.Stop()
	reconcile := time.NewTicker(reconcileDur)
	defer reconcile.Stop()
	var first time.Time // first event of the current burst
	arm := func() {
		now := time.Now()
		if first.IsZero() {
			first = now
		}
		fire.Reset(min(debounce, max(0, maxDebounce-now.Sub(first))))
	}
	for {
		select {
		case <-ctx.Done():
			ix.work.Lock()
			defer ix.work.Unlock()
			if err := ix.saveIfDirty(); err != nil {
				ix.log.Warn("index: save", "err", err)
			}
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if ix.event(w, ev) {
				arm()
			}
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			// An overflow means lost events: only a full pass is sure.
			ix.log.Warn("index: watcher", "err", err)
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				ix.rebuild(ctx)
				save.Reset(saveDelay)
			}
		case <-ix.wake:
			arm()
		case <-fire.C:
			first = time.Time{}
			ix.Update(ctx)
			save.Reset(saveDelay)
		case <-save.C:
			ix.work.Lock()
			if err := ix.saveIfDirty(); err != nil {
				ix.log.Warn("index: save", "err", err)
			}
			ix.work.Unlock()
		case <-reconcile.C:
			ix.rebuild(ctx)
		}
	}
}

func (ix *Index) rebuild(ctx context.Context) {
	if err := ix.Build(ctx, nil); err != nil && ctx.Err() == nil {
		ix.log.Warn("index: rebuild", "err", err)
	}
}

// event queues a path; new directories are watched (inotify is not
// recursive) and their files queued. It reports whether anything was queued.
func (ix *Index) event(w *fsnotify.Watcher, ev fsnotify.Event) bool {
	rel, ok := ix.rel(ev.Name)
	if !ok || rel == "" {
		return false
	}
	if ev.Has(fsnotify.Create) {
		if fi, err := ix.fsys.Lstat(local(rel)); err == nil && fi.IsDir() {
			if ix.ig.ignoredPath(rel, true) {
				return false
			}
			ix.watchTree(w, rel)
		}
	}
	if ev.Op == fsnotify.Chmod {
		return false
	}
	ix.pendingMu.Lock()
	ix.pending[rel] = true
	ix.pendingMu.Unlock()
	return true
}

// watchTree adds a watch on dir and every non-ignored directory below it.
// Files already there are queued, for directories that appear with content
// (a rename into the tree, an unpacked archive). The walk goes through the
// workspace's os.Root and never follows a link; a directory swapped for a
// link between the walk and the watch is unwatched again.
func (ix *Index) watchTree(w *fsnotify.Watcher, dir string) {
	fs.WalkDir(ix.fsys.FS(), local(dir), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel := filepath.ToSlash(p)
		if rel == "." {
			rel = ""
		}
		if !d.IsDir() {
			if dir != "" {
				ix.pendingMu.Lock()
				ix.pending[rel] = true
				ix.pendingMu.Unlock()
			}
			return nil
		}
		if rel != "" && ix.ig.ignored(rel, true) {
			return fs.SkipDir
		}
		abs := filepath.Join(ix.root, p)
		if err := w.Add(abs); err != nil {
			// Usually fs.inotify.max_user_watches: the periodic reconcile
			// still picks changes up, late.
			ix.log.Warn("index: watch", "dir", rel, "err", err)
			return fs.SkipDir
		}
		if fi, err := ix.fsys.Lstat(p); err != nil || !fi.IsDir() {
			w.Remove(abs)
			return fs.SkipDir
		}
		return nil
	})
}

func (ix *Index) drainPending() []string {
	ix.pendingMu.Lock()
	defer ix.pendingMu.Unlock()
	out := make([]string, 0, len(ix.pending))
	for p := range ix.pending {
		out = append(out, p)
	}
	clear(ix.pending)
	return out
}

// Update applies the queued changes (watcher events and Changed paths) now.
// Watch calls it after its debounce; it is exported for callers that do not
// run Watch. A changed ignore file triggers a full Build, since it can hide
// or reveal anything below it.
func (ix *Index) Update(ctx context.Context) {
	paths := ix.drainPending()
	if len(paths) == 0 {
		return
	}
	for _, p := range paths {
		if isIgnoreFile(p) {
			ix.rebuild(ctx)
			return
		}
	}
	ix.work.Lock()
	defer ix.work.Unlock()
	var cands []candidate
	ix.mu.Lock()
	for _, rel := range paths {
		cands = append(cands, ix.changedLocked(ctx, rel)...)
		if ix.republished[rel] {
			delete(ix.republished, rel)
			continue
		}
		ix.recent[rel] = time.Now()
	}
	ix.mu.Unlock()
	results, err := ix.newReaders().readFiles(ctx, cands)
	if err != nil {
		return
	}
	ix.applyResults(ctx, results)
	ix.touchDirs(paths)
	if err := ix.embedMissing(ctx, func(float64) {}); err != nil {
		ix.log.Warn("index: embed", "err", err)
	}
}

// changedLocked resolves one changed path: gone or ignored paths leave the
// index (with everything below them, for directories), files whose size or
// mtime moved become candidates to read.
func (ix *Index) changedLocked(ctx context.Context, rel string) []candidate {
	fi, err := ix.fsys.Lstat(local(rel))
	if err != nil || fi.IsDir() || ix.ig.ignoredPath(rel, false) {
		ix.removeFileLocked(ctx, rel)
		if err != nil || fi.IsDir() {
			prefix := rel + "/"
			for p := range ix.files {
				if len(p) > len(prefix) && p[:len(prefix)] == prefix && (err != nil || ix.ig.ignoredPath(p, false)) {
					ix.removeFileLocked(ctx, p)
				}
			}
		}
		return nil
	}
	link := fi.Mode()&fs.ModeSymlink != 0
	if link {
		// os.Root refuses a link that leads out of the workspace.
		if fi, err = ix.fsys.Stat(local(rel)); err != nil || !fi.Mode().IsRegular() {
			ix.removeFileLocked(ctx, rel)
			return nil
		}
	}
	if !fi.Mode().IsRegular() {
		return nil
	}
	if fi.Size() > maxFileSize {
		ix.removeFileLocked(ctx, rel)
		ix.skipped[rel] = fmt.Sprintf("larger than %d bytes", maxFileSize)
		return nil
	}
	if e, ok := ix.files[rel]; ok && e.Size == fi.Size() && e.Mtime == fi.ModTime().UnixNano() && e.Link == link {
		return nil
	}
	return []candidate{{rel: rel, size: fi.Size(), mtime: fi.ModTime().UnixNano(), link: link}}
}

// touchDirs records the mtimes of the directories holding changed paths,
// and of directories that appeared or vanished, so the snapshot's
// freshness check (View) agrees with the index.
func (ix *Index) touchDirs(paths []string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, p := range paths {
		for _, d := range []string{p, parentDir(p)} {
			fi, err := ix.fsys.Lstat(local(d))
			_, known := ix.dirs[d]
			switch {
			case err != nil || !fi.IsDir():
				if known && d == p {
					delete(ix.dirs, d)
					ix.dirty = true
				}
			case known || d == p && !ix.ig.ignoredPath(d, true):
				if m := fi.ModTime().UnixNano(); !known || m != ix.dirs[d] {
					ix.dirs[d] = m
					ix.dirty = true
				}
			}
		}
	}
}
