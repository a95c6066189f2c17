package lsp

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/internal/await"
	"github.com/agentd/agentd/tools"
	"github.com/agentd/agentd/tools/lsp/lsptest"
)

// Servers that are missing, crash or hang cost a request its own bound
// and no more, and say what happened.

// script writes an executable shell script outside the workspace.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "server.sh")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	return p
}

func managerWith(t *testing.T, root string, goCommand ...string) *Manager {
	t.Helper()
	m := New(Config{Root: root, Settings: Settings{Auto: true, Servers: map[string]ServerSetting{"go": {Command: goCommand}}},
		CacheDir: t.TempDir()})
	t.Cleanup(m.Close)
	return m
}

func TestMissingServer(t *testing.T) {
	root := workspace(t, goFiles)
	m := managerWith(t, root, "no-such-gopls")
	assert.False(t, m.Navigates(), "nothing installed for the workspace's languages")
	got, err := m.Diagnostics(context.Background(), []string{filepath.Join(root, "main.go"), filepath.Join(root, "README.md")}, true)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.ErrorIs(t, got[0].Err, tools.ErrNoLanguageServer)
	assert.Contains(t, got[0].Err.Error(), "no-such-gopls is not installed")
	assert.ErrorIs(t, got[1].Err, tools.ErrNoLanguageServer)
	_, err = m.Definition(context.Background(), tools.TextPosition{Path: filepath.Join(root, "main.go")})
	assert.ErrorIs(t, err, tools.ErrNoLanguageServer)

	off := New(Config{Root: root, Settings: Settings{Auto: true, Servers: map[string]ServerSetting{"go": {Disabled: true}}}})
	defer off.Close()
	got, _ = off.Diagnostics(context.Background(), []string{filepath.Join(root, "main.go")}, true)
	assert.ErrorIs(t, got[0].Err, tools.ErrNoLanguageServer)
	assert.Contains(t, got[0].Err.Error(), "off (languageServers)")
}

func TestCrashingServer(t *testing.T) {
	root := workspace(t, goFiles)
	m := managerWith(t, root, script(t, `echo "boom: cannot start" >&2; exit 3`))
	main := filepath.Join(root, "main.go")
	for i := range maxFailures {
		start := time.Now()
		got, err := m.Diagnostics(await.Context(t, 30*time.Second), []string{main}, true)
		require.NoError(t, err)
		require.Error(t, got[0].Err, "attempt %d", i+1)
		assert.Contains(t, got[0].Err.Error(), "exited with status 3: boom: cannot start")
		assert.Less(t, time.Since(start), await.Timeout(5*time.Second), "a crash is noticed, not waited out")
	}
	got, _ := m.Diagnostics(context.Background(), []string{main}, true)
	require.Error(t, got[0].Err)
	assert.Contains(t, got[0].Err.Error(), "failed 3 times in the last 5m0s, so it is not started again for now")
}

func TestHangingServer(t *testing.T) {
	root := workspace(t, goFiles)
	m := managerWith(t, root, script(t, `exec sleep 600`))
	main := filepath.Join(root, "main.go")
	const limit = 700 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	start := time.Now()
	got, err := m.Diagnostics(ctx, []string{main}, true)
	cancel()
	took := time.Since(start)
	require.NoError(t, err)
	assert.True(t, got[0].Pending, "a server that never answers is still starting")
	assert.Less(t, took, limit+await.Timeout(time.Second), "the limit bounds the wait")

	ctx, cancel = context.WithTimeout(context.Background(), limit)
	_, err = m.Definition(ctx, tools.TextPosition{Path: main, Line: 3, Character: 8})
	cancel()
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "server.sh is still starting")

	done := make(chan struct{})
	go func() { m.Close(); close(done) }()
	await.Until(t, "closing the manager while its server hangs", 10*time.Second, func() bool { return isClosed(done) })
}

func TestIdleServerStops(t *testing.T) {
	root := workspace(t, goFiles)
	servers := lsptest.Install(t)
	t.Setenv("PATH", servers.PATH(os.Getenv("PATH")))
	m := New(Config{Root: root, Settings: Settings{Auto: true}, CacheDir: t.TempDir(), Idle: 300 * time.Millisecond})
	t.Cleanup(m.Close)
	main := filepath.Join(root, "main.go")
	diagnose(t, m, main)
	m.mu.Lock()
	first := m.servers["go"].srv
	m.mu.Unlock()
	require.NotNil(t, first)
	await.Until(t, "the idle server to be stopped", 10*time.Second, func() bool { return isClosed(first.exited) })
	fd := diagnose(t, m, main) // started again when needed
	assert.NoError(t, fd.Err)
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
