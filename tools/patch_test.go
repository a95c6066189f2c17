package tools

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestApplyPatchAllOperations(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env, "src/app.py", "import os\n\ndef greet():\n    print(\"Hi\")\n    return 1\n\ndef other():\n    pass\n")
	writeFile(t, env, "obsolete.txt", "bye\n")
	writeFile(t, env, "keep.txt", "keep\n")
	patch := `*** Begin Patch
*** Add File: docs/hello.txt
+Hello world
+
*** Update File: src/app.py
*** Move to: src/main.py
@@ def greet():
-    print("Hi")
+    print("Hello, world!")
     return 1
@@
 def other():
-    pass
+    return 2
*** Delete File: obsolete.txt
*** End Patch`
	c, r := prepare(t, env, ApplyPatchToolName, ApplyPatchParams{Patch: patch})
	require.Nil(t, r, "%v", r)
	require.Len(t, c.Writes, 3)
	assert.Equal(t, []string{"added", "moved", "deleted"}, []string{c.Writes[0].Status, c.Writes[1].Status, c.Writes[2].Status})
	assert.Equal(t, "src/app.py", c.Writes[1].OldPath)

	res, err := c.Run(t.Context())
	require.NoError(t, err)
	mustOK(t, res)
	assert.Equal(t, "Hello world\n\n", readBack(t, env, "docs/hello.txt"))
	assert.Equal(t, "import os\n\ndef greet():\n    print(\"Hello, world!\")\n    return 1\n\ndef other():\n    return 2\n", readBack(t, env, "src/main.py"))
	assert.NoFileExists(t, filepath.Join(env.Root, "src/app.py"))
	assert.NoFileExists(t, filepath.Join(env.Root, "obsolete.txt"))

	// Undo puts everything back, and leaves keep.txt alone.
	mustOK(t, call(t, env, UndoPatchToolName, UndoPatchParams{}))
	assert.Equal(t, "bye\n", readBack(t, env, "obsolete.txt"))
	assert.Contains(t, readBack(t, env, "src/app.py"), `print("Hi")`)
	assert.NoFileExists(t, filepath.Join(env.Root, "src/main.py"))
	assert.NoFileExists(t, filepath.Join(env.Root, "docs/hello.txt"))
	assert.Equal(t, "keep\n", readBack(t, env, "keep.txt"))
}

func TestApplyPatchAllOrNothing(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env, "a.txt", "one\ntwo\n")
	writeFile(t, env, "b.txt", "three\n")
	cases := map[string]string{
		"a hunk that does not apply": "*** Begin Patch\n*** Update File: a.txt\n-one\n+ONE\n*** Update File: b.txt\n-nope\n+x\n*** End Patch",
		"adding an existing file":    "*** Begin Patch\n*** Delete File: a.txt\n*** Add File: b.txt\n+x\n*** End Patch",
		"deleting a missing file":    "*** Begin Patch\n*** Add File: c.txt\n+c\n*** Delete File: zzz.txt\n*** End Patch",
		"moving onto a file":         "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n-one\n+1\n*** End Patch",
		"no end marker":              "*** Begin Patch\n*** Add File: c.txt\n+c\n",
		"garbage":                    "--- a/a.txt\n+++ b/a.txt\n",
	}
	for name, patch := range cases {
		t.Run(name, func(t *testing.T) {
			r := mustErr(t, call(t, env, ApplyPatchToolName, ApplyPatchParams{Patch: patch}))
			assert.NotEmpty(t, r.Output)
			assert.Equal(t, "one\ntwo\n", readBack(t, env, "a.txt"))
			assert.Equal(t, "three\n", readBack(t, env, "b.txt"))
			assert.NoFileExists(t, filepath.Join(env.Root, "c.txt"))
		})
	}
}

