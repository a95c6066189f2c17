//go:build !(linux && (amd64 || arm64))

package checkpoint

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// walkTree is the portable walk: os.ReadDir and an lstat by full path per
// entry. Without a change time a rewrite that keeps size and mtime goes
// unseen; Linux has the faster walk and the change time.
func walkTree(root, sub string, fn func(rel string, st fstat) bool, bad func(rel string, err error)) error {
	if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(sub))); err != nil {
		return err
	}
	var walk func(prefix string)
	walk = func(prefix string) {
		des, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(prefix)))
		if err != nil {
			bad(prefix, err)
			return
		}
		for _, de := range des {
			rel := prefix + de.Name()
			fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel)))
			if err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					bad(rel, err)
				}
				continue
			}
			if fn(rel, statOf(fi)) && fi.IsDir() {
				walk(rel + "/")
			}
		}
	}
	if sub == "" {
		walk("")
	} else {
		walk(sub + "/")
	}
	return nil
}
