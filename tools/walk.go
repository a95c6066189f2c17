package tools

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/agentd/agentd/rag"
)

// walkFiles visits start (inside root) depth-first, skipping .git, what
// the workspace's ignore rules exclude (the same rules as the index, see
// rag.Ignore) and hidden (agentd's own directories, Env.hiddenIn).
// Symlinks are not followed, so a walk never leaves the workspace.
func walkFiles(ctx context.Context, root, start string, hidden []string, fn func(abs, rel string, d fs.DirEntry) error) error {
	return walk(ctx, root, start, hidden, rag.NewIgnore(root).Ignored, fn)
}

// walkNames is walkFiles for tools that list names rather than read
// contents (list_dir, glob_file_search): pictures and other binary files
// the ignore rules do not exclude are listed, so the model can find a
// screenshot to read_file.
func walkNames(ctx context.Context, root, start string, hidden []string, fn func(abs, rel string, d fs.DirEntry) error) error {
	return walk(ctx, root, start, hidden, rag.NewIgnore(root).IgnoredByRules, fn)
}

func walk(ctx context.Context, root, start string, hidden []string, ignored func(rel string, isDir bool) bool, fn func(abs, rel string, d fs.DirEntry) error) error {
	return filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == start {
				return err
			}
			return nil // unreadable entry: skip it, keep walking
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rel := relPath(root, p)
		if p != start && (d.Name() == ".git" || hiddenPath(hidden, rel) || ignored(rel, d.IsDir())) {
			return skip(d)
		}
		return fn(p, rel, d)
	})
}

func skip(d fs.DirEntry) error {
	if d.IsDir() {
		return filepath.SkipDir
	}
	return nil
}

// matchGlob matches a slash-separated path against a glob with ** (any
// number of directories) and {a,b} alternatives; other segments follow
// path.Match.
//
// A pattern with more than maxGlobAlternatives alternatives matches what
// its first ones match: checkGlob refuses it where a pattern comes in.
func matchGlob(pattern, name string) bool {
	segs := strings.Split(name, "/")
	for _, p := range expandBraces(pattern) {
		if matchSegs(strings.Split(p, "/"), segs) {
			return true
		}
	}
	return false
}

// maxGlobAlternatives bounds what {a,b} alternatives expand to:
// {a,b}{a,b}… thirty times over is a billion patterns, which took the
// daemon's memory (glob_file_search runs unasked, in every mode).
const maxGlobAlternatives = 256

// checkGlob says what is wrong with a glob that comes from the model or a
// rules file: too many alternatives.
func checkGlob(pattern string) error {
	if n := countAlternatives(pattern, maxGlobAlternatives+1); n > maxGlobAlternatives {
		return fmt.Errorf("the pattern %q has more than %d {…} alternatives; use fewer", clipGlob(pattern), maxGlobAlternatives)
	}
	return nil
}

func clipGlob(p string) string {
	if len(p) > 80 {
		return p[:80] + "…"
	}
	return p
}

// countAlternatives is how many patterns expandBraces makes of p, counted
// up to limit.
func countAlternatives(p string, limit int) int {
	return len(expandBracesN(p, limit))
}

// matchSegs matches pattern segments against path segments. ** matches any
// number of segments; the table of (pattern, path) positions already
// tried keeps **/**/…/x from taking exponential time.
func matchSegs(pat, segs []string) bool {
	failed := map[[2]int]bool{}
	var match func(i, j int) bool
	match = func(i, j int) bool {
		for i < len(pat) {
			if failed[[2]int{i, j}] {
				return false
			}
			if pat[i] == "**" {
				for k := j; k <= len(segs); k++ {
					if match(i+1, k) {
						return true
					}
				}
				failed[[2]int{i, j}] = true
				return false
			}
			if j == len(segs) {
				return false
			}
			if ok, _ := path.Match(pat[i], segs[j]); !ok {
				return false
			}
			i, j = i+1, j+1
		}
		return j == len(segs)
	}
	return match(0, 0)
}

// expandBraces turns a{b,c}d into abd and acd, recursively, keeping the
// first maxGlobAlternatives.
func expandBraces(p string) []string { return expandBracesN(p, maxGlobAlternatives) }

func expandBracesN(p string, limit int) []string {
	open := strings.IndexByte(p, '{')
	if open < 0 {
		return []string{p}
	}
	depth := 0
	for i := open; i < len(p); i++ {
		switch p[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				var out []string
				for _, alt := range splitTop(p[open+1 : i]) {
					if len(out) >= limit {
						break
					}
					out = append(out, expandBracesN(p[:open]+alt+p[i+1:], limit-len(out))...)
				}
				return out
			}
		}
	}
	return []string{p}
}

func splitTop(s string) []string {
	var out []string
	depth, last := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[last:i])
				last = i + 1
			}
		}
	}
	return append(out, s[last:])
}
