package rag

import (
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync"
)

// corpus is what ranking needs from an index. The in-memory Index (under
// its read lock) and the memory-mapped snapshot (View) both provide it, so
// the daemon and the command line rank alike.
type corpus interface {
	numDocs() int // live chunks
	avgDocLen() float64
	docSpace() int  // chunk numbers are below this
	fileSpace() int // file numbers are below this
	// postings returns term's chunks and frequencies, decoded into buf or
	// shared with the index (read only). Removed chunks may appear, with
	// docLen 0.
	postings(term string, buf *postingBuf) ([]int32, []uint16)
	docLen(doc int32) int32
	docFile(doc int32) int32
	docFlags(doc int32) uint8
	docStart(doc int32) int32 // first line: ties within a file go to the earlier chunk
	fileKind(f int32) fileKind
	filePath(f int32) string
	numFiles() int         // live files with chunks
	fileLen(f int32) int32 // the sum of its chunks' lengths; 0 for a removed file
}

// rankParams are the ranking's weights. Every one of them is measured, with
// and without, on real commit queries (docs/index.md, "Retrieval
// benchmark"); the tests flip them one at a time.
type rankParams struct {
	// Priors multiply a file's score by its kind, unless the query asks
	// for that kind by name.
	testPrior, docsPrior, generatedPrior, excludedPrior float64
	// headerWeight scales, within a file, a chunk holding the package
	// clause and imports: it names every package the file uses.
	// nonFuncWeight scales a chunk declaring no function (types, constants,
	// prose): what a change touches is most often a function.
	headerWeight, nonFuncWeight float64
	// pathWeight adds to a file's score the share of the query's weight its
	// path matches.
	pathWeight float64
	// symbolWeight adds, in units of the query's rarest term, to chunks
	// declaring a name the query writes, when at most maxSymbolDefs chunks
	// declare it; symbolIdentOnly restricts this to words that look like
	// code (CamelCase, snake_case, dotted).
	symbolWeight    float64
	maxSymbolDefs   int
	symbolIdentOnly bool
	// A file lists its chunks that score at least chunkShare of its best
	// one (by weight within the file), best first, up to perFile: every
	// chunk that matches, not only the best.
	chunkShare float64
	perFile    int
	// vecWeight adds vector similarity, in units of the best keyword score.
	vecWeight float64
	// synonymWeight weighs a query term's synonyms (synonymGroups) against
	// the term itself; a chunk with a synonym counts the term as matched.
	synonymWeight float64
	// headFiles is how many files get the path re-ranking.
	headFiles int
	// minChunkScore leaves out chunks scoring below this fraction of the
	// best: they cannot lift their file into the first hits.
	minChunkScore float64
	// A query is answered only when some hit matches minTerms of its
	// terms (all of them, for shorter queries) or minCover of its weight:
	// a question about something the workspace does not have gets "no
	// match", not noise (such questions match one word, by chance).
	minTerms int
	minCover float64
	// chunksOnly ranks chunks by their own score and kind, without
	// grouping them by file (an ablation: the file ranking is the default).
	chunksOnly bool
	// fileWeight mixes file-level BM25 (a file's chunks taken as one
	// document) into a file's score: a file whose chunks between them hold
	// the query's words, not one chunk alone.
	fileWeight float64
	// verbWeight scales the words a change request is phrased with (add,
	// fix, remove, support …): they say what to do, not where.
	verbWeight float64
}

// changeVerbs are the terms (as the tokenizer emits them) of the verbs and
// qualifiers a change is asked with.
var changeVerbs = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	var tk tokenizer
	for _, w := range strings.Fields(`add adds added fix fixes fixed remove removes removed update updates updated
		use uses using support supports allow allows make makes improve improves handle handles ensure avoid
		correct correctly properly instead unnecessary missing new now also should don't doesn't when more
		better wrong issue bug change changes changed refactor simplify clean cleanup`) {
		tk.each(w, func(b []byte) { m[string(b)] = true })
	}
	return m
})