func TestApplyChangesWriteFailureRollsBack(t *testing.T) {
	env := newEnv(t)
	a := writeFile(t, env, "a.txt", "one\n")
	blocker := writeFile(t, env, "blocker", "a file where a directory is needed\n")
	chs := []fileChange{
		{Rel: "a.txt", Abs: a, Before: strp("one\n"), After: strp("1\n"), Mode: 0o644},
		{Rel: "blocker/b.txt", Abs: filepath.Join(blocker, "b.txt"), After: strp("2\n")},
	}
	res, err := applyChanges(t.Context(), env, ApplyPatchToolName, chs)
	require.NoError(t, err)
	mustErr(t, res)
	assert.Equal(t, "one\n", readBack(t, env, "a.txt"))

	// The rollback used when a write fails half-way.
	require.NoError(t, writeChange(t.Context(), env, chs[0]))
	assert.Equal(t, "1\n", readBack(t, env, "a.txt"))
	rollback(t.Context(), env, chs[:1])
	assert.Equal(t, "one\n", readBack(t, env, "a.txt"))
	entries, err := journalFor(env).entries()
	require.NoError(t, err)
	assert.Empty(t, entries, "a failed change leaves no checkpoint")
}

func TestApplyChunksTolerance(t *testing.T) {
	content := "func f() {\n\tif x {\n\t\treturn “a”\n\t}\n}\n"
	out, err := applyChunks(content, []patchChunk{{
		Old: []string{"    if x {", "        return \"a\"", "    }"},
		New: []string{"    if y {", "        return \"b\"", "    }"},
	}})
	require.NoError(t, err)
	assert.Equal(t, "func f() {\n\tif y {\n\t\treturn \"b\"\n\t}\n}\n", out, "re-indented to the file's tabs")

	out, err = applyChunks("a\nb\na\n", []patchChunk{{Old: []string{"a"}, New: []string{"z"}, AtEOF: true}})
	require.NoError(t, err)
	assert.Equal(t, "a\nb\nz\n", out)

	_, err = applyChunks("a\nb\n", []patchChunk{{Old: []string{"q"}, New: []string{"z"}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "hunk 1")
}

func TestUndoCheckpoints(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env, "f.txt", "v0\n")
	writeFile(t, env, "untouched.txt", "u\n")
	mustOK(t, call(t, env, ReadFileToolName, ReadFileParams{Path: "f.txt"}))
	r1 := mustOK(t, call(t, env, WriteFileToolName, WriteFileParams{Path: "f.txt", Content: "v1\n"}))
	assert.Contains(t, r1.Output, "checkpoint c1")
	r2 := mustOK(t, call(t, env, WriteFileToolName, WriteFileParams{Path: "f.txt", Content: "v2\n"}))
	assert.Contains(t, r2.Output, "checkpoint c2")
	r3 := mustOK(t, call(t, env, WriteFileToolName, WriteFileParams{Path: "created.txt", Content: "new\n"}))
	assert.Contains(t, r3.Output, "checkpoint c3")
	writeFile(t, env, "user-made.txt", "mine\n") // not the agent's: never deleted

	// Undo the last change: the created file goes away.
	c, r := prepare(t, env, UndoPatchToolName, UndoPatchParams{})
	require.Nil(t, r)
	require.Len(t, c.Writes, 1)
	assert.Equal(t, "deleted", c.Writes[0].Status)
	res, err := c.Run(t.Context())
	require.NoError(t, err)
	mustOK(t, res)
	assert.NoFileExists(t, filepath.Join(env.Root, "created.txt"))
	assert.Equal(t, "v2\n", readBack(t, env, "f.txt"))

	// Undo from c1 on: f.txt back to v0.
	mustOK(t, call(t, env, UndoPatchToolName, UndoPatchParams{Checkpoint: "c1"}))
	assert.Equal(t, "v0\n", readBack(t, env, "f.txt"))
	assert.Equal(t, "u\n", readBack(t, env, "untouched.txt"))
	assert.Equal(t, "mine\n", readBack(t, env, "user-made.txt"))

	r4 := mustErr(t, call(t, env, UndoPatchToolName, UndoPatchParams{}))
	assert.Contains(t, r4.Output, "nothing to undo")
	mustErr(t, call(t, env, UndoPatchToolName, UndoPatchParams{Checkpoint: "c9"}))

	// Journals are per session and outside the workspace.
	assert.DirExists(t, filepath.Join(env.StateDir, "checkpoints", "sessions", "s1"))
	assert.NoDirExists(t, filepath.Join(env.Root, ".agentd"))
}
