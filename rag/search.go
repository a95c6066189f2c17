package rag

import (
	"context"
	"crypto/sha256"
	"io"
	"os"
	"strings"
	"time"
)

// Vector side of the ranking, used only with an embedder.
const (
	vecCandidates         = 50
	vecMinSim     float32 = 0.15 // below this a nearest neighbour is noise
)

// Editor context, in units of a file's normalised score (the best file
// scores about 1).
const (
	openBoost    = 0.1 // the file is open in the editor
	recentBoost  = 0.05
	recentWindow = 10 * time.Minute
)

// Search answers query with up to limit chunks, best first (see SearchHit).
// partial is true while the index is still being built: the answer covers
// what is indexed.
func (ix *Index) Search(ctx context.Context, query string, limit int) ([]SearchHit, bool, error) {
	p := defaultRank
	return ix.search(ctx, query, limit, &p)
}

func (ix *Index) search(ctx context.Context, query string, limit int, p *rankParams) ([]SearchHit, bool, error) {
	if limit <= 0 {
		limit = 10
	}
	q := parseQuery(query, p)
	vec := ix.vectorRanking(ctx, query)
	now := time.Now()
	ix.mu.RLock()
	bonus := func(path string) float64 {
		b := 0.0
		if ix.open[path] {
			b += openBoost
		}
		if t, ok := ix.recent[path]; ok && now.Sub(t) < recentWindow {
			b += recentBoost
		}
		return b
	}
	rs := rank(memCorpus{ix}, q, vec, p, limit, bonus)
	metas := make([]hitMeta, len(rs))
	for i, r := range rs {
		sl := &ix.slots[r.doc]
		f := ix.fileTab[sl.file]
		metas[i] = newHitMeta(f.path, f.Kind, *sl, r)
	}
	partial := ix.state == StateIndexing
	ix.mu.RUnlock()
	// The text is read from the files outside the lock.
	texts := make([]string, len(metas))
	for i := range metas {
		texts[i], _ = readChunkText(ix.fsys, metas[i].path, &metas[i].slot)
	}
	return assembleHits(q, metas, texts), partial, nil
}

// vectorRanking is the embedder's nearest chunks, or nil. An embedder
// failure degrades to keywords alone: a remote endpoint being down must not
// break search.
func (ix *Index) vectorRanking(ctx context.Context, query string) []scored {
	if ix.emb == nil {
		return nil
	}
	vs, err := ix.emb.Embed(ctx, []string{query})
	if err != nil || len(vs) != 1 || !normalize(vs[0]) {
		ix.log.Warn("index: embed query, answering with keywords only", "err", err)
		return nil
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.vec.query(vs[0], vecCandidates, vecMinSim)
}

// readChunkText reads a chunk's text back from its file. ok is false when
// the file no longer holds the indexed text (it changed since, and the
// update is queued): the lines the chunk covered are returned as they are
// now, or "" if the file is gone.
func readChunkText(root *os.Root, path string, sl *slot) (text string, ok bool) {
	f, err := openRegular(root, local(path))
	if err != nil {
		return "", false
	}
	defer f.Close()
	buf := make([]byte, sl.Len)
	if n, err := f.ReadAt(buf, int64(sl.Off)); err == nil || n == len(buf) {
		text = cleanText(string(buf))
		h := sha256.New()
		var b [64]byte
		h.Write(appendIndexText(b[:0], path, sl.Symbol, ""))
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

// memCorpus is the in-memory index as ranking sees it; the caller holds
// ix.mu for reading.
type memCorpus struct{ ix *Index }

func (m memCorpus) numDocs() int { return m.ix.bm.nDocs }
func (m memCorpus) avgDocLen() float64 {
	return float64(m.ix.bm.totalLen) / float64(max(1, m.ix.bm.nDocs))
}
func (m memCorpus) docSpace() int  { return len(m.ix.slots) }
func (m memCorpus) fileSpace() int { return len(m.ix.fileTab) }
func (m memCorpus) postings(term string, buf *postingBuf) ([]int32, []uint16) {
	b := m.ix.bm
	id, ok := b.dict.lookup(term)
	if !ok || int(id) >= len(b.post) {
		return nil, nil
	}
	buf.docs, buf.tfs = b.post[id].decode(buf.docs[:0], buf.tfs[:0])
	return buf.docs, buf.tfs
}
func (m memCorpus) docLen(d int32) int32      { return m.ix.bm.docLen[d] }
func (m memCorpus) docFile(d int32) int32     { return m.ix.bm.docFile[d] }
func (m memCorpus) docFlags(d int32) uint8    { return m.ix.bm.docFlags[d] }
func (m memCorpus) fileKind(f int32) fileKind { return m.ix.fileKinds[f] }
func (m memCorpus) filePath(f int32) string   { return m.ix.fileTab[f].path }
func (m memCorpus) numFiles() int             { return m.ix.chunked }
func (m memCorpus) fileLen(f int32) int32     { return m.ix.fileLens[f] }
func (m memCorpus) docStart(d int32) int32    { return m.ix.slots[d].Start }
