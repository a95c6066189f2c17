//go:build unix

package rag

import (
	"path"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// checkDir opens the directory once and stats its files relative to it: a
// path lookup of one component each instead of the whole path. It reports
// whether the directory itself changed (its mtime: a file added or
// removed) and which of its files did.
func (v *View) checkDir(g *dirGroup, all bool) (dirChanged bool, changed []string) {
	if g.dir == "" && !g.listed {
		return false, v.checkFiles(g.files, all)
	}
	fd, err := unix.Open(filepath.Join(v.root, filepath.FromSlash(g.dir)), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return true, nil
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mtim.Nano() != g.mtime {
		dirChanged = true
		if !all {
			return true, nil
		}
	}
	for _, f := range g.files {
		flags := unix.AT_SYMLINK_NOFOLLOW
		if f.link {
			flags = 0
		}
		if unix.Fstatat(fd, path.Base(f.path), &st, flags) != nil ||
			st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size != f.size || st.Mtim.Nano() != f.mtime {
			changed = append(changed, f.path)
			if !all {
				return dirChanged, changed
			}
		}
	}
	return dirChanged, changed
}
