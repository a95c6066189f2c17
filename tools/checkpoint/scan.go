package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentd/agentd/rag"
)

// dirtyPath is a path the scan found new or changed.
type dirtyPath struct {
	rel string
	st  fstat
	e   *entry // the captured entry; nil: gone before it could be read
}

// syncLocked scans the whole workspace and brings the manifest and the
// store up to date: new and changed paths are read and stored, vanished ones
// dropped. It drains the watcher first: everything it would report is seen
// by the scan, and every change after that is queued for the next Begin.
// A cancelled scan keeps what it captured and drops nothing.
func (w *Workspace) syncLocked(ctx context.Context) error {
	if w.watch == nil && !w.noWatch {
		w.watch, w.noWatch = newWatcher(w.root), true
	}
	w.watching, w.lastFull = false, time.Now()
	w.fullScans++
	w.watch.drain()
	w.watch.watch("")
	if err := w.syncTreeLocked(ctx, ""); err != nil {
		return err
	}
	w.watching, w.lastFull = w.watch != nil, time.Now()
	return nil
}

// quickSyncLocked brings the manifest up to date from the watcher's events
// alone: only the paths that changed since the last scan are looked at. It
// falls back to a full scan when events were lost, there are too many, or
// (maxAge > 0) the last full scan is older than maxAge.
func (w *Workspace) quickSyncLocked(ctx context.Context, maxAge time.Duration) error {
	if !w.watching || maxAge > 0 && time.Since(w.lastFull) > maxAge {
		return w.syncLocked(ctx)
	}
	paths, newDirs, ok := w.watch.drain()
	if !ok || len(paths)+len(newDirs) > quickLimit {
		return w.syncLocked(ctx)
	}
	w.checkRulesLocked()
	isNew := map[string]bool{}
	for _, d := range newDirs {
		isNew[d] = true
	}
	all := append(paths, newDirs...)
	sort.Strings(all) // parents first
	for _, rel := range all {
		if err := w.refreshLocked(ctx, rel, isNew[rel]); err != nil {
			return err
		}
	}
	return nil
}

// quickLimit is how many changed paths Begin looks at one by one before a
// full scan is cheaper.
var quickLimit = 2000

// refreshLocked brings one path the watcher named up to date; a directory
// that appeared is scanned whole.
func (w *Workspace) refreshLocked(ctx context.Context, rel string, newDir bool) error {
	if rel == "" {
		return nil // the root itself is not a covered path
	}
	e := w.man[rel]
	fi, err := w.fsys.Lstat(filepath.FromSlash(rel))
	var st fstat
	if err == nil {
		st = statOf(fi)
	}
	if err != nil || st.kind() == "" {
		if e != nil {
			w.dropTreeLocked(rel)
		}
		return nil
	}
	isDir := st.kind() == KindDir
	if e == nil {
		if parent := parentOf(rel); parent != "" && w.man[parent] == nil {
			return nil // under an ignored (or not yet known) directory
		}
		if w.ignoredLocked(rel, isDir) {
			return nil
		}
	}
	if e != nil && e.st.kind() == KindDir && !isDir {
		w.dropTreeLocked(rel)
		e = nil
	}
	if !isDir {
		if e != nil && e.st.unchanged(st) {
			return nil
		}
		if strings.HasSuffix("/"+rel, "/.gitignore") {
			w.forgetRulesLocked() // for the paths met from now on
		}
		if ne := w.capture(rel, st); ne != nil {
			w.setLocked(rel, ne)
		} else if e != nil {
			w.setLocked(rel, nil)
		}
		return nil
	}
	if e == nil || !e.st.unchanged(st) {
		w.setLocked(rel, &entry{st: st})
	}
	w.watch.watch(rel)
	// A file or link that became a directory comes as one event for the
	// name (deleted, then created), not as a new directory: its contents
	// are new too, and a change inside it must not go unrecorded.
	if newDir || e == nil || e.st.kind() != KindDir {
		return w.syncTreeLocked(ctx, rel)
	}
	return nil
}

