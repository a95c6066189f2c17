package rag

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// evalQuery is one line of testdata/eval_*.tsv.
type evalQuery struct {
	query   string
	path    string
	symbols []string
}

func loadEvalQueries(t testing.TB, file string) []evalQuery {
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var qs []evalQuery
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Split(line, "\t")
		if len(parts) != 3 {
			t.Fatalf("bad eval line %q", line)
		}
		qs = append(qs, evalQuery{parts[0], parts[1], strings.Split(parts[2], ",")})
	}
	return qs
}

// moduleDir finds a module in the module cache, or skips the test.
func moduleDir(t testing.TB, mod string) string {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Skipf("go env: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), mod)
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("%s not in the module cache", mod)
	}
	return dir
}

// relevant reports whether slot n is a target of q.
func (ix *Index) relevant(n int32, q evalQuery) bool {
	sl := ix.slots[n]
	if sl.Path != q.path {
		return false
	}
	for _, s := range strings.Split(sl.Symbol, ", ") {
		bare := s[strings.LastIndexByte(s, '.')+1:] // methods also count by name
		for _, want := range q.symbols {
			if s == want || bare == want {
				return true
			}
		}
	}
	return false
}

type evalScore struct{ recall, mrr float64 }

// evaluate ranks every query with rank and scores recall@10 and MRR@10.
func evaluate(ix *Index, qs []evalQuery, rank func(q string) []int32) (evalScore, []int) {
	var s evalScore
	ranks := make([]int, len(qs))
	for i, q := range qs {
		got := rank(q.query)
		ranks[i] = 0
		ix.mu.RLock()
		for r, n := range got[:min(10, len(got))] {
			if ix.relevant(n, q) {
				ranks[i] = r + 1
				s.recall++
				s.mrr += 1 / float64(r+1)
				break
			}
		}
		ix.mu.RUnlock()
	}
	s.recall /= float64(len(qs))
	s.mrr /= float64(len(qs))
	return s, ranks
}

// evalModes scores BM25 alone, vectors alone and the fusion on one index.
func evalModes(t *testing.T, ix *Index, qs []evalQuery) map[string]evalScore {
	ctx := context.Background()
	lexOnly := func(q string) []int32 {
		lex, _, err := ix.rankings(ctx, q, candidates)
		if err != nil {
			t.Fatal(err)
		}
		return lex
	}
	vecOnly := func(q string) []int32 {
		_, vec, err := ix.rankings(ctx, q, candidates)
		if err != nil {
			t.Fatal(err)
		}
		return vec
	}
	fusion := func(q string) []int32 {
		lex, vec, err := ix.rankings(ctx, q, candidates)
		if err != nil {
			t.Fatal(err)
		}
		ix.mu.RLock()
		defer ix.mu.RUnlock()
		var out []int32
		for _, s := range ix.fuseLocked(q, lex, vec, time.Now()) {
			out = append(out, s.doc)
		}
		return out
	}
	out := map[string]evalScore{}
	var perQuery [3][]int
	out["bm25"], perQuery[0] = evaluate(ix, qs, lexOnly)
	out["vectors"], perQuery[1] = evaluate(ix, qs, vecOnly)
	out["fusion"], perQuery[2] = evaluate(ix, qs, fusion)
	if testing.Verbose() {
		for i, q := range qs {
			t.Logf("rank bm25=%2d vec=%2d fused=%2d  %s", perQuery[0][i], perQuery[1][i], perQuery[2][i], q.query)
		}
	}
	return out
}

// TestRetrievalEval measures recall@10 and MRR on code nobody here wrote and
// fails if the fusion does not beat BM25 alone. The table goes in
// docs/index.md; run with -v to see it.
func TestRetrievalEval(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes a module from the module cache")
	}
	root := moduleDir(t, "mvdan.cc/sh/v3@v3.14.1")
	qs := loadEvalQueries(t, "testdata/eval_sh.tsv")
	ctx := context.Background()

	// Each variant removes one part of the default local embedder, so the
	// table shows what every part earns.
	variants := []struct {
		name     string
		ctx, ngr float32
		idf      bool
	}{
		{"local default (hashing + trigrams + co-occurrence)", localCtxWeight, localNgramWeight, localUseIDF},
		{"without co-occurrence", 0, localNgramWeight, localUseIDF},
		{"without trigrams", localCtxWeight, 0, localUseIDF},
		{"hashing only", 0, 0, localUseIDF},
		{"hashing only, tf-idf weighted", 0, 0, true},
	}
	defer func(c, n float32, i bool) { localCtxWeight, localNgramWeight, localUseIDF = c, n, i }(localCtxWeight, localNgramWeight, localUseIDF)
	var table strings.Builder
	fmt.Fprintf(&table, "\n%d queries on mvdan.cc/sh/v3@v3.14.1\n", len(qs))
	fmt.Fprintf(&table, "| embedder | ranking | recall@10 | MRR@10 |\n|---|---|---|---|\n")
	var def map[string]evalScore
	for i, v := range variants {
		localCtxWeight, localNgramWeight, localUseIDF = v.ctx, v.ngr, v.idf
		ix, err := Open(ctx, Options{Root: root, StateDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if err := ix.Build(ctx, nil); err != nil {
			t.Fatal(err)
		}
		scores := evalModes(t, ix, qs)
		modes := []string{"vectors", "fusion"}
		if i == 0 {
			def = scores
			modes = []string{"bm25", "vectors", "fusion"}
		}
		for _, mode := range modes {
			s := scores[mode]
			fmt.Fprintf(&table, "| %s | %s | %.3f | %.3f |\n", v.name, mode, s.recall, s.mrr)
		}
	}
	t.Log(table.String())
	if def["fusion"].mrr <= def["bm25"].mrr || def["fusion"].recall < def["bm25"].recall {
		t.Errorf("fusion (%+v) does not beat BM25 alone (%+v)", def["fusion"], def["bm25"])
	}
}
