package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/internal/await"
	"github.com/agentd/agentd/internal/pgtest"
	"github.com/agentd/agentd/internal/proctest"
	"github.com/agentd/agentd/rag"
	"github.com/agentd/agentd/rpc"
)

var shopFiles = map[string]string{
	"cart/cart.go":      "package cart\n\nimport \"fmt\"\n\n// Total sums the prices in the cart.\nfunc Total(p []int) int { return 0 }\n\n// Print shows the cart.\nfunc Print() { fmt.Println(Total(nil)) }\n",
	"cart/cart_test.go": "package cart\n\n// TestTotal checks the cart total.\nfunc TestTotal(t *testing.T) {}\n",
	"store/save.go":     "package store\n\n// Save persists sessions to disk as JSON.\nfunc Save(s Session) error { return nil }\n",
	"store/load.go":     "package store\n\n// Load reads the sessions saved on disk.\nfunc Load() ([]Session, error) { return nil, nil }\n",
	"README.md":         "# Shop\n\nThe cart total and the sessions store.\n",
}

var billingFiles = map[string]string{
	"invoice/invoice.go": "package invoice\n\n// Invoice bills a cart's total with its tax.\nfunc Invoice() {}\n",
	"invoice/tax.go":     "package invoice\n\n// Tax computes the sales tax of an invoice.\nfunc Tax() {}\n",
}

var teamQueries = []string{"cart total", "where are sessions persisted", "load sessions from disk", "print the cart",
	"discount prices", "refund an order", "TestTotal"}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// ciRepo is a repository as CI checks it out: committed, with its remote.
func ciRepo(t *testing.T, remote string, files map[string]string) string {
	t.Helper()
	root, _ := filepath.EvalSymlinks(t.TempDir())
	git(t, root, "init", "-q", "-b", "main")
	git(t, root, "remote", "add", "origin", remote)
	writeFiles(t, root, files)
	git(t, root, "add", "-A")
	git(t, root, "commit", "-q", "-m", "first")
	return root
}

// teamDB is a database of the shared server, with a developer's read-only
// role: the publisher's URL (with its password) and the developer's (none:
// PGPASSWORD has it).
func teamDB(t *testing.T, srv *pgtest.Server) (publishURL, devURL string) {
	t.Helper()
	db := srv.NewDatabase(t)
	publishURL = srv.URL(db)
	return publishURL, fmt.Sprintf("postgres://dev_%s@%s/%s?sslmode=disable", db, srv.Addr(), db)
}

func grantReader(t *testing.T, srv *pgtest.Server, devURL string) {
	t.Helper()
	db := devURL[strings.LastIndexByte(devURL, '/')+1 : strings.IndexByte(devURL, '?')]
	srv.SQL(t, db, "CREATE ROLE dev_"+db+" LOGIN PASSWORD 'devpw' IN ROLE agentd_reader")
}

func publishCmd(t *testing.T, url, dir string, args ...string) string {
	t.Helper()
	var stderr bytes.Buffer
	code := runIndex(context.Background(), append([]string{"--publish", url, dir}, args...), io.Discard, &stderr)
	require.Equal(t, 0, code, stderr.String())
	return stderr.String()
}

// searchJSON runs `agentd search --json` and returns its hits, its stderr
// and its exit code.
func searchJSON(t *testing.T, dir, query string, args ...string) ([]rag.SearchHit, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := runSearch(context.Background(), append([]string{"--json", query, dir}, args...), &stdout, &stderr)
	var hits []rag.SearchHit
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		if line == "" {
			continue
		}
		var h rag.SearchHit
		require.NoError(t, json.Unmarshal([]byte(line), &h), line)
		hits = append(hits, h)
	}
	return hits, stderr.String(), code
}

// embeddedHits is `agentd search` without a team index, on its own state.
func embeddedHits(t *testing.T, dir, query string) []rag.SearchHit {
	t.Helper()
	t.Setenv("AGENTD_INDEX_URL", "")
	t.Setenv("AGENTD_STATE_DIR", t.TempDir())
	hits, stderr, code := searchJSON(t, dir, query)
	require.Contains(t, []int{0, 1}, code, stderr)
	return hits
}

// sameAsEmbedded checks `agentd search` on the team index against the
// embedded index of the same files, query by query.
func sameAsEmbedded(t *testing.T, dir, devURL, state string, queries ...string) {
	t.Helper()
	for _, q := range append(queries, teamQueries...) {
		want := embeddedHits(t, dir, q)
		t.Setenv("AGENTD_INDEX_URL", devURL)
		t.Setenv("AGENTD_STATE_DIR", state)
		got, stderr, code := searchJSON(t, dir, q)
		require.Contains(t, []int{0, 1}, code, stderr)
		assert.NotContains(t, stderr, "unreachable")
		assert.Equal(t, want, got, q)
	}
}

