package checkpoint

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sh runs a shell line in the workspace, as run_cmd would.
func sh(t *testing.T, root, line string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s: %s", line, out)
}

// command runs a shell line between Begin and End and records the
// checkpoint, as the run_cmd hook does.
func command(t *testing.T, w *Workspace, session, line string) *Checkpoint {
	t.Helper()
	tok := w.Begin(t.Context())
	require.NoError(t, tok.Err())
	sh(t, w.root, line)
	chs, notes, err := w.End(t.Context(), tok)
	require.NoError(t, err)
	cp := &Checkpoint{Session: session, Tool: "run_cmd", Title: line, Changes: chs, Notes: notes}
	require.NoError(t, w.Record(cp))
	return cp
}

func read(t *testing.T, root, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
	require.NoError(t, err)
	return string(b)
}

func statuses(chs []Change) map[string]string {
	out := map[string]string{}
	for _, c := range chs {
		out[c.Path] = c.Status()
	}
	return out
}

var seed = map[string]string{
	"main.go":          "package main\n\nfunc main() { println(\"old\") }\n",
	"gone.txt":         "delete me\n",
	"old/name.txt":     "rename me\n",
	"script.sh":        "echo hi\n",
	"go.sum":           "example.com/x v1.0.0 h1:abc=\n",
	".gitignore":       "build/\n*.log\n",
	"build/out.bin":    "ignored output\n",
	"docs/keep.md":     "# untouched\n",
	"nested/deep/a.go": "package deep\n",
}

// bothWays runs a test with the watcher (Begin and End look at events)
// and without it (every Begin and End scans the whole tree).
func bothWays(t *testing.T, files map[string]string, test func(t *testing.T, w *Workspace)) {
	for _, watch := range []bool{true, false} {
		name := "scan"
		if watch {
			name = "watch"
		}
		t.Run(name, func(t *testing.T) {
			w := newTestWorkspace(t, files)
			w.noWatch = !watch
			test(t, w)
			if watch && runtime.GOOS == "linux" {
				assert.NotNil(t, w.watch, "inotify available")
			}
		})
	}
}

func TestCommandChangesAreRecordedAndUndone(t *testing.T) {
	bothWays(t, seed, testCommandChanges)
}

