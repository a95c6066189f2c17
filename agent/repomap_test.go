package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRepoMapRankedSourceFirst(t *testing.T) {
	if _, err := exec.LookPath("ctags"); err != nil {
		t.Skip("universal-ctags is not installed")
	}
	root := t.TempDir()
	files := map[string]string{
		"store/store.go":      "package store\n\n// Store keeps items.\ntype Store struct{}\n\n// OpenStore opens one.\nfunc OpenStore() *Store { return nil }\n\nfunc (s *Store) SaveItem() {}\n",
		"zz/lonely.go":        "package zz\n\nfunc LonelyHelper() {}\n",
		"store/store_test.go": "package store\n\nimport \"testing\"\n\nfunc TestOpen(t *testing.T) { OpenStore() }\n\nfunc BenchmarkSave(b *testing.B) {}\n\nfunc newFixture() *Store { return OpenStore() }\n",
	}
	for i := 0; i < 3; i++ { // three users of store, none of zz
		files[fmt.Sprintf("cmd/c%d/main.go", i)] = "package main\n\nimport \"x/store\"\n\nfunc main() { store.OpenStore().SaveItem() }\n"
	}
	writeTree(t, root, files)
	a := &Agent{cfg: Config{Root: root}, log: slog.New(slog.DiscardHandler)}
	m := a.repoMapFor(context.Background(), repoMapCap)
	lines := strings.Split(strings.TrimSpace(m), "\n")
	require.GreaterOrEqual(t, len(lines), 5, m)
	assert.Equal(t, "store/store.go: Store, OpenStore, Store.SaveItem", lines[1], "the most used file first, its types first")
	assert.Equal(t, "store/store_test.go: newFixture", lines[len(lines)-1], "tests last, without their Test and Benchmark functions")
	assert.NotContains(t, m, "TestOpen")
	assert.NotContains(t, m, "BenchmarkSave")
	assert.Less(t, strings.Index(m, "cmd/c0/main.go"), strings.Index(m, "zz/lonely.go"))

	small := a.repoMapFor(context.Background(), 300)
	assert.LessOrEqual(t, len(small), 300)
	assert.Contains(t, small, "store/store.go")
	assert.Regexp(t, `\[… and \d+ source files? and 1 test file not shown; list_dir, glob_file_search and grep find them\]\n$`, small)
}

// fakeCtags puts a ctags on PATH that records its pid and hangs, and
// returns the file the pid goes to.
func fakeCtags(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "ctags.pid")
	script := "#!/bin/sh\necho $$ > " + pidFile + ".tmp && mv " + pidFile + ".tmp " + pidFile + "\nexec sleep 60\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ctags"), []byte(script), 0o755))
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return pidFile
}

// awaitGone waits until the process of the pid in pidFile no longer exists.
func awaitGone(t *testing.T, pidFile string) {
	t.Helper()
	data, err := os.ReadFile(pidFile)
	require.NoError(t, err, "ctags was never started")
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	require.NoError(t, err)
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("ctags (pid %d) is still running", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRepoMapAbandonedInTime: a map not ready when the first request is
// due is given up, its ctags killed, and not tried again.
func TestRepoMapAbandonedInTime(t *testing.T) {
	pidFile := fakeCtags(t)
	old := repoMapWait
	repoMapWait = 300 * time.Millisecond
	t.Cleanup(func() { repoMapWait = old })
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.go": "package a\n\nfunc A() {}\n"})
	a := &Agent{cfg: Config{Root: root}, log: slog.New(slog.DiscardHandler)}
	start := time.Now()
	assert.Empty(t, a.repoMapFor(context.Background(), repoMapCap))
	assert.Less(t, time.Since(start), 5*time.Second)
	awaitGone(t, pidFile)
	require.NoError(t, os.Remove(pidFile))
	assert.Empty(t, a.repoMapFor(context.Background(), repoMapCap))
	assert.NoFileExists(t, pidFile, "no second build")
}

// TestRepoMapStoppedWithTheAgent: Shutdown kills a build under way.
func TestRepoMapStoppedWithTheAgent(t *testing.T) {
	pidFile := fakeCtags(t)
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.go": "package a\n\nfunc A() {}\n"})
	a, err := New(Config{Root: root, StateDir: t.TempDir()})
	require.NoError(t, err)
	b := a.rmap.start(root, a.log.Warn)
	require.NotNil(t, b)
	deadline := time.Now().Add(10 * time.Second)
	for _, err := os.Stat(pidFile); err != nil; _, err = os.Stat(pidFile) {
		require.True(t, time.Now().Before(deadline), "ctags never started")
		time.Sleep(20 * time.Millisecond)
	}
	a.Shutdown()
	awaitGone(t, pidFile)
}
