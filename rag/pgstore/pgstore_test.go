package pgstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/internal/pgtest"
	"github.com/agentd/agentd/rag"
)

func TestMain(m *testing.M) {
	if spec := os.Getenv(benchClientEnv); spec != "" {
		os.Exit(benchClient(spec))
	}
	code := m.Run()
	pgtest.Cleanup()
	os.Exit(code)
}

var shop = map[string]string{
	"cart/cart.go":      "package cart\n\nimport \"fmt\"\n\n// Total sums the prices in the cart.\nfunc Total(p []int) int { return 0 }\n\n// Print shows the cart.\nfunc Print() { fmt.Println(Total(nil)) }\n",
	"cart/cart_test.go": "package cart\n\n// TestTotal checks the cart total.\nfunc TestTotal(t *testing.T) {}\n",
	"store/save.go":     "package store\n\n// Save persists sessions to disk as JSON.\nfunc Save(s Session) error { return nil }\n",
	"store/load.go":     "package store\n\n// Load reads the sessions saved on disk.\nfunc Load() ([]Session, error) { return nil, nil }\n",
	"README.md":         "# Shop\n\nThe cart total and the sessions store.\n",
}

var queries = []string{"cart total", "where are sessions persisted", "Total", "TestTotal", "shop README",
	"load sessions from disk", "print the cart", "invoice billing", "nothing like this"}

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
	}
}

func run(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%v: %s", args, out)
}

func gitRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	root, _ := filepath.EvalSymlinks(t.TempDir())
	run(t, root, "git", "init", "-q", "-b", "main")
	writeTree(t, root, files)
	commit(t, root, "first")
	return root
}

func commit(t *testing.T, root, msg string) {
	t.Helper()
	run(t, root, "git", "add", "-A")
	run(t, root, "git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", msg)
}

// embedded is what the workspace's own index answers for the tree at root.
func embedded(t *testing.T, root, q string) []rag.SearchHit {
	t.Helper()
	ix, err := rag.Open(context.Background(), rag.Options{Root: root, StateDir: t.TempDir()})
	require.NoError(t, err)
	defer ix.Close()
	require.NoError(t, ix.Build(context.Background(), nil))
	hits, _, err := ix.Search(context.Background(), q, 10)
	require.NoError(t, err)
	return hits
}

func withoutRepo(hits []rag.SearchHit) []rag.SearchHit {
	for i := range hits {
		hits[i].Repo = ""
	}
	return hits
}

// database is a fresh database on the shared server, and its URL.
func database(t *testing.T) (*pgtest.Server, string) {
	srv := pgtest.Shared(t)
	return srv, srv.URL(srv.NewDatabase(t))
}

func publisher(t *testing.T, url string) *Publisher {
	t.Helper()
	p, err := OpenPublisher(context.Background(), url)
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p
}