func testCommandChanges(t *testing.T, w *Workspace) {
	cp := command(t, w, "s1", `sed -i 's/old/new/' main.go && rm gone.txt && echo fresh > made.txt &&
		mkdir -p new && mv old/name.txt new/name.txt && rmdir old && chmod +x script.sh &&
		echo 'example.com/y v2.0.0 h1:def=' >> go.sum && echo noise > build/more.bin && echo x > run.log &&
		rm -r nested`)
	assert.Equal(t, map[string]string{
		"main.go": "modified", "gone.txt": "deleted", "made.txt": "added", "new": "added",
		"new/name.txt": "renamed", "old": "deleted", "old/name.txt": "deleted", "script.sh": "mode",
		"go.sum": "modified", "nested": "deleted", "nested/deep": "deleted", "nested/deep/a.go": "deleted",
	}, statuses(cp.Changes), "ignored paths (build/, *.log) are not covered; go.sum is")
	assert.Empty(t, cp.Notes)

	res, err := w.Restore(Select{Session: "s1"}, Stop, Checkpoint{Tool: ToolUndo}, nil)
	require.NoError(t, err)
	require.False(t, res.Stopped, "%+v", res.Plan.Steps)
	for name, content := range seed {
		assert.Equal(t, content, read(t, w.root, name), name)
	}
	for _, gone := range []string{"made.txt", "new"} {
		assert.NoFileExists(t, filepath.Join(w.root, gone))
		assert.NoDirExists(t, filepath.Join(w.root, gone))
	}
	fi, err := os.Stat(filepath.Join(w.root, "script.sh"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm(), "the mode is restored")
	assert.Equal(t, "noise\n", read(t, w.root, "build/more.bin"), "ignored files are left alone")

	// The restore is a checkpoint; the undone one says so; undoing the
	// restore redoes the command.
	list, err := w.List("s1")
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.Equal(t, res.Checkpoint.ID, list[0].UndoneBy)
	assert.Equal(t, []string{"c1"}, list[1].Undoes)
	_, err = w.Restore(Select{Session: "s1", From: res.Checkpoint.ID}, Stop, Checkpoint{Tool: ToolUndo}, nil)
	require.NoError(t, err)
	assert.Equal(t, "package main\n\nfunc main() { println(\"new\") }\n", read(t, w.root, "main.go"))
	assert.Equal(t, "rename me\n", read(t, w.root, "new/name.txt"))
	assert.NoFileExists(t, filepath.Join(w.root, "gone.txt"))
}

func TestNothingChangedIsNoChange(t *testing.T) {
	w := newTestWorkspace(t, seed)
	cp := command(t, w, "s1", "cat main.go > /dev/null; ls")
	assert.Empty(t, cp.Changes)
}

// A file the user changed after the checkpoint is never overwritten
// silently: Stop writes nothing, Skip leaves it, Overwrite keeps the user's
// version in the restore's checkpoint.
func TestUserEditIsProtected(t *testing.T) {
	w := newTestWorkspace(t, seed)
	command(t, w, "s1", `echo agent >> main.go && echo agent > docs/keep.md`)
	require.NoError(t, os.WriteFile(filepath.Join(w.root, "main.go"), []byte("the user's version\n"), 0o644))

	res, err := w.Restore(Select{Session: "s1"}, Stop, Checkpoint{Tool: ToolUndo}, nil)
	require.NoError(t, err)
	assert.True(t, res.Stopped)
	assert.Nil(t, res.Checkpoint)
	assert.Equal(t, 1, res.Plan.Count(ActionConflict))
	assert.Equal(t, "the user's version\n", read(t, w.root, "main.go"))
	assert.Equal(t, "agent\n", read(t, w.root, "docs/keep.md"), "stopped: nothing written")

	res, err = w.Restore(Select{Session: "s1"}, Skip, Checkpoint{Tool: ToolUndo}, nil)
	require.NoError(t, err)
	assert.Equal(t, "the user's version\n", read(t, w.root, "main.go"))
	assert.Equal(t, "# untouched\n", read(t, w.root, "docs/keep.md"))
	assert.NotEmpty(t, res.Checkpoint.Notes)

	res, err = w.Restore(Select{Session: "s1", From: "c1"}, Overwrite, Checkpoint{Tool: ToolUndo}, nil)
	require.NoError(t, err)
	assert.Equal(t, seed["main.go"], read(t, w.root, "main.go"))
	// Undo the overwrite: the user's version comes back.
	_, err = w.Restore(Select{Session: "s1", From: res.Checkpoint.ID}, Stop, Checkpoint{Tool: ToolUndo}, nil)
	require.NoError(t, err)
	assert.Equal(t, "the user's version\n", read(t, w.root, "main.go"))
}

// A pre-image that is not kept is reported as missing, never guessed.
func TestMissingPreimageIsReported(t *testing.T) {
	w := newTestWorkspace(t, map[string]string{"big.dat": strings.Repeat("x", 2048), "small.txt": "v1\n"})
	w.SetLimits(Limits{MaxFileSize: 1024})
	cp := command(t, w, "s1", "echo y >> big.dat && echo v2 > small.txt")
	require.Len(t, cp.Notes, 1)
	assert.Contains(t, cp.Notes[0], "big.dat")
	assert.Contains(t, cp.Notes[0], "cannot be undone")

	plan, err := w.Preview(Select{Session: "s1"})
	require.NoError(t, err)
	byPath := map[string]Step{}
	for _, s := range plan.Steps {
		byPath[s.Path] = s
	}
	assert.Equal(t, ActionMissing, byPath["big.dat"].Action)
	assert.Contains(t, byPath["big.dat"].Reason, "cap")
	assert.Equal(t, ActionRestore, byPath["small.txt"].Action)

	// A damaged blob is missing too.
	require.NoError(t, os.WriteFile(w.store.path(HashOf([]byte("v1\n"))), []byte("agb1 junk"), 0o600))
	plan, err = w.Preview(Select{Session: "s1"})
	require.NoError(t, err)
	for _, s := range plan.Steps {
		assert.Equal(t, ActionMissing, s.Action, s.Path)
	}
	res, err := w.Restore(Select{Session: "s1"}, Stop, Checkpoint{Tool: ToolUndo}, nil)
	require.NoError(t, err)
	assert.True(t, res.Stopped)
	assert.Equal(t, "v2\n", read(t, w.root, "small.txt"))
}

func TestSessionBoundsExpireTheOldest(t *testing.T) {
	w := newTestWorkspace(t, map[string]string{"f.txt": "0\n"})
	w.SetLimits(Limits{SessionCount: 3})
	for i := 1; i <= 5; i++ {
		command(t, w, "s1", "echo "+string(rune('0'+i))+" > f.txt")
	}
	list, err := w.List("s1")
	require.NoError(t, err)
	var ids []string
	for _, cp := range list {
		ids = append(ids, cp.ID)
	}
	assert.Equal(t, []string{"c3", "c4", "c5"}, ids)
	_, err = w.Preview(Select{Session: "s1", From: "c1"})
	assert.True(t, errors.Is(err, ErrExpired), "%v", err)
	_, err = w.Preview(Select{Session: "s1", From: "c9"})
	assert.True(t, errors.Is(err, ErrUnknownCheckpoint), "%v", err)

	// Numbering goes on after the expired ones.
	cp := command(t, w, "s1", "echo 6 > f.txt")
	assert.Equal(t, "c6", cp.ID)
	// Other sessions are not affected.
	other := command(t, w, "s2", "echo 7 > f.txt")
	assert.Equal(t, "c1", other.ID)
}

// TestAllSessionsBoundedTogether: sessions are never deleted, so upkeep
// keeps all their checkpoints together within Sessions and TotalBytes: the
// sessions changed longest ago lose theirs (undoing one says so), the one
// changed last always keeps its own.
func TestAllSessionsBoundedTogether(t *testing.T) {
	w := newTestWorkspace(t, map[string]string{"f.txt": "0\n"})
	w.SetLimits(Limits{Sessions: 2})
	base := time.Now().Add(-time.Hour)
	for i, s := range []string{"old", "mid", "new"} {
		command(t, w, s, "echo "+s+" > f.txt")
		at := base.Add(time.Duration(i) * time.Minute)
		require.NoError(t, os.Chtimes(w.sessionDir(s), at, at))
	}
	require.NoError(t, w.Maintain(t.Context(), nil))
	kept := func() []string {
		var out []string
		for _, s := range []string{"old", "mid", "new"} {
			if list, err := w.List(s); err == nil && len(list) > 0 {
				out = append(out, s)
			}
		}
		return out
	}
	assert.Equal(t, []string{"mid", "new"}, kept(), "two sessions keep checkpoints: the two changed last")
	_, err := w.Preview(Select{Session: "old", From: "c1"})
	assert.Error(t, err, "the dropped session's checkpoint cannot be undone")

	// By bytes: each session names its contents; past the total, the older
	// go, and the newest stays even alone over it.
	w.SetLimits(Limits{TotalBytes: 100 << 10})
	for i, s := range []string{"b1", "b2", "b3"} {
		noise := make([]byte, 64<<10) // incompressible: the store keeps it whole
		_, _ = rand.Read(noise)
		src := filepath.Join(t.TempDir(), s)
		require.NoError(t, os.WriteFile(src, noise, 0o644))
		command(t, w, s, "cat "+src+" > f.txt")
		at := time.Now().Add(time.Duration(i) * time.Minute)
		require.NoError(t, os.Chtimes(w.sessionDir(s), at, at))
	}
	require.NoError(t, w.Maintain(t.Context(), nil))
	for _, s := range []string{"mid", "new", "b1", "b2"} {
		list, err := w.List(s)
		require.NoError(t, err)
		assert.Empty(t, list, "%s is past the total", s)
	}
	list, err := w.List("b3")
	require.NoError(t, err)
	assert.Len(t, list, 1, "the session changed last keeps its own")
}

// The manifest survives a restart: a command after it is compared with the
// workspace as the daemon last saw it, and a damaged manifest is rebuilt.
func TestRestartKeepsTheManifest(t *testing.T) {
	w := newTestWorkspace(t, seed)
	require.NoError(t, w.Warm(t.Context()))
	root, state := w.root, filepath.Dir(w.dir)
	require.NoError(t, w.Close())

	w2, err := Open(root, state)
	require.NoError(t, err)
	t.Cleanup(func() { w2.Close() })
	w2.loadLocked()
	assert.Len(t, w2.man, 12, "the manifest was read back (build/ is ignored)")
	cp := command(t, w2, "s1", "echo changed > docs/keep.md")
	assert.Equal(t, map[string]string{"docs/keep.md": "modified"}, statuses(cp.Changes))
	require.NoError(t, w2.Close())

	require.NoError(t, os.WriteFile(filepath.Join(state, "checkpoints", "manifest"), []byte("garbage"), 0o600))
	w3, err := Open(root, state)
	require.NoError(t, err)
	t.Cleanup(func() { w3.Close() })
	cp = command(t, w3, "s1", "rm gone.txt")
	assert.Equal(t, map[string]string{"gone.txt": "deleted"}, statuses(cp.Changes), "rebuilt from a fresh scan")
	_, err = w3.Restore(Select{Session: "s1", From: "c1"}, Stop, Checkpoint{Tool: ToolUndo}, nil)
	require.NoError(t, err)
	assert.Equal(t, seed["docs/keep.md"], read(t, root, "docs/keep.md"))
	assert.Equal(t, seed["gone.txt"], read(t, root, "gone.txt"))
}

func TestSymlinksAreRecordedNotFollowed(t *testing.T) {
	w := newTestWorkspace(t, map[string]string{"target.txt": "t\n"})
	require.NoError(t, os.Symlink("target.txt", filepath.Join(w.root, "link")))
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o600))
	require.NoError(t, os.Symlink(outside, filepath.Join(w.root, "out")))
	cp := command(t, w, "s1", "rm link && ln -s elsewhere link2 && echo x > out/planted")
	assert.Equal(t, map[string]string{"link": "deleted", "link2": "added"}, statuses(cp.Changes),
		"a link to a directory outside is not walked")
	_, err := w.Restore(Select{Session: "s1"}, Stop, Checkpoint{Tool: ToolUndo}, nil)
	require.NoError(t, err)
	got, err := os.Readlink(filepath.Join(w.root, "link"))
	require.NoError(t, err)
	assert.Equal(t, "target.txt", got)
	_, err = os.Lstat(filepath.Join(w.root, "link2"))
	assert.True(t, os.IsNotExist(err))
}

