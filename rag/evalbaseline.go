package rag

import (
	"bytes"
	"context"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// FileBM25 is the benchmark's reference system: plain BM25 with one
// document per file (every text file under the root, no ignore rules, files
// over 1 MiB and binaries skipped), k1 = 1.2, b = 0.75; terms are the path
// and the text split into identifier parts (camelCase and snake_case parts,
// lowercased, plus the whole identifier), no stemming, query stop words
// removed. It shares nothing with the index on purpose: it is the yardstick
// the index must beat.
type FileBM25 struct {
	paths []string
	lens  []float64
	avg   float64
	post  map[string][]filePosting
}

type filePosting struct {
	doc int32
	tf  float32
}

// NewFileBM25 indexes every text file under root.
func NewFileBM25(ctx context.Context, root string) (*FileBM25, error) {
	b := &FileBM25{post: make(map[string][]filePosting)}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return ctx.Err()
		}
		data, err := os.ReadFile(p)
		if err != nil || len(data) > maxFileSize || bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 || !utf8.Valid(data) {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		tf := map[string]int{}
		n := 0
		for _, text := range []string{rel, string(data)} {
			baselineTerms(text, func(t string) { tf[t]++; n++ })
		}
		doc := int32(len(b.paths))
		b.paths = append(b.paths, rel)
		b.lens = append(b.lens, float64(n))
		for t, c := range tf {
			b.post[t] = append(b.post[t], filePosting{doc, float32(c)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, l := range b.lens {
		b.avg += l
	}
	b.avg /= float64(max(1, len(b.lens)))
	return b, nil
}

// Search returns up to k file paths, best first.
func (b *FileBM25) Search(query string, k int) []string {
	score := make([]float64, len(b.paths))
	seen := map[string]bool{}
	baselineTerms(query, func(t string) {
		if seen[t] || baselineStop()[t] {
			return
		}
		seen[t] = true
		ps := b.post[t]
		if len(ps) == 0 {
			return
		}
		n, df := float64(len(b.paths)), float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range ps {
			tf := float64(p.tf)
			score[p.doc] += idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*b.lens[p.doc]/b.avg))
		}
	})
	var docs []int32
	for d, s := range score {
		if s > 0 {
			docs = append(docs, int32(d))
		}
	}
	slices.SortFunc(docs, func(x, y int32) int {
		if score[x] != score[y] {
			if score[x] > score[y] {
				return -1
			}
			return 1
		}
		return strings.Compare(b.paths[x], b.paths[y])
	})
	out := make([]string, 0, min(k, len(docs)))
	for _, d := range docs[:min(k, len(docs))] {
		out = append(out, b.paths[d])
	}
	return out
}

// baselineTerms splits text into identifiers and their parts, lowercased.
func baselineTerms(text string, emit func(string)) {
	eachIdent(text, func(w string) {
		w = strings.Trim(w, "_")
		if w == "" || w[0] >= '0' && w[0] <= '9' {
			return
		}
		parts := 0
		forParts(w, func(p string) {
			if p = strings.Trim(p, "_"); p != "" {
				parts++
				emit(strings.ToLower(p))
			}
		})
		if parts > 1 {
			emit(strings.ToLower(w))
		}
	})
}

var baselineStop = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be been but by can could do does for from has have how if in into is it
		its may might more most must no not of on or should so some such than that the their them then there these they this
		those to too use used using was we were what when where which while who why will with would you your`) {
		m[w] = true
	}
	return m
})
