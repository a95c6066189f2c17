package pgstore

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/rag"
)

// TestTeamMatchesEmbedded: the team index in PostgreSQL answers as the
// embedded index does, on the project's commit sets (cobra, gin, caddy:
// their own questions) and on GOROOT/src (the distinct commit subjects of
// every set): the same top-10 files, in the same order, for at least 95%
// of queries (issue 28). Both rank with rag's one ranking, so anything
// less is a defect of the store's path.
func TestTeamMatchesEmbedded(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes modules from the module cache and GOROOT/src")
	}
	ctx := context.Background()
	_, url := database(t)
	pub := publisher(t, url)
	st := rag.NewStoreSearcher(reader(t, url))
	type corpus struct {
		name, root string
		queries    []string
	}
	var corpora []corpus
	var all []string
	sets, _ := filepath.Glob("../testdata/commits/*.jsonl")
	require.NotEmpty(t, sets)
	for _, set := range sets {
		qs, err := rag.LoadEvalSet(set)
		require.NoError(t, err)
		root, err := rag.ModuleDir(ctx, qs[0].Module, qs[0].Version)
		if errors.Is(err, rag.ErrModuleMissing) {
			t.Skipf("%v: run `go mod download %s@%s` outside a module to fetch it", err, qs[0].Module, qs[0].Version)
		}
		require.NoError(t, err)
		c := corpus{name: qs[0].Module, root: root}
		for _, q := range qs {
			c.queries = append(c.queries, q.Query)
			if !slices.Contains(all, q.Query) {
				all = append(all, q.Query)
			}
		}
		corpora = append(corpora, c)
	}
	goroot := runtime.GOROOT()
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		goroot = strings.TrimSpace(string(out))
	}
	corpora = append(corpora, corpus{name: "go", root: filepath.Join(goroot, "src"), queries: all})

	for _, c := range corpora {
		_, err := rag.Publish(ctx, pub, rag.PublishOptions{Root: c.root, Repo: c.name, Commit: "v1", WorkDir: t.TempDir()})
		require.NoError(t, err, c.name)
		ix, err := rag.Open(ctx, rag.Options{Root: c.root, StateDir: t.TempDir()})
		require.NoError(t, err)
		require.NoError(t, ix.Build(ctx, nil))
		same, exact := 0, 0
		var differ []string
		for _, q := range c.queries {
			want, _, err := ix.Search(ctx, q, 10)
			require.NoError(t, err)
			got, err := st.Search(ctx, []string{c.name}, q, 10)
			require.NoError(t, err)
			if slices.Equal(files(want), files(got)) {
				same++
			} else if len(differ) < 5 {
				differ = append(differ, q)
			}
			if slices.Equal(hitKeys(want), hitKeys(got)) {
				exact++
			}
		}
		ix.Close()
		share := float64(same) / float64(len(c.queries))
		t.Logf("%s: the same top-10 files for %d of %d queries (%.1f%%), the same hits for %d", c.name, same, len(c.queries), 100*share, exact)
		require.GreaterOrEqual(t, share, 0.95, "%s: queries that differ, first ones: %q", c.name, differ)
	}
}

// files are the distinct files of hits, in order.
func files(hits []rag.SearchHit) []string {
	var out []string
	for _, h := range hits {
		if !slices.Contains(out, h.Path) {
			out = append(out, h.Path)
		}
	}
	return out
}

func hitKeys(hits []rag.SearchHit) []string {
	var out []string
	for _, h := range hits {
		for _, c := range h.Chunks {
			out = append(out, h.Path+":"+strconv.Itoa(c.StartLine)+":"+c.Symbol)
		}
	}
	return out
}
