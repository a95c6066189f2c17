package rag

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDeltaAnswersLikeAFullBuild changes, adds and deletes files after the
// snapshot was written: Update leaves the snapshot alone and writes a
// small delta, and the view over both answers exactly as an index built
// afresh on the new tree; the daemon's Open reads the delta too, and its
// next save folds it in.
func TestDeltaAnswersLikeAFullBuild(t *testing.T) {
	ctx := context.Background()
	root, state := t.TempDir(), t.TempDir()
	tree := map[string]string{
		"cart/cart.go":  "package cart\n\n// Total sums the prices in the cart.\nfunc Total(p []int) int { return 0 }\n\n// Print shows the cart.\nfunc Print() {}\n",
		"cart/tax.go":   "package cart\n\n// Tax adds the sales tax to a price.\nfunc Tax(p int) int { return p }\n",
		"store/save.go": "package store\n\n// Save persists sessions to disk as JSON.\nfunc Save(s Session) error { return nil }\n",
		"README.md":     "# Shop\n\nThe cart total and the sessions store.\n",
	}
	writeTree(t, root, tree)
	ix := openBuilt(t, root, state)
	require.NoError(t, ix.Close())
	snap := filepath.Join(state, "index.snapshot")
	before, err := os.Stat(snap)
	require.NoError(t, err)

	time.Sleep(10 * time.Millisecond)
	writeTree(t, root, map[string]string{
		"cart/cart.go":     "package cart\n\n// Total sums the discounted prices in the cart.\nfunc Total(p []int) int { return 0 }\n\n// Discount takes a coupon off.\nfunc Discount(c Coupon) {}\n",
		"store/session.go": "package store\n\n// Session is a shopper's visit, kept across restarts.\ntype Session struct{ ID string }\n",
	})
	require.NoError(t, os.Remove(filepath.Join(root, "cart/tax.go")))

	v, err := OpenView(root, state)
	require.NoError(t, err)
	defer v.Close()
	assert.False(t, v.Fresh(ctx))
	require.NoError(t, v.Update(ctx))
	assert.True(t, v.Fresh(ctx), "fresh after the update")
	after, err := os.Stat(snap)
	require.NoError(t, err)
	assert.Equal(t, before.ModTime(), after.ModTime(), "the snapshot is not rewritten")
	_, err = os.Stat(deltaPathIn(state))
	require.NoError(t, err, "a delta is written")

	fresh := openBuilt(t, root, t.TempDir())
	queries := []string{"cart total discount", "sales tax price", "session kept across restarts", "coupon", "sessions persisted", "shop README"}
	for _, q := range queries {
		want, _, err := fresh.Search(ctx, q, 10)
		require.NoError(t, err)
		got, err := v.Search(ctx, q, 10)
		require.NoError(t, err)
		assert.Equal(t, want, got, q)
	}

	// A second change extends the same delta.
	time.Sleep(10 * time.Millisecond)
	writeTree(t, root, map[string]string{"cart/tax.go": "package cart\n\n// Tax adds the sales tax again.\nfunc Tax(p int) int { return p }\n"})
	require.NoError(t, v.Update(ctx))
	assert.True(t, v.Fresh(ctx))
	fresh2 := openBuilt(t, root, t.TempDir())
	for _, q := range append(queries, "sales tax again") {
		want, _, _ := fresh2.Search(ctx, q, 10)
		got, err := v.Search(ctx, q, 10)
		require.NoError(t, err)
		assert.Equal(t, want, got, q)
	}

	// The daemon opens base and delta; its Build finds nothing to read; its
	// next full save folds the delta in.
	ix2, err := Open(ctx, Options{Root: root, StateDir: state})
	require.NoError(t, err)
	for _, q := range queries {
		want, _, _ := fresh2.Search(ctx, q, 10)
		got, _, err := ix2.Search(ctx, q, 10)
		require.NoError(t, err)
		assert.Equal(t, want, got, q)
	}
	require.NoError(t, ix2.Build(ctx, nil))
	assert.Equal(t, 0, ix2.lastRead, "the delta's files are known")
	ix2.mu.Lock()
	ix2.dirty = true
	ix2.mu.Unlock()
	require.NoError(t, ix2.Close())
	_, err = os.Stat(deltaPathIn(state))
	assert.True(t, os.IsNotExist(err), "a full save removes the delta")

	// A new directory needs a walk.
	v2, err := OpenView(root, state)
	require.NoError(t, err)
	defer v2.Close()
	writeTree(t, root, map[string]string{"pay/pay.go": "package pay\n"})
	assert.ErrorIs(t, v2.Update(ctx), ErrTooManyChanges)
}
