package tools

import "io/fs"

// DiffFiles renders one file's change from before to after (nil: absent) as
// editors show it; the agent uses it for a run's final files_changed.
func DiffFiles(rel string, before, after *string) FileDiff {
	return diffs([]fileChange{{Rel: rel, Before: before, After: after}})[0]
}

// The helpers below are the workspace's path and glob rules, which the
// permission policy (tools/policy) applies the same way the tools do: one
// definition of what is inside the workspace and what a pattern matches.

// ResolvePath confines p to root, symlinks resolved (resolvePath).
func ResolvePath(root, p string) (abs, rel string, err error) { return resolvePath(root, p) }

// CanonicalRoot makes root absolute with symlinks resolved.
func CanonicalRoot(root string) (string, error) { return canonicalRoot(root) }

// Within reports whether p is root or below it (both clean and absolute).
func Within(root, p string) bool { return within(root, p) }

// RelPath is p relative to root with forward slashes, "." for the root.
func RelPath(root, p string) string { return relPath(root, p) }

// MatchGlob matches a slash-separated path against a glob with ** and
// {a,b} alternatives.
func MatchGlob(pattern, name string) bool { return matchGlob(pattern, name) }

// CheckGlob says what is wrong with a glob from the model or a rules file.
func CheckGlob(pattern string) error { return checkGlob(pattern) }

// WriteAtomic writes through a temp file in the same directory and renames
// it, so no reader sees half a file.
func WriteAtomic(abs string, data []byte, mode fs.FileMode) error {
	return writeAtomic(abs, data, mode)
}
