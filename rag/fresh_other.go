//go:build !unix

package rag

import (
	"os"
	"path/filepath"
)

// dirUnchanged stats the directory and its files by path.
func (v *View) dirUnchanged(g *dirGroup) bool {
	if g.dir >= 0 {
		rel, mtime := v.s.dir(g.dir)
		fi, err := os.Lstat(filepath.Join(v.root, filepath.FromSlash(rel)))
		if err != nil || !fi.IsDir() || fi.ModTime().UnixNano() != mtime {
			return false
		}
	}
	return v.filesUnchanged(g.files)
}
