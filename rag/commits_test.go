package rag

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// evalCorpus is one module of a commit set, indexed once.
type evalCorpus struct {
	name    string
	root    string
	state   string
	queries []EvalQuery
	ix      *Index
	files   *FileBM25
}

// loadCommitCorpora indexes the modules of the commit sets in
// testdata/commits (or $AGENTD_EVAL_SETS, a glob), skipping when the module
// cache lacks them. $AGENTD_EVAL_CORPORA names a directory holding the
// corpora as DIR/MODULE instead, for sets built from git trees.
func loadCommitCorpora(t *testing.T) []*evalCorpus {
	t.Helper()
	if testing.Short() {
		t.Skip("indexes modules from the module cache")
	}
	glob := os.Getenv("AGENTD_EVAL_SETS")
	if glob == "" {
		glob = "testdata/commits/*.jsonl"
	}
	sets, _ := filepath.Glob(glob)
	if len(sets) == 0 {
		t.Skipf("no commit sets match %s", glob)
	}
	ctx := context.Background()
	var out []*evalCorpus
	for _, set := range sets {
		qs, err := LoadEvalSet(set)
		if err != nil {
			t.Fatal(err)
		}
		root, err := ModuleDir(ctx, qs[0].Module, qs[0].Version)
		if dir := os.Getenv("AGENTD_EVAL_CORPORA"); dir != "" {
			root, err = filepath.Join(dir, qs[0].Module), nil
		}
		if errors.Is(err, ErrModuleMissing) {
			t.Skipf("%v: run `go mod download %s@%s` outside a module to fetch it", err, qs[0].Module, qs[0].Version)
		}
		if err != nil {
			t.Fatal(err)
		}
		state := t.TempDir()
		ix, err := Open(ctx, Options{Root: root, StateDir: state})
		if err != nil {
			t.Fatal(err)
		}
		if err := ix.Build(ctx, nil); err != nil {
			t.Fatal(err)
		}
		fb, err := NewFileBM25(ctx, root)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(set), ".jsonl")
		out = append(out, &evalCorpus{name: name, root: root, state: state, queries: qs, ix: ix, files: fb})
	}
	return out
}

type evalSystem struct {
	name  string
	lines bool
	run   func(c *evalCorpus, q string) []EvalHit
}

// rankSystem is the index searched with the given weights.
func rankSystem(name string, p rankParams) evalSystem {
	return evalSystem{name, true, func(c *evalCorpus, q string) []EvalHit {
		hits, _, err := c.ix.search(context.Background(), q, 10, &p)
		if err != nil {
			panic(err)
		}
		return EvalHits(hits)
	}}
}

var fileBM25System = evalSystem{"BM25 whole files", false, func(c *evalCorpus, q string) []EvalHit {
	var out []EvalHit
	for _, p := range c.files.Search(q, 10) {
		out = append(out, EvalHit{Path: p})
	}
	return out
}}

// runSystems scores every system on every corpus.
func runSystems(cs []*evalCorpus, systems []evalSystem) *EvalRun {
	run := &EvalRun{}
	for _, c := range cs {
		run.Modules = append(run.Modules, c.name)
	}
	for _, s := range systems {
		run.Systems = append(run.Systems, s.name)
		run.Lines = append(run.Lines, s.lines)
		var per [][]EvalScore
		for _, c := range cs {
			var sc []EvalScore
			for qi := range c.queries {
				q := &c.queries[qi]
				sc = append(sc, ScoreHits(q, s.run(c, q.Query)))
			}
			per = append(per, sc)
		}
		run.Scores = append(run.Scores, per)
	}
	return run
}

func report(run *EvalRun) string {
	var b strings.Builder
	run.WriteReport(&b)
	return b.String()
}

