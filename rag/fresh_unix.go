//go:build unix

package rag

import (
	"path"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// dirUnchanged opens the directory once and stats its files relative to
// it: a path lookup of one component each instead of the whole path.
func (v *View) dirUnchanged(g *dirGroup) bool {
	if g.dir < 0 {
		return v.filesUnchanged(g.files)
	}
	rel, mtime := v.s.dir(g.dir)
	fd, err := unix.Open(filepath.Join(v.root, filepath.FromSlash(rel)), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mtim.Nano() != mtime {
		return false
	}
	for _, i := range g.files {
		f := v.s.file(i)
		flags := unix.AT_SYMLINK_NOFOLLOW
		if f.link {
			flags = 0
		}
		if unix.Fstatat(fd, path.Base(f.path), &st, flags) != nil ||
			st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size != f.size || st.Mtim.Nano() != f.mtime {
			return false
		}
	}
	return true
}