func TestTeamIndexPublishOverlayAndRepos(t *testing.T) {
	srv := pgtest.Shared(t)
	publishURL, devURL := teamDB(t, srv)
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("AGENTD_STATE_DIR", t.TempDir())
	ci := ciRepo(t, "git@github.com:acme/shop.git", shopFiles)

	out := publishCmd(t, publishURL, ci)
	assert.Contains(t, out, "published github.com/acme/shop@")
	assert.Contains(t, out, "5 files")
	grantReader(t, srv, devURL) // the role the migrations made
	for _, secret := range []string{srv.URL(""), strings.Split(strings.TrimPrefix(publishURL, "postgres://postgres:"), "@")[0]} {
		assert.NotContains(t, out, secret, "the URL and its password are never printed")
	}

	// A developer's clone, searched through the team index with the
	// read-only role (its password from the environment).
	dev := filepath.Join(t.TempDir(), "dev")
	git(t, ci, "clone", "-q", ci, dev)
	git(t, dev, "remote", "set-url", "origin", "https://github.com/acme/shop.git")
	t.Setenv("PGPASSWORD", "devpw")
	state := t.TempDir()
	sameAsEmbedded(t, dev, devURL, state)

	// Overlay: a local edit and a new file, not committed.
	writeFiles(t, dev, map[string]string{
		"cart/cart.go":   "package cart\n\n// Total adds up the prices with the discount.\nfunc Total(p []int) int { return 1 }\n",
		"order/order.go": "package order\n\n// Refund gives an order's money back.\nfunc Refund() {}\n",
	})
	sameAsEmbedded(t, dev, devURL, state)
	hits, _, _ := searchJSON(t, dev, "refund an order")
	require.NotEmpty(t, hits)
	assert.Equal(t, "order/order.go", hits[0].Path)
	assert.Empty(t, hits[0].Repo)

	// Incremental republish after a commit; the developer pulls it.
	writeFiles(t, ci, map[string]string{"store/save.go": "package store\n\n// Save writes sessions to a database table.\nfunc Save() {}\n"})
	require.NoError(t, os.Remove(filepath.Join(ci, "store/load.go")))
	git(t, ci, "add", "-A")
	git(t, ci, "commit", "-q", "-m", "second")
	out = publishCmd(t, publishURL, ci)
	assert.Contains(t, out, "1 changed files read since")
	assert.Contains(t, out, "2 files retired")
	git(t, dev, "stash", "-q", "-u")
	git(t, dev, "pull", "-q", ci, "main")
	git(t, dev, "stash", "pop", "-q")
	sameAsEmbedded(t, dev, devURL, state, "sessions database table")

	// A second repository, and the filter.
	billing := ciRepo(t, "https://github.com/acme/billing.git", billingFiles)
	publishCmd(t, publishURL, billing)
	hits, stderr, code := searchJSON(t, dev, "invoice tax", "--repo", "billing")
	require.Equal(t, 0, code, stderr)
	require.NotEmpty(t, hits)
	for _, h := range hits {
		assert.Equal(t, "github.com/acme/billing", h.Repo)
	}
	hits, _, code = searchJSON(t, dev, "cart total invoice", "--repo", "all")
	require.Equal(t, 0, code)
	repos := map[string]bool{}
	for _, h := range hits {
		repos[h.Repo] = true
	}
	assert.Equal(t, map[string]bool{"": true, "github.com/acme/billing": true}, repos, "the workspace's own hits carry no repo")
	_, stderr, code = searchJSON(t, dev, "invoice", "--repo", "nope")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "github.com/acme/billing, github.com/acme/shop")

	// Without a team index, --repo says what it needs.
	t.Setenv("AGENTD_INDEX_URL", "")
	_, stderr, code = searchJSON(t, dev, "invoice", "--repo", "billing")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "index.url")
}