var defaultRank = rankParams{
	testPrior:      0.3,
	docsPrior:      0.1,
	generatedPrior: 0.3,
	excludedPrior:  0.5,
	headerWeight:   0.5,
	nonFuncWeight:  0.5,
	pathWeight:     1,
	symbolWeight:   0.5,
	maxSymbolDefs:  20,
	chunkShare:     0.5,
	perFile:        4,
	vecWeight:      0.5,
	synonymWeight:  0.5,
	headFiles:      200,
	minChunkScore:  0.1,
	minTerms:       2,
	minCover:       0.5,
	fileWeight:     0.3,
	verbWeight:     0.25,
}

// parsedQuery is a query tokenized the way chunks are.
type parsedQuery struct {
	terms   []string   // unique index terms
	weights []float64  // by term: its IDF in the ranked corpus (set by rank)
	alts    [][]string // by term: its synonyms, searched at synonymWeight
	words   []string   // lowercased words that may name a symbol
	intent  queryIntent
}

func parseQuery(text string, p *rankParams) *parsedQuery {
	q := &parsedQuery{intent: intentOf(text)}
	var tk tokenizer
	seen := map[string]bool{}
	tk.each(text, func(b []byte) {
		if !seen[string(b)] {
			seen[string(b)] = true
			q.terms = append(q.terms, string(b))
		}
	})
	for _, t := range q.terms {
		var alts []string
		if p.synonymWeight > 0 {
			for _, a := range synonyms()[t] {
				if !seen[a] {
					alts = append(alts, a)
				}
			}
		}
		q.alts = append(q.alts, alts)
	}
	for _, w := range strings.FieldsFunc(text, func(r rune) bool {
		return !(r == '_' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) {
		w = strings.Trim(w, "._")
		if len(w) < 3 || p.symbolIdentOnly && !looksLikeCode(w) {
			continue
		}
		for _, k := range []string{strings.ToLower(w), strings.ToLower(w[strings.LastIndexByte(w, '.')+1:])} {
			if !seen["\x00"+k] && len(k) >= 3 {
				seen["\x00"+k] = true
				q.words = append(q.words, k)
			}
		}
	}
	return q
}

// queryTerms lists every term whose postings rank asks for (a store that
// fetches postings per query, like the team index, fetches these): the query's
// terms, their synonyms and the symbol keys of its words.
func queryTerms(q *parsedQuery) []string {
	var out []string
	for i, t := range q.terms {
		out = append(out, t)
		out = append(out, q.alts[i]...)
	}
	for _, w := range q.words {
		out = append(out, symbolTerm(w))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// looksLikeCode: ListenAndServe, read_file, http.Get; not prose.
func looksLikeCode(w string) bool {
	return strings.ContainsAny(w, "_.") || len(w) > 1 && strings.IndexFunc(w[1:], func(r rune) bool { return r >= 'A' && r <= 'Z' }) >= 0
}

// ranked is one chunk of an answer: answers are files, each with its
// matching chunks, so a ranking is a list of chunks grouped by file, files
// best first and each file's chunks best first.
type ranked struct {
	doc     int32
	score   float64 // the file's rank score
	cover   float64 // the share of the query's weight the chunk contains
	matched int     // query terms the chunk contains
	group   int     // the file's place in the answer, from 0
}

// rankScratch holds per-chunk accumulators between queries.
type rankScratch struct {
	score []float64
	mask  []uint64
	// File-level BM25: a term's frequency per file, the files it touched,
	// and the files' accumulated scores.
	ftf    []float64
	fscore []float64
	fterm  []int32
	fall   []int32
	buf    postingBuf
	file   []int32 // by file: 1 + index into aggs
	aggs   []fileAgg
	touch  []int32 // chunks with a score, reused
	kept   []int32
}

// postingBuf is where a corpus that stores postings encoded decodes them.
type postingBuf struct {
	docs []int32
	tfs  []uint16
}

var scratchPool sync.Pool

// fileAgg gathers one file's chunks.
type fileAgg struct {
	file  int32
	best  float64  // best chunk score
	top   [6]int32 // best chunks by weight within the file
	w     [6]float64
	n     int
	score float64
}

// rank scores every chunk that matches a query term with BM25, adds the
// symbol and vector evidence, groups chunks by file, weighs each file by
// its best chunk, its path and its kind, and interleaves the best chunks
// of each file. bonus, if not nil, adds to a file's score (open files).
func rank(c corpus, q *parsedQuery, vec []scored, p *rankParams, limit int, bonus func(path string) float64) []ranked {
	n := c.numDocs()
	if n == 0 || limit <= 0 {
		return nil
	}
	s, _ := scratchPool.Get().(*rankScratch)
	if s == nil {
		s = &rankScratch{}
	}
	defer scratchPool.Put(s)
	if len(s.score) < c.docSpace() {
		s.score = make([]float64, c.docSpace())
		s.mask = make([]uint64, c.docSpace())
	}
	if len(s.ftf) < c.fileSpace() {
		s.ftf = make([]float64, c.fileSpace())
		s.fscore = make([]float64, c.fileSpace())
	}
	fall := s.fall[:0]
	defer func() {
		for _, f := range fall {
			s.fscore[f] = 0
		}
		s.fall = fall[:0]
	}()
	nFiles := float64(c.numFiles())
	avgFile := float64(n) * c.avgDocLen() / max(1, nFiles)
	touched := s.touch[:0]
	defer func() { s.touch = touched[:0] }()
	avg := c.avgDocLen()
	weights := make([]float64, 0, len(q.terms))
	var totalW, maxIDF float64
	for i, t := range q.terms {
		bit := uint64(1) << min(i, 63)
		var w float64
		tscale := 1.0
		if p.verbWeight > 0 && changeVerbs()[t] {
			tscale = p.verbWeight
		}
		for k, v := range append([]string{t}, q.alts[i]...) {
			scale := tscale
			if k > 0 {
				scale *= p.synonymWeight
			}
			docs, tfs := c.postings(v, &s.buf)
			df := 0
			for _, d := range docs {
				if c.docLen(d) > 0 {
					df++
				}
			}
			idf := math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
			if k == 0 {
				// A word found nowhere weighs as much as the rarest
				// possible one: a query that is mostly such words has no
				// real match.
				w = idf * tscale
			}
			if df == 0 {
				continue
			}
			maxIDF = max(maxIDF, idf*scale)
			fterm := s.fterm[:0]
			for j, d := range docs {
				dl := c.docLen(d)
				if dl == 0 {
					continue
				}
				tf := float64(tfs[j])
				if s.score[d] == 0 && s.mask[d] == 0 {
					touched = append(touched, d)
				}
				s.score[d] += scale * idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*float64(dl)/avg))
				if i < 64 {
					s.mask[d] |= bit
				}
				if p.fileWeight > 0 {
					f := c.docFile(d)
					if s.ftf[f] == 0 {
						fterm = append(fterm, f)
					}
					s.ftf[f] += tf
				}
			}
			if len(fterm) > 0 {
				fdf := float64(len(fterm))
				fidf := math.Log(1 + (nFiles-fdf+0.5)/(fdf+0.5))
				for _, f := range fterm {
					tf := s.ftf[f]
					s.ftf[f] = 0
					if s.fscore[f] == 0 {
						fall = append(fall, f)
					}
					s.fscore[f] += scale * fidf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*float64(c.fileLen(f))/avgFile))
				}
			}
			s.fterm = fterm[:0]
		}
		weights = append(weights, w)
		totalW += w
	}
	q.weights = weights
	defer func() {
		for _, d := range touched {
			s.score[d], s.mask[d] = 0, 0
		}
	}()
	if len(touched) == 0 {
		return nil
	}
	for _, w := range q.words {
		docs, _ := c.postings(symbolTerm(w), &s.buf)
		if len(docs) == 0 || len(docs) > p.maxSymbolDefs {
			continue
		}
		for _, d := range docs {
			if c.docLen(d) == 0 {
				continue
			}
			if s.score[d] == 0 && s.mask[d] == 0 {
				touched = append(touched, d)
			}
			s.score[d] += p.symbolWeight * maxIDF
		}
	}
	maxScore := 0.0
	for _, d := range touched {
		maxScore = max(maxScore, s.score[d])
	}
	for _, v := range vec {
		if s.score[v.doc] == 0 && s.mask[v.doc] == 0 {
			touched = append(touched, v.doc)
		}
		s.score[v.doc] += p.vecWeight * v.score * maxScore
	}
	for _, d := range touched {
		maxScore = max(maxScore, s.score[d])
	}
	// Chunks far below the best cannot lift their file into the ranking;
	// leaving them out keeps the grouping cheap on common words.
	floor := p.minChunkScore * maxScore
	kept := s.kept[:0]
	defer func() { s.kept = kept[:0] }()
	for _, d := range touched {
		if s.score[d] >= floor {
			kept = append(kept, d)
		}
	}
	aggs := groupByFile(c, s, kept, p)
	cover := func(d int32) float64 {
		if totalW == 0 {
			return 0
		}
		got := 0.0
		for i, w := range weights[:min(len(weights), 64)] {
			if s.mask[d]&(1<<i) != 0 {
				got += w
			}
		}
		return got / totalW
	}
	maxF := 0.0
	for _, f := range fall {
		maxF = max(maxF, s.fscore[f])
	}
	fileScore := func(f int32) float64 {
		if maxF == 0 {
			return 0
		}
		return s.fscore[f] / maxF
	}
	head := scoreFiles(c, q, aggs, weights, totalW, maxScore, p, limit, bonus, fileScore)
	if p.chunksOnly {
		return chunksOnly(c, s, touched, aggs, maxScore, limit, len(q.terms), cover, p)
	}
	return groupFiles(s, head, p, limit, len(q.terms), cover)
}

