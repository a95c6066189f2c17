package tools

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResolvePathConfines(t *testing.T) {
	env := newEnv(t)
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("s"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(env.Root, "link")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(env.Root, "file-link")))
	writeFile(t, env, "sub/a.txt", "a")

	ok := map[string]string{
		"":                ".",
		"sub/a.txt":       "sub/a.txt",
		"sub/../x.txt":    "x.txt",
		"new/dir/f.txt":   "new/dir/f.txt",
		env.Root + "/sub": "sub",
	}
	for in, want := range ok {
		_, rel, err := resolvePath(env.Root, in)
		require.NoError(t, err, in)
		assert.Equal(t, want, rel, in)
	}
	bad := []string{
		"../x.txt",                  // ..
		"sub/../../x.txt",           // .. deeper
		filepath.Join(outside, "a"), // absolute outside
		"/etc/passwd",               // absolute outside
		"link/secret.txt",           // symlinked dir out
		"link/not-yet.txt",          // symlinked dir out, file to create
		"file-link",                 // symlinked file out
	}
	for _, in := range bad {
		_, _, err := resolvePath(env.Root, in)
		require.Error(t, err, in)
		assert.ErrorIs(t, err, errOutside, in)
		assert.Contains(t, err.Error(), "outside the workspace", in)
	}
}

func TestResolvePathRefusesDanglingLink(t *testing.T) {
	env := newEnv(t)
	require.NoError(t, os.Symlink("/nonexistent-agentd/x", filepath.Join(env.Root, "dangling")))
	_, _, err := resolvePath(env.Root, "dangling")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "broken symlink")
}

func TestToolsRefuseEscapes(t *testing.T) {
	env := newEnv(t)
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "o.txt"), []byte("outside\n"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(env.Root, "out")))
	for _, p := range []string{"../o.txt", filepath.Join(outside, "o.txt"), "out/o.txt"} {
		r := mustErr(t, call(t, env, ReadFileToolName, ReadFileParams{Path: p}))
		assert.Contains(t, r.Output, "outside the workspace")
		r = mustErr(t, call(t, env, WriteFileToolName, WriteFileParams{Path: p, Content: "x"}))
		assert.Contains(t, r.Output, "outside the workspace")
		r = mustErr(t, call(t, env, ListDirToolName, ListDirParams{Path: filepath.Dir(p)}))
		assert.Contains(t, r.Output, "outside the workspace")
	}
	patch := "*** Begin Patch\n*** Add File: out/new.txt\n+x\n*** End Patch"
	r := mustErr(t, call(t, env, ApplyPatchToolName, ApplyPatchParams{Patch: patch}))
	assert.Contains(t, r.Output, "outside the workspace")
	r = mustErr(t, call(t, env, RunCmdToolName, RunCmdParams{Command: "ls", Cwd: "../"}))
	assert.Contains(t, r.Output, "outside the workspace")
	b, _ := os.ReadFile(filepath.Join(outside, "o.txt"))
	assert.Equal(t, "outside\n", string(b))
	_, err := os.Stat(filepath.Join(outside, "new.txt"))
	assert.True(t, os.IsNotExist(err))
}
