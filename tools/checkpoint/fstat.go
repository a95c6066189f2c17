package checkpoint

import "io/fs"

// fstat is what a scan compares to tell whether a path changed: size,
// modification and change times, inode and mode (type and permissions, as
// in st_mode). The change time cannot be set back by a program, so a
// rewrite that restores size and mtime is still seen.
type fstat struct {
	size, mtime, ctime int64
	ino                uint64
	mode               uint32
}

// st_mode's type bits.
const (
	sIFMT  = 0o170000
	sIFREG = 0o100000
	sIFDIR = 0o040000
	sIFLNK = 0o120000
)

func (s fstat) kind() Kind {
	switch s.mode & sIFMT {
	case sIFREG:
		return KindFile
	case sIFDIR:
		return KindDir
	case sIFLNK:
		return KindSymlink
	}
	return "" // devices, pipes, sockets: not workspace content
}

func (s fstat) perm() fs.FileMode { return fs.FileMode(s.mode & 0o7777).Perm() }

// unchanged reports whether a path still looks as it did. A directory is
// compared by type and permissions alone: its times change with its
// entries, which the scan sees one by one.
func (s fstat) unchanged(o fstat) bool {
	if s.mode != o.mode {
		return false
	}
	if s.mode&sIFMT == sIFDIR {
		return true
	}
	return s.size == o.size && s.mtime == o.mtime && s.ctime == o.ctime && s.ino == o.ino
}

// statOf converts what os.Lstat says.
func statOf(fi fs.FileInfo) fstat {
	st := fstat{size: fi.Size(), mtime: fi.ModTime().UnixNano(), mode: uint32(fi.Mode().Perm())}
	switch {
	case fi.Mode().IsRegular():
		st.mode |= sIFREG
	case fi.IsDir():
		st.mode |= sIFDIR
	case fi.Mode()&fs.ModeSymlink != 0:
		st.mode |= sIFLNK
	}
	if fi.Mode()&fs.ModeSetuid != 0 {
		st.mode |= 0o4000
	}
	if fi.Mode()&fs.ModeSetgid != 0 {
		st.mode |= 0o2000
	}
	if fi.Mode()&fs.ModeSticky != 0 {
		st.mode |= 0o1000
	}
	st.ctime, st.ino = sysStat(fi)
	return st
}
