package agent

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/internal/await"
	"github.com/agentd/agentd/internal/proctest"
	"github.com/agentd/agentd/tools"
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
	a := &Agent{cfg: Config{Root: root}, log: slog.New(slog.DiscardHandler), sandbox: tools.DefaultSandbox()}
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

// fakeCtags puts a ctags on PATH that hangs, and returns the script's path
// (in the command line of the process running it, which the test sees: it
// runs in the kernel sandbox's read profile, with nowhere outside it can
// write).
func fakeCtags(t *testing.T) (script string) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	script = filepath.Join(dir, "ctags")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\nsleep 60\n"), 0o755))
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return script
}

// awaitStarted waits until a process runs script.
func awaitStarted(t *testing.T, script string) {
	t.Helper()
	dl := await.NewDeadline(10 * time.Second)
	for len(proctest.Running(script)) == 0 {
		if dl.Passed() {
			t.Fatalf("ctags never started (waited %s)", dl)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRepoMapAbandonedInTime: a map not ready when the first request is
// due is given up, its ctags killed, and not tried again.
func TestRepoMapAbandonedInTime(t *testing.T) {
	script := fakeCtags(t)
	old := repoMapWait
	// Long enough for ctags to start in the sandbox (the test sees it run),
	// short beside ctags' minute.
	repoMapWait = await.Timeout(2 * time.Second)
	t.Cleanup(func() { repoMapWait = old })
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.go": "package a\n\nfunc A() {}\n"})
	a := &Agent{cfg: Config{Root: root}, log: slog.New(slog.DiscardHandler), sandbox: tools.DefaultSandbox()}
	start := time.Now()
	got := make(chan string, 1)
	go func() { got <- a.repoMapFor(context.Background(), repoMapCap) }()
	awaitStarted(t, script)
	assert.Empty(t, await.Recv(t, "the map to be given up", repoMapWait+10*time.Second, got))
	assert.Less(t, time.Since(start), repoMapWait+await.Timeout(5*time.Second), "given up at the wait, not at ctags' end")
	proctest.AwaitGone(t, script, 10*time.Second, "ctags", "is still running")
	assert.Empty(t, a.repoMapFor(context.Background(), repoMapCap))
	a.rmap.mu.Lock()
	again := a.rmap.build
	a.rmap.mu.Unlock()
	assert.Nil(t, again, "no second build")
}

// TestRepoMapStoppedWithTheAgent: Shutdown kills a build under way.
func TestRepoMapStoppedWithTheAgent(t *testing.T) {
	script := fakeCtags(t)
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.go": "package a\n\nfunc A() {}\n"})
	a, err := New(Config{Root: root, StateDir: t.TempDir()})
	require.NoError(t, err)
	b := a.rmap.start(a.sandbox, root, a.log.Warn)
	require.NotNil(t, b)
	awaitStarted(t, script)
	a.Shutdown()
	proctest.AwaitGone(t, script, 10*time.Second, "ctags", "is still running")
}
