package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// mount makes the plan's mounts inside the command's own mount namespace,
// which the daemon's and the user's never see. Binds use the new mount API
// on descriptors opened with O_NOFOLLOW, so a concurrent command swapping a
// path for a symlink cannot redirect them, and each read-only bind is made
// read-only before it is attached, so it is never briefly writable.
func (p *plan) mount(conf *Confinement) error {
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return &SetupError{Step: "mount", Msg: fmt.Sprintf("making mounts private: %v", err)}
	}
	type bind struct {
		path string
		ro   bool
	}
	var binds []bind
	for _, q := range p.Pins {
		binds = append(binds, bind{q, false})
	}
	for _, q := range p.ReadOnly {
		binds = append(binds, bind{q, true})
	}
	// Outer first, so that an inner bind lands on the outer one.
	slices.SortStableFunc(binds, func(a, b bind) int {
		return strings.Count(a.path, "/") - strings.Count(b.path, "/")
	})
	for _, b := range binds {
		done, err := bindOnto(b.path, b.ro)
		if err != nil {
			return &SetupError{Step: "mount", Msg: err.Error()}
		}
		if done && b.ro {
			conf.Protected = append(conf.Protected, b.path)
		}
	}
	if err := mountPTS(); err != nil {
		return &SetupError{Step: "mount", Msg: err.Error()}
	}
	// Before the masks: the overlays' directories are still where they
	// are, and a mask's bind back takes the overlay along.
	if err := p.overlays(conf); err != nil {
		return err
	}
	if len(p.Masks) == 0 && len(p.Hide) == 0 {
		return nil
	}
	// One private tmpfs serves every mask and hole, bound where needed:
	// a bind costs much less than a new file system each time.
	fs, err := newTmpfs(p.TmpSize)
	if err != nil {
		return &SetupError{Step: "mount", Msg: err.Error()}
	}
	defer syscall.Close(fs)
	if err := p.maskDirs(fs); err != nil {
		return &SetupError{Step: "mount", Msg: err.Error()}
	}
	if err := hide(fs, p.Hide); err != nil {
		return &SetupError{Step: "mount", Msg: err.Error()}
	}
	return nil
}

// hide covers each path with an empty file or directory of mode 0 from the
// private tmpfs fs, read-only: without capabilities not even root opens it.
// This keeps /etc/shadow and its kin out of a /etc granted whole, which
// costs a handful of mounts instead of a Landlock rule per entry of /etc.
func hide(fs int, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	if err := syscall.Mkdirat(fs, "dir", 0); err != nil {
		return fmt.Errorf("hiding: %w", err)
	}
	f, err := syscall.Openat(fs, "file", syscall.O_CREAT|syscall.O_WRONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("hiding: %w", err)
	}
	syscall.Close(f)
	for _, q := range paths {
		fd, err := syscall.Open(q, oPath|syscall.O_CLOEXEC, 0)
		if errors.Is(err, syscall.ENOENT) {
			continue
		}
		if err != nil {
			return fmt.Errorf("hiding %s: %w", q, err)
		}
		st, err := fstatFD(fd)
		if err == nil {
			src := "file"
			if isDirMode(st.Mode) {
				src = "dir"
			}
			err = attachCloneAt(fs, src, fd)
		}
		syscall.Close(fd)
		if err != nil {
			return fmt.Errorf("hiding %s: %w", q, err)
		}
	}
	return nil
}

// attachCloneAt binds name, beneath the directory descriptor dir,
// read-only onto the path descriptor dst.
func attachCloneAt(dir int, name string, dst int) error {
	tree, err := openTree(dir, name, openTreeClone|openTreeCloexec)
	if err != nil {
		return fmt.Errorf("open_tree: %w", err)
	}
	defer syscall.Close(tree)
	if err := mountSetattr(tree, "", atEmptyPath, &mountAttr{attrSet: mountAttrRdonly}); err != nil {
		return fmt.Errorf("mount_setattr: %w", err)
	}
	return moveMount(tree, "", dst, "", moveMountFEmptyPath|moveMountTEmptyPath)
}

