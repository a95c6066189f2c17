package sandbox

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// ErrEscapes means a path resolved, at the moment of use, to somewhere
// outside the workspace: through "..", an absolute symlink, or a directory
// swapped for a symlink after the call was approved.
var ErrEscapes = errors.New("path escapes the workspace")

// Root is a workspace directory opened once. Every name given to its
// methods is resolved beneath that directory handle when the operation
// happens, by the kernel (openat2 with RESOLVE_BENEATH and
// RESOLVE_NO_MAGICLINKS) or, where openat2 is missing or forbidden, by
// os.Root's walk of one O_NOFOLLOW component at a time. Symlinks that stay
// inside are followed; a name that leaves the workspace fails with
// ErrEscapes. Names are slash-separated and relative to the root.
type Root struct {
	name string
	os   *os.Root
	fd   int // a directory descriptor for openat2, or -1
}

// OpenRoot opens dir as a Root.
func OpenRoot(dir string) (*Root, error) {
	or, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	r := &Root{name: dir, os: or, fd: -1}
	r.fd = openat2Dir(dir)
	return r, nil
}

// Name is the directory the root was opened with.
func (r *Root) Name() string { return r.name }

// Close releases the directory handles.
func (r *Root) Close() error {
	closeFD(r.fd)
	r.fd = -1
	return r.os.Close()
}

// Open opens name for reading.
func (r *Root) Open(name string) (*os.File, error) { return r.OpenFile(name, os.O_RDONLY, 0) }

// OpenFile opens name as os.OpenFile would, except that opening for
// reading never blocks on a named pipe (a command may have left one where a
// file was).
func (r *Root) OpenFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	if err := checkName(name); err != nil {
		return nil, pathErr("open", name, err)
	}
	if flag&(os.O_WRONLY|os.O_RDWR) == 0 {
		flag |= syscall.O_NONBLOCK
	}
	if r.fd >= 0 {
		f, err := r.openBeneath(name, flag, perm)
		return f, pathErr("open", name, err)
	}
	f, err := r.os.OpenFile(name, flag, perm)
	return f, escapes(err)
}

// OpenRegular opens name for reading if it is a regular file (a named
// pipe, socket or device is ErrNotRegular).
func (r *Root) OpenRegular(name string) (*os.File, error) {
	f, err := r.Open(name)
	if err != nil {
		return nil, err
	}
	if err := mustBeRegular(f, name); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadFile reads the whole of name, a regular file.
func (r *Root) ReadFile(name string) ([]byte, error) {
	f, err := r.OpenRegular(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// WriteFile replaces name with data atomically: a temporary file in the
// same directory, renamed over the target, so that a reader never sees half
// a file and a symlink at name is replaced, not followed. An existing
// file's permissions are kept; perm applies to a new one.
func (r *Root) WriteFile(name string, data []byte, perm os.FileMode) error {
	if err := checkName(name); err != nil {
		return pathErr("write", name, err)
	}
	dir, base := path.Split(name)
	if fi, err := r.Lstat(name); err == nil && fi.Mode().IsRegular() {
		perm = fi.Mode().Perm()
	}
	tmp := path.Join(dir, "."+base+".agentd-"+randomSuffix())
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Chmod(perm) // the umask may have narrowed it
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = r.Rename(tmp, name)
	}
	if werr != nil {
		_ = r.Remove(tmp)
		return werr
	}
	return nil
}

// MkdirAll creates name and its missing parents, each beneath the root.
func (r *Root) MkdirAll(name string, perm os.FileMode) error {
	if err := checkName(name); err != nil {
		return pathErr("mkdir", name, err)
	}
	parts := strings.Split(path.Clean(name), "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		if p == "." {
			continue
		}
		err := r.Mkdir(p, perm)
		if err == nil || !errors.Is(err, fs.ErrExist) {
			if err != nil {
				return err
			}
			continue
		}
		fi, serr := r.Stat(p)
		if serr != nil {
			return serr
		}
		if !fi.IsDir() {
			return pathErr("mkdir", p, errors.New("not a directory"))
		}
	}
	return nil
}

// RemoveAll removes name and everything beneath it; it never follows a
// symlink out of the root (os.Root's walk).
func (r *Root) RemoveAll(name string) error {
	if err := checkName(name); err != nil {
		return pathErr("removeall", name, err)
	}
	return escapes(r.os.RemoveAll(name))
}

func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// checkName refuses absolute names and the root itself as a target.
func checkName(name string) error {
	if name == "" || filepath.IsAbs(name) || strings.HasPrefix(name, "/") {
		return ErrEscapes
	}
	return nil
}

func pathErr(op, name string, err error) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// escapes maps os.Root's unexported "path escapes from parent" error to
// ErrEscapes, so that callers test one error whichever walk ran.
func escapes(err error) error {
	if err == nil || !strings.Contains(err.Error(), "path escapes from parent") {
		return err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return &os.LinkError{Op: le.Op, Old: le.Old, New: le.New, Err: ErrEscapes}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: pe.Op, Path: pe.Path, Err: ErrEscapes}
	}
	return ErrEscapes
}

// Mkdir creates the directory name.
func (r *Root) Mkdir(name string, perm os.FileMode) error {
	if err := checkName(name); err != nil {
		return pathErr("mkdir", name, err)
	}
	if r.fd >= 0 {
		return pathErr("mkdir", name, r.mkdirBeneath(name, perm))
	}
	return escapes(r.os.Mkdir(name, perm))
}

// Remove removes the file or empty directory name (a symlink itself, never
// its target).
func (r *Root) Remove(name string) error {
	if err := checkName(name); err != nil {
		return pathErr("remove", name, err)
	}
	if r.fd >= 0 {
		return pathErr("remove", name, r.removeBeneath(name))
	}
	return escapes(r.os.Remove(name))
}

// Rename renames oldname to newname, replacing a file there; both resolve
// beneath the root and their last elements are never followed.
func (r *Root) Rename(oldname, newname string) error {
	if err := checkName(oldname); err != nil {
		return pathErr("rename", oldname, err)
	}
	if err := checkName(newname); err != nil {
		return pathErr("rename", newname, err)
	}
	if r.fd >= 0 {
		return pathErr("rename", oldname, r.renameBeneath(oldname, newname))
	}
	return escapes(r.os.Rename(oldname, newname))
}

// Stat describes name, following a symlink that stays inside.
func (r *Root) Stat(name string) (fs.FileInfo, error) {
	if err := checkName(name); err != nil {
		return nil, pathErr("stat", name, err)
	}
	if r.fd >= 0 {
		fi, err := r.statBeneath(name, true)
		return fi, pathErr("stat", name, err)
	}
	fi, err := r.os.Stat(name)
	return fi, escapes(err)
}

// Lstat describes name without following a final symlink.
func (r *Root) Lstat(name string) (fs.FileInfo, error) {
	if err := checkName(name); err != nil {
		return nil, pathErr("lstat", name, err)
	}
	if r.fd >= 0 {
		fi, err := r.statBeneath(name, false)
		return fi, pathErr("lstat", name, err)
	}
	fi, err := r.os.Lstat(name)
	return fi, escapes(err)
}

// ReadDir lists the directory name, sorted by file name.
func (r *Root) ReadDir(name string) ([]fs.DirEntry, error) {
	f, err := r.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	list, err := f.ReadDir(-1)
	slices.SortFunc(list, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return list, err
}
