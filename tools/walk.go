package tools

import (
	"context"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/agentd/agentd/rag"
)

// walkFiles visits start (inside root) depth-first, skipping .git and what
// the workspace's ignore rules exclude (the same rules as the index, see
// rag.Ignore). Symlinks are not followed, so a walk never leaves the
// workspace.
func walkFiles(ctx context.Context, root, start string, fn func(abs, rel string, d fs.DirEntry) error) error {
	ign := rag.NewIgnore(root)
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
		if p != start && (d.Name() == ".git" || ign.Ignored(rel, d.IsDir())) {
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
func matchGlob(pattern, name string) bool {
	for _, p := range expandBraces(pattern) {
		if matchSegs(strings.Split(p, "/"), strings.Split(name, "/")) {
			return true
		}
	}
	return false
}

func matchSegs(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(segs); i++ {
				if matchSegs(pat[1:], segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], segs[0]); !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

// expandBraces turns a{b,c}d into abd and acd, recursively.
func expandBraces(p string) []string {
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
					out = append(out, expandBraces(p[:open]+alt+p[i+1:])...)
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