// TestCommitSet scores the default search against BM25 over whole files on
// the commit sets and fails unless it beats it. -v prints the tables.
func TestCommitSet(t *testing.T) {
	cs := loadCommitCorpora(t)
	systems := []evalSystem{rankSystem("agentd", defaultRank), fileBM25System}
	run := runSystems(cs, systems)
	t.Log(report(run))
	ours, base := Aggregate(run.All(0), nil), Aggregate(run.All(1), nil)
	if ours.R10 <= base.R10 || ours.MRR <= base.MRR {
		t.Errorf("agentd (R@10 %.3f, MRR %.3f) does not beat BM25 over whole files (%.3f, %.3f)", ours.R10, ours.MRR, base.R10, base.MRR)
	}
	if os.Getenv("AGENTD_EVAL_DUMP") != "" {
		dumpQueries(t, run.All(0))
	}
}

// TestViewMatchesIndex checks that the memory-mapped snapshot ranks
// exactly as the index it was saved from, on every query of the sets.
func TestViewMatchesIndex(t *testing.T) {
	ctx := context.Background()
	for _, c := range loadCommitCorpora(t) {
		v, err := OpenView(c.root, c.state)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range c.queries {
			want, _, _ := c.ix.Search(ctx, q.Query, 10)
			got, err := v.Search(ctx, q.Query, 10)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(want, got) {
				t.Errorf("%s: %q: view and index differ", q.ID, q.Query)
				for i := range min(len(want), len(got)) {
					if !reflect.DeepEqual(want[i], got[i]) {
						t.Logf("hit %d: index %s %v view %s %v", i, want[i].Path, want[i].Score, got[i].Path, got[i].Score)
						break
					}
				}
			}
		}
		v.Close()
	}
}

// TestRankingAblations removes one part of the ranking at a time, with a
// paired bootstrap interval of the change in MRR and function recall. Run
// with -v for the table in docs/index.md.
func TestRankingAblations(t *testing.T) {
	cs := loadCommitCorpora(t)
	v := func(name string, f func(p *rankParams)) evalSystem {
		p := defaultRank
		f(&p)
		return rankSystem(name, p)
	}
	systems := []evalSystem{
		rankSystem("agentd (default)", defaultRank),
		v("no kind priors", func(p *rankParams) { p.testPrior, p.docsPrior, p.generatedPrior = 1, 1, 1 }),
		v("no file grouping (chunks ranked alone)", func(p *rankParams) { p.chunksOnly = true }),
		v("one chunk per file", func(p *rankParams) { p.perFile = 1 }),
		v("no header weight", func(p *rankParams) { p.headerWeight = 1 }),
		v("no function preference", func(p *rankParams) { p.nonFuncWeight = 1 }),
		v("no path evidence", func(p *rankParams) { p.pathWeight = 0 }),
		v("no symbol evidence", func(p *rankParams) { p.symbolWeight = 0 }),
		v("symbols for code-like words only", func(p *rankParams) { p.symbolIdentOnly = true }),
		v("no synonyms", func(p *rankParams) { p.synonymWeight = 0 }),
		v("no chunk floor (every matching chunk grouped)", func(p *rankParams) { p.minChunkScore = 0 }),
		v("no relevance cut-off", func(p *rankParams) { p.minTerms, p.minCover = 0, 0 }),
		v("chunks at a third of the file's best shown too", func(p *rankParams) { p.chunkShare = 0.3 }),
		v("no file-level evidence", func(p *rankParams) { p.fileWeight = 0 }),
		v("change verbs at full weight", func(p *rankParams) { p.verbWeight = 0 }),
		v("BM25 chunks only (no priors, grouping, evidence)", func(p *rankParams) {
			*p = rankParams{testPrior: 1, docsPrior: 1, generatedPrior: 1, headerWeight: 1, chunksOnly: true}
		}),
		fileBM25System,
	}
	run := runSystems(cs, systems)
	t.Log(report(run))
	var b strings.Builder
	fmt.Fprintf(&b, "\nchange against the default, all queries (paired bootstrap, 95%%)\n\n| system | Δ MRR | Δ file R@10 | Δ func R@10 |\n|---|---|---|---|\n")
	def := run.All(0)
	for i, s := range systems[1:] {
		if !s.lines {
			continue
		}
		alt := run.All(i + 1)
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", s.name,
			bootstrap(def, alt, func(e EvalScore) (float64, bool) { return rr(e), true }),
			bootstrap(def, alt, func(e EvalScore) (float64, bool) { return b2f(e.FileRank > 0), true }),
			bootstrap(def, alt, func(e EvalScore) (float64, bool) { return b2f(e.Func10), len(e.Query.Funcs) > 0 }))
	}
	t.Log(b.String())
}

