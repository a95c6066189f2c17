package tools

import (
	"context"
	"fmt"
	"io/fs"
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

// readContent reads a file's content through env.Files, or from the disk
// beneath the workspace handle.
func readContent(ctx context.Context, env *Env, abs string) ([]byte, error) {
	if env.Files == nil {
		return diskRead(env.Root, abs)
	}
	if err := checkBeneath(env.Root, abs, false); err != nil {
		return nil, err
	}
	b, err := env.Files.ReadFile(ctx, abs)
	if err != nil {
		return nil, fmt.Errorf("through the editor: %w", err)
	}
	return b, nil
}

// writeContent writes a file's content through env.Files, or atomically to
// the disk beneath the workspace handle. The editor keeps the mode of a
// file it rewrites and picks its own for one it creates. The editor writes
// by path: the path is checked beneath the handle just before it is asked.
func writeContent(ctx context.Context, env *Env, abs string, data []byte, mode fs.FileMode) error {
	if env.Files == nil {
		return diskWrite(env.Root, abs, data, mode)
	}
	if err := checkBeneath(env.Root, abs, true); err != nil {
		return err
	}
	if err := env.Files.WriteFile(ctx, abs, data); err != nil {
		return fmt.Errorf("through the editor: %w", err)
	}
	return nil
}

// DiskAt is the FileSystem of the disk itself under the workspace root, for
// an editor that serves only reads or only writes: paths resolve beneath
// the workspace handle at the moment of use, and a rewritten file keeps its
// mode.
func DiskAt(root string) FileSystem { return disk{root: root} }

type disk struct{ root string }

func (d disk) ReadFile(ctx context.Context, abs string) ([]byte, error) { return diskRead(d.root, abs) }

func (d disk) WriteFile(ctx context.Context, abs string, data []byte) error {
	return diskWrite(d.root, abs, data, 0o644)
}
