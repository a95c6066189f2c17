package rag

import (
	"bufio"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// IgnoreFile is the workspace's own ignore file, read in every directory like
// .gitignore and with the same syntax, for what git tracks but search should
// not see.
const IgnoreFile = ".agentdignore"

// maxFileSize is the size cap: larger files are generated or data.
const maxFileSize = 1 << 20

// defaultPatterns have the lowest priority, so a workspace .gitignore can
// re-include any of them with a negation. Build output directories are
// anchored at the root: go/build or a nested bin/ are often real source.
var defaultPatterns = []string{
	".git/", ".hg/", ".svn/", "node_modules/", "vendor/", "__pycache__/", ".venv/", "venv/",
	".cache/", ".tox/", ".mypy_cache/", ".pytest_cache/", ".gradle/", ".next/", ".terraform/",
	".idea/", ".vscode/", "/dist/", "/build/", "/target/", "/out/", "/bin/", "/obj/", "/coverage/",
	"go.sum", "package-lock.json", "yarn.lock", "pnpm-lock.yaml", "Cargo.lock", "poetry.lock",
	"Gemfile.lock", "composer.lock", "*.lock", "*.min.js", "*.min.css", "*.map", ".DS_Store",
}

// binaryExts are skipped without reading: sniffing them would cost a read.
var binaryExts = setOf(".png", ".jpg", ".jpeg", ".gif", ".bmp", ".ico", ".webp", ".tiff", ".psd",
	".pdf", ".zip", ".gz", ".tgz", ".bz2", ".xz", ".zst", ".7z", ".rar", ".tar", ".jar", ".war",
	".class", ".o", ".a", ".so", ".dylib", ".dll", ".exe", ".wasm", ".pyc", ".pyo", ".woff",
	".woff2", ".ttf", ".otf", ".eot", ".mp3", ".mp4", ".wav", ".ogg", ".flac", ".mov", ".avi",
	".mkv", ".webm", ".db", ".sqlite", ".bin", ".dat", ".pb", ".onnx", ".gguf", ".safetensors",
	".pt", ".npy", ".npz", ".parquet", ".syso", ".test", ".out", ".lib", ".obj", ".pdb", ".iso",
	".dmg", ".deb", ".rpm", ".svgz", ".icns", ".heic", ".avif", ".jks", ".keystore", ".p12")

// ignorer answers whether a workspace-relative path is excluded. It reads the
// ignore files of a directory once and caches the accumulated patterns, so
// single-file updates do not re-read the tree.
type ignorer struct {
	root   string
	base   []gitignore.Pattern
	hidden []string // workspace-relative directories no walk enters

	mu   sync.Mutex
	dirs map[string][]gitignore.Pattern // rel dir ("" = root) → patterns in priority order
}

func newIgnorer(root string, hidden ...string) *ignorer {
	ig := &ignorer{root: root, dirs: make(map[string][]gitignore.Pattern)}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		real = root
	}
	for _, h := range hidden {
		for _, base := range []string{root, real} {
			if r, err := filepath.Rel(base, h); err == nil && r != "." && r != ".." && !strings.HasPrefix(r, "../") {
				ig.hidden = append(ig.hidden, filepath.ToSlash(r))
			}
		}
	}
	for _, p := range defaultPatterns {
		ig.base = append(ig.base, gitignore.ParsePattern(p, nil))
	}
	// .git/info/exclude is per-repository ignore configuration.
	ig.base = append(ig.base, readPatterns(filepath.Join(root, ".git", "info", "exclude"), nil)...)
	return ig
}

// patterns returns the patterns that apply inside dir (slash-separated,
// relative): the defaults, then each ancestor's ignore files, deepest last.
func (ig *ignorer) patterns(dir string) []gitignore.Pattern {
	ig.mu.Lock()
	defer ig.mu.Unlock()
	return ig.patternsLocked(dir)
}

func (ig *ignorer) patternsLocked(dir string) []gitignore.Pattern {
	if ps, ok := ig.dirs[dir]; ok {
		return ps
	}
	var parent []gitignore.Pattern
	var domain []string
	if dir == "" {
		parent = ig.base
	} else {
		parent = ig.patternsLocked(parentDir(dir))
		domain = strings.Split(dir, "/")
	}
	abs := filepath.Join(ig.root, filepath.FromSlash(dir))
	own := readPatterns(filepath.Join(abs, ".gitignore"), domain)
	own = append(own, readPatterns(filepath.Join(abs, IgnoreFile), domain)...)
	ps := parent
	if len(own) > 0 {
		ps = append(append([]gitignore.Pattern(nil), parent...), own...)
	}
	ig.dirs[dir] = ps
	return ps
}

// ignored reports whether rel itself matches; callers walking the tree skip
// ignored directories, so ancestors need no check there.
func (ig *ignorer) ignored(rel string, isDir bool) bool {
	// A git directory, whatever the ignore files say: "!.git/" (which a
	// command may write) put the repository's config, with any token in
	// a remote's URL, and its objects into the index.
	if slices.Contains(strings.Split(rel, "/"), ".git") {
		return true
	}
	for _, h := range ig.hidden {
		if rel == h || strings.HasPrefix(rel, h+"/") {
			return true
		}
	}
	if !isDir {
		if _, ok := binaryExts[strings.ToLower(path.Ext(rel))]; ok {
			return true
		}
	}
	return ig.ignoredByRules(rel, isDir)
}

// ignoredByRules is ignored without the binary extensions.
func (ig *ignorer) ignoredByRules(rel string, isDir bool) bool {
	if slices.Contains(strings.Split(rel, "/"), ".git") {
		return true
	}
	return gitignore.NewMatcher(ig.patterns(parentDir(rel))).Match(strings.Split(rel, "/"), isDir)
}

// ignoredPath checks rel and every ancestor directory, for paths that arrive
// one at a time from the watcher or the editor.
func (ig *ignorer) ignoredPath(rel string, isDir bool) bool {
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		if ig.ignored(strings.Join(parts[:i], "/"), true) {
			return true
		}
	}
	return ig.ignored(rel, isDir)
}

// forget drops cached patterns after an ignore file changed.
func (ig *ignorer) forget() {
	ig.mu.Lock()
	defer ig.mu.Unlock()
	clear(ig.dirs)
}

func isIgnoreFile(rel string) bool {
	b := path.Base(rel)
	return b == ".gitignore" || b == IgnoreFile
}

func parentDir(rel string) string {
	d := path.Dir(rel)
	if d == "." {
		return ""
	}
	return d
}

func readPatterns(file string, domain []string) []gitignore.Pattern {
	f, err := openRegular(nil, file)
	if err != nil {
		return nil
	}
	defer f.Close()
	var ps []gitignore.Pattern
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}