func TestTeamIndexTwoPublishersAtOnce(t *testing.T) {
	srv := pgtest.Shared(t)
	publishURL, _ := teamDB(t, srv)
	shop := ciRepo(t, "https://github.com/acme/shop.git", shopFiles)
	billing := ciRepo(t, "https://github.com/acme/billing.git", billingFiles)
	bin := proctest.Agentd(t)
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for _, dir := range []string{shop, billing} {
		cmd := exec.Command(bin, "index", "--publish", publishURL, dir)
		cmd.Env = append(os.Environ(), "AGENTD_STATE_DIR="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir())
		var out bytes.Buffer
		cmd.Stderr = &out
		require.NoError(t, cmd.Start())
		cmds, outs = append(cmds, cmd), append(outs, &out)
	}
	for i, cmd := range cmds {
		require.NoError(t, cmd.Wait(), outs[i].String())
		assert.Contains(t, outs[i].String(), "published github.com/acme/")
	}
	hits, err := searchStoreAt(t, publishURL, nil, "invoice tax cart total")
	require.NoError(t, err)
	repos := map[string]bool{}
	for _, h := range hits {
		repos[h.Repo] = true
	}
	assert.Equal(t, map[string]bool{"github.com/acme/shop": true, "github.com/acme/billing": true}, repos)
}

// searchStoreAt searches the team index at url directly.
func searchStoreAt(t *testing.T, url string, repos []string, q string) ([]rag.SearchHit, error) {
	t.Helper()
	st, err := openTeam(context.Background(), configWithTeam(url))
	require.NoError(t, err)
	defer st.Close()
	return rag.SearchStore(context.Background(), st, repos, q, 10)
}

// TestTeamIndexDatabaseStoppedMidSession: `agentd mcp` (the real binary,
// the SDK's client) keeps answering when the database goes away: from this
// machine's index, with the same hits, and with no trace of the URL.
func TestTeamIndexDatabaseStoppedMidSession(t *testing.T) {
	srv := pgtest.Start(t) // its own: it is stopped
	db := srv.NewDatabase(t)
	url := srv.URL(db)
	ci := ciRepo(t, "https://github.com/acme/shop.git", shopFiles)
	publishCmd(t, url, ci)
	dev := filepath.Join(t.TempDir(), "dev")
	git(t, ci, "clone", "-q", ci, dev)
	git(t, dev, "remote", "set-url", "origin", "https://github.com/acme/shop.git")
	writeFiles(t, dev, map[string]string{"order/order.go": "package order\n\n// Refund gives an order's money back.\nfunc Refund() {}\n"})

	cmd := exec.Command(proctest.Agentd(t), "mcp", dev)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// The URL with its password, as a careless user would set it.
	cmd.Env = append(os.Environ(), "AGENTD_INDEX_URL="+url, "AGENTD_STATE_DIR="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcpsdk.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	defer cs.Close()
	search := func(args map[string]any) (string, []rag.SearchHit) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "search", Arguments: args})
		require.NoError(t, err)
		var text strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcpsdk.TextContent); ok {
				text.WriteString(tc.Text)
			}
		}
		require.False(t, res.IsError, text.String())
		var out struct{ Hits []rag.SearchHit }
		b, _ := json.Marshal(res.StructuredContent)
		require.NoError(t, json.Unmarshal(b, &out))
		return text.String(), out.Hits
	}
	queries := []string{"cart total", "refund an order", "where are sessions persisted"}
	var before [][]rag.SearchHit
	for _, q := range queries {
		_, hits := search(map[string]any{"query": q})
		require.NotEmpty(t, hits, q)
		before = append(before, hits)
	}
	_, hits := search(map[string]any{"query": "cart total", "repos": []string{"shop"}})
	assert.NotEmpty(t, hits)

	require.NoError(t, srv.Stop())
	for i, q := range queries {
		text, hits := search(map[string]any{"query": q})
		assert.Equal(t, before[i], hits, "the local index answers alike: %s", q)
		for _, secret := range []string{url, strings.Split(strings.TrimPrefix(url, "postgres://postgres:"), "@")[0], srv.Addr(), db} {
			assert.NotContains(t, text, secret, "the model never sees the URL")
		}
	}
	res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "search", Arguments: map[string]any{"query": "cart", "repos": []string{"all"}}})
	require.NoError(t, err)
	assert.True(t, res.IsError, "other repositories need the team index")
	cs.Close()
	cmd.Wait()
	assert.Contains(t, stderr.String(), "unreachable")
	assert.NotContains(t, stderr.String(), strings.Split(strings.TrimPrefix(url, "postgres://postgres:"), "@")[0], "nor is the password logged")
}

func configWithTeam(url string) agent.Config {
	cfg := agent.DefaultConfig()
	cfg.TeamIndex.URL = url
	return cfg
}

