package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeEditor stands in for an editor serving the files: its open buffers
// win over the disk, and writes land in a buffer, not on the disk.
type fakeEditor struct {
	mu       sync.Mutex
	buffers  map[string]string // abs → unsaved content
	reads    []string
	writes   []string
	writeErr error
}

func newFakeEditor() *fakeEditor { return &fakeEditor{buffers: map[string]string{}} }

func (e *fakeEditor) ReadFile(ctx context.Context, abs string) ([]byte, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reads = append(e.reads, abs)
	if s, ok := e.buffers[abs]; ok {
		return []byte(s), nil
	}
	return os.ReadFile(abs)
}

func (e *fakeEditor) WriteFile(ctx context.Context, abs string, data []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.writeErr != nil {
		return e.writeErr
	}
	e.writes = append(e.writes, abs)
	e.buffers[abs] = string(data)
	return nil
}

func (e *fakeEditor) buffer(abs string) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s, ok := e.buffers[abs]
	return s, ok
}

func TestEditorFilesSeeUnsavedBufferAndTakeWrites(t *testing.T) {
	env := newEnv(t)
	ed := newFakeEditor()
	env.Files = ed
	abs := writeFile(t, env, "f.txt", "one\ntwo\nthree\n")
	ed.buffers[abs] = "one\nunsaved\nthree\n"

	r := mustOK(t, call(t, env, ReadFileToolName, ReadFileParams{Path: "f.txt"}))
	assert.Contains(t, r.Output, "unsaved")
	assert.NotContains(t, r.Output, "two")
	assert.Equal(t, []string{abs}, ed.reads)

	// The edit is made against the buffer: "two" is only on the disk.
	mustErr(t, call(t, env, EditFileToolName, EditFileParams{Path: "f.txt", OldString: "two", NewString: "2"}))
	c, refusal := prepare(t, env, EditFileToolName, EditFileParams{Path: "f.txt", OldString: "unsaved", NewString: "edited"})
	require.Nil(t, refusal)
	require.Len(t, c.Writes, 1)
	assert.Contains(t, c.Writes[0].Diff, "-unsaved")
	res, err := c.Run(context.WithoutCancel(t.Context()))
	require.NoError(t, err)
	mustOK(t, res)
	got, _ := ed.buffer(abs)
	assert.Equal(t, "one\nedited\nthree\n", got)
	assert.Equal(t, "one\ntwo\nthree\n", readBack(t, env, "f.txt"), "the disk is the editor's business")

	// A new file is created through the editor too.
	mustOK(t, call(t, env, WriteFileToolName, WriteFileParams{Path: "dir/new.txt", Content: "fresh\n"}))
	got, ok := ed.buffer(filepath.Join(env.Root, "dir", "new.txt"))
	assert.True(t, ok)
	assert.Equal(t, "fresh\n", got)
	assert.NoFileExists(t, filepath.Join(env.Root, "dir", "new.txt"))
	assert.Equal(t, []string{abs, filepath.Join(env.Root, "dir", "new.txt")}, ed.writes)
}

func TestEditorFilesDeleteOnDisk(t *testing.T) {
	env := newEnv(t)
	ed := newFakeEditor()
	env.Files = ed
	writeFile(t, env, "gone.txt", "bye\n")
	mustOK(t, call(t, env, ApplyPatchToolName, ApplyPatchParams{Patch: "*** Begin Patch\n*** Delete File: gone.txt\n*** End Patch"}))
	assert.NoFileExists(t, filepath.Join(env.Root, "gone.txt"))
	assert.Empty(t, ed.writes, "ACP has no delete: it goes to the disk")
}

func TestEditorFilesWriteErrorIsAFailedResult(t *testing.T) {
	env := newEnv(t)
	ed := newFakeEditor()
	ed.writeErr = errors.New("buffer is read-only")
	env.Files = ed
	writeFile(t, env, "f.txt", "one\n")
	mustOK(t, call(t, env, ReadFileToolName, ReadFileParams{Path: "f.txt"}))
	r := mustErr(t, call(t, env, EditFileToolName, EditFileParams{Path: "f.txt", OldString: "one", NewString: "1"}))
	assert.Contains(t, r.Output, "buffer is read-only")
	assert.Equal(t, "one\n", readBack(t, env, "f.txt"))
	entries, err := journalFor(env).entries()
	require.NoError(t, err)
	assert.Empty(t, entries, "a failed change leaves no checkpoint")
}
