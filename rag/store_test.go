package rag

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var shopTree = map[string]string{
	"cart/cart.go":      "package cart\n\nimport \"fmt\"\n\n// Total sums the prices in the cart.\nfunc Total(p []int) int { return 0 }\n\n// Print shows the cart.\nfunc Print() { fmt.Println(Total(nil)) }\n",
	"cart/cart_test.go": "package cart\n\n// TestTotal checks the cart total.\nfunc TestTotal(t *testing.T) {}\n",
	"store/save.go":     "package store\n\n// Save persists sessions to disk as JSON.\nfunc Save(s Session) error { return nil }\n",
	"store/load.go":     "package store\n\n// Load reads the sessions saved on disk.\nfunc Load() ([]Session, error) { return nil, nil }\n",
	"README.md":         "# Shop\n\nThe cart total and the sessions store.\n",
}

var shopQueries = []string{"cart total", "where are sessions persisted", "Total", "TestTotal", "shop README",
	"load sessions from disk", "print the cart", "nothing like this"}

// indexHits is what a fresh embedded index of root answers.
func indexHits(t *testing.T, root, q string) []SearchHit {
	t.Helper()
	ix, err := Open(context.Background(), Options{Root: root, StateDir: t.TempDir()})
	require.NoError(t, err)
	defer ix.Close()
	require.NoError(t, ix.Build(context.Background(), nil))
	hits, _, err := ix.Search(context.Background(), q, 10)
	require.NoError(t, err)
	return hits
}

func withoutRepo(hits []SearchHit) []SearchHit {
	out := make([]SearchHit, len(hits))
	for i, h := range hits {
		h.Repo = ""
		out[i] = h
	}
	return out
}

func TestSnapshotStoreAnswersLikeTheView(t *testing.T) {
	ctx := context.Background()
	root, state := t.TempDir(), t.TempDir()
	writeTree(t, root, shopTree)
	openBuilt(t, root, state)
	v, err := OpenView(root, state)
	require.NoError(t, err)
	defer v.Close()
	s := NewStoreSearcher(NewSnapshotStore(v, "shop"))
	for _, q := range shopQueries {
		want, err := v.Search(ctx, q, 10)
		require.NoError(t, err)
		got, err := s.Search(ctx, nil, q, 10)
		require.NoError(t, err)
		assert.Equal(t, want, withoutRepo(got), q)
		for _, h := range got {
			assert.Equal(t, "shop", h.Repo)
		}
	}
	none, err := s.Search(ctx, []string{"other"}, "cart total", 10)
	require.NoError(t, err)
	assert.Empty(t, none)
}

// TestSnapshotStoreMatchesView: the store path ranks exactly as the view,
// on every query of the commit sets.
func TestSnapshotStoreMatchesView(t *testing.T) {
	ctx := context.Background()
	for _, c := range loadCommitCorpora(t) {
		v, err := OpenView(c.root, c.state)
		require.NoError(t, err)
		s := NewStoreSearcher(NewSnapshotStore(v, c.name))
		for _, q := range c.queries {
			want, err := v.Search(ctx, q.Query, 10)
			require.NoError(t, err)
			got, err := s.Search(ctx, nil, q.Query, 10)
			require.NoError(t, err)
			if !assert.Equal(t, want, withoutRepo(got), q.Query) {
				break
			}
		}
		v.Close()
	}
}

// gitRepo makes a repository of files, committed.
func gitRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	run(t, root, "git", "init", "-q", "-b", "main")
	run(t, root, "git", "remote", "add", "origin", "https://user:secret@example.com/acme/shop.git")
	writeTree(t, root, files)
	commitAll(t, root, "first")
	return root
}

func commitAll(t *testing.T, root, msg string) {
	t.Helper()
	run(t, root, "git", "add", "-A")
	run(t, root, "git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", msg)
}

func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %s: %s", name, strings.Join(args, " "), out)
	return string(out)
}

func TestRepoName(t *testing.T) {
	for raw, want := range map[string]string{
		"https://github.com/acme/api.git":            "github.com/acme/api",
		"https://user:token@GitHub.com:443/acme/api": "github.com/acme/api",
		"git@github.com:acme/api.git":                "github.com/acme/api",
		"ssh://git@git.example.com:2222/team/api":    "git.example.com/team/api",
		"/srv/git/api.git":                           "api",
	} {
		assert.Equal(t, want, remoteName(raw), raw)
	}
	root := gitRepo(t, shopTree)
	assert.Equal(t, "example.com/acme/shop", RepoName(context.Background(), root))
	run(t, root, "git", "remote", "add", "upstream", "git@example.com:upstream/shop.git")
	assert.Equal(t, "example.com/upstream/shop", RepoName(context.Background(), root))
	plain := filepath.Join(t.TempDir(), "plain")
	require.NoError(t, os.Mkdir(plain, 0o755))
	assert.Equal(t, "plain", RepoName(context.Background(), plain))
}