// groupByFile collects each file's best chunks.
func groupByFile(c corpus, s *rankScratch, touched []int32, p *rankParams) []fileAgg {
	if len(s.file) < c.fileSpace() {
		s.file = make([]int32, c.fileSpace())
	}
	aggs := s.aggs[:0]
	defer func() { s.aggs = aggs[:0] }()
	for _, d := range touched {
		f := c.docFile(d)
		if s.file[f] == 0 {
			aggs = append(aggs, fileAgg{file: f})
			s.file[f] = int32(len(aggs))
		}
		a := &aggs[s.file[f]-1]
		sc := s.score[d]
		a.best = max(a.best, sc)
		w := sc
		flags := c.docFlags(d)
		if flags&chunkHeader != 0 {
			w *= p.headerWeight
		}
		if flags&chunkFunc == 0 {
			w *= p.nonFuncWeight
		}
		// Insert into the file's top list, best first, ties by position.
		better := func(j int) bool {
			return w > a.w[j] || w == a.w[j] && c.docStart(d) < c.docStart(a.top[j])
		}
		i := a.n
		if i == len(a.top) {
			if !better(i - 1) {
				continue
			}
			i--
		} else {
			a.n++
		}
		for i > 0 && better(i-1) {
			a.top[i], a.w[i] = a.top[i-1], a.w[i-1]
			i--
		}
		a.top[i], a.w[i] = d, w
	}
	for _, a := range aggs {
		s.file[a.file] = 0
	}
	return aggs
}