// Only the named paths are restored; the checkpoint stays not undone.
func TestRestoreSomePaths(t *testing.T) {
	w := newTestWorkspace(t, seed)
	command(t, w, "s1", "echo a > main.go && echo b > docs/keep.md")
	res, err := w.Restore(Select{Session: "s1", Paths: []string{"docs/keep.md"}}, Stop, Checkpoint{Tool: ToolUndo}, nil)
	require.NoError(t, err)
	assert.Equal(t, seed["docs/keep.md"], read(t, w.root, "docs/keep.md"))
	assert.Equal(t, "a\n", read(t, w.root, "main.go"))
	list, err := w.List("s1")
	require.NoError(t, err)
	assert.Empty(t, list[0].UndoneBy)
	assert.Len(t, res.Checkpoint.Changes, 1)
}

// A change made while the command runs counts as the command's; a plan
// approved before a file changed is refused at restore time.
func TestRestoreRefusesAStalePreview(t *testing.T) {
	w := newTestWorkspace(t, seed)
	command(t, w, "s1", "echo a > main.go")
	plan, err := w.Preview(Select{Session: "s1"})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(w.root, "main.go"), []byte("user\n"), 0o644))
	_, err = w.Restore(Select{Session: "s1"}, Stop, Checkpoint{Tool: ToolUndo}, plan)
	assert.True(t, errors.Is(err, ErrChanged), "%v", err)
	assert.Equal(t, "user\n", read(t, w.root, "main.go"))
}

