package rag

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Options configures Open.
type Options struct {
	Root     string // workspace root
	StateDir string // snapshot and embedding cache; outside the workspace
	// Embedder adds vector similarity to the keyword ranking. nil (the
	// default) is keyword search alone: docs/index.md has the measurements
	// that made it the default.
	Embedder Embedder
	Logger   *slog.Logger // nil = discard
	// Hidden are directories never indexed, whatever the ignore files say:
	// agentd's own state and configuration when the workspace holds them
	// (a workspace that is the home directory; tools.AgentDirs).
	Hidden []string
	// Published makes the index an overlay on a team index (Team): a
	// file whose content hash is rel's published one is left out (kept
	// as unread, so it is not read again until it changes), so that the
	// index holds only the workspace's differences from the published
	// commit. Seed, for the first Build only, names the published files
	// known to be unchanged (git said so) without reading them.
	Published func(rel string) ([16]byte, bool)
	Seed      func(rel string) bool
	// ephemeral indexes are never saved (a publish's scratch index).
	ephemeral bool
}

// Index is the workspace index. Its methods are safe for concurrent use.
type Index struct {
	root     string
	fsys     *os.Root // every file access goes through it: nothing outside the workspace is read
	stateDir string
	log      *slog.Logger
	ig       *ignorer

	// work serialises everything that changes the index (Build and
	// incremental updates), so they can prepare outside mu.
	work sync.Mutex

	mu        sync.RWMutex
	files     map[string]*fileEntry // manifest, by workspace-relative path
	fileTab   []*fileEntry          // by file id; nil = free
	fileKinds []fileKind            // by file id: a dense copy of fileEntry.Kind, for ranking
	fileLens  []int32               // by file id: the sum of its chunks' BM25 lengths (file-level evidence)
	chunked   int                   // files with at least one chunk: N of file-level BM25
	freeFiles []int32
	slots     []slot  // chunks by slot number; file < 0 = free
	free      []int32 // slots ready for reuse
	limbo     []int32 // removed slots whose BM25 postings are not purged yet
	live      int     // chunks indexed
	dict      *termDict
	bm        *bm25
	dirs      map[string]int64 // directory mtimes of the latest walk, for the fast freshness check
	vec       *vectorStore     // nil without an embedder
	emb       Embedder
	cache     *embedCache
	state     string
	progress  float64
	lastErr   string
	open      map[string]bool
	recent    map[string]time.Time
	// republished are paths queued because a new commit was published,
	// not because the user changed them: their update is not recent.
	republished map[string]bool
	dirty       bool
	skipped     map[string]string    // rel → reason, from the latest pass over a path
	unread      map[string]fileStamp // files read and found not indexable (binary, not UTF-8): not read again until they change
	lastRead    int                  // files the latest Build re-read: tests check restarts
	baseID      uint64               // the id of the snapshot restored or last written (a delta names it)
	gen         uint64               // counts changes to files and unread, for caches of an overlay's state
	published   func(rel string) ([16]byte, bool)
	seed        func(rel string) bool // until the first Build is done
	ephemeral   bool

	pendingMu sync.Mutex
	pending   map[string]bool
	wake      chan struct{}
}

// fileStamp is what says a file changed without reading it.
type fileStamp struct {
	Size, Mtime int64
	Link        bool
}

// fileEntry is a manifest record.
type fileEntry struct {
	Size  int64
	Mtime int64 // UnixNano
	Hash  [16]byte
	Kind  fileKind
	Link  bool // a symlink (to a file inside the workspace): checked with Stat, not Lstat
	id    int32
	path  string
	slots []int32 // chunks, in file order
}

// slot is a live chunk. Its text is not kept: hits read it from the file
// (Off, Len), which is what makes the index a fraction of the workspace's
// size in memory.
type slot struct {
	file   int32 // file id; -1 for a free slot
	Start  int32 // first line, 1-based
	End    int32 // last line, inclusive
	Off    int32 // byte range of the lines in the file
	Len    int32
	flags  uint8
	hasVec bool
	Symbol string
	hash   [16]byte // of indexText: the embedding cache key and the text check
}

// StateDirFor returns the per-workspace state directory: a folder named by
// the first 16 hex digits of sha256(absolute root) under $AGENTD_STATE_DIR,
// or under os.UserCacheDir()/agentd.
func StateDirFor(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("state dir: %w", err)
	}
	base := os.Getenv("AGENTD_STATE_DIR")
	if base == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("state dir: %w", err)
		}
		base = filepath.Join(cache, "agentd")
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(base, hex.EncodeToString(sum[:])[:16]), nil
}

