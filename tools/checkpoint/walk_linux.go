//go:build linux && (amd64 || arm64)

package checkpoint

import (
	"errors"
	"path/filepath"
	"syscall"
)

// walkTree calls fn for every entry under root/sub (sub "" is the whole
// tree; the names fn gets are relative to root), a directory before its
// contents, with what lstat says of it; fn returns false to skip a
// directory's contents. It opens each directory once and stats its entries
// relative to it (getdents, fstatat: no path lookup per file, no link
// followed). Errors reading one directory are reported through bad and do
// not stop the walk.
func walkTree(root, sub string, fn func(rel string, st fstat) bool, bad func(rel string, err error)) error {
	flags := syscall.O_RDONLY | syscall.O_DIRECTORY | syscall.O_CLOEXEC
	prefix := ""
	if sub != "" {
		flags |= syscall.O_NOFOLLOW
		prefix = sub + "/"
	}
	fd, err := syscall.Open(filepath.Join(root, filepath.FromSlash(sub)), flags, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	w := &walker{fn: fn, bad: bad, buf: make([]byte, 32<<10)}
	w.dir(fd, prefix)
	return nil
}

type walker struct {
	fn    func(rel string, st fstat) bool
	bad   func(rel string, err error)
	buf   []byte
	names []string
}

func (w *walker) dir(fd int, prefix string) {
	names, err := w.list(fd)
	if err != nil {
		w.bad(prefix, err)
		return
	}
	var st syscall.Stat_t
	for _, name := range names {
		rel := prefix + name
		if err := fstatat(fd, name, &st); err != nil {
			if !errors.Is(err, syscall.ENOENT) {
				w.bad(rel, err)
			}
			continue
		}
		fs := fstat{size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), ino: st.Ino, mode: st.Mode}
		if !w.fn(rel, fs) || st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
			continue
		}
		sub, err := syscall.Openat(fd, name, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
		if err != nil {
			if !errors.Is(err, syscall.ENOENT) {
				w.bad(rel, err)
			}
			continue
		}
		w.dir(sub, rel+"/")
		syscall.Close(sub)
	}
}

// list reads a directory's names into a slice of its own (the recursion
// reuses the scratch one).
func (w *walker) list(fd int) ([]string, error) {
	w.names = w.names[:0]
	for {
		n, err := syscall.Getdents(fd, w.buf)
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			break
		}
		_, _, w.names = syscall.ParseDirent(w.buf[:n], -1, w.names)
	}
	return append([]string(nil), w.names...), nil
}
