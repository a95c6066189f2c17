package tools

import (
	"context"
	"fmt"
	"io/fs"
	"os"
)

// FileSystem reads and writes workspace files through the editor, so unsaved
// buffers are seen and the editor tracks changes. Paths are absolute.
//
// Only content goes through it. Paths are resolved and confined before it is
// asked; whether a file exists, its size and its mtime (read-before-edit)
// still come from the disk; and deletes and the old side of a move go to the
// disk, since ACP, the protocol behind it, has no delete. A read of a file
// the editor cannot find may return an error wrapping fs.ErrNotExist.
type FileSystem interface {
	ReadFile(ctx context.Context, abs string) ([]byte, error)
	WriteFile(ctx context.Context, abs string, data []byte) error
}

// readContent reads a file's content through env.Files, or from the disk.
func readContent(ctx context.Context, env *Env, abs string) ([]byte, error) {
	if env == nil || env.Files == nil {
		return os.ReadFile(abs)
	}
	b, err := env.Files.ReadFile(ctx, abs)
	if err != nil {
		return nil, fmt.Errorf("through the editor: %w", err)
	}
	return b, nil
}

// writeContent writes a file's content through env.Files, or atomically to
// the disk. The editor keeps the mode of a file it rewrites and picks its
// own for one it creates.
func writeContent(ctx context.Context, env *Env, abs string, data []byte, mode fs.FileMode) error {
	if env == nil || env.Files == nil {
		return writeAtomic(abs, data, mode)
	}
	if err := env.Files.WriteFile(ctx, abs, data); err != nil {
		return fmt.Errorf("through the editor: %w", err)
	}
	return nil
}

// Disk is the FileSystem of the disk itself, for an editor that serves only
// reads or only writes. A rewritten file keeps its mode.
var Disk FileSystem = disk{}

type disk struct{}

func (disk) ReadFile(ctx context.Context, abs string) ([]byte, error) { return os.ReadFile(abs) }

func (disk) WriteFile(ctx context.Context, abs string, data []byte) error {
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(abs); err == nil {
		mode = fi.Mode().Perm()
	}
	return writeAtomic(abs, data, mode)
}