// dropTreeLocked forgets a path and everything under it.
func (w *Workspace) dropTreeLocked(rel string) {
	w.setLocked(rel, nil)
	for p := range w.man {
		if strings.HasPrefix(p, rel+"/") {
			w.setLocked(p, nil)
		}
	}
	w.watch.forgetUnder(rel)
}

func parentOf(rel string) string {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i]
	}
	return ""
}

// syncTreeLocked scans the tree under sub ("" is the workspace).
func (w *Workspace) syncTreeLocked(ctx context.Context, sub string) error {
	if sub == "" {
		w.checkRulesLocked()
	}
	w.gen++
	gen := w.gen
	var dirty []dirtyPath
	count, over := 0, false
	var unreadable []string // directories whose entries cannot be listed now
	err := walkTree(w.root, sub, func(rel string, st fstat) bool {
		if ctx.Err() != nil || over {
			return false
		}
		k := st.kind()
		if k == "" {
			return false
		}
		e := w.man[rel]
		if e == nil && w.ignoredLocked(rel, k == KindDir) {
			return false
		}
		if count++; count > w.lim.MaxFiles {
			over = true
			return false
		}
		if k == KindDir {
			w.watch.watch(rel) // before its entries are listed
		}
		if e != nil && e.st.unchanged(st) {
			e.gen = gen
		} else {
			dirty = append(dirty, dirtyPath{rel: rel, st: st})
		}
		return k == KindDir
	}, func(rel string, err error) {
		unreadable = append(unreadable, strings.TrimSuffix(rel, "/")+"/")
	})
	if err != nil {
		return fmt.Errorf("scanning the workspace: %w", err)
	}
	if over {
		w.tooLarge = fmt.Sprintf("%s: more than %d files and directories are covered", ErrTooLarge, w.lim.MaxFiles)
		return errors.New(w.tooLarge)
	}
	if ctx.Err() == nil && sub == "" {
		var total int64
		for _, e := range w.man {
			if e.gen == gen && e.st.kind() != KindDir {
				total += e.st.size
			}
		}
		for _, d := range dirty {
			if d.st.kind() == KindFile {
				total += d.st.size
			}
		}
		if total > w.lim.MaxBytes {
			w.tooLarge = fmt.Sprintf("%s: its covered files hold %d MiB, over the %d MiB limit", ErrTooLarge, total>>20, w.lim.MaxBytes>>20)
			return errors.New(w.tooLarge)
		}
	}
	w.captureAll(ctx, dirty)
	rulesChanged := false
	for _, d := range dirty {
		if d.e == nil {
			continue
		}
		d.e.gen = gen
		w.setLocked(d.rel, d.e)
		if strings.HasSuffix("/"+d.rel, "/.gitignore") {
			rulesChanged = true
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	for rel, e := range w.man {
		if e.gen == gen || sub != "" && !strings.HasPrefix(rel, sub+"/") {
			continue
		}
		if under(rel, unreadable) {
			e.gen = gen // not seen, not gone: a directory could not be read
			continue
		}
		if strings.HasSuffix("/"+rel, "/.gitignore") {
			rulesChanged = true
		}
		w.setLocked(rel, nil)
	}
	if rulesChanged {
		w.forgetRulesLocked()
	}
	if sub == "" {
		w.tooLarge = ""
	}
	return nil
}

// under reports whether rel is inside one of the directories (each with a
// trailing slash; "/" is the root).
func under(rel string, dirs []string) bool {
	for _, d := range dirs {
		if d == "/" || strings.HasPrefix(rel, d) {
			return true
		}
	}
	return false
}

// captureAll reads and stores the dirty paths, several at a time when there
// are many (the first fill). A cancel stops it; what was not read keeps its
// old entry.
func (w *Workspace) captureAll(ctx context.Context, dirty []dirtyPath) {
	workers := 1
	if len(dirty) > 64 {
		workers = max(1, runtime.GOMAXPROCS(0))
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if ctx.Err() == nil {
					dirty[i].e = w.capture(dirty[i].rel, dirty[i].st)
				}
			}
		}()
	}
	for i := range dirty {
		next <- i
	}
	close(next)
	wg.Wait()
}