// bindOnto binds path onto itself, read-only if ro. A missing path is
// skipped (false); a symlink is refused, since binding its target would
// leave the link itself free to be replaced.
func bindOnto(path string, ro bool) (bool, error) {
	fd, err := syscall.Open(path, oPath|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("opening %s: %w", path, err)
	}
	defer syscall.Close(fd)
	st, err := fstatFD(fd)
	if err != nil {
		return false, fmt.Errorf("stat %s: %w", path, err)
	}
	if isLinkMode(st.Mode) {
		return false, fmt.Errorf("%s is a symbolic link: cannot keep it read-only", path)
	}
	if err := attachClone(fd, fd, "", ro); err != nil {
		return false, fmt.Errorf("binding %s: %w", path, err)
	}
	return true, nil
}

// attachClone clones the mount tree at src (recursively, so binds beneath
// come along) and attaches it at dst (a descriptor, or AT_FDCWD and a
// path).
func attachClone(src, dst int, dstPath string, ro bool) error {
	tree, err := openTree(src, "", openTreeClone|openTreeCloexec|atRecursive|atEmptyPath)
	if err != nil {
		return fmt.Errorf("open_tree: %w", err)
	}
	defer syscall.Close(tree)
	if ro {
		if err := mountSetattr(tree, "", atEmptyPath|atRecursive, &mountAttr{attrSet: mountAttrRdonly}); err != nil {
			return fmt.Errorf("mount_setattr: %w", err)
		}
	}
	flags := moveMountFEmptyPath
	if dstPath == "" {
		flags |= moveMountTEmptyPath
	}
	if err := moveMount(tree, "", dst, dstPath, flags); err != nil {
		return fmt.Errorf("move_mount: %w", err)
	}
	return nil
}

// maskWith binds a new empty directory of the tmpfs fs onto dir.
func maskWith(fs int, name, dir string) error {
	if err := syscall.Mkdirat(fs, name, 0o777); err != nil {
		return err
	}
	if err := syscall.Fchmodat(fs, name, 0o1777, 0); err != nil { // the umask narrowed it
		return err
	}
	fd, err := syscall.Open(dir, oPath|syscall.O_NOFOLLOW|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	tree, err := openTree(fs, name, openTreeClone|openTreeCloexec)
	if err != nil {
		return fmt.Errorf("open_tree: %w", err)
	}
	defer syscall.Close(tree)
	return moveMount(tree, "", fd, "", moveMountFEmptyPath|moveMountTEmptyPath)
}

// maskDirs replaces each mask with an empty tmpfs and binds the kept paths
// beneath it back at the same place.
func (p *plan) maskDirs(fs int) error {
	type kept struct {
		path string
		fd   int
		dir  bool
	}
	var keeps []kept
	defer func() {
		for _, k := range keeps {
			syscall.Close(k.fd)
		}
	}()
	for _, q := range p.Keep {
		fd, err := syscall.Open(q, oPath|syscall.O_CLOEXEC, 0)
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("opening %s: %w", q, err)
		}
		st, err := fstatFD(fd)
		if err != nil {
			syscall.Close(fd)
			return fmt.Errorf("stat %s: %w", q, err)
		}
		keeps = append(keeps, kept{q, fd, isDirMode(st.Mode)})
	}
	for i, m := range p.Masks {
		if err := maskWith(fs, fmt.Sprintf("mask%d", i), m); err != nil {
			return fmt.Errorf("masking %s: %w", m, err)
		}
	}
	for _, k := range keeps {
		if err := makeMountpoint(k.path, k.dir); err != nil {
			return err
		}
		if err := attachClone(k.fd, atFDCWD, k.path, false); err != nil {
			return fmt.Errorf("binding %s back: %w", k.path, err)
		}
	}
	for _, d := range p.Private {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	return nil
}

// makeMountpoint creates path inside a fresh tmpfs: a directory, or an
// empty file for a file bind.
func makeMountpoint(path string, dir bool) error {
	if dir {
		return os.MkdirAll(path, 0o755)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// mountProc gives the command a /proc of its own PID namespace, where the
// daemon and every process outside do not exist.
func mountProc() error {
	return syscall.Mount("proc", "/proc", "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, "")
}
