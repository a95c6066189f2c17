package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agentd/agentd/rag"
)

// Limits bound what checkpoints cover and keep. Zero fields take the
// defaults.
type Limits struct {
	// MaxFileSize: larger files are covered by stat only; a command's change
	// to one is reported and cannot be undone.
	MaxFileSize int64
	// MaxFiles and MaxBytes: a workspace whose covered files are more, or
	// hold more, gets no command checkpoints (the result says so).
	MaxFiles int
	MaxBytes int64
	// SessionBytes and SessionCount bound one session's checkpoints: past
	// either, its oldest checkpoints expire.
	SessionBytes int64
	SessionCount int
	// TotalBytes and Sessions bound every session's checkpoints together:
	// sessions are kept, so without them the history of all of them would
	// grow for ever. Past either, Maintain drops the checkpoints of the
	// sessions changed longest ago; the session changed last keeps its
	// own. TotalBytes defaults to four sessions' worth (SessionBytes).
	TotalBytes int64
	Sessions   int
}

// DefaultLimits are the limits of a workspace nobody configured.
var DefaultLimits = Limits{MaxFileSize: 8 << 20, MaxFiles: 100_000, MaxBytes: 1 << 30,
	SessionBytes: 256 << 20, SessionCount: 1000, Sessions: 20}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.MaxFileSize > 0 {
		d.MaxFileSize = l.MaxFileSize
	}
	if l.MaxFiles > 0 {
		d.MaxFiles = l.MaxFiles
	}
	if l.MaxBytes > 0 {
		d.MaxBytes = l.MaxBytes
	}
	if l.SessionBytes > 0 {
		d.SessionBytes = l.SessionBytes
	}
	if l.SessionCount > 0 {
		d.SessionCount = l.SessionCount
	}
	d.TotalBytes = 4 * d.SessionBytes
	if l.TotalBytes > 0 {
		d.TotalBytes = l.TotalBytes
	}
	if l.Sessions > 0 {
		d.Sessions = l.Sessions
	}
	return d
}

// Workspace keeps the checkpoints of one workspace under its state
// directory (<state>/checkpoints): the store of contents, the manifest of
// the covered paths as last scanned (whose contents are in the store, so
// they are the pre-images of whatever changes next), and each session's
// checkpoints. One Workspace per state directory serves the whole process;
// a lock file keeps other processes (agentd undo) in step.
type Workspace struct {
	root  string
	dir   string
	store *Store
	// stateRel is the state directory's path in the workspace when it is
	// inside it (a --state-dir in the project): never covered, or every
	// scan would find the store's own writes.
	stateRel string
	fsys     *os.Root
	ig       *rag.RepoIgnore

	mu        sync.Mutex // guards everything below, and the files under dir
	lim       Limits
	lockf     *os.File
	man       map[string]*entry
	loaded    bool
	unsaved   bool   // man differs from the manifest file
	gen       uint32 // scans so far
	skip      map[string]bool
	excl      fstat // .git/info/exclude as last seen
	version   uint64
	changes   []logged
	inflight  []uint64 // versions of the commands between Begin and End
	begins    uint64
	tooLarge  string
	garbage   int64
	lastGC    time.Time
	lastSave  time.Time
	lastFull  time.Time
	watch     *watcher
	noWatch   bool // the watcher was tried (nil: none could be had)
	watching  bool // every change since the last full scan is in the watcher's queue
	fullScans int
	closed    bool
	usage     map[string]*sessionUsage
}

// logged is one change the scans found, kept while a command that may own
// it is running.
type logged struct {
	v    uint64
	path string
	old  *entry // nil: the path did not exist
}

var (
	registryMu sync.Mutex
	registry   = map[string]*Workspace{}
)

// Open returns the process's Workspace for a workspace root and its state
// directory.
func Open(root, stateDir string) (*Workspace, error) {
	if root == "" || stateDir == "" {
		return nil, errors.New("checkpoints need a workspace and a state directory")
	}
	dir := filepath.Join(stateDir, "checkpoints")
	registryMu.Lock()
	defer registryMu.Unlock()
	if w, ok := registry[dir]; ok {
		return w, nil
	}
	st, err := NewStore(dir)
	if err != nil {
		return nil, err
	}
	fsys, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("checkpoints: %w", err)
	}
	lockf, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		fsys.Close()
		return nil, fmt.Errorf("checkpoints: %w", err)
	}
	w := &Workspace{root: root, dir: dir, store: st, fsys: fsys, ig: rag.NewRepoIgnore(root), stateRel: inside(root, stateDir),
		lim: DefaultLimits, lockf: lockf, man: map[string]*entry{}, skip: map[string]bool{},
		usage: map[string]*sessionUsage{}}
	registry[dir] = w
	return w, nil
}

