package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// The daemon reads, with its own rights, files a confined command may have
// made: the workspace's .git file, .mcp.json, .agentd/rules.json, the
// instruction files. A command cannot make them point outside (Root, or
// the callers' own checks), but it can make them a named pipe, and opening
// a pipe for reading waits for a writer that never comes: a run, every new
// session or the next daemon's start would hang for good. So such reads
// open without blocking and refuse what is not a regular file.

// ErrNotRegular means a named pipe, socket or device stood where a file was
// expected.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge means a file is larger than its reader takes.
var ErrTooLarge = errors.New("file too large")

// OpenRegular opens name (following symbolic links) for reading if it is a
// regular file, never blocking on a named pipe.
func OpenRegular(name string) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if err := mustBeRegular(f, name); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadRegular reads the regular file name, at most limit bytes (a larger
// file is ErrTooLarge; limit <= 0 takes any size).
func ReadRegular(name string, limit int64) ([]byte, error) {
	f, err := OpenRegular(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(f, name, limit)
}

func mustBeRegular(f *os.File, name string) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		if fi.IsDir() {
			return &fs.PathError{Op: "read", Path: name, Err: errors.New("is a directory")}
		}
		return &fs.PathError{Op: "read", Path: name, Err: ErrNotRegular}
	}
	return nil
}

func readLimited(f *os.File, name string, limit int64) ([]byte, error) {
	if limit <= 0 {
		return io.ReadAll(f)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)}
	}
	return data, nil
}
