package rag

// Ignore answers whether a workspace path is excluded: nested .gitignore
// files with negation, .agentdignore, .git/info/exclude, the index's
// defaults (vendored dependencies, build output, lock files) and binary
// files. The tools' Go search fallback shares it, so the index and the
// search tools agree on what is part of the workspace.
type Ignore struct{ ig *ignorer }

// NewIgnore reads ignore files under root lazily, as directories are asked about.
func NewIgnore(root string) *Ignore { return &Ignore{ig: newIgnorer(root)} }

// Ignored reports whether rel (slash-separated, relative to root) matches.
// A walker that skips ignored directories needs no more; for a path that
// arrives alone, use IgnoredPath.
func (i *Ignore) Ignored(rel string, isDir bool) bool { return i.ig.ignored(rel, isDir) }

// IgnoredByRules is Ignored without the binary-file defaults: for a
// listing of names (a picture is part of the project even though the
// index does not read it).
func (i *Ignore) IgnoredByRules(rel string, isDir bool) bool {
	return i.ig.ignoredByRules(rel, isDir)
}

// IgnoredPath checks rel and each of its parent directories.
func (i *Ignore) IgnoredPath(rel string, isDir bool) bool { return i.ig.ignoredPath(rel, isDir) }