// Release closes the Workspace of a state directory if this process has it
// open (the agent's shutdown); it opens nothing.
func Release(stateDir string) {
	registryMu.Lock()
	w := registry[filepath.Join(stateDir, "checkpoints")]
	registryMu.Unlock()
	if w != nil {
		w.Close()
	}
}

// Close forgets the Workspace in this process (the next Open reads the
// manifest again, as after a restart) and closes its files.
func (w *Workspace) Close() error {
	registryMu.Lock()
	if registry[w.dir] == w {
		delete(registry, w.dir)
	}
	registryMu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	lockFile(w.lockf)
	_ = w.saveLocked()
	unlockFile(w.lockf)
	w.watch.close()
	w.watch, w.watching = nil, false
	w.fsys.Close()
	return w.lockf.Close()
}

// inside returns dir's workspace-relative path if it is inside root, "".
func inside(root, dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		if rel == "." {
			return "."
		}
		return ""
	}
	return filepath.ToSlash(rel)
}

// SetLimits changes the limits (the agent's settings).
func (w *Workspace) SetLimits(l Limits) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lim = l.withDefaults()
}

// Root is the workspace.
func (w *Workspace) Root() string { return w.root }

// Store is where contents are kept.
func (w *Workspace) Store() *Store { return w.store }

// lock takes the in-process lock and the lock file.
func (w *Workspace) lock() func() {
	w.mu.Lock()
	lockFile(w.lockf)
	return func() {
		unlockFile(w.lockf)
		w.mu.Unlock()
	}
}

func (w *Workspace) manifestPath() string { return filepath.Join(w.dir, "manifest") }

// loadLocked reads the manifest once.
func (w *Workspace) loadLocked() {
	if w.loaded {
		return
	}
	w.loaded = true
	data, err := os.ReadFile(w.manifestPath())
	if err != nil {
		return
	}
	if man, err := decodeManifest(data); err == nil {
		w.man = man
	}
}

func (w *Workspace) saveLocked() error {
	if !w.unsaved {
		return nil
	}
	if err := writeFileAtomic(w.manifestPath(), encodeManifest(w.man)); err != nil {
		return err
	}
	w.unsaved, w.lastSave = false, time.Now()
	return nil
}

// saveSoonLocked saves the manifest if the last save is old. The manifest
// file is a cache (a restart without it, or with an old one, scans and
// hashes again what differs, and the store already has the contents), so a
// command does not pay for writing it each time.
func (w *Workspace) saveSoonLocked() {
	if w.unsaved && time.Since(w.lastSave) > saveEvery {
		_ = w.saveLocked()
	}
}

// saveEvery bounds how stale the manifest file may be while the daemon runs;
// Close and Maintain save it too.
const saveEvery = time.Minute

// fullScanEvery bounds how long Begin trusts the watcher alone: a change
// the watcher cannot see (a write through a memory mapping by a process
// that outlived its command, a network file system) is caught by a full
// scan within this time. Maintain, when a run starts, scans everything too.
const fullScanEvery = 5 * time.Minute

// Warm brings the manifest and the store up to date with the workspace: the
// first time, it reads every covered file (the one-time fill); later, what
// changed since. The agent calls it in the background when a session
// starts, so the first command does not wait for the fill.
func (w *Workspace) Warm(ctx context.Context) error {
	defer w.lock()()
	w.loadLocked()
	if err := w.syncLocked(ctx); err != nil {
		return err
	}
	return w.saveLocked()
}

// Token is a command's checkpoint in progress, from Begin to End.
type Token struct {
	v        uint64
	begins   uint64
	overlaps bool
	err      error
}

// Err says why the command's changes will not be recorded, if they won't.
func (t *Token) Err() error { return t.err }

// ErrTooLarge: the workspace is over the limits for command checkpoints.
var ErrTooLarge = errors.New("the workspace is too large for command checkpoints")

