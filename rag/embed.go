package rag

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"sync"
)

// Embedder turns texts into vectors for the similarity side of search.
// Implementations must be safe for concurrent use. Vectors need not be
// normalised: the index normalises them, because chromem-go trusts that they
// are and would otherwise report similarities above 1.
type Embedder interface {
	// Name identifies the model; it keys the embedding cache, so it must
	// change whenever the vectors would.
	Name() string
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Local embedder shape. 256 dimensions keep chromem-go's exhaustive scan
// cheap; the model vocabulary caps bound the snapshot size.
const (
	localDim        = 256
	localVocab      = 60000 // terms with a learnt IDF
	localCtxVocab   = 20000 // terms with a context vector
	localIndexNNZ   = 4     // nonzeros of a term's random index vector
	localMinDocsFit = 20    // below this a co-occurrence model is noise
)

// Weights of the parts of a local vector, relative to the lexical part, as
// chosen by the retrieval evaluation (docs/index.md): IDF weighting made
// the vectors a worse copy of BM25 (MRR 0.23 against 0.44 without), so the
// vectors use sublinear tf only and leave rarity to BM25. Variables, not
// constants, so the evaluation can measure each part's contribution.
var (
	localCtxWeight   float32 = 0.5 // co-occurrence
	localNgramWeight float32 = 0.5 // character trigrams of terms
	localUseIDF              = false
)

// localEmbedder is the default embedder: no network, no weights to download.
// A vector is the sum of three normalised parts over the chunk's terms, each
// weighted by 1+log tf:
//
//   - lexical: signed feature hashing of the term;
//   - sub-word: hashed character trigrams of terms of five letters or more,
//     so "escaped" meets "escape" and "interp" meets "interpreter";
//   - semantic: the term's context vector, learnt by random indexing over the
//     workspace's own chunks (the sum of the random index vectors of the
//     chunks the term occurs in), so "glob" and "pattern" or "retry" and
//     "backoff" end up close when the code uses them together.
//
// A localEmbedder is immutable; refitting makes a new one with a new Name.
type localEmbedder struct {
	model *localModel // nil before the first fit: lexical part only
	pool  sync.Pool   // *tokenizer
}

// localModel is the fitted part, persisted in the snapshot.
type localModel struct {
	Docs  int // chunks it was fitted on
	Vocab []string
	IDF   []float32
	Ctx   []byte    // int8 values, localDim per term of Vocab[:len(Scale)]; bytes so gob copies them whole
	Scale []float32 // per-row dequantisation factor

	index map[string]int32
	name  string
}

func newLocalEmbedder(m *localModel) *localEmbedder {
	e := &localEmbedder{model: m}
	e.pool.New = func() any { return new(tokenizer) }
	if m != nil {
		m.prepare()
	}
	return e
}

func (e *localEmbedder) Name() string {
	if e.model == nil {
		return fmt.Sprintf("local-hash%d-v1", localDim)
	}
	return e.model.name
}

func (e *localEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	tk := e.pool.Get().(*tokenizer)
	defer e.pool.Put(tk)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%256 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		out[i] = e.vector(countTerms(tk, t))
	}
	return out, nil
}

// vector embeds a bag of terms; the index calls vectorInto directly with
// the bags it already has, skipping a second tokenization.
func (e *localEmbedder) vector(tf termFreqs) []float32 {
	out := make([]float32, localDim)
	var scr vecScratch
	e.vectorInto(out, tf, &scr)
	return out
}

// vecScratch holds the sub-word and co-occurrence accumulators between calls.
type vecScratch struct {
	ngr, sem []float32
}

// vectorInto writes the vector of tf into lex (localDim long).
func (e *localEmbedder) vectorInto(lex []float32, tf termFreqs, scr *vecScratch) {
	clear(lex)
	if scr.ngr == nil {
		scr.ngr = make([]float32, localDim)
		scr.sem = make([]float32, localDim)
	}
	var sem, ngr []float32 // nil until used
	for i, t := range tf.terms {
		row := int32(-1)
		idf := float32(1)
		if e.model != nil {
			idf = e.model.maxIDF()
			if r, ok := e.model.index[t]; ok {
				row, idf = r, e.model.IDF[r]
			}
			if !localUseIDF {
				idf = 1
			}
		}
		w := (1 + float32(math.Log(float64(tf.freqs[i])))) * idf
		addHashed(lex, t, w, 1)
		if localNgramWeight > 0 && len(t) >= 5 {
			if ngr == nil {
				ngr = scr.ngr
				clear(ngr)
			}
			g := w / float32(len(t)-2)
			for k := 0; k+3 <= len(t); k++ {
				addHashedTrigram(ngr, t[k:k+3], g)
			}
		}
		if row >= 0 && int(row) < len(e.model.Scale) {
			if sem == nil {
				sem = scr.sem
				clear(sem)
			}
			// Rows stay int8 in memory, dequantised here (same arithmetic
			// as a float copy, 4× less memory).
			c := e.model.Ctx[int(row)*localDim : int(row+1)*localDim]
			sc := e.model.Scale[row]
			for j, x := range c {
				sem[j] += w * (float32(int8(x)) * sc)
			}
		}
	}
	normalize(lex)
	if ngr != nil && normalize(ngr) {
		for j := range lex {
			lex[j] += localNgramWeight * ngr[j]
		}
		normalize(lex)
	}
	if sem != nil && normalize(sem) {
		for j := range lex {
			lex[j] += localCtxWeight * sem[j]
		}
		normalize(lex)
	}
}

// FNV-1a, 64 bits, inlined: hash/fnv allocates behind its interface.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

