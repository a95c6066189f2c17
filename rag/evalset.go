package rag

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// This file scores a search against a commit set: queries that are the
// subjects of real commits, each answered by the files and functions the
// commit changed (docs/index.md, "Retrieval benchmark"). It is exported so
// `agentd eval-search` and the package's tests share one implementation.

// EvalQuery is one record of a commit set (a JSON line).
type EvalQuery struct {
	ID      string     `json:"id"`
	Query   string     `json:"query"`
	Module  string     `json:"module"`
	Version string     `json:"version"`
	Files   []string   `json:"files"`
	Funcs   []EvalFunc `json:"funcs"`
	NoLeak  bool       `json:"noleak"`
}

// EvalFunc is a target function: lines start–end (1-based, inclusive) of path.
type EvalFunc struct {
	Path  string `json:"path"`
	Name  string `json:"name"`
	Start int    `json:"start"`
	End   int    `json:"end"`
}

// LoadEvalSet reads a commit set, one JSON record a line.
func LoadEvalSet(file string) ([]EvalQuery, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("load eval set: %w", err)
	}
	defer f.Close()
	var out []EvalQuery
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var q EvalQuery
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", file, line, err)
		}
		if q.Query == "" || q.Module == "" || q.Version == "" || len(q.Files) == 0 {
			return nil, fmt.Errorf("%s:%d: a record needs query, module, version and files", file, line)
		}
		out = append(out, q)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("load eval set: %w", err)
	}
	return out, nil
}

// ErrModuleMissing means a corpus is not in the module cache; the caller
// says how to fetch it (`go mod download MODULE@VERSION`).
var ErrModuleMissing = errors.New("module not in the module cache")

// ModuleDir finds module@version in the Go module cache without
// downloading anything.
func ModuleDir(ctx context.Context, module, version string) (string, error) {
	cache := os.Getenv("GOMODCACHE")
	if cache == "" {
		out, err := exec.CommandContext(ctx, "go", "env", "GOMODCACHE").Output()
		if err != nil {
			return "", fmt.Errorf("go env GOMODCACHE: %w", err)
		}
		cache = strings.TrimSpace(string(out))
	}
	dir := filepath.Join(cache, filepath.FromSlash(escapeModule(module))+"@"+escapeModule(version))
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%s@%s: %w", module, version, ErrModuleMissing)
	}
	return dir, nil
}