// Begin brings the manifest up to date just before a command runs, so the
// content of every covered path is in the store: whatever the command
// changes, its pre-image is kept. With the watcher healthy it looks only at
// the paths that changed since the last scan (and reads those); otherwise,
// and when the last full scan is older than fullScanEvery, it stats every
// covered path.
func (w *Workspace) Begin(ctx context.Context) *Token {
	defer w.lock()()
	w.loadLocked()
	tok := &Token{}
	if w.tooLarge != "" && time.Since(w.lastFull) < fullScanEvery {
		tok.err = errors.New(w.tooLarge) // no scan of a tree known to be too large, for a while
		return tok
	}
	if err := w.quickSyncLocked(ctx, fullScanEvery); err != nil {
		tok.err = err
		return tok
	}
	w.saveSoonLocked()
	w.begins++
	tok.v, tok.begins, tok.overlaps = w.version, w.begins, len(w.inflight) > 0
	w.inflight = append(w.inflight, tok.v)
	return tok
}

// End looks again after the command (the watcher's events, or a full scan
// when they cannot be trusted) and returns every covered path that changed
// in between, with its state before and after; the contents of both are in
// the store. Changes made by anyone while the command ran are included
// (neither a scan nor inotify can tell who wrote a file); notes say what
// could not be captured and whether another command ran at the same time.
func (w *Workspace) End(ctx context.Context, tok *Token) ([]Change, []string, error) {
	if tok == nil || tok.err != nil {
		return nil, nil, tok.Err()
	}
	defer w.lock()()
	defer w.release(tok)
	err := w.quickSyncLocked(ctx, 0)
	w.saveSoonLocked()
	chs := w.changesSinceLocked(tok.v)
	var notes []string
	if tok.overlaps || len(w.inflight) > 1 || w.begins != tok.begins {
		notes = append(notes, "another command ran in this workspace at the same time: its changes may be part of this checkpoint")
	}
	for _, c := range chs {
		if c.Before != nil && c.Before.NotKept != "" {
			notes = append(notes, fmt.Sprintf("%s: its content before the command was not kept (%s), so this change cannot be undone", c.Path, c.Before.NotKept))
		}
	}
	return chs, notes, err
}

func (w *Workspace) release(tok *Token) {
	for i, v := range w.inflight {
		if v == tok.v {
			w.inflight = append(w.inflight[:i], w.inflight[i+1:]...)
			break
		}
	}
	keep := w.version
	for _, v := range w.inflight {
		keep = min(keep, v)
	}
	i := sort.Search(len(w.changes), func(i int) bool { return w.changes[i].v > keep })
	w.changes = append(w.changes[:0], w.changes[i:]...)
}

// changesSinceLocked folds the logged changes after v into one change per
// path, from its state at v to its state now, and pairs deletes with adds
// of the same content as renames.
func (w *Workspace) changesSinceLocked(v uint64) []Change {
	first := map[string]*entry{}
	var order []string
	for _, l := range w.changes {
		if l.v <= v {
			continue
		}
		if _, seen := first[l.path]; !seen {
			first[l.path] = l.old
			order = append(order, l.path)
		}
	}
	var out []Change
	for _, p := range order {
		before, after := first[p].state(), w.man[p].state()
		if before == nil && after == nil {
			continue
		}
		if before != nil && after != nil && Same(before, after) && before.Mode == after.Mode {
			continue
		}
		out = append(out, Change{Path: p, Before: before, After: after})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	pairRenames(out)
	return out
}

// pairRenames marks an added file whose content a deleted file held as
// renamed from it.
func pairRenames(chs []Change) {
	gone := map[Hash][]string{}
	for _, c := range chs {
		if c.After == nil && c.Before != nil && c.Before.Kind != KindDir && !c.Before.Hash.IsZero() {
			gone[c.Before.Hash] = append(gone[c.Before.Hash], c.Path)
		}
	}
	for i, c := range chs {
		if c.Before != nil || c.After == nil || c.After.Kind == KindDir {
			continue
		}
		if src := gone[c.After.Hash]; len(src) > 0 {
			chs[i].From = src[0]
			gone[c.After.Hash] = src[1:]
		}
	}
}

// setLocked replaces a path's entry, logging the old one while a command
// may own the change.
func (w *Workspace) setLocked(rel string, e *entry) {
	old := w.man[rel]
	if old != nil && !old.hash.IsZero() && (e == nil || e.hash != old.hash) {
		w.garbage += old.st.size
	}
	w.version++
	if len(w.inflight) > 0 {
		var cp *entry
		if old != nil {
			c := *old
			cp = &c
		}
		w.changes = append(w.changes, logged{v: w.version, path: rel, old: cp})
	}
	if e == nil {
		delete(w.man, rel)
	} else {
		w.man[rel] = e
	}
	w.unsaved = true
}

func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%d B", n)
}
