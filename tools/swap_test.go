package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// swapForLink replaces the workspace directory rel with a symlink to a
// directory outside that holds the same file names: the swap a command
// could make between the user's approval of a call and its run.
func swapForLink(t *testing.T, env *Env, rel string) string {
	t.Helper()
	outside := t.TempDir()
	dir := filepath.Join(env.Root, filepath.FromSlash(rel))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(outside, e.Name()), b, 0o644))
	}
	require.NoError(t, os.RemoveAll(dir))
	require.NoError(t, os.Symlink(outside, dir))
	return outside
}

// TestFileToolsResolveAtUse is issue 11 item 5: paths are resolved beneath
// the workspace handle when the file is read or written, so a directory
// swapped for a symlink after the call was prepared (and approved) makes
// the call fail instead of reaching outside.
func TestFileToolsResolveAtUse(t *testing.T) {
	t.Run("write_file", func(t *testing.T) {
		env := newEnv(t)
		writeFile(t, env, "sub/keep.txt", "keep\n")
		c, r := prepare(t, env, WriteFileToolName, WriteFileParams{Path: "sub/new.txt", Content: "planted\n"})
		require.Nil(t, r)
		outside := swapForLink(t, env, "sub")
		res, err := c.Run(context.Background())
		require.NoError(t, err)
		mustErr(t, res)
		assert.Contains(t, res.Output, "escapes the workspace")
		assert.NoFileExists(t, filepath.Join(outside, "new.txt"))
	})
	t.Run("edit_file", func(t *testing.T) {
		env := newEnv(t)
		writeFile(t, env, "sub/a.go", "package a\n\nconst X = 1\n")
		mustOK(t, call(t, env, ReadFileToolName, ReadFileParams{Path: "sub/a.go"}))
		c, r := prepare(t, env, EditFileToolName, EditFileParams{Path: "sub/a.go", OldString: "X = 1", NewString: "X = 2"})
		require.Nil(t, r)
		outside := swapForLink(t, env, "sub")
		res, err := c.Run(context.Background())
		require.NoError(t, err)
		mustErr(t, res)
		b, _ := os.ReadFile(filepath.Join(outside, "a.go"))
		assert.Equal(t, "package a\n\nconst X = 1\n", string(b), "the file outside is untouched")
	})
	t.Run("apply_patch delete", func(t *testing.T) {
		env := newEnv(t)
		writeFile(t, env, "sub/gone.txt", "x\n")
		c, r := prepare(t, env, ApplyPatchToolName, map[string]string{"patch": "*** Begin Patch\n*** Delete File: sub/gone.txt\n*** End Patch"})
		require.Nil(t, r)
		outside := swapForLink(t, env, "sub")
		res, err := c.Run(context.Background())
		require.NoError(t, err)
		mustErr(t, res)
		assert.FileExists(t, filepath.Join(outside, "gone.txt"))
	})
	t.Run("read_file", func(t *testing.T) {
		env := newEnv(t)
		writeFile(t, env, "sub/a.txt", "inside\n")
		c, r := prepare(t, env, ReadFileToolName, ReadFileParams{Path: "sub/a.txt"})
		require.Nil(t, r)
		outside := swapForLink(t, env, "sub")
		require.NoError(t, os.WriteFile(filepath.Join(outside, "a.txt"), []byte("SECRET outside\n"), 0o644))
		res, err := c.Run(context.Background())
		require.NoError(t, err)
		mustErr(t, res)
		assert.NotContains(t, res.Output, "SECRET")
	})
	t.Run("inside links still work", func(t *testing.T) {
		env := newEnv(t)
		writeFile(t, env, "real/a.txt", "a\n")
		require.NoError(t, os.Symlink("real", filepath.Join(env.Root, "alias")))
		res := mustOK(t, call(t, env, ReadFileToolName, ReadFileParams{Path: "alias/a.txt"}))
		assert.Contains(t, res.Output, "a")
		mustOK(t, call(t, env, WriteFileToolName, WriteFileParams{Path: "alias/b.txt", Content: "b\n"}))
		assert.Equal(t, "b\n", readBack(t, env, "real/b.txt"))
	})
}

// TestGrepStaysInside: the built-in search and rg read nothing a link
// points to outside the workspace.
func TestGrepStaysInside(t *testing.T) {
	env := newEnv(t)
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "key"), []byte("NEEDLE outside\n"), 0o644))
	writeFile(t, env, "a.txt", "NEEDLE inside\n")
	require.NoError(t, os.Symlink(filepath.Join(outside, "key"), filepath.Join(env.Root, "link.txt")))
	require.NoError(t, os.Symlink(outside, filepath.Join(env.Root, "dirlink")))
	res := mustOK(t, call(t, env, GrepToolName, GrepParams{Pattern: "NEEDLE"}))
	assert.Contains(t, res.Output, "a.txt:1:NEEDLE inside")
	assert.NotContains(t, res.Output, "outside")
	assert.Equal(t, 1, strings.Count(res.Output, "NEEDLE"))
}

// TestFileToolsNeverWriteGitDirs: whatever the policy allowed, the file
// tools refuse at the moment of use to write a nested repository's
// configuration or hooks (which git would run) or .agentd/.
func TestFileToolsNeverWriteGitDirs(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env, "sub/.git/config", "[core]\n")
	writeFile(t, env, "sub/.git/HEAD", "ref: refs/heads/main\n")
	for _, p := range []string{"sub/.git/config", "sub/.git/hooks/pre-commit", ".git/config", ".agentd/rules.json", "a/b/.git/x"} {
		c, r := prepare(t, env, WriteFileToolName, WriteFileParams{Path: p, Content: "[core]\n\tfsmonitor = touch pwned\n"})
		if r != nil {
			continue // refused when prepared: fine too
		}
		res, err := c.Run(context.Background())
		require.NoError(t, err)
		mustErr(t, res)
		assert.Contains(t, res.Output, "never write inside a .git directory", p)
	}
	assert.Equal(t, "[core]\n", readBack(t, env, "sub/.git/config"))
	assert.NoFileExists(t, filepath.Join(env.Root, "sub/.git/hooks/pre-commit"))
	mustOK(t, call(t, env, WriteFileToolName, WriteFileParams{Path: "sub/.gitignore", Content: "x\n"}))
}