// Between commands the user changes files; the next command's Begin looks
// only at what the watcher reports, and still keeps the user's versions as
// the command's pre-images.
func TestChangesBetweenCommandsArePreimages(t *testing.T) {
	bothWays(t, seed, testChangesBetweenCommands)
}

func testChangesBetweenCommands(t *testing.T, w *Workspace) {
	command(t, w, "s1", "true")
	scans := w.fullScans
	sh(t, w.root, `echo user > main.go && mkdir -p fresh/sub && echo deep > fresh/sub/f.txt &&
		rm docs/keep.md && mv nested moved && chmod 600 go.sum && echo x > build/ignored.txt`)
	cp := command(t, w, "s1", `echo agent > main.go && rm -r fresh/sub && echo agent > moved/deep/a.go && echo again > docs/keep.md`)
	if w.watching {
		assert.Equal(t, scans, w.fullScans, "Begin and End used the watcher")
	} else {
		assert.Equal(t, scans+2, w.fullScans, "without a watcher Begin and End scan everything")
	}
	assert.Equal(t, map[string]string{"main.go": "modified", "fresh/sub": "deleted", "fresh/sub/f.txt": "deleted",
		"moved/deep/a.go": "modified", "docs/keep.md": "added"}, statuses(cp.Changes))
	res, err := w.Restore(Select{Session: "s1", From: cp.ID}, Stop, Checkpoint{Tool: ToolUndo}, nil)
	require.NoError(t, err)
	require.False(t, res.Stopped, "%+v", res.Plan.Steps)
	assert.Equal(t, "user\n", read(t, w.root, "main.go"), "the user's version, not the seed")
	assert.Equal(t, "deep\n", read(t, w.root, "fresh/sub/f.txt"))
	assert.Equal(t, seed["nested/deep/a.go"], read(t, w.root, "moved/deep/a.go"))
	assert.NoFileExists(t, filepath.Join(w.root, "docs/keep.md"))
	fi, err := os.Stat(filepath.Join(w.root, "go.sum"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

// A workspace over the limits gets no command checkpoints, says why, and is
// not scanned again at every command.
func TestTooLargeWorkspace(t *testing.T) {
	w := newTestWorkspace(t, map[string]string{"a.txt": "a", "b.txt": "b", "c/d.txt": "d"})
	w.SetLimits(Limits{MaxFiles: 2})
	tok := w.Begin(t.Context())
	require.Error(t, tok.Err())
	assert.Contains(t, tok.Err().Error(), "more than 2 files and directories")
	scans := w.fullScans
	tok = w.Begin(t.Context())
	require.Error(t, tok.Err())
	assert.Equal(t, scans, w.fullScans, "not scanned again")
	_, _, err := w.End(t.Context(), tok)
	require.Error(t, err)
}

// Undoing one checkpoint alone (Until) leaves the later ones; a path a
// later checkpoint changed again is a conflict.
func TestUndoOneCheckpointAlone(t *testing.T) {
	w := newTestWorkspace(t, map[string]string{"a.txt": "a0\n", "b.txt": "b0\n"})
	command(t, w, "s1", "echo a1 > a.txt && echo b1 > b.txt")
	command(t, w, "s1", "echo b2 > b.txt")
	plan, err := w.Preview(Select{Session: "s1", From: "c1", Until: "c1"})
	require.NoError(t, err)
	assert.Equal(t, []string{"c1"}, plan.Undoes)
	actions := map[string]Action{}
	for _, s := range plan.Steps {
		actions[s.Path] = s.Action
	}
	assert.Equal(t, map[string]Action{"a.txt": ActionRestore, "b.txt": ActionConflict}, actions)
	res, err := w.Restore(Select{Session: "s1", From: "c1", Until: "c1"}, Skip, Checkpoint{Tool: ToolUndo}, nil)
	require.NoError(t, err)
	assert.Equal(t, "a0\n", read(t, w.root, "a.txt"))
	assert.Equal(t, "b2\n", read(t, w.root, "b.txt"), "the later change stays")
	list, err := w.List("s1")
	require.NoError(t, err)
	assert.Empty(t, list[1].UndoneBy)
	assert.NotNil(t, res.Checkpoint)
}

// A state directory inside the workspace is never covered: the store's own
// writes are not a command's changes.
func TestStateDirInsideTheWorkspace(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	writeFiles(t, root, map[string]string{"a.txt": "a\n"})
	w, err := Open(root, filepath.Join(root, ".state"))
	require.NoError(t, err)
	t.Cleanup(func() { w.Close() })
	cp := command(t, w, "s1", "echo b > a.txt")
	assert.Equal(t, map[string]string{"a.txt": "modified"}, statuses(cp.Changes))
	cp = command(t, w, "s1", "true")
	assert.Empty(t, cp.Changes, "the checkpoint files written by the last command are not changes")
}

// A cancelled fill stops, drops nothing, and the next scan completes it.
func TestCancelledFillLosesNothing(t *testing.T) {
	w := newTestWorkspace(t, seed)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	require.ErrorIs(t, w.Warm(ctx), context.Canceled)
	require.NoError(t, w.Warm(t.Context()))
	cp := command(t, w, "s1", "rm gone.txt")
	assert.Equal(t, map[string]string{"gone.txt": "deleted"}, statuses(cp.Changes))
	_, err := w.Restore(Select{Session: "s1"}, Stop, Checkpoint{Tool: ToolUndo}, nil)
	require.NoError(t, err)
	assert.Equal(t, seed["gone.txt"], read(t, w.root, "gone.txt"))
}

// More changes than Begin looks at one by one: a full scan, same result.
func TestManyChangesFallBackToAScan(t *testing.T) {
	old := quickLimit
	quickLimit = 3
	t.Cleanup(func() { quickLimit = old })
	w := newTestWorkspace(t, seed)
	command(t, w, "s1", "true")
	scans := w.fullScans
	sh(t, w.root, "for i in 1 2 3 4 5 6; do echo $i > user$i.txt; done")
	cp := command(t, w, "s1", "for i in 1 2 3 4 5 6; do echo agent >> user$i.txt; done")
	if w.watch != nil {
		assert.Greater(t, w.fullScans, scans, "too many events: scanned")
	}
	require.Len(t, cp.Changes, 6)
	_, err := w.Restore(Select{Session: "s1", From: cp.ID}, Stop, Checkpoint{Tool: ToolUndo}, nil)
	require.NoError(t, err)
	assert.Equal(t, "3\n", read(t, w.root, "user3.txt"), "the user's version before the command")
}

// A directory replaced by a link to .git/hooks is remade when its own
// checkpoint is undone; a checkpoint undone alone that restores a file
// beneath it while it is a link leaves the file alone, in every mode.
func TestRestoreNeverWritesThroughALink(t *testing.T) {
	w := newTestWorkspace(t, map[string]string{"d/hook": "#!/bin/sh\n", "d/keep": "k\n", ".git/hooks/x.sample": "s\n"})
	command(t, w, "s1", "rm -r d && ln -s .git/hooks d")
	_, err := w.Restore(Select{Session: "s1"}, Stop, Checkpoint{Tool: ToolUndo}, nil)
	require.NoError(t, err)
	assert.Equal(t, "#!/bin/sh\n", read(t, w.root, "d/hook"), "the directory is remade, then filled")
	assert.NoFileExists(t, filepath.Join(w.root, ".git", "hooks", "hook"))

	drop := command(t, w, "s2", "rm d/hook")
	require.Equal(t, map[string]string{"d/hook": "deleted"}, statuses(drop.Changes), "a directory the restore remade is covered")
	command(t, w, "s2", "rm -r d && ln -s .git/hooks d")
	for _, on := range []OnConflict{Stop, Skip, Overwrite} {
		res, err := w.Restore(Select{Session: "s2", From: drop.ID, Until: drop.ID}, on, Checkpoint{Tool: ToolUndo}, nil)
		require.NoError(t, err)
		require.Len(t, res.Plan.Steps, 1)
		assert.Equal(t, ActionConflict, res.Plan.Steps[0].Action)
		assert.Contains(t, res.Plan.Steps[0].Reason, "d is no longer a directory (now a link)")
		assert.NoFileExists(t, filepath.Join(w.root, ".git", "hooks", "hook"), on)
	}
}

// A file replaced by a directory in one command: what the directory holds
// is part of the checkpoint (and so of the run's diff the user reviews).
func TestFileBecomesADirectory(t *testing.T) {
	bothWays(t, map[string]string{"f": "file\n", "l/x": "x\n"}, func(t *testing.T, w *Workspace) {
		require.NoError(t, os.Symlink("f", filepath.Join(w.root, "link")))
		cp := command(t, w, "s1", "rm f link && mkdir f link && echo evil > f/x && echo evil > link/y")
		assert.Equal(t, map[string]string{"f": "type", "f/x": "added", "link": "type", "link/y": "added"}, statuses(cp.Changes))
		cp = command(t, w, "s1", "rm f/x")
		assert.Equal(t, map[string]string{"f/x": "deleted"}, statuses(cp.Changes))
	})
}

// A .gitignore that un-ignores .git (a command may write one) does not
// make git directories covered, at the root or nested.
func TestGitDirsAreNeverCovered(t *testing.T) {
	bothWays(t, map[string]string{".gitignore": "!.git/\n!.git\n", ".git/config": "[core]\n", "sub/.git/config": "[core]\n", "a.txt": "a\n"},
		func(t *testing.T, w *Workspace) {
			cp := command(t, w, "s1", "echo x >> .git/config && echo x >> sub/.git/config && echo y > .git/new && echo b > a.txt")
			assert.Equal(t, map[string]string{"a.txt": "modified"}, statuses(cp.Changes))
		})
}