// Open loads the snapshot in opts.StateDir, if any, and returns an index that
// answers from it at once; call Build to bring it up to date.
func Open(ctx context.Context, opts Options) (*Index, error) {
	ix, err := newIndex(opts)
	if err != nil {
		return nil, err
	}
	if err := ix.restore(ix.snapshotPath()); err != nil {
		ix.log.Warn("index snapshot unusable, rebuilding", "err", err)
		ix.reset()
	}
	ix.forgetStaleSame()
	if ix.emb != nil {
		ix.vec = newVectorStore()
		ix.cache = ix.loadCache(ctx, ix.emb.Name())
	}
	return ix, nil
}

// newIndex returns an empty index of opts.Root.
func newIndex(opts Options) (*Index, error) {
	root, err := filepath.Abs(opts.Root)
	if err != nil {
		return nil, fmt.Errorf("open index: %w", err)
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("open index: root %s is not a directory", root)
	}
	if opts.StateDir == "" {
		return nil, fmt.Errorf("open index: no state dir")
	}
	if err := os.MkdirAll(opts.StateDir, 0o755); err != nil {
		return nil, fmt.Errorf("open index: %w", err)
	}
	fsys, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("open index: %w", err)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ix := &Index{
		root:        root,
		fsys:        fsys,
		stateDir:    opts.StateDir,
		log:         log,
		ig:          newIgnorer(root, opts.Hidden...),
		state:       StateIndexing,
		emb:         opts.Embedder,
		open:        make(map[string]bool),
		recent:      make(map[string]time.Time),
		republished: make(map[string]bool),
		skipped:     make(map[string]string),
		pending:     make(map[string]bool),
		wake:        make(chan struct{}, 1),

		published: opts.Published,
		seed:      opts.Seed,
		ephemeral: opts.ephemeral,
	}
	ix.reset()
	return ix, nil
}

// reset empties the index.
func (ix *Index) reset() {
	ix.files = make(map[string]*fileEntry)
	ix.fileTab, ix.fileKinds, ix.fileLens, ix.freeFiles = nil, nil, nil, nil
	ix.slots, ix.free, ix.limbo, ix.live, ix.chunked = nil, nil, nil, 0, 0
	ix.dict = newTermDict()
	ix.bm = newBM25(ix.dict)
	ix.dirs = make(map[string]int64)
	ix.unread = make(map[string]fileStamp)
}

// Close persists unsaved changes.
func (ix *Index) Close() error {
	ix.work.Lock()
	defer ix.work.Unlock()
	err := ix.saveIfDirty()
	ix.fsys.Close()
	return err
}

// Status reports progress and size.
func (ix *Index) Status() Status {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	st := Status{
		State:    ix.state,
		Files:    len(ix.files),
		Chunks:   ix.live,
		Progress: ix.progress,
		Error:    ix.lastErr,
	}
	if ix.emb != nil {
		st.Embedder = ix.emb.Name()
	}
	return st
}

// SetOpen replaces the set of files open in the editor; their chunks rank
// higher. Paths may be absolute or workspace-relative.
func (ix *Index) SetOpen(paths []string) {
	open := make(map[string]bool, len(paths))
	for _, p := range paths {
		if rel, ok := ix.rel(p); ok {
			open[rel] = true
		}
	}
	ix.mu.Lock()
	ix.open = open
	ix.mu.Unlock()
}

// Changed tells the index the editor saved these files. It returns at once;
// the update happens in Watch's loop, or at the next Build if Watch is not
// running.
func (ix *Index) Changed(paths ...string) {
	ix.pendingMu.Lock()
	for _, p := range paths {
		if rel, ok := ix.rel(p); ok {
			ix.pending[rel] = true
		}
	}
	ix.pendingMu.Unlock()
	select {
	case ix.wake <- struct{}{}:
	default:
	}
}

// rel maps a path to its slash-separated workspace-relative form; ok is
// false for paths outside the workspace.
func (ix *Index) rel(p string) (string, bool) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(ix.root, p)
	}
	r, err := filepath.Rel(ix.root, filepath.Clean(p))
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", false
	}
	if r == "." {
		r = ""
	}
	return filepath.ToSlash(r), true
}

// local is rel in the form os.Root takes.
func local(rel string) string {
	if rel == "" {
		return "."
	}
	return filepath.FromSlash(rel)
}

func (ix *Index) note(rel, reason string) {
	ix.log.Info("index: skipped", "path", rel, "reason", reason)
	ix.mu.Lock()
	ix.skipped[rel] = reason
	ix.mu.Unlock()
}

func (ix *Index) setProgress(p float64) {
	ix.mu.Lock()
	ix.progress = p
	ix.mu.Unlock()
}

// pathOf is a slot's file path. The caller holds mu.
func (ix *Index) pathOf(sl *slot) string { return ix.fileTab[sl.file].path }