// addHashed adds w at nnz signed positions chosen by hashing term.
func addHashed(v []float32, term string, w float32, nnz int) {
	addHashedSum(v, fnvString(fnvOffset, term), w, nnz)
}

// addHashedTrigram is addHashed of "#"+tri (trigram features live apart
// from whole terms) without building the string.
func addHashedTrigram(v []float32, tri string, w float32) {
	h := uint64(fnvOffset)
	h ^= '#'
	h *= fnvPrime
	addHashedSum(v, fnvString(h, tri), w, 1)
}

func addHashedSum(v []float32, x uint64, w float32, nnz int) {
	for k := 0; k < nnz; k++ {
		if k > 0 {
			x = x*0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019 // splitmix-style step
			x ^= x >> 29
		}
		sign := float32(1)
		if x>>63 == 1 {
			sign = -1
		}
		v[(x>>1)%uint64(len(v))] += sign * w
	}
}

// normalize scales v to unit length in place and reports whether it was
// non-zero.
func normalize(v []float32) bool {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return false
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
	return true
}

func (m *localModel) maxIDF() float32 {
	return float32(math.Log(1 + (float64(m.Docs) + 0.5)))
}

// prepare builds the lookup structures that are not persisted.
func (m *localModel) prepare() {
	m.index = make(map[string]int32, len(m.Vocab))
	for i, t := range m.Vocab {
		m.index[t] = int32(i)
	}
	h := fnv.New64a()
	var b [4]byte
	for i, t := range m.Vocab {
		h.Write([]byte(t))
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(m.IDF[i]))
		h.Write(b[:])
	}
	h.Write(m.Ctx)
	m.name = fmt.Sprintf("local-ri%d-v1-%016x", localDim, h.Sum64())
}

// fitLocalModel learns IDF weights and context vectors from the chunks' bags
// of terms (ids into terms). workers bounds the parallelism.
func fitLocalModel(ctx context.Context, bags []bag, terms []string, workers int) (*localModel, error) {
	n := len(bags)
	df := make([]int32, len(terms))
	for _, b := range bags {
		for _, t := range b.ids {
			df[t]++
		}
	}
	var vocab []int32
	for t, c := range df {
		if c >= 2 {
			vocab = append(vocab, int32(t))
		}
	}
	slices.SortFunc(vocab, func(a, b int32) int {
		if df[a] != df[b] {
			return int(df[b] - df[a])
		}
		return strings.Compare(terms[a], terms[b])
	})
	if len(vocab) > localVocab {
		vocab = vocab[:localVocab]
	}
	m := &localModel{Docs: n, IDF: make([]float32, len(vocab))}
	// Terms in more than a fifth of the chunks carry no topic; they head the
	// vocabulary (sorted by df), so context rows start after them.
	skip := 0
	for skip < len(vocab) && int(df[vocab[skip]]) > n/5 {
		skip++
	}
	// Reorder so that context rows are Vocab[:rows]: the ubiquitous terms
	// move behind them.
	rows := min(localCtxVocab, len(vocab)-skip)
	if n < localMinDocsFit {
		rows = 0
	}
	reordered := append(append(append([]int32(nil), vocab[skip:skip+rows]...), vocab[:skip]...), vocab[skip+rows:]...)
	rowOf := make([]int32, len(terms)) // by term id: its row, or -1
	for i := range rowOf {
		rowOf[i] = -1
	}
	m.Vocab = make([]string, len(reordered))
	for i, t := range reordered {
		m.IDF[i] = float32(math.Log(1 + (float64(n)-float64(df[t])+0.5)/(float64(df[t])+0.5)))
		rowOf[t] = int32(i)
		m.Vocab[i] = terms[t]
	}
	acc, err := accumulateContexts(ctx, bags, terms, rowOf, m.IDF, rows, workers)
	if err != nil {
		return nil, err
	}
	m.Ctx = make([]byte, rows*localDim)
	m.Scale = make([]float32, rows)
	for r := 0; r < rows; r++ {
		row := acc[r*localDim : (r+1)*localDim]
		normalize(row)
		var mx float32
		for _, x := range row {
			mx = max(mx, float32(math.Abs(float64(x))))
		}
		if mx == 0 {
			continue
		}
		m.Scale[r] = mx / 127
		for j, x := range row {
			m.Ctx[r*localDim+j] = byte(int8(math.Round(float64(x / m.Scale[r]))))
		}
	}
	m.prepare()
	return m, nil
}

// accumulateContexts sums, for each context term, the normalised random
// projection of every chunk it occurs in.
func accumulateContexts(ctx context.Context, bags []bag, terms []string, rowOf []int32, idf []float32, rows, workers int) ([]float32, error) {
	if rows == 0 {
		return nil, nil
	}
	workers = max(1, workers)
	parts := make([][]float32, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			acc := make([]float32, rows*localDim)
			s := make([]float32, localDim)
			for i := w; i < len(bags); i += workers {
				if i%1024 == w && ctx.Err() != nil {
					return
				}
				b := bags[i]
				clear(s)
				for k, t := range b.ids {
					weight := float32(1)
					if r := rowOf[t]; r >= 0 {
						weight = idf[r]
					}
					addHashed(s, terms[t], (1+float32(math.Log(float64(b.freqs[k]))))*weight, localIndexNNZ)
				}
				if !normalize(s) {
					continue
				}
				for _, t := range b.ids {
					r := rowOf[t]
					if r < 0 || int(r) >= rows {
						continue
					}
					row := acc[int(r)*localDim : int(r+1)*localDim]
					for j, x := range s {
						row[j] += x
					}
				}
			}
			parts[w] = acc
		}(w)
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	acc := parts[0]
	for _, p := range parts[1:] {
		for i, x := range p {
			acc[i] += x
		}
	}
	return acc, nil
}
