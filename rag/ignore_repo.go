package rag

import (
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// RepoIgnore answers with the repository's own rules alone: nested
// .gitignore files (negation, deeper files winning) and .git/info/exclude,
// plus the version-control directories. It has none of the search's
// defaults (lock files, vendored code, binary extensions, the size cap) nor
// .agentdignore, which hides files from search only: the undo checkpoints
// (tools/checkpoint) use it to cover what the user's repository considers
// source, go.sum and images included.
type RepoIgnore struct {
	root string
	base []gitignore.Pattern

	mu   sync.Mutex // guards dirs
	dirs map[string][]gitignore.Pattern
}

// vcsDirs are never part of a workspace's files.
var vcsDirs = []string{".git/", ".hg/", ".svn/"}

// NewRepoIgnore reads the ignore files under root lazily, as directories are
// asked about.
func NewRepoIgnore(root string) *RepoIgnore {
	r := &RepoIgnore{root: root, dirs: map[string][]gitignore.Pattern{}}
	for _, p := range vcsDirs {
		r.base = append(r.base, gitignore.ParsePattern(p, nil))
	}
	r.base = append(r.base, readPatterns(filepath.Join(root, ".git", "info", "exclude"), nil)...)
	return r
}

// Ignored reports whether rel (slash-separated, relative to root) matches;
// a walker that skips ignored directories needs no check of the ancestors.
func (r *RepoIgnore) Ignored(rel string, isDir bool) bool {
	return gitignore.NewMatcher(r.patterns(parentDir(rel))).Match(strings.Split(rel, "/"), isDir)
}

// Forget drops the rules read so far, after an ignore file changed.
func (r *RepoIgnore) Forget() {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.dirs)
}

func (r *RepoIgnore) patterns(dir string) []gitignore.Pattern {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.patternsLocked(dir)
}

func (r *RepoIgnore) patternsLocked(dir string) []gitignore.Pattern {
	if ps, ok := r.dirs[dir]; ok {
		return ps
	}
	parent, domain := r.base, []string(nil)
	if dir != "" {
		parent, domain = r.patternsLocked(parentDir(dir)), strings.Split(dir, "/")
	}
	own := readPatterns(filepath.Join(r.root, filepath.FromSlash(dir), ".gitignore"), domain)
	ps := parent
	if len(own) > 0 {
		ps = append(append([]gitignore.Pattern(nil), parent...), own...)
	}
	r.dirs[dir] = ps
	return ps
}
