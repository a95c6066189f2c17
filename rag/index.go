package rag

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentd/agentd/rpc/wire"
)

// Index states, as reported on the wire.
const (
	StateIndexing = "indexing"
	StateReady    = "ready"
)

// Options configures Open.
type Options struct {
	Root     string       // workspace root, absolute
	StateDir string       // snapshot, manifest and embedding cache; outside the workspace
	Embedder Embedder     // nil = the in-process default
	Logger   *slog.Logger // nil = discard
}

// Index is the workspace index. Its methods are safe for concurrent use.
type Index struct {
	root     string
	stateDir string
	log      *slog.Logger
	ig       *ignorer
	custom   bool // the embedder came from Options, never refitted

	// work serialises everything that changes the index (Build and
	// incremental updates), so they can prepare outside mu.
	work sync.Mutex

	mu       sync.RWMutex
	files    map[string]*fileEntry // manifest, by workspace-relative path
	slots    []*slot               // chunk slots; nil = free
	free     []int32               // slots ready for reuse
	limbo    []int32               // removed slots whose BM25 postings are not purged yet
	dict     *termDict
	byID     map[string]int32
	symbols  map[string][]int32 // lowercased symbol → slots
	bm       *bm25
	vec      *vectorStore
	emb      Embedder
	cache    *embedCache
	state    string
	progress float64
	lastErr  string
	open     map[string]bool
	recent   map[string]time.Time
	dirty    bool
	skipped  map[string]string // rel → reason, from the latest pass over a path
	lastRead int               // files the latest Build re-read: tests check restarts

	pendingMu sync.Mutex
	pending   map[string]bool
	wake      chan struct{}
}

// fileEntry is a manifest record.
type fileEntry struct {
	Size   int64
	Mtime  int64 // UnixNano
	Hash   [16]byte
	Chunks []string // chunk ids, in file order
}

// slot is a live chunk. Its text is not kept: hits read it from the file
// (Off, Len), which is what makes the index a fraction of the workspace's
// size in memory.
type slot struct {
	Path   string // workspace-relative, slash-separated
	Symbol string
	Lang   string
	Start  int32 // first line, 1-based
	End    int32 // last line, inclusive
	Off    int32 // byte range of the lines in the file
	Len    int32
	id     string
	hash   [16]byte // of indexText: the embedding cache key and the text check
	hasVec bool
}

func newSlot(c *chunk, id string, hash [16]byte) *slot {
	return &slot{Path: c.Path, Symbol: c.Symbol, Lang: c.Lang, Start: int32(c.Start), End: int32(c.End),
		Off: int32(c.Off), Len: int32(c.Len), id: id, hash: hash}
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
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	dict := newTermDict()
	ix := &Index{
		dict:     dict,
		root:     root,
		stateDir: opts.StateDir,
		log:      log,
		ig:       newIgnorer(root),
		files:    make(map[string]*fileEntry),
		byID:     make(map[string]int32),
		symbols:  make(map[string][]int32),
		bm:       newBM25(dict),
		vec:      newVectorStore(),
		state:    StateIndexing,
		open:     make(map[string]bool),
		recent:   make(map[string]time.Time),
		skipped:  make(map[string]string),
		pending:  make(map[string]bool),
		wake:     make(chan struct{}, 1),
	}
	snap, err := readSnapshot(ix.snapshotPath(), root, dict)
	if err != nil {
		log.Warn("index snapshot unusable, rebuilding", "err", err)
		snap = nil
		ix.dict = newTermDict()
		ix.bm = newBM25(ix.dict)
	}
	ix.emb = opts.Embedder
	ix.custom = opts.Embedder != nil
	if ix.emb == nil {
		var m *localModel
		if snap != nil {
			m = snap.Model
		}
		ix.emb = newLocalEmbedder(m)
	}
	if snap != nil {
		ix.restore(snap)
	}
	ix.cache = ix.loadCache(ctx, ix.emb.Name())
	return ix, nil
}

// Close persists unsaved changes.
func (ix *Index) Close() error {
	ix.work.Lock()
	defer ix.work.Unlock()
	return ix.saveIfDirty()
}

// Status reports progress and size.
func (ix *Index) Status() wire.IndexStatus {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return wire.IndexStatus{
		State:    ix.state,
		Files:    len(ix.files),
		Chunks:   len(ix.byID),
		Progress: ix.progress,
		Embedder: ix.emb.Name(),
		Error:    ix.lastErr,
	}
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

func (ix *Index) abs(rel string) string {
	return filepath.Join(ix.root, filepath.FromSlash(rel))
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