func TestPublishAndRepublish(t *testing.T) {
	ctx := context.Background()
	root := gitRepo(t, shopTree)
	st := newMemStore()
	res, err := Publish(ctx, st, PublishOptions{Root: root})
	require.NoError(t, err)
	assert.Equal(t, "example.com/acme/shop", res.Repo)
	assert.False(t, res.Incremental)
	assert.Equal(t, len(shopTree), res.Files)
	assert.Equal(t, res.Chunks, res.Live)
	s := NewStoreSearcher(st)
	check := func() {
		t.Helper()
		for _, q := range shopQueries {
			got, err := s.Search(ctx, nil, q, 10)
			require.NoError(t, err)
			assert.Equal(t, indexHits(t, root, q), withoutRepo(got), q)
		}
	}
	check()

	// The same commit again: nothing written.
	again, err := Publish(ctx, st, PublishOptions{Root: root})
	require.NoError(t, err)
	assert.True(t, again.Unchanged)

	// A dirty tree is refused.
	writeTree(t, root, map[string]string{"store/save.go": "package store\n\n// Save writes sessions to a database.\nfunc Save() {}\n"})
	_, err = Publish(ctx, st, PublishOptions{Root: root})
	require.ErrorContains(t, err, "store/save.go")

	// A commit: an edit, a new file, a deletion. Only those are read.
	writeTree(t, root, map[string]string{"billing/invoice.go": "package billing\n\n// Invoice totals a cart for billing.\nfunc Invoice() {}\n"})
	require.NoError(t, os.Remove(filepath.Join(root, "store/load.go")))
	commitAll(t, root, "second")
	res, err = Publish(ctx, st, PublishOptions{Root: root})
	require.NoError(t, err)
	assert.True(t, res.Incremental)
	assert.Equal(t, 2, res.Files, "the edited and the new file")
	assert.Equal(t, 2, res.Retired, "the edited and the deleted file")
	assert.Equal(t, 2, res.Segments)
	check()

	// Many commits: the segments stay few, the answers right.
	for i := range 12 {
		writeTree(t, root, map[string]string{fmt.Sprintf("notes/n%d.go", i%3): fmt.Sprintf("package notes\n\n// Note%d keeps note number %d about sessions.\nfunc Note%d() {}\n", i, i, i)})
		commitAll(t, root, fmt.Sprint("note ", i))
		res, err = Publish(ctx, st, PublishOptions{Root: root})
		require.NoError(t, err)
		assert.LessOrEqual(t, res.Segments, maxParts)
	}
	check()
	assert.LessOrEqual(t, st.segCount(), maxParts, "retired segments are dropped")

	// Without the previous commit in the repository (a shallow clone), the
	// changes are found by content.
	prev := res.Commit
	writeTree(t, root, map[string]string{"cart/cart.go": "package cart\n\n// Total adds up the cart, with discounts.\nfunc Total() int { return 1 }\n"})
	commitAll(t, root, "third")
	st.mu.Lock()
	h := st.heads[res.Repo]
	h.Commit = "0000000000000000000000000000000000000000"
	st.heads[res.Repo] = h
	st.mu.Unlock()
	res, err = Publish(ctx, st, PublishOptions{Root: root})
	require.NoError(t, err)
	assert.True(t, res.Incremental)
	assert.Equal(t, 1, res.Files)
	assert.NotEqual(t, prev, res.Commit)
	check()

	// A full publish: one segment.
	res, err = Publish(ctx, st, PublishOptions{Root: root, Full: true})
	require.NoError(t, err)
	assert.Equal(t, 1, res.Segments)
	check()
}

func TestPublishOutsideGit(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	writeTree(t, root, shopTree)
	st := newMemStore()
	_, err := Publish(ctx, st, PublishOptions{Root: root})
	require.ErrorContains(t, err, "not a git repository")
	res, err := Publish(ctx, st, PublishOptions{Root: root, Repo: "shop", Commit: "v1"})
	require.NoError(t, err)
	assert.Equal(t, len(shopTree), res.Files)
	// v2: one file changed, found by content.
	writeTree(t, root, map[string]string{"cart/cart.go": "package cart\n\n// Total adds up the cart.\nfunc Total() int { return 1 }\n"})
	res, err = Publish(ctx, st, PublishOptions{Root: root, Repo: "shop", Commit: "v2"})
	require.NoError(t, err)
	assert.Equal(t, 1, res.Files)
	for _, q := range shopQueries {
		got, err := SearchStore(ctx, st, []string{"shop"}, q, 10)
		require.NoError(t, err)
		assert.Equal(t, indexHits(t, root, q), withoutRepo(got), q)
	}
}
