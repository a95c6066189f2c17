//go:build !unix

package rag

import (
	"os"
	"path/filepath"
)

// checkDir stats the directory and its files by path.
func (v *View) checkDir(g *dirGroup, all bool) (dirChanged bool, changed []string) {
	if g.listed {
		fi, err := os.Lstat(filepath.Join(v.root, filepath.FromSlash(g.dir)))
		if err != nil || !fi.IsDir() || fi.ModTime().UnixNano() != g.mtime {
			dirChanged = true
			if !all {
				return true, nil
			}
		}
	}
	return dirChanged, v.checkFiles(g.files, all)
}
