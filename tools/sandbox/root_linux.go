package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"syscall"
)

const beneath = resolveBeneath | resolveNoMagiclinks

// noOpenat2 makes OpenRoot use the os.Root walk, for tests of that path.
var noOpenat2 bool

// openat2Dir opens dir for openat2, or returns -1 when openat2 is missing
// (before Linux 5.6) or refused (a seccomp profile in some containers).
func openat2Dir(dir string) int {
	if noOpenat2 {
		return -1
	}
	fd, err := syscall.Open(dir, oPath|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	probe, err := openat2(fd, ".", &openHow{flags: oPath | syscall.O_CLOEXEC, resolve: beneath})
	if err != nil {
		syscall.Close(fd)
		return -1
	}
	syscall.Close(probe)
	return fd
}

func closeFD(fd int) {
	if fd >= 0 {
		syscall.Close(fd)
	}
}

// beneathErr maps the kernel's EXDEV (the resolution left the root) to
// ErrEscapes.
func beneathErr(err error) error {
	if errors.Is(err, syscall.EXDEV) {
		return ErrEscapes
	}
	return err
}

func (r *Root) openFD(name string, flags int, perm os.FileMode) (int, error) {
	fd, err := openat2(r.fd, name, &openHow{flags: uint64(flags | syscall.O_CLOEXEC), mode: uint64(syscallMode(flags, perm)), resolve: beneath})
	return fd, beneathErr(err)
}

func syscallMode(flags int, perm os.FileMode) uint32 {
	if flags&os.O_CREATE == 0 {
		return 0 // openat2 refuses a mode without O_CREAT
	}
	m := uint32(perm.Perm())
	if perm&os.ModeSetuid != 0 {
		m |= syscall.S_ISUID
	}
	if perm&os.ModeSetgid != 0 {
		m |= syscall.S_ISGID
	}
	if perm&os.ModeSticky != 0 {
		m |= syscall.S_ISVTX
	}
	return m
}

func (r *Root) openBeneath(name string, flags int, perm os.FileMode) (*os.File, error) {
	fd, err := r.openFD(name, flags, perm)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), path.Join(r.name, name)), nil
}

// parent opens the directory holding name's last element, beneath the
// root, and returns that element, which the *at call then acts on without
// following it.
func (r *Root) parent(name string) (int, string, error) {
	dir, base := path.Split(path.Clean(name))
	if base == "." || base == ".." || base == "" {
		return -1, "", ErrEscapes
	}
	if dir == "" {
		dir = "."
	}
	fd, err := r.openFD(dir, oPath|syscall.O_DIRECTORY, 0)
	return fd, base, err
}

func (r *Root) mkdirBeneath(name string, perm os.FileMode) error {
	fd, base, err := r.parent(name)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	return syscall.Mkdirat(fd, base, uint32(perm.Perm()))
}

func (r *Root) removeBeneath(name string) error {
	fd, base, err := r.parent(name)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	err = unlinkat(fd, base, 0)
	if errors.Is(err, syscall.EISDIR) || errors.Is(err, syscall.EPERM) {
		if derr := unlinkat(fd, base, atRemovedir); derr == nil || !errors.Is(derr, syscall.ENOTDIR) {
			return derr
		}
	}
	return err
}

func (r *Root) renameBeneath(oldname, newname string) error {
	ofd, obase, err := r.parent(oldname)
	if err != nil {
		return err
	}
	defer syscall.Close(ofd)
	nfd, nbase, err := r.parent(newname)
	if err != nil {
		return err
	}
	defer syscall.Close(nfd)
	return syscall.Renameat(ofd, obase, nfd, nbase)
}

func (r *Root) statBeneath(name string, follow bool) (fs.FileInfo, error) {
	if !follow {
		fd, base, err := r.parent(name)
		if err == ErrEscapes && path.Clean(name) == "." {
			return r.statBeneath(".", true)
		}
		if err != nil {
			return nil, err
		}
		defer syscall.Close(fd)
		lfd, err := syscall.Openat(fd, base, oPath|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
		if err != nil {
			return nil, err
		}
		f := os.NewFile(uintptr(lfd), base)
		defer f.Close()
		return f.Stat()
	}
	fd, err := r.openFD(name, oPath, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), path.Base(name))
	defer f.Close()
	return f.Stat()
}