// TestTeamIndexInTheDaemon: with index.url, the index the daemon starts
// (`agentd serve`, `agentd acp`) is the team index's, and index/status says
// which commit it reads.
func TestTeamIndexInTheDaemon(t *testing.T) {
	srv := pgtest.Shared(t)
	publishURL, _ := teamDB(t, srv)
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("AGENTD_STATE_DIR", t.TempDir())
	ci := ciRepo(t, "https://github.com/acme/shop.git", shopFiles)
	publishCmd(t, publishURL, ci)
	writeFiles(t, ci, map[string]string{"order/order.go": "package order\n\n// Refund gives an order's money back.\nfunc Refund() {}\n"})

	ended := make(chan struct{}, 1)
	idx := indexStarter(configWithTeam(publishURL), slog.New(slog.DiscardHandler))(ci, t.TempDir(),
		rpc.IndexProgress{End: func(rag.Status, error) { ended <- struct{}{} }})
	defer idx.Close()
	await.Recv(t, "the overlay's first build", 20*time.Second, ended)
	st := idx.Status()
	require.NotNil(t, st.Team)
	assert.Equal(t, "github.com/acme/shop", st.Team.Repo)
	assert.Equal(t, git(t, ci, "rev-parse", "HEAD"), st.Team.Commit)
	assert.Equal(t, 1, st.Team.LocalFiles)
	assert.Equal(t, len(shopFiles), st.Files)
	for _, q := range append(teamQueries, "refund an order") {
		hits, partial, err := idx.Search(context.Background(), q, 10)
		require.NoError(t, err)
		assert.False(t, partial)
		if want := embeddedHits(t, ci, q); len(want) > 0 || len(hits) > 0 {
			assert.Equal(t, want, hits, q)
		}
	}
}

// The ways the team index fails a developer, each with a clear notice and
// the workspace's own index answering, nothing lost: a repository never
// published, a database where nothing was, a wrong password; and a
// daemon's read-only role cannot publish.
func TestTeamIndexFailureModes(t *testing.T) {
	srv := pgtest.Shared(t)
	publishURL, devURL := teamDB(t, srv)
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	grantReader := func() { grantReader(t, srv, devURL) }
	dev := ciRepo(t, "https://github.com/acme/shop.git", shopFiles)
	search := func(url, query string) ([]rag.SearchHit, string) {
		t.Helper()
		want := embeddedHits(t, dev, query)
		t.Setenv("AGENTD_INDEX_URL", url)
		t.Setenv("AGENTD_STATE_DIR", t.TempDir())
		got, stderr, code := searchJSON(t, dev, query)
		require.Equal(t, 0, code, stderr)
		assert.Equal(t, want, got, "the workspace's own index answers: %s", query)
		assert.NotContains(t, stderr, "devpw")
		assert.NotContains(t, stderr, srv.URL(""))
		return got, stderr
	}

	// Nothing was ever published to the database: no schema yet, so no
	// reader role either; the superuser's URL reads it.
	_, stderr := search(publishURL, "cart total")
	assert.Contains(t, stderr, "the team index failed: searching this machine's index")
	assert.Contains(t, stderr, "nothing was published to this database")

	// Another repository is published, not this one.
	billing := ciRepo(t, "https://github.com/acme/billing.git", billingFiles)
	publishCmd(t, publishURL, billing)
	grantReader()
	t.Setenv("PGPASSWORD", "devpw")
	_, stderr = search(devURL, "cart total")
	assert.Contains(t, stderr, "this repository is not in the team index: searching this machine's index")
	assert.Contains(t, stderr, "github.com/acme/shop")

	// A wrong password: refused, said, never printed.
	t.Setenv("PGPASSWORD", "not-the-password")
	_, stderr = search(devURL, "where are sessions persisted")
	assert.Contains(t, stderr, "searching this machine's index")
	assert.Contains(t, stderr, "password authentication failed")
	assert.NotContains(t, stderr, "not-the-password")

	// The daemons' read-only role cannot publish: a clear refusal, and the
	// published index is as it was.
	t.Setenv("PGPASSWORD", "devpw")
	var out bytes.Buffer
	code := runIndex(context.Background(), []string{"--publish", devURL, dev}, io.Discard, &out)
	assert.Equal(t, 1, code, out.String())
	assert.Contains(t, out.String(), "permission denied")
	assert.NotContains(t, out.String(), "devpw")
	hits, stderr, code := searchJSON(t, dev, "invoice tax", "--repo", "billing")
	require.Equal(t, 0, code, stderr)
	require.NotEmpty(t, hits)
	assert.Equal(t, "github.com/acme/billing", hits[0].Repo)
	// Every repository: the others from the team index, this one's from
	// this machine's index.
	hits, stderr, code = searchJSON(t, dev, "cart total invoice", "--repo", "all")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "this repository is not in the team index")
	repos := map[string]bool{}
	for _, h := range hits {
		repos[h.Repo] = true
	}
	assert.Equal(t, map[string]bool{"": true, "github.com/acme/billing": true}, repos)
}