// escapeModule is the module cache's case encoding: an upper-case letter
// becomes '!' and its lower case.
func escapeModule(p string) string {
	var b strings.Builder
	for _, r := range p {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('!')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// EvalHit is one ranked answer: a file, and a line range when the system
// has one (0, 0 for a whole file).
type EvalHit struct {
	Path       string
	Start, End int
}

// EvalScore is one system's answer to one query, scored.
type EvalScore struct {
	Query    *EvalQuery
	FileRank int  // 1-based rank of the first target file among the distinct files of the first 10 hits; 0 = none
	All10    bool // every target file is among them
	Func10   bool // a hit of the first 10 overlaps a target function
	Files    int  // distinct files among the first 10 hits
}

// EvalHits flattens an answer into the hits the benchmark scores: each
// file's chunks in the order shown.
func EvalHits(hits []SearchHit) []EvalHit {
	var out []EvalHit
	for _, h := range hits {
		for _, c := range h.Chunks {
			out = append(out, EvalHit{h.Path, c.StartLine, c.EndLine})
		}
	}
	return out
}

// ScoreHits scores a ranked list of hits for q: the file ranking is the
// distinct paths in order of first appearance, the first 10 of them (an
// answer of 10 files, as BM25 over whole files gives); function recall
// counts the first 10 hits (chunks, in the order shown).
func ScoreHits(q *EvalQuery, hits []EvalHit) EvalScore {
	s := EvalScore{Query: q}
	var files []string
	for _, h := range hits {
		if !slices.Contains(files, h.Path) && len(files) < 10 {
			files = append(files, h.Path)
		}
	}
	for _, h := range hits[:min(10, len(hits))] {
		for _, f := range q.Funcs {
			if h.Path == f.Path && h.End > 0 && h.Start <= f.End && f.Start <= h.End {
				s.Func10 = true
			}
		}
	}
	s.Files = len(files)
	for i, f := range files {
		if slices.Contains(q.Files, f) {
			s.FileRank = i + 1
			break
		}
	}
	s.All10 = true
	for _, f := range q.Files {
		if !slices.Contains(files, f) {
			s.All10 = false
		}
	}
	return s
}

// EvalRow aggregates scores: file recall at 1, 5 and 10, MRR, all@10 and
// function recall@10 (over the queries with a function target).
type EvalRow struct {
	N, NFunc                    int
	R1, R5, R10, MRR, All, Func float64
	FilesPerQuery               float64
}

// Aggregate computes a row over the scores keep accepts.
func Aggregate(scores []EvalScore, keep func(*EvalQuery) bool) EvalRow {
	var r EvalRow
	for _, s := range scores {
		if keep != nil && !keep(s.Query) {
			continue
		}
		r.N++
		if s.FileRank > 0 {
			r.MRR += 1 / float64(s.FileRank)
			if s.FileRank <= 1 {
				r.R1++
			}
			if s.FileRank <= 5 {
				r.R5++
			}
			r.R10++
		}
		if s.All10 {
			r.All++
		}
		if len(s.Query.Funcs) > 0 {
			r.NFunc++
			if s.Func10 {
				r.Func++
			}
		}
		r.FilesPerQuery += float64(s.Files)
	}
	if r.N > 0 {
		n := float64(r.N)
		r.R1, r.R5, r.R10, r.MRR, r.All, r.FilesPerQuery = r.R1/n, r.R5/n, r.R10/n, r.MRR/n, r.All/n, r.FilesPerQuery/n
	}
	if r.NFunc > 0 {
		r.Func /= float64(r.NFunc)
	}
	return r
}

// EvalRun holds the scores of several systems on the modules of a set:
// Scores[system][module][query].
type EvalRun struct {
	Systems []string
	Lines   []bool // the system returns line ranges (function recall applies)
	Modules []string
	Scores  [][][]EvalScore
}

// All returns a system's scores over every module.
func (r *EvalRun) All(system int) []EvalScore {
	var all []EvalScore
	for _, s := range r.Scores[system] {
		all = append(all, s...)
	}
	return all
}

// WriteReport prints the tables: all queries, the noleak subset, and per
// module.
func (r *EvalRun) WriteReport(w io.Writer) {
	for _, sub := range []struct {
		title string
		keep  func(*EvalQuery) bool
	}{{"All queries", nil}, {"The noleak subset", func(q *EvalQuery) bool { return q.NoLeak }}} {
		rows := make([]EvalRow, len(r.Systems))
		for i := range r.Systems {
			rows[i] = Aggregate(r.All(i), sub.keep)
		}
		fmt.Fprintf(w, "\n%s: %d queries, %d with a function target\n\n", sub.title, rows[0].N, rows[0].NFunc)
		WriteEvalTable(w, r.Systems, rows, r.Lines)
	}
	fmt.Fprintf(w, "\nPer module, all queries: file R@1 / R@10 / MRR / func R@10\n\n| system |")
	for m, name := range r.Modules {
		fmt.Fprintf(w, " %s (%d) |", name, len(r.Scores[0][m]))
	}
	fmt.Fprintf(w, "\n|---|%s\n", strings.Repeat("---|", len(r.Modules)))
	for i, name := range r.Systems {
		fmt.Fprintf(w, "| %s |", name)
		for m := range r.Modules {
			row := Aggregate(r.Scores[i][m], nil)
			fn := "–"
			if r.Lines[i] {
				fn = fmt.Sprintf("%.2f", row.Func)
			}
			fmt.Fprintf(w, " %.2f / %.2f / %.2f / %s |", row.R1, row.R10, row.MRR, fn)
		}
		fmt.Fprintln(w)
	}
}

// WriteEvalTable prints rows as a markdown table; funcs is false for
// systems without line ranges.
func WriteEvalTable(w io.Writer, names []string, rows []EvalRow, funcs []bool) {
	fmt.Fprintln(w, "| system | file R@1 | R@5 | R@10 | MRR | all@10 | func R@10 |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for i, r := range rows {
		fn := "–"
		if funcs[i] {
			fn = fmt.Sprintf("%.3f", r.Func)
		}
		fmt.Fprintf(w, "| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %s |\n", names[i], r.R1, r.R5, r.R10, r.MRR, r.All, fn)
	}
}
