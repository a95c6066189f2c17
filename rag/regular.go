package rag

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// A command may leave a named pipe where a file was (or where an ignore
// file is looked for), and opening a pipe for reading waits for a writer
// that never comes: the walk, an update or a search would hang for good.
// The index opens files without blocking and reads regular files only.

var errNotRegular = errors.New("not a regular file")

// openRegular opens name, beneath root when root is not nil, if it is a
// regular file.
func openRegular(root *os.Root, name string) (*os.File, error) {
	flags := os.O_RDONLY | syscall.O_NONBLOCK
	var f *os.File
	var err error
	if root != nil {
		f, err = root.OpenFile(name, flags, 0)
	} else {
		f, err = os.OpenFile(name, flags, 0)
	}
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &fs.PathError{Op: "read", Path: name, Err: errNotRegular}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// readRegular reads the regular file name beneath root.
func readRegular(root *os.Root, name string) ([]byte, error) {
	f, err := openRegular(root, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
