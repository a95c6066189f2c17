package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentd/agentd/rag"
)

// runSearchEval is `agentd search-eval [--corpora DIR] SET.jsonl…`: score
// the workspace search on commit sets (docs/index.md, "Retrieval
// benchmark") beside BM25 over whole files, computed in the same run. Each
// module is indexed afresh in a temporary directory, with the embedding
// endpoint of the user's config if there is one.
func runSearchEval(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newCommand("search-eval", "agentd search-eval [flags] SET.jsonl...",
		"Score the search on commit sets beside BM25 over whole files (docs/index.md).")
	corpora := fs.String("corpora", "", "find each module's tree as DIR/MODULE instead of in the Go module cache")
	sets, code := fs.parse(args, stdout, stderr)
	if code >= 0 {
		return code
	}
	if len(sets) == 0 {
		return fs.fail(stderr, errors.New("name at least one commit set"))
	}
	var mods []evalModule
	for _, set := range sets {
		m, err := loadEvalModules(ctx, set, *corpora, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "agentd search-eval: %v\n", err)
			return 1
		}
		mods = append(mods, m...)
	}
	if len(mods) == 0 {
		fmt.Fprintln(stderr, "agentd search-eval: no corpus available")
		return 1
	}
	run := &rag.EvalRun{Systems: []string{"agentd", "BM25 whole files"}, Lines: []bool{true, false}, Scores: make([][][]rag.EvalScore, 2)}
	emb := configuredEmbedder(stderr)
	for _, m := range mods {
		start := time.Now()
		agentd, base, err := evalModuleRun(ctx, m, emb)
		if err != nil {
			fmt.Fprintf(stderr, "agentd search-eval: %s: %v\n", m.name, err)
			return 1
		}
		fmt.Fprintf(stderr, "%s: %d queries in %v\n", m.name, len(m.queries), time.Since(start).Round(time.Millisecond))
		run.Modules = append(run.Modules, m.name)
		run.Scores[0] = append(run.Scores[0], agentd)
		run.Scores[1] = append(run.Scores[1], base)
	}
	if emb != nil {
		run.Systems[0] = "agentd + " + emb.Name()
	}
	run.WriteReport(stdout)
	return 0
}

// evalModule is the queries of one module@version and its tree.
type evalModule struct {
	name    string
	root    string
	queries []rag.EvalQuery
}

// loadEvalModules reads a set and finds its modules; one missing from the
// module cache is skipped with the command that fetches it.
func loadEvalModules(ctx context.Context, set, corpora string, stderr io.Writer) ([]evalModule, error) {
	qs, err := rag.LoadEvalSet(set)
	if err != nil {
		return nil, err
	}
	var out []evalModule
	idx := map[string]int{}
	for _, q := range qs {
		key := q.Module + "@" + q.Version
		i, ok := idx[key]
		if !ok {
			root, err := rag.ModuleDir(ctx, q.Module, q.Version)
			if corpora != "" {
				root, err = filepath.Join(corpora, filepath.FromSlash(q.Module)), nil
			}
			if errors.Is(err, rag.ErrModuleMissing) {
				fmt.Fprintf(stderr, "skipping %s: not in the module cache; fetch it with\n  (cd \"$(mktemp -d)\" && GOFLAGS=-mod=mod go mod download %s)\n", key, key)
				idx[key] = -1
				continue
			}
			if err != nil {
				return nil, err
			}
			name := strings.TrimSuffix(filepath.Base(set), ".jsonl")
			if len(idx) > 0 {
				name = key
			}
			i = len(out)
			idx[key] = i
			out = append(out, evalModule{name: name, root: root})
		}
		if i >= 0 {
			out[i].queries = append(out[i].queries, q)
		}
	}
	return out, nil
}

// evalModuleRun indexes a module in a temporary directory and scores both
// systems on its queries.
func evalModuleRun(ctx context.Context, m evalModule, emb rag.Embedder) (agentd, base []rag.EvalScore, err error) {
	state, err := os.MkdirTemp("", "agentd-eval-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(state)
	ix, err := openIndex(ctx, m.root, state, emb, io.Discard)
	if err != nil {
		return nil, nil, err
	}
	defer ix.Close()
	if err := ix.Build(ctx, nil); err != nil {
		return nil, nil, err
	}
	files, err := rag.NewFileBM25(ctx, m.root)
	if err != nil {
		return nil, nil, err
	}
	for i := range m.queries {
		q := &m.queries[i]
		hits, _, err := ix.Search(ctx, q.Query, 10)
		if err != nil {
			return nil, nil, err
		}
		got := rag.EvalHits(hits)
		agentd = append(agentd, rag.ScoreHits(q, got))
		got = got[:0]
		for _, p := range files.Search(q.Query, 10) {
			got = append(got, rag.EvalHit{Path: p})
		}
		base = append(base, rag.ScoreHits(q, got))
	}
	return agentd, base, nil
}