func rr(e EvalScore) float64 {
	if e.FileRank == 0 {
		return 0
	}
	return 1 / float64(e.FileRank)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// bootstrap formats the mean paired difference alt − def of a per-query
// measure, with a 95% percentile interval over 2000 resamples.
func bootstrap(def, alt []EvalScore, m func(EvalScore) (float64, bool)) string {
	var diffs []float64
	for i := range def {
		a, ok := m(def[i])
		if !ok {
			continue
		}
		b, _ := m(alt[i])
		diffs = append(diffs, b-a)
	}
	mean := func(xs []float64) float64 {
		s := 0.0
		for _, x := range xs {
			s += x
		}
		return s / float64(len(xs))
	}
	r := rand.New(rand.NewPCG(1, 2))
	means := make([]float64, 2000)
	buf := make([]float64, len(diffs))
	for k := range means {
		for i := range buf {
			buf[i] = diffs[r.IntN(len(diffs))]
		}
		means[k] = mean(buf)
	}
	slices.Sort(means)
	return fmt.Sprintf("%+.3f [%+.3f, %+.3f]", mean(diffs), means[50], means[1949])
}

func dumpQueries(t *testing.T, scores []EvalScore) {
	var lines []string
	for _, s := range scores {
		lines = append(lines, fmt.Sprintf("%s rank=%d func=%v q=%q want=%v", s.Query.ID, s.FileRank, s.Func10, s.Query.Query, s.Query.Files))
	}
	slices.Sort(lines)
	t.Log("\n" + strings.Join(lines, "\n"))
}

// TestLabelsCalibrated checks that the words agree with the order and with
// how often they are right: on the commit sets, a file labelled strong is
// a file the commit changed more often than a partial one, and a partial
// one more often than a weak one; labels never rise down an answer. -v
// prints the table (docs/index.md, "Labels").
func TestLabelsCalibrated(t *testing.T) {
	cs := loadCommitCorpora(t)
	type tally struct{ right, all int }
	by := map[string]*tally{MatchStrong: {}, MatchPartial: {}, MatchWeak: {}}
	for _, c := range cs {
		for _, q := range c.queries {
			hits, _, err := c.ix.Search(context.Background(), q.Query, 10)
			if err != nil {
				t.Fatal(err)
			}
			for i, h := range hits {
				if i > 0 && labelRank(h.Match) > labelRank(hits[i-1].Match) {
					t.Errorf("%s: %q: %s (%s) after %s", q.ID, q.Query, h.Path, h.Match, hits[i-1].Match)
				}
				if i > 0 && h.Score > hits[i-1].Score {
					t.Errorf("%s: %q: %s scores %.2f after %.2f", q.ID, q.Query, h.Path, h.Score, hits[i-1].Score)
				}
				tl := by[h.Match]
				tl.all++
				if slices.Contains(q.Files, h.Path) {
					tl.right++
				}
			}
		}
	}
	share := func(l string) float64 { return float64(by[l].right) / float64(max(1, by[l].all)) }
	for _, l := range []string{MatchStrong, MatchPartial, MatchWeak} {
		t.Logf("%-8s %5d files, %.0f%% changed by the commit", l, by[l].all, 100*share(l))
	}
	if !(share(MatchStrong) > share(MatchPartial) && share(MatchPartial) > share(MatchWeak)) {
		t.Errorf("labels are not calibrated: strong %.2f, partial %.2f, weak %.2f", share(MatchStrong), share(MatchPartial), share(MatchWeak))
	}
}
