package rag

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"hash/fnv"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// The paraphrase measure: questions phrased unlike the code. Each query is
// a function's doc comment (its first sentence, without the function's
// name), and the comment is removed from the indexed copy of the module,
// so only the code itself can answer. A query is found when a hit among
// the first 10 chunks overlaps the function (function R@10) or its file
// is among the first 10 files (file R@10). The modules are the shared
// set's (testdata/commits).

type paraQuery struct {
	query      string
	path       string
	start, end int
}

// paraphraseCorpus copies a module with the doc comments of a sample of
// its functions blanked (line numbers kept) and returns the copy and the
// queries.
func paraphraseCorpus(t *testing.T, src string, n int) (string, []paraQuery) {
	t.Helper()
	type cand struct {
		paraQuery
		file        string
		from, to    int // the comment's byte range
		name, first string
	}
	var cands []cand
	fset := token.NewFileSet()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			if b := d.Name(); rel != "." && (b == "testdata" || b == "vendor" || strings.HasPrefix(b, ".") || strings.HasPrefix(b, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return nil
		}
		if kindOf(filepath.ToSlash(rel)) != kindCode {
			return nil
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Doc == nil || fd.Body == nil {
				continue
			}
			q := firstSentence(fd.Doc.Text(), fd.Name.Name)
			if len(strings.Fields(q)) < 5 || strings.Contains(strings.ToLower(q), strings.ToLower(fd.Name.Name)) {
				continue
			}
			c := cand{file: p, from: fset.Position(fd.Doc.Pos()).Offset, to: fset.Position(fd.Doc.End()).Offset, name: fd.Name.Name}
			c.paraQuery = paraQuery{query: q, path: filepath.ToSlash(rel), start: fset.Position(fd.Pos()).Line, end: fset.Position(fd.End()).Line}
			cands = append(cands, c)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(cands, func(a, b cand) int { return strings.Compare(a.path+a.name, b.path+b.name) })
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
	cands = cands[:min(n, len(cands))]

	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	blank := map[string][][2]int{}
	var qs []paraQuery
	for _, c := range cands {
		blank[c.file] = append(blank[c.file], [2]int{c.from, c.to})
		qs = append(qs, c.paraQuery)
	}
	for file, spans := range blank {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range spans {
			for i := s[0]; i < s[1]; i++ {
				if data[i] != '\n' {
					data[i] = ' '
				}
			}
		}
		rel, _ := filepath.Rel(src, file)
		out := filepath.Join(dst, rel)
		os.Chmod(out, 0o644)
		if err := os.WriteFile(out, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst, qs
}

// firstSentence is a doc comment's first sentence without the name it
// starts with ("Foo reports whether" → "reports whether").
func firstSentence(doc, name string) string {
	doc = strings.Join(strings.Fields(doc), " ")
	if i := strings.Index(doc, ". "); i >= 0 {
		doc = doc[:i]
	}
	doc = strings.TrimSuffix(doc, ".")
	if w, rest, ok := strings.Cut(doc, " "); ok && strings.EqualFold(strings.Trim(w, "*()"), name) {
		doc = rest
	}
	return doc
}

type paraScore struct{ file, fn, n int }

func (s paraScore) String() string {
	return fmt.Sprintf("file R@10 %.3f, function R@10 %.3f (%d queries)", float64(s.file)/float64(s.n), float64(s.fn)/float64(s.n), s.n)
}

func scoreParaphrase(t *testing.T, ix *Index, qs []paraQuery) paraScore {
	t.Helper()
	var s paraScore
	for _, q := range qs {
		hits, _, err := ix.Search(context.Background(), q.query, 10)
		if err != nil {
			t.Fatal(err)
		}
		s.n++
		for i, h := range hits {
			if h.Path == q.path && i < 10 {
				s.file++
				break
			}
		}
		for _, e := range EvalHits(hits)[:min(10, len(EvalHits(hits)))] {
			if e.Path == q.path && e.Start <= q.end && q.start <= e.End {
				s.fn++
				break
			}
		}
	}
	return s
}

// TestParaphrase scores keyword search, and keyword search fused with word
// vectors learned from the workspace itself (wordVectors), on the
// paraphrase measure. -v prints the figures (docs/index.md, "Questions in
// other words").
func TestParaphrase(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes modules from the module cache")
	}
	sets, _ := filepath.Glob("testdata/commits/*.jsonl")
	ctx := context.Background()
	var kw, vec paraScore
	for _, set := range sets {
		qs, err := LoadEvalSet(set)
		if err != nil {
			t.Fatal(err)
		}
		src, err := ModuleDir(ctx, qs[0].Module, qs[0].Version)
		if err != nil {
			t.Skipf("%v: run `go mod download %s@%s` outside a module to fetch it", err, qs[0].Module, qs[0].Version)
		}
		root, pqs := paraphraseCorpus(t, src, 100)
		ix, err := Open(ctx, Options{Root: root, StateDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if err := ix.Build(ctx, nil); err != nil {
			t.Fatal(err)
		}
		k := scoreParaphrase(t, ix, pqs)
		ix.Close()
		emb := learnWordVectors(t, root)
		vx, err := Open(ctx, Options{Root: root, StateDir: t.TempDir(), Embedder: emb})
		if err != nil {
			t.Fatal(err)
		}
		if err := vx.Build(ctx, nil); err != nil {
			t.Fatal(err)
		}
		v := scoreParaphrase(t, vx, pqs)
		vx.Close()
		name := strings.TrimSuffix(filepath.Base(set), ".jsonl")
		t.Logf("%s: keywords %v; with workspace word vectors %v", name, k, v)
		kw.file, kw.fn, kw.n = kw.file+k.file, kw.fn+k.fn, kw.n+k.n
		vec.file, vec.fn, vec.n = vec.file+v.file, vec.fn+v.fn, vec.n+v.n
	}
	if kw.n == 0 {
		t.Skip("no modules")
	}
	t.Logf("all: keywords %v; with workspace word vectors %v", kw, vec)
	// Doc comments removed, keywords still find the function for a good
	// share of them: the code's own names and words answer.
	if float64(kw.fn)/float64(kw.n) < 0.3 {
		t.Errorf("keyword search finds too few functions from their doc comments: %v", kw)
	}
}

// wordVectors are random-indexing word vectors learned from a workspace's
// own identifiers and comments: each term's vector sums the random index
// vectors of the terms around it (±4), so terms used alike end up alike. A
// text's vector is its terms' vectors weighted by IDF.
type wordVectors struct {
	vec map[string][]float32
	idf map[string]float32
}

const wvDims = 256

func learnWordVectors(t *testing.T, root string) *wordVectors {
	t.Helper()
	index := func(term string) []int {
		h := fnv.New64a()
		h.Write([]byte(term))
		r := rand.New(rand.NewPCG(h.Sum64(), 7))
		return []int{r.IntN(wvDims) + 1, -(r.IntN(wvDims) + 1), r.IntN(wvDims) + 1, -(r.IntN(wvDims) + 1)}
	}
	wv := &wordVectors{vec: map[string][]float32{}, idf: map[string]float32{}}
	df := map[string]int{}
	docs := 0
	var tk tokenizer
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		var toks []string
		seen := map[string]bool{}
		tk.each(string(data), func(b []byte) {
			if len(b) > 1 && unicode.IsLetter(rune(b[0])) {
				toks = append(toks, string(b))
			}
		})
		docs++
		for i, w := range toks {
			if !seen[w] {
				seen[w] = true
				df[w]++
			}
			v := wv.vec[w]
			if v == nil {
				v = make([]float32, wvDims)
				wv.vec[w] = v
			}
			for j := max(0, i-4); j < min(len(toks), i+5); j++ {
				if j == i || toks[j] == w {
					continue
				}
				for _, k := range index(toks[j]) {
					if k > 0 {
						v[k-1]++
					} else {
						v[-k-1]--
					}
				}
			}
		}
		return nil
	})
	for w, n := range df {
		wv.idf[w] = float32(math.Log(1 + float64(docs)/float64(n)))
		normalize(wv.vec[w])
	}
	return wv
}

func (wv *wordVectors) Name() string { return "workspace-word-vectors" }

func (wv *wordVectors) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	var tk tokenizer
	out := make([][]float32, len(texts))
	for i, text := range texts {
		v := make([]float32, wvDims)
		tk.each(text, func(b []byte) {
			w := string(b)
			if u, ok := wv.vec[w]; ok {
				for k := range v {
					v[k] += wv.idf[w] * u[k]
				}
			}
		})
		normalize(v)
		out[i] = v
	}
	return out, nil
}
