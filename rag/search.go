package rag

import (
	"context"
	"crypto/sha256"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/agentd/agentd/rpc/wire"
)

var (
	vecWeight         = 1.0
	vecMinSim float32 = 0.15
)

// Fusion constants. RRF's k=60 is the usual choice (Cormack et al.); each
// ranking contributes its top candidates. Boosts are expressed in units of a
// first place in one ranking, 1/(k+1).
const (
	rrfK          = 60
	candidates    = 50
	firstPlace    = 1.0 / (rrfK + 1)
	symbolBoost   = 2 * firstPlace   // the query names the chunk's symbol
	pathBoost     = 1 * firstPlace   // the query names the chunk's file
	openBoost     = 0.5 * firstPlace // the file is open in the editor
	recentBoost   = 0.25 * firstPlace
	recentWindow  = 10 * time.Minute
	maxSymbolFans = 20 // a symbol defined more often (String, Error) only boosts, never adds
)

// Search answers query with up to limit chunks, best first. partial is true
// while the index is still being built: the answer covers what is indexed.
func (ix *Index) Search(ctx context.Context, query string, limit int) ([]wire.SearchHit, bool, error) {
	if limit <= 0 {
		limit = 10
	}
	lex, vec, err := ix.rankings(ctx, query, candidates)
	if err != nil {
		return nil, false, err
	}
	ix.mu.RLock()
	fused := ix.fuseLocked(query, lex, vec, time.Now())
	fused = fused[:min(limit, len(fused))]
	slots := make([]slot, len(fused))
	for i, f := range fused {
		slots[i] = *ix.slots[f.doc]
	}
	partial := ix.state == StateIndexing
	ix.mu.RUnlock()
	// The text is read from the files outside the lock.
	hits := make([]wire.SearchHit, 0, len(fused))
	for i, f := range fused {
		sl := &slots[i]
		text, _ := ix.readText(sl)
		hits = append(hits, wire.SearchHit{
			Path:      sl.Path,
			StartLine: int(sl.Start),
			EndLine:   int(sl.End),
			Symbol:    sl.Symbol,
			Score:     f.score,
			Text:      text,
		})
	}
	return hits, partial, nil
}

// readText reads a chunk's text back from its file. ok is false when the
// file no longer holds the indexed text (it changed since, and the update is
// queued): the lines the chunk covered are returned as they are now, or ""
// if the file is gone.
func (ix *Index) readText(sl *slot) (text string, ok bool) {
	f, err := os.Open(ix.abs(sl.Path))
	if err != nil {
		return "", false
	}
	defer f.Close()
	buf := make([]byte, sl.Len)
	if n, err := f.ReadAt(buf, int64(sl.Off)); err == nil || n == len(buf) {
		text = cleanText(string(buf))
		h := sha256.New()
		var b [64]byte
		h.Write(appendIndexText(b[:0], sl.Path, sl.Symbol, ""))
		io.WriteString(h, text)
		if [16]byte(h.Sum(nil)) == sl.hash {
			return text, true
		}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", false
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return "", false
	}
	lines, _ := splitLines(string(data))
	if int(sl.Start) > len(lines) {
		return "", false
	}
	return strings.Join(lines[sl.Start-1:min(int(sl.End), len(lines))], "\n"), false
}

// rankings returns the BM25 and the vector rankings of query, as slots. An
// embedder failure degrades to BM25 alone: a remote endpoint being down must
// not break search.
func (ix *Index) rankings(ctx context.Context, query string, n int) (lex, vec []int32, err error) {
	var tk tokenizer
	bag := countTerms(&tk, query)
	ix.mu.RLock()
	emb := ix.emb
	ix.mu.RUnlock()
	var qv []float32
	if le, ok := emb.(*localEmbedder); ok {
		qv = le.vector(bag)
	} else if vs, err := emb.Embed(ctx, []string{query}); err != nil {
		ix.log.Warn("index: embed query, answering with BM25 only", "err", err)
	} else if len(vs) == 1 {
		qv = vs[0]
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	for _, s := range ix.bm.search(bag.terms, n) {
		lex = append(lex, s.doc)
	}
	if qv == nil || emb != ix.emb || !normalize(qv) {
		return lex, nil, nil
	}
	// A nearest neighbour below vecMinSim is noise, not an answer.
	for _, s := range ix.vec.query(qv, n, vecMinSim) {
		vec = append(vec, s.doc)
	}
	return lex, vec, nil
}

// fuseLocked merges the rankings by reciprocal rank fusion and applies the
// boosts. Symbols the query names exactly join the candidates even when
// neither ranking found them.
func (ix *Index) fuseLocked(query string, lex, vec []int32, now time.Time) []scored {
	score := make(map[int32]float64, len(lex)+len(vec))
	for r, n := range lex {
		score[n] += 1.0 / float64(rrfK+r+1)
	}
	for r, n := range vec {
		score[n] += vecWeight / float64(rrfK+r+1)
	}
	for _, w := range identWords(query) {
		slots := ix.symbols[strings.ToLower(w)]
		for _, n := range slots {
			if _, ok := score[n]; ok || len(slots) <= maxSymbolFans {
				score[n] += symbolBoost
			}
		}
	}
	paths := pathWords(query)
	for n := range score {
		p := ix.slots[n].Path
		for _, w := range paths {
			if p == w || strings.HasSuffix(p, "/"+w) {
				score[n] += pathBoost
			}
		}
		if ix.open[p] {
			score[n] += openBoost
		}
		if t, ok := ix.recent[p]; ok && now.Sub(t) < recentWindow {
			score[n] += recentBoost
		}
	}
	out := make([]scored, 0, len(score))
	for n, s := range score {
		out = append(out, scored{n, s})
	}
	slices.SortFunc(out, func(a, b scored) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		return int(a.doc - b.doc)
	})
	return out
}

// identWords are the words of a query that look like code identifiers
// (ListenAndServe, read_file, http.Get), as opposed to prose.
func identWords(query string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(query, func(r rune) bool {
		return !(r == '_' || r == '.' || unicode.IsLetter(r) || unicode.IsDigit(r))
	}) {
		w = strings.Trim(w, "._")
		if len(w) < 3 {
			continue
		}
		if strings.ContainsAny(w, "_.") || strings.IndexFunc(w[1:], unicode.IsUpper) >= 0 {
			out = append(out, w)
			if i := strings.LastIndexByte(w, '.'); i >= 0 && i+1 < len(w) {
				out = append(out, w[i+1:])
			}
		}
	}
	return out
}

// pathWords are the words of a query that name files: with a slash, or
// with a known extension.
func pathWords(query string) []string {
	var out []string
	for _, w := range strings.Fields(query) {
		w = strings.Trim(w, "`'\",;:()")
		if strings.Contains(w, "/") || languages[path.Ext(w)] != "" {
			out = append(out, strings.TrimPrefix(w, "./"))
		}
	}
	return out
}
