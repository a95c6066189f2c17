package rag

import (
	"cmp"
	"slices"
	"strings"
)

// hitMeta is what a chunk of an answer needs from the index, copied under
// the lock; its text is read afterwards.
type hitMeta struct {
	path    string
	kind    fileKind
	slot    slot
	cover   float64
	matched int
	group   int     // the file's place in the answer
	score   float64 // the file's rank score
	repo    string
}

func newHitMeta(path string, kind fileKind, sl slot, r ranked) hitMeta {
	return hitMeta{path: path, kind: kind, slot: sl, cover: r.cover, matched: r.matched, group: r.group, score: r.score}
}

// Snippet bounds: lines shown per chunk, characters per line.
const (
	snippetLines = 4
	snippetWidth = 160
)

// assembleHits turns an answer's chunks (grouped by file, files best
// first) into file hits: scores relative to the best file, labels that
// never rise down the list, each chunk's best lines with the query's words
// marked. texts are the chunks' texts, by meta.
func assembleHits(q *parsedQuery, metas []hitMeta, texts []string) []SearchHit {
	hits := make([]SearchHit, 0, len(metas))
	best := 0.0
	if len(metas) > 0 {
		best = metas[0].score
	}
	marker := newMarker(q)
	for i := range metas {
		m := &metas[i]
		if len(hits) == 0 || m.group != metas[i-1].group {
			rel := 0.0
			if best > 0 {
				rel = m.score / best
			}
			h := SearchHit{Repo: m.repo, Path: m.path, Kind: m.kind.String(), Score: round2(rel)}
			h.Match = matchLabel(rel, m.cover)
			if n := len(hits); n > 0 && labelRank(h.Match) > labelRank(hits[n-1].Match) {
				h.Match = hits[n-1].Match
			}
			hits = append(hits, h)
		}
		h := &hits[len(hits)-1]
		h.Chunks = append(h.Chunks, ChunkHit{
			StartLine: int(m.slot.Start), EndLine: int(m.slot.End), Symbol: m.slot.Symbol,
			Cover: round2(m.cover), Lines: marker.snippet(texts[i], int(m.slot.Start)), Text: texts[i],
		})
	}
	return hits
}

func round2(x float64) float64 { return float64(int(x*100+0.5)) / 100 }

// Labels are calibrated on the commit sets (docs/index.md, "Labels";
// TestLabelsCalibrated): on the shared set a strong file was one the
// commit changed 52% of the time, a partial one 18%, a weak one 5%. A
// file's label depends on its score relative to the answer's best and how
// much of the query its best chunk holds.
const (
	strongRel, strongCover   = 0.95, 0.4
	partialRel, partialCover = 0.65, 0.3
)

func matchLabel(rel, cover float64) string {
	switch {
	case rel >= strongRel && cover >= strongCover:
		return MatchStrong
	case rel >= partialRel && cover >= partialCover:
		return MatchPartial
	}
	return MatchWeak
}

func labelRank(l string) int {
	switch l {
	case MatchStrong:
		return 2
	case MatchPartial:
		return 1
	}
	return 0
}

// marker finds the query's words in lines.
type marker struct {
	weight map[string]float64 // term → its weight; synonyms less
	tk     tokenizer
}

func newMarker(q *parsedQuery) *marker {
	m := &marker{weight: map[string]float64{}}
	for i, t := range q.terms {
		w := 1.0
		if i < len(q.weights) {
			w = q.weights[i]
		}
		m.weight[t] = max(m.weight[t], w)
		for _, a := range q.alts[i] {
			m.weight[a] = max(m.weight[a], w/2)
		}
	}
	return m
}

// snippet picks the lines of a chunk holding the most of the query's
// weight (each word once a line), up to snippetLines, in file order, with
// every word of the query marked; a chunk that matches by its path alone
// shows its first lines.
func (m *marker) snippet(text string, start int) []SnippetLine {
	type cand struct {
		i     int
		w     float64
		marks []Span
	}
	var cands []cand
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		if len(line) > 4*snippetWidth {
			line = line[:4*snippetWidth]
		}
		var marks []Span
		var w float64
		seen := map[string]bool{}
		for off := 0; off < len(line); {
			if !isIdentByte(line[off]) {
				off++
				continue
			}
			end := off + 1
			for end < len(line) && isIdentByte(line[end]) {
				end++
			}
			hit := false
			m.tk.word(line[off:end], func(b []byte) {
				if wt, ok := m.weight[string(b)]; ok {
					hit = true
					if !seen[string(b)] {
						seen[string(b)] = true
						w += wt
					}
				}
			})
			if hit {
				marks = append(marks, Span{off, end})
			}
			off = end
		}
		if w > 0 {
			cands = append(cands, cand{i, w, marks})
		}
	}
	slices.SortStableFunc(cands, func(a, b cand) int { return cmp.Compare(b.w, a.w) })
	cands = cands[:min(len(cands), snippetLines)]
	slices.SortFunc(cands, func(a, b cand) int { return a.i - b.i })
	var out []SnippetLine
	for _, c := range cands {
		out = append(out, snippetLine(start+c.i, lines[c.i], c.marks))
	}
	if len(out) == 0 {
		for i, l := range lines {
			if strings.TrimSpace(l) != "" {
				out = append(out, snippetLine(start+i, l, nil))
			}
			if len(out) == 2 {
				break
			}
		}
	}
	return out
}

// snippetLine cuts a long line around its first mark.
func snippetLine(n int, line string, marks []Span) SnippetLine {
	if len(line) <= snippetWidth {
		return SnippetLine{Line: n, Text: line, Marks: marks}
	}
	from := 0
	if len(marks) > 0 && marks[0].Start > snippetWidth/3 {
		from = marks[0].Start - snippetWidth/3
	}
	for from > 0 && from < len(line) && line[from]&0xC0 == 0x80 {
		from--
	}
	to := min(len(line), from+snippetWidth)
	for to < len(line) && line[to]&0xC0 == 0x80 {
		to++
	}
	var kept []Span
	for _, s := range marks {
		if s.Start >= from && s.End <= to {
			kept = append(kept, Span{s.Start - from, s.End - from})
		}
	}
	text := line[from:to]
	if from > 0 {
		text = "…" + text
		for i := range kept {
			kept[i].Start += len("…")
			kept[i].End += len("…")
		}
	}
	if to < len(line) {
		text += "…"
	}
	return SnippetLine{Line: n, Text: text, Marks: kept}
}
