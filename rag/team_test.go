package rag

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/await"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startTeam searches root's repository in st, waiting for the overlay's
// first build.
func startTeam(t *testing.T, st Store, root string, opts TeamOptions) *Team {
	t.Helper()
	opts.Store, opts.Root = st, root
	if opts.StateDir == "" {
		opts.StateDir = t.TempDir()
	}
	built := make(chan struct{}, 1)
	tm := StartTeam(opts, Progress{End: func(Status, error) { built <- struct{}{} }})
	t.Cleanup(func() { tm.Close() })
	await.Recv(t, "the first build", 10*time.Second, built)
	return tm
}

func teamSearch(t *testing.T, tm *Team, q string) []SearchHit {
	t.Helper()
	hits, partial, err := tm.Search(context.Background(), q, 10)
	require.NoError(t, err)
	assert.False(t, partial, q)
	return hits
}

// sameAsEmbedded checks every query against a fresh embedded index of the
// files on disk.
func sameAsEmbedded(t *testing.T, tm *Team, root string, queries ...string) {
	t.Helper()
	for _, q := range append(queries, shopQueries...) {
		assert.Equal(t, rankedOnly(indexHits(t, root, q)), rankedOnly(teamSearch(t, tm, q)), q)
	}
}

// rankedOnly is an answer without its files' scores and labels: the
// files, their chunks and what they match, in order. A file's score also
// holds the editor's context (a file changed in the last minutes), which a
// fresh index has not seen.
func rankedOnly(hits []SearchHit) []SearchHit {
	out := slices.Clone(hits)
	for i := range out {
		out[i].Score, out[i].Match = 0, ""
	}
	return out
}

func TestTeamOverlaysTheWorkspace(t *testing.T) {
	ctx := context.Background()
	root := gitRepo(t, shopTree)
	st := newMemStore()
	_, err := Publish(ctx, st, PublishOptions{Root: root})
	require.NoError(t, err)

	// Unsaved to git: an edit, a new file, a deletion.
	writeTree(t, root, map[string]string{
		"store/save.go":      "package store\n\n// Save writes sessions to a database table.\nfunc Save() {}\n",
		"billing/invoice.go": "package billing\n\n// Invoice bills the cart total.\nfunc Invoice() {}\n",
	})
	require.NoError(t, os.Remove(filepath.Join(root, "store/load.go")))
	tm := startTeam(t, st, root, TeamOptions{})
	status := tm.Status()
	require.NotNil(t, status.Team)
	assert.Equal(t, "example.com/acme/shop", status.Team.Repo)
	assert.Empty(t, status.Team.Notice)
	assert.Equal(t, 2, status.Team.LocalFiles, "the edited and the new file")
	sameAsEmbedded(t, tm, root, "invoice billing", "sessions database table", "load sessions")
	hits := teamSearch(t, tm, "invoice billing")
	require.NotEmpty(t, hits)
	assert.Equal(t, "billing/invoice.go", hits[0].Path)
	assert.Empty(t, hits[0].Repo, "the workspace's own repository")

	// An edit while it runs (the watcher).
	writeTree(t, root, map[string]string{"cart/cart.go": "package cart\n\n// Total adds the prices with the discount.\nfunc Total() int { return 1 }\n"})
	waitFor(t, func() bool {
		hits, _, _ := tm.Search(ctx, "discount prices", 10)
		return len(hits) > 0 && hits[0].Path == "cart/cart.go"
	})
	sameAsEmbedded(t, tm, root, "discount prices")
}

func TestTeamWithoutGit(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	writeTree(t, root, shopTree)
	st := newMemStore()
	_, err := Publish(ctx, st, PublishOptions{Root: root, Repo: "shop", Commit: "v1"})
	require.NoError(t, err)
	writeTree(t, root, map[string]string{"billing/invoice.go": "package billing\n\n// Invoice bills the cart total.\nfunc Invoice() {}\n"})
	require.NoError(t, os.Remove(filepath.Join(root, "store/load.go")))
	tm := startTeam(t, st, root, TeamOptions{Repo: "shop"})
	assert.Equal(t, 1, tm.Status().Team.LocalFiles)
	sameAsEmbedded(t, tm, root, "invoice billing", "load sessions")
}