// scoreFiles weighs each file by its best chunk and its kind, then adds the
// path evidence to the head of the ranking.
func scoreFiles(c corpus, q *parsedQuery, aggs []fileAgg, weights []float64, totalW, maxScore float64, p *rankParams, limit int, bonus func(string) float64, fileScore func(int32) float64) []fileAgg {
	prior := func(k fileKind) float64 {
		switch {
		case k == kindTest && !q.intent.tests:
			return p.testPrior
		case k == kindDocs && !q.intent.docs:
			return p.docsPrior
		case k == kindGenerated:
			return p.generatedPrior
		case k == kindExcluded:
			return p.excludedPrior
		}
		return 1
	}
	for i := range aggs {
		a := &aggs[i]
		a.score = ((1-p.fileWeight)*a.best/maxScore + p.fileWeight*fileScore(a.file)) * prior(c.fileKind(a.file))
	}
	// Ties go to the earlier path, so that every index ranks alike
	// whatever its numbering.
	cmpAgg := func(a, b fileAgg) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return strings.Compare(c.filePath(a.file), c.filePath(b.file))
	}
	// Only the head is sorted: a file below the first headFiles (at least
	// limit) cannot rank among the first limit hits, since each head file
	// already has a hit scoring at least as much.
	head := topAggs(aggs, max(p.headFiles, limit), cmpAgg)
	if p.pathWeight == 0 && bonus == nil {
		return head
	}
	var tk tokenizer
	got := make([]float64, len(weights))
	for i := range head {
		a := &head[i]
		path := c.filePath(a.file)
		extra := 0.0
		if p.pathWeight > 0 && totalW > 0 {
			// Each query term counts once, a synonym at synonymWeight.
			clear(got)
			tk.each(path, func(b []byte) {
				for j, t := range q.terms {
					if t == string(b) {
						got[j] = weights[j]
					} else if slices.Contains(q.alts[j], string(b)) {
						got[j] = max(got[j], weights[j]*p.synonymWeight)
					}
				}
			})
			sum := 0.0
			for _, g := range got {
				sum += g
			}
			extra = p.pathWeight * sum / totalW
		}
		if bonus != nil {
			extra += bonus(path)
		}
		a.score += extra * prior(c.fileKind(a.file))
	}
	slices.SortFunc(head, cmpAgg)
	return head
}

