package sandbox

import (
	"context"
	"io/fs"
	"path/filepath"
)

// NestedGitDirs lists the .git entries (directories, or files pointing to
// a git directory) below root, other than root's own: the repositories
// nested in the workspace, whose configuration a command could otherwise
// rewrite to run code the next time git runs there. The walk does not
// follow symlinks. It costs one pass over the tree, so a caller computes it
// once (and again when the tree changes) and passes it as [Spec.Protect].
func NestedGitDirs(ctx context.Context, root string) ([]string, error) {
	root = filepath.Clean(root)
	var out []string
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil // an unreadable corner cannot hold what we cannot see
		}
		if n++; n%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if d.Name() != ".git" {
			return nil
		}
		if filepath.Dir(p) != root {
			out = append(out, p)
		}
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	})
	return out, err
}