func reader(t *testing.T, url string) *Store {
	t.Helper()
	s, err := Open(context.Background(), url, Options{})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func TestPublishIncrementallyAndSearch(t *testing.T) {
	ctx := context.Background()
	_, url := database(t)
	root := gitRepo(t, shop)
	pub := publisher(t, url)
	assert.Equal(t, 1, pub.Schema())
	res, err := rag.Publish(ctx, pub, rag.PublishOptions{Root: root, Repo: "acme/shop"})
	require.NoError(t, err)
	assert.Equal(t, len(shop), res.Files)
	st := reader(t, url)
	s := rag.NewStoreSearcher(st)
	check := func() {
		t.Helper()
		for _, q := range queries {
			got, err := s.Search(ctx, []string{"acme/shop"}, q, 10)
			require.NoError(t, err)
			want := embedded(t, root, q)
			assert.Equal(t, want, withoutRepo(got), q)
		}
	}
	check()

	// A commit: an edit, a new file, a deletion; republished
	// incrementally, read by the same searcher (its cached segments stay).
	writeTree(t, root, map[string]string{
		"store/save.go":      "package store\n\n// Save writes sessions to a database.\nfunc Save() {}\n",
		"billing/invoice.go": "package billing\n\n// Invoice bills the cart total.\nfunc Invoice() {}\n",
	})
	require.NoError(t, os.Remove(filepath.Join(root, "store/load.go")))
	commit(t, root, "second")
	res, err = rag.Publish(ctx, pub, rag.PublishOptions{Root: root, Repo: "acme/shop"})
	require.NoError(t, err)
	assert.True(t, res.Incremental)
	assert.Equal(t, 2, res.Files)
	assert.Equal(t, 2, res.Retired)
	check()

	infos, err := st.Repos(ctx)
	require.NoError(t, err)
	require.Len(t, infos, 1)
	assert.Equal(t, res.Commit, infos[0].Commit)
	assert.Equal(t, int64(res.Live), infos[0].Chunks)

}

// holdingPublisher holds each publish just before its commit, until
// released: what readers see meanwhile is the atomicity.
type holdingPublisher struct {
	rag.Publisher
	held, release chan struct{}
}

type holdingTx struct {
	rag.PublishTx
	p *holdingPublisher
}

func (h *holdingPublisher) BeginPublish(ctx context.Context, repo string) (rag.PublishTx, error) {
	tx, err := h.Publisher.BeginPublish(ctx, repo)
	if err != nil {
		return nil, err
	}
	return &holdingTx{tx, h}, nil
}

func (t *holdingTx) Commit(ctx context.Context, head rag.Head) error {
	t.p.held <- struct{}{}
	<-t.p.release
	return t.PublishTx.Commit(ctx, head)
}

func TestReadersSeeTheOldCommitOrTheNew(t *testing.T) {
	ctx := context.Background()
	_, url := database(t)
	root := gitRepo(t, shop)
	pub := publisher(t, url)
	_, err := rag.Publish(ctx, pub, rag.PublishOptions{Root: root, Repo: "shop"})
	require.NoError(t, err)
	s := rag.NewStoreSearcher(reader(t, url))
	const q = "invoice billing cart"
	before := embedded(t, root, q)

	writeTree(t, root, map[string]string{"billing/invoice.go": "package billing\n\n// Invoice bills the cart.\nfunc Invoice() {}\n"})
	require.NoError(t, os.Remove(filepath.Join(root, "cart/cart.go")))
	commit(t, root, "second")
	after := embedded(t, root, q)
	require.NotEqual(t, before, after)

	h := &holdingPublisher{Publisher: pub, held: make(chan struct{}), release: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		_, err := rag.Publish(ctx, h, rag.PublishOptions{Root: root, Repo: "shop"})
		done <- err
	}()
	<-h.held // the new segment is written, not committed
	got, err := s.Search(ctx, nil, q, 10)
	require.NoError(t, err)
	assert.Equal(t, before, withoutRepo(got), "before the commit: the old commit whole")
	close(h.release)
	require.NoError(t, <-done)
	got, err = s.Search(ctx, nil, q, 10)
	require.NoError(t, err)
	assert.Equal(t, after, withoutRepo(got), "after: the new commit whole")
}

func TestTwoPublishersAtOnce(t *testing.T) {
	ctx := context.Background()
	_, url := database(t) // fresh: both also race to migrate it
	a := gitRepo(t, shop)
	b := gitRepo(t, map[string]string{
		"billing/invoice.go": "package billing\n\n// Invoice bills the cart total.\nfunc Invoice() {}\n",
		"billing/tax.go":     "package billing\n\n// Tax computes the sales tax of an invoice.\nfunc Tax() {}\n",
	})
	type job struct{ root, repo string }
	jobs := []job{{a, "acme/shop"}, {b, "acme/billing"}, {a, "acme/shop"}}
	results := make([]*rag.PublishResult, len(jobs))
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pub, err := OpenPublisher(ctx, url)
			if err != nil {
				errs[i] = err
				return
			}
			defer pub.Close()
			results[i], errs[i] = rag.Publish(ctx, pub, rag.PublishOptions{Root: j.root, Repo: j.repo})
		}()
	}
	wg.Wait()
	for i := range jobs {
		require.NoError(t, errs[i], jobs[i].repo)
	}
	// The two publishes of one repository ran one after the other: one
	// wrote, the other found the commit published.
	assert.True(t, results[0].Unchanged != results[2].Unchanged, "%+v %+v", results[0], results[2])

	st := reader(t, url)
	infos, err := st.Repos(ctx)
	require.NoError(t, err)
	require.Len(t, infos, 2)
	s := rag.NewStoreSearcher(st)
	for _, j := range jobs[:2] {
		for _, q := range queries {
			got, err := s.Search(ctx, []string{j.repo}, q, 10)
			require.NoError(t, err)
			assert.Equal(t, embedded(t, j.root, q), withoutRepo(got), q)
		}
	}
	// Both at once: hits carry their repository.
	all, err := s.Search(ctx, nil, "invoice cart total", 10)
	require.NoError(t, err)
	repos := map[string]bool{}
	for _, h := range all {
		repos[h.Repo] = true
	}
	assert.Equal(t, map[string]bool{"acme/shop": true, "acme/billing": true}, repos)
	var migrated int
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM agentd.migrations`).Scan(&migrated))
	assert.Equal(t, 1, migrated)
}

func TestReadOnlyRoleAndCredentials(t *testing.T) {
	ctx := context.Background()
	srv, url := database(t)
	root := gitRepo(t, shop)
	_, err := rag.Publish(ctx, publisher(t, url), rag.PublishOptions{Root: root, Repo: "shop"})
	require.NoError(t, err)
	db := url[strings.LastIndexByte(url, '/')+1 : strings.IndexByte(url, '?')]
	role := "dev_" + db
	srv.SQL(t, db, fmt.Sprintf("CREATE ROLE %s LOGIN PASSWORD 'devpw' IN ROLE %s", role, ReaderRole))
	devURL := fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", role, srv.Addr(), db)

	// The password from the environment.
	t.Setenv("PGPASSWORD", "devpw")
	hits, err := rag.SearchStore(ctx, reader(t, devURL), nil, "cart total", 10)
	require.NoError(t, err)
	require.NotEmpty(t, hits)

	// The role reads, and nothing more.
	conn, err := pgx.Connect(ctx, devURL)
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `DELETE FROM agentd.chunks`)
	require.ErrorContains(t, err, "permission denied")
	_, err = conn.Exec(ctx, `INSERT INTO agentd.repos (name) VALUES ('x')`)
	require.ErrorContains(t, err, "permission denied")
	// Even a role that may write cannot through a reader's connection.
	su := reader(t, url)
	_, err = su.pool.Exec(ctx, `DELETE FROM agentd.chunks`)
	require.ErrorContains(t, err, "read-only")

	// The password from a file, and a wrong one refused.
	t.Setenv("PGPASSWORD", "")
	pass := filepath.Join(t.TempDir(), "pgpass")
	require.NoError(t, os.WriteFile(pass, []byte(fmt.Sprintf("127.0.0.1:%d:%s:%s:devpw\n", srv.Port(), db, role)), 0o600))
	t.Setenv("PGPASSFILE", pass)
	hits, err = rag.SearchStore(ctx, reader(t, devURL), nil, "cart total", 10)
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	require.NoError(t, os.WriteFile(pass, []byte(fmt.Sprintf("127.0.0.1:%d:%s:%s:wrong\n", srv.Port(), db, role)), 0o600))
	_, err = rag.SearchStore(ctx, reader(t, devURL), nil, "cart total", 10)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "wrong")

	// A description of the URL never has its password.
	assert.Equal(t, "postgres@127.0.0.1:"+fmt.Sprint(srv.Port())+"/"+db, Describe(url))
	assert.NotContains(t, Describe("postgres://u:hunter2@db.example.com/x"), "hunter2")
	_, err = Open(ctx, "postgres://u:hunter2@db.example.com:notaport/x", Options{})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "hunter2")
}

func TestDatabaseStoppedAndBack(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.Start(t) // its own: it is stopped
	url := srv.URL(srv.NewDatabase(t))
	root := gitRepo(t, shop)
	_, err := rag.Publish(ctx, publisher(t, url), rag.PublishOptions{Root: root, Repo: "shop"})
	require.NoError(t, err)
	s := rag.NewStoreSearcher(reader(t, url))
	hits, err := s.Search(ctx, nil, "cart total", 10)
	require.NoError(t, err)
	require.NotEmpty(t, hits)

	require.NoError(t, srv.Stop())
	_, err = s.Search(ctx, nil, "cart total", 10)
	require.Error(t, err)
	assert.True(t, errors.Is(err, rag.ErrUnreachable), "%v", err)

	require.NoError(t, srv.Restart())
	again, err := s.Search(ctx, nil, "cart total", 10)
	require.NoError(t, err)
	assert.Equal(t, hits, again)
}

func TestNothingPublished(t *testing.T) {
	_, url := database(t)
	_, err := rag.SearchStore(context.Background(), reader(t, url), nil, "cart total", 10)
	assert.ErrorIs(t, err, ErrNoSchema)
}
