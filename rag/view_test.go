package rag

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestViewAnswersLikeTheIndex(t *testing.T) {
	ctx := context.Background()
	root, state := t.TempDir(), t.TempDir()
	writeTree(t, root, map[string]string{
		"cart/cart.go":      "package cart\n\nimport \"fmt\"\n\n// Total sums the prices in the cart.\nfunc Total(p []int) int { return 0 }\n\n// Print shows the cart.\nfunc Print() { fmt.Println(Total(nil)) }\n",
		"cart/cart_test.go": "package cart\n\n// TestTotal checks the cart total.\nfunc TestTotal(t *testing.T) {}\n",
		"store/save.go":     "package store\n\n// Save persists sessions to disk as JSON.\nfunc Save(s Session) error { return nil }\n",
		"README.md":         "# Shop\n\nThe cart total and the sessions store.\n",
	})
	ix := openBuilt(t, root, state)
	v, err := OpenView(root, state)
	require.NoError(t, err)
	defer v.Close()
	assert.True(t, v.Fresh(ctx))
	assert.Equal(t, ix.Status().Chunks, v.Status().Chunks)
	for _, q := range []string{"cart total", "where are sessions persisted", "Total", "TestTotal", "shop README", "nothing like this"} {
		want, _, err := ix.Search(ctx, q, 10)
		require.NoError(t, err)
		got, err := v.Search(ctx, q, 10)
		require.NoError(t, err)
		assert.Equal(t, want, got, q)
	}

	// Any change makes the view stale: an edit (size or mtime), a new file.
	time.Sleep(10 * time.Millisecond)
	writeTree(t, root, map[string]string{"cart/cart.go": "package cart\n"})
	assert.False(t, v.Fresh(ctx))
	require.NoError(t, ix.Build(ctx, nil))
	v2, err := OpenView(root, state)
	require.NoError(t, err)
	defer v2.Close()
	assert.True(t, v2.Fresh(ctx))
	writeTree(t, root, map[string]string{"store/new.go": "package store\n"})
	assert.False(t, v2.Fresh(ctx))

	// No snapshot, another workspace's, or a corrupt one: ErrNoSnapshot.
	_, err = OpenView(root, t.TempDir())
	assert.True(t, errors.Is(err, ErrNoSnapshot), "%v", err)
	_, err = OpenView(t.TempDir(), state)
	assert.True(t, errors.Is(err, ErrNoSnapshot), "%v", err)
	snap := filepath.Join(state, "index.snapshot")
	data, err := os.ReadFile(snap)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(snap, data[:len(data)/2], 0o644))
	_, err = OpenView(root, state)
	assert.True(t, errors.Is(err, ErrNoSnapshot), "%v", err)
}
