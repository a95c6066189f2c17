package rag

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/await"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLiveIndexRunsInTheBackground(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "cart.go"),
		[]byte("package cart\n\n// Total sums the prices in the cart.\nfunc Total(p []int) int { return 0 }\n"), 0o644))
	var begun, ended atomic.Bool
	l := StartLive(Options{Root: root, StateDir: t.TempDir()}, Progress{
		Begin: func() { begun.Store(true) },
		End:   func(Status, error) { ended.Store(true) },
	})
	defer l.Close()
	deadline := time.Now().Add(await.Timeout(10 * time.Second))
	for !ended.Load() {
		require.True(t, time.Now().Before(deadline), "the build never ended: %+v", l.Status())
		time.Sleep(5 * time.Millisecond)
	}
	assert.True(t, begun.Load())
	assert.Equal(t, StateReady, l.Status().State)
	hits, partial, err := l.Search(context.Background(), "sum the prices", 5)
	require.NoError(t, err)
	assert.False(t, partial)
	require.NotEmpty(t, hits)
	assert.Equal(t, "cart.go", hits[0].Path)
	require.NoError(t, l.Close())
}

func TestLiveIndexThatCannotOpen(t *testing.T) {
	l := StartLive(Options{Root: filepath.Join(t.TempDir(), "missing"), StateDir: t.TempDir()}, Progress{})
	defer l.Close()
	deadline := time.Now().Add(await.Timeout(5 * time.Second))
	for l.Err() == nil && l.Status().State != StateReady {
		require.True(t, time.Now().Before(deadline))
		time.Sleep(5 * time.Millisecond)
	}
	if l.Err() != nil {
		assert.Equal(t, "failed", l.Status().State)
		_, _, err := l.Search(context.Background(), "x", 1)
		assert.Error(t, err)
	}
}