// topAggs moves the n best files to the front of aggs, sorted, and
// returns them.
func topAggs(aggs []fileAgg, n int, cmp func(a, b fileAgg) int) []fileAgg {
	if len(aggs) <= 2*n {
		slices.SortFunc(aggs, cmp)
		return aggs[:min(n, len(aggs))]
	}
	// A min-heap of the best n by cmp, kept in aggs[:n].
	h := aggs[:n]
	less := func(i, j int) bool { return cmp(h[i], h[j]) > 0 } // worse first
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= n {
				return
			}
			c := l
			if r := l + 1; r < n && less(r, l) {
				c = r
			}
			if !less(c, i) {
				return
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	}
	for i := n/2 - 1; i >= 0; i-- {
		down(i)
	}
	for i := n; i < len(aggs); i++ {
		if cmp(aggs[i], h[0]) < 0 {
			h[0], aggs[i] = aggs[i], h[0]
			down(0)
		}
	}
	slices.SortFunc(h, cmp)
	return h
}

// groupFiles lists the first limit files, each with its chunks that
// score at least chunkShare of its best, best first.
func groupFiles(s *rankScratch, aggs []fileAgg, p *rankParams, limit, nTerms int, cover func(int32) float64) []ranked {
	var out []ranked
	for g, a := range aggs[:min(limit, len(aggs))] {
		for k := range min(a.n, p.perFile) {
			if k > 0 && a.w[k] < p.chunkShare*a.w[0] {
				break
			}
			d := a.top[k]
			out = append(out, ranked{doc: d, score: a.score, cover: cover(d), matched: bits.OnesCount64(s.mask[d]), group: g})
		}
	}
	return cutOff(out, nTerms, p)
}

// cutOff answers nothing when no hit clears the relevance thresholds.
func cutOff(out []ranked, nTerms int, p *rankParams) []ranked {
	best, terms := 0.0, 0
	for _, r := range out {
		best, terms = max(best, r.cover), max(terms, r.matched)
	}
	if best < p.minCover && terms < min(p.minTerms, nTerms) {
		return nil
	}
	return out
}

// insertRanked keeps out sorted by score (stable) and at most limit long.
func insertRanked(out []ranked, r ranked, limit int) []ranked {
	i := len(out)
	for i > 0 && out[i-1].score < r.score {
		i--
	}
	if i >= limit {
		return out
	}
	out = slices.Insert(out, i, r)
	return out[:min(len(out), limit)]
}

// chunksOnly ranks every chunk by its own score, scaled by its file's
// prior and path evidence, for the ablation.
func chunksOnly(c corpus, s *rankScratch, touched []int32, aggs []fileAgg, maxScore float64, limit, nTerms int, cover func(int32) float64, p *rankParams) []ranked {
	fileScale := map[int32]float64{}
	for _, a := range aggs {
		fileScale[a.file] = a.score / (a.best / maxScore)
	}
	var out []ranked
	for _, d := range touched {
		out = insertRanked(out, ranked{doc: d, score: s.score[d] / maxScore * fileScale[c.docFile(d)], cover: cover(d), matched: bits.OnesCount64(s.mask[d])}, limit)
	}
	for i := range out {
		out[i].group = i
	}
	return cutOff(out, nTerms, p)
}