func TestTeamFollowsANewPublishedCommit(t *testing.T) {
	ctx := context.Background()
	ci := gitRepo(t, shopTree)
	st := newMemStore()
	_, err := Publish(ctx, st, PublishOptions{Root: ci, Repo: "shop"})
	require.NoError(t, err)
	dev := filepath.Join(t.TempDir(), "dev")
	run(t, ci, "git", "clone", "-q", ci, dev)
	tm := startTeam(t, st, dev, TeamOptions{Repo: "shop"})
	sameAsEmbedded(t, tm, dev)
	assert.Equal(t, 0, tm.Status().Team.LocalFiles)

	// CI publishes a commit the developer has not pulled: the
	// developer's files differ from it, and answer for themselves.
	writeTree(t, ci, map[string]string{
		"cart/cart.go":       "package cart\n\n// Total adds the prices with the discount.\nfunc Total() int { return 1 }\n",
		"billing/invoice.go": "package billing\n\n// Invoice bills the cart total.\nfunc Invoice() {}\n",
	})
	commitAll(t, ci, "second")
	_, err = Publish(ctx, st, PublishOptions{Root: ci, Repo: "shop"})
	require.NoError(t, err)
	tm.Search(ctx, "discount", 10) // sees the new head
	waitFor(t, func() bool {
		hits, partial, _ := tm.Search(ctx, "cart total prices", 10)
		return !partial && len(hits) > 0 && tm.Status().Team.LocalFiles == 1
	})
	sameAsEmbedded(t, tm, dev, "discount prices", "invoice billing")
	// The developer changed nothing: the files the new commit moved are not
	// ranked as recently changed.
	ix, err := tm.overlay.get()
	require.NoError(t, err)
	ix.mu.RLock()
	assert.Empty(t, ix.recent)
	ix.mu.RUnlock()
	commit := tm.Status().Team.Commit
	assert.Equal(t, strings.TrimSpace(run(t, ci, "git", "rev-parse", "HEAD")), commit)
}

func TestTeamStoreDownMidSession(t *testing.T) {
	ctx := context.Background()
	root := gitRepo(t, shopTree)
	st := newMemStore()
	_, err := Publish(ctx, st, PublishOptions{Root: root})
	require.NoError(t, err)
	writeTree(t, root, map[string]string{"billing/invoice.go": "package billing\n\n// Invoice bills the cart total.\nfunc Invoice() {}\n"})
	tm := startTeam(t, st, root, TeamOptions{Retry: 50 * time.Millisecond})
	sameAsEmbedded(t, tm, root, "invoice billing")

	st.mu.Lock()
	st.down = true
	st.mu.Unlock()
	// The local index answers (once built), and says why.
	waitFor(t, func() bool {
		_, partial, err := tm.Search(ctx, "cart total", 10)
		return err == nil && !partial
	})
	status := tm.Status()
	assert.Contains(t, status.Team.Notice, "unreachable")
	sameAsEmbedded(t, tm, root, "invoice billing")

	st.mu.Lock()
	st.down = false
	n := st.fetchN
	st.mu.Unlock()
	waitFor(t, func() bool {
		tm.Search(ctx, "cart total", 10)
		return tm.Status().Team.Notice == ""
	})
	sameAsEmbedded(t, tm, root, "invoice billing")
	st.mu.Lock()
	assert.Greater(t, st.fetchN, n, "the team index answers again")
	st.mu.Unlock()
}

func TestTeamNotPublished(t *testing.T) {
	root := gitRepo(t, shopTree)
	tm := startTeam(t, newMemStore(), root, TeamOptions{})
	assert.Contains(t, tm.Status().Team.Notice, "not in the team index")
	sameAsEmbedded(t, tm, root)
}