// capture reads one path's content into the store. nil: it is gone.
func (w *Workspace) capture(rel string, st fstat) *entry {
	local := filepath.FromSlash(rel)
	switch st.kind() {
	case KindDir:
		return &entry{st: st}
	case KindSymlink:
		target, err := w.fsys.Readlink(local)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return &entry{st: st, why: "unreadable: " + errText(err)}
		}
		e := &entry{st: st}
		e.hash = HashOf([]byte(target))
		if _, err := w.store.PutHashed(e.hash, []byte(target)); err != nil {
			return &entry{st: st, why: "not stored: " + errText(err)}
		}
		return e
	}
	if st.size > w.lim.MaxFileSize {
		return &entry{st: st, why: fmt.Sprintf("larger than the %s cap", sizeText(w.lim.MaxFileSize))}
	}
	// Without blocking: a concurrent command may have put a named pipe
	// where the scan saw a file, and opening it would wait for a writer
	// while the workspace is locked.
	f, err := w.fsys.OpenFile(local, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &entry{st: st, why: "unreadable: " + errText(err)}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return &entry{st: st, why: "unreadable: " + errText(err)}
	}
	if !fi.Mode().IsRegular() {
		return nil // no longer a file: the next scan sees what it is
	}
	data, err := io.ReadAll(io.LimitReader(f, w.lim.MaxFileSize+1))
	if err == nil {
		fi, err = f.Stat()
	}
	if err != nil {
		return &entry{st: st, why: "unreadable: " + errText(err)}
	}
	// The open file's own stat matches the content read; a write during the
	// read shows up as a change at the next scan.
	if now := statOf(fi); now.mode&sIFMT == sIFREG {
		st = now
	}
	if int64(len(data)) > w.lim.MaxFileSize {
		return &entry{st: st, why: fmt.Sprintf("larger than the %s cap", sizeText(w.lim.MaxFileSize))}
	}
	e := &entry{st: st, hash: HashOf(data)}
	if _, err := w.store.PutHashed(e.hash, data); err != nil {
		return &entry{st: st, why: "not stored: " + errText(err)}
	}
	return e
}

// ignoredLocked says whether a path the manifest does not know is left
// out by the repository's rules. Answers are cached until a rule changes.
func (w *Workspace) ignoredLocked(rel string, isDir bool) bool {
	if ign, ok := w.skip[rel]; ok {
		return ign
	}
	if w.stateRel == "." || w.stateRel != "" && (rel == w.stateRel || strings.HasPrefix(rel, w.stateRel+"/")) {
		w.skip[rel] = true
		return true
	}
	// A git directory is never covered, whatever the ignore files say: a
	// .gitignore of "!.git/" (a command may write one) made every scan
	// store the repository's objects and every run's diff list them.
	if slices.Contains(strings.Split(rel, "/"), ".git") {
		w.skip[rel] = true
		return true
	}
	ign := w.ig.Ignored(rel, isDir)
	if ign {
		w.skip[rel] = true
	}
	return ign
}

// checkRulesLocked notices a change of .git/info/exclude, which is not a
// covered file.
func (w *Workspace) checkRulesLocked() {
	var st fstat
	if fi, err := os.Lstat(filepath.Join(w.root, ".git", "info", "exclude")); err == nil {
		st = statOf(fi)
	}
	if st != w.excl {
		w.excl = st
		w.forgetRulesLocked()
	}
}

func (w *Workspace) forgetRulesLocked() {
	clear(w.skip)
	w.ig = rag.NewRepoIgnore(w.root)
}
