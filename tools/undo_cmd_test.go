package tools

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runCmd runs a command line as an approved one runs: in the
// workspace-write profile of the kernel sandbox.
func runCmd(t *testing.T, env *Env, line string) Result {
	t.Helper()
	return runConfined(t, t.Context(), env, Confine{Profile: ProfileWorkspaceWrite}, RunCmdParams{Command: line})
}

// A real shell line that edits, deletes, creates, renames and chmods; its
// checkpoint lists it all, and undo_patch puts everything back.
func TestRunCmdChangesAreCheckpointedAndUndone(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env, "main.go", "package main\n\nvar v = \"old\"\n")
	writeFile(t, env, "notes.txt", "remove me\n")
	writeFile(t, env, "a/name.txt", "rename me\n")
	writeFile(t, env, "run.sh", "echo hi\n")

	res := mustOK(t, runCmd(t, env, `sed -i 's/old/new/' main.go && rm notes.txt && printf 'fresh\n' > made.txt && mv a/name.txt a/renamed.txt && chmod 755 run.sh`))
	assert.Equal(t, "c1", res.Checkpoint)
	assert.Contains(t, res.Output, "[exit code 0")
	assert.Contains(t, res.Output, "[checkpoint c1: renamed a/name.txt → a/renamed.txt, added made.txt, modified main.go, deleted notes.txt, mode of run.sh 0644 → 0755; undo_patch restores them]")
	assert.Contains(t, res.Full, "[exit code 0", "the editor reads the command's outcome")
	assert.NotContains(t, res.Full, "undo_patch", "not the line meant for the model: the editor shows the checkpoint")
	byPath := map[string]FileDiff{}
	for _, f := range res.Files {
		byPath[f.Path] = f
	}
	assert.Contains(t, byPath["main.go"].Diff, "+var v = \"new\"")
	assert.Equal(t, "moved", byPath["a/renamed.txt"].Status)
	assert.Equal(t, "deleted", byPath["notes.txt"].Status)
	assert.Contains(t, byPath["run.sh"].Diff, "new mode 0755")

	c, r := prepare(t, env, UndoPatchToolName, UndoPatchParams{})
	require.Nil(t, r, "%v", r)
	assert.Equal(t, "undo c1", c.Title)
	assert.Len(t, c.Writes, 6, "the confirmation shows every file (a rename is two)")
	out, err := c.Run(t.Context())
	require.NoError(t, err)
	mustOK(t, out)
	assert.Contains(t, out.Output, "undid c1")
	assert.Equal(t, "c2", out.Checkpoint)
	assert.Equal(t, "package main\n\nvar v = \"old\"\n", readBack(t, env, "main.go"))
	assert.Equal(t, "remove me\n", readBack(t, env, "notes.txt"))
	assert.Equal(t, "rename me\n", readBack(t, env, "a/name.txt"))
	assert.NoFileExists(t, filepath.Join(env.Root, "made.txt"))
	assert.NoFileExists(t, filepath.Join(env.Root, "a/renamed.txt"))
	fi, err := os.Stat(filepath.Join(env.Root, "run.sh"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm())

	// The undo is a checkpoint: undoing it redoes the command's changes.
	mustOK(t, call(t, env, UndoPatchToolName, UndoPatchParams{Checkpoint: "c2"}))
	assert.Equal(t, "fresh\n", readBack(t, env, "made.txt"))
	assert.NoFileExists(t, filepath.Join(env.Root, "notes.txt"))
}

func TestRunCmdThatChangesNothingSaysNothing(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env, "f.txt", "x\n")
	res := mustOK(t, runCmd(t, env, "cat f.txt"))
	assert.NotContains(t, res.Output, "checkpoint")
	assert.Empty(t, res.Checkpoint)
	assert.Empty(t, res.Files)
}

// A failing command's changes are checkpointed too.
func TestFailedCommandIsCheckpointed(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env, "f.txt", "x\n")
	res := mustErr(t, runCmd(t, env, "echo y > f.txt; exit 3"))
	assert.Contains(t, res.Output, "[exit code 3")
	assert.Contains(t, res.Output, "[checkpoint c1: modified f.txt")
}

// undo_patch never overwrites a file the user changed after the
// checkpoint: it changes nothing, shows the conflict, and offers the rest.
func TestUndoPatchRefusesToOverwriteUserEdits(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env, "a.txt", "a0\n")
	writeFile(t, env, "b.txt", "b0\n")
	mustOK(t, runCmd(t, env, "echo a1 > a.txt && echo b1 > b.txt"))
	writeFile(t, env, "a.txt", "the user's a\n")

	r := mustErr(t, call(t, env, UndoPatchToolName, UndoPatchParams{}))
	assert.Contains(t, r.Output, "NOT undone (c1): nothing was changed.")
	assert.Contains(t, r.Output, "a.txt: it was changed after the checkpoint")
	assert.Contains(t, r.Output, "-the user's a")
	assert.Contains(t, r.Output, "+a0")
	assert.Contains(t, r.Output, `paths: ["b.txt"]`)
	assert.Equal(t, "the user's a\n", readBack(t, env, "a.txt"))
	assert.Equal(t, "b1\n", readBack(t, env, "b.txt"))

	mustOK(t, call(t, env, UndoPatchToolName, UndoPatchParams{Paths: []string{"b.txt"}}))
	assert.Equal(t, "b0\n", readBack(t, env, "b.txt"))
	assert.Equal(t, "the user's a\n", readBack(t, env, "a.txt"))
}

// File tools and commands share one history: undoing from the first
// change undoes both.
func TestUndoAcrossFileToolsAndCommands(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env, "f.txt", "v0\n")
	mustOK(t, call(t, env, ReadFileToolName, ReadFileParams{Path: "f.txt"}))
	w := mustOK(t, call(t, env, WriteFileToolName, WriteFileParams{Path: "sub/dir/new.txt", Content: "n\n"}))
	assert.Equal(t, "c1", w.Checkpoint)
	mustOK(t, runCmd(t, env, "echo v1 > f.txt && cat sub/dir/new.txt >> f.txt"))
	mustOK(t, call(t, env, UndoPatchToolName, UndoPatchParams{Checkpoint: "c1"}))
	assert.Equal(t, "v0\n", readBack(t, env, "f.txt"))
	assert.NoDirExists(t, filepath.Join(env.Root, "sub"), "the directories write_file made go too")
}
