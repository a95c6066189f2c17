package rag

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
)

// embedBatch is how many chunks go to the embedder between progress reports
// and cache insertions.
const embedBatch = 256

// embedMissing gives a vector to every chunk without one. With the default
// embedder it first refits the co-occurrence model when the workspace has
// grown or shrunk by half since the last fit (or was never fitted), which
// renames the embedder and so re-embeds everything; between refits new chunks
// are embedded with the model as it is. The caller holds ix.work.
func (ix *Index) embedMissing(ctx context.Context, bags map[int32]bag, progress func(float64)) error {
	if err := ix.refitIfStale(ctx, bags); err != nil {
		return err
	}
	var todo []int32
	ix.mu.RLock()
	for n, sl := range ix.slots {
		if sl != nil && !sl.hasVec {
			todo = append(todo, int32(n))
		}
	}
	emb := ix.emb
	ix.mu.RUnlock()
	if len(todo) == 0 {
		return nil
	}
	if _, ok := emb.(*localEmbedder); ok {
		ix.fillBags(todo, bags)
	}
	for start := 0; start < len(todo); start += embedBatch {
		batch := todo[start:min(start+embedBatch, len(todo))]
		vecs, err := ix.embedSlots(ctx, emb, batch, bags)
		if err != nil {
			return err
		}
		ix.mu.Lock()
		for i, n := range batch {
			sl := ix.slots[n]
			v := vecs[i]
			if sl == nil || len(v) == 0 || !normalize(v) {
				continue
			}
			if err := ix.setVecLocked(ctx, n, v); err != nil {
				ix.mu.Unlock()
				return err
			}
			ix.dirty = true
		}
		ix.mu.Unlock()
		progress(float64(start+len(batch)) / float64(len(todo)))
	}
	return nil
}

// fillBags adds the bags of slots that have none (chunks restored from the
// snapshot), rebuilt from the BM25 postings rather than from the text.
func (ix *Index) fillBags(slots []int32, bags map[int32]bag) {
	want := make(map[int32]bool)
	for _, n := range slots {
		if _, ok := bags[n]; !ok {
			want[n] = true
		}
	}
	if len(want) == 0 {
		return
	}
	ix.mu.RLock()
	fresh := ix.bm.bags(func(d int32) bool { return want[d] })
	ix.mu.RUnlock()
	for n := range want {
		bags[n] = fresh[n] // an empty bag for a chunk without terms
	}
}

// embedSlots computes vectors for slots; the local embedder works from the
// bags of terms directly, in parallel; other embedders get the text, read
// back from the files.
func (ix *Index) embedSlots(ctx context.Context, emb Embedder, batch []int32, bags map[int32]bag) ([][]float32, error) {
	ix.mu.RLock()
	slots := make([]slot, len(batch))
	for i, n := range batch {
		slots[i] = *ix.slots[n]
	}
	ix.mu.RUnlock()
	if le, ok := emb.(*localEmbedder); ok {
		terms := ix.dict.all()
		out := make([][]float32, len(batch))
		arena := make([]float32, len(batch)*localDim)
		workers := runtime.GOMAXPROCS(0)
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				var scr vecScratch
				var buf []string
				for i := w; i < len(batch); i += workers {
					tf := bags[batch[i]].termFreqs(terms, buf)
					buf = tf.terms
					out[i] = arena[i*localDim : (i+1)*localDim : (i+1)*localDim]
					le.vectorInto(out[i], tf, &scr)
				}
			}(w)
		}
		wg.Wait()
		return out, ctx.Err()
	}
	texts := make([]string, len(slots))
	for i := range slots {
		sl := &slots[i]
		text, _ := ix.readText(sl)
		texts[i] = indexText(sl.Path, sl.Symbol, text)
	}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed with %s: %w", emb.Name(), err)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("embed with %s: %d vectors for %d texts", emb.Name(), len(vecs), len(texts))
	}
	return vecs, nil
}

func (ix *Index) refitIfStale(ctx context.Context, bags map[int32]bag) error {
	if ix.custom {
		return nil
	}
	ix.mu.RLock()
	le := ix.emb.(*localEmbedder)
	live := len(ix.byID)
	ix.mu.RUnlock()
	if live < localMinDocsFit {
		return nil
	}
	if m := le.model; m != nil && 2*live < 3*m.Docs && 3*live > 2*m.Docs {
		return nil
	}
	ix.mu.RLock()
	var all []int32
	for n, sl := range ix.slots {
		if sl != nil {
			all = append(all, int32(n))
		}
	}
	ix.mu.RUnlock()
	ix.fillBags(all, bags)
	list := make([]bag, len(all))
	for i, n := range all {
		list[i] = bags[n]
	}
	m, err := fitLocalModel(ctx, list, ix.dict.all(), runtime.GOMAXPROCS(0))
	if err != nil {
		return fmt.Errorf("fit local embedder: %w", err)
	}
	next := newLocalEmbedder(m)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	old := ix.cache.path
	ix.emb = next
	ix.vec = newVectorStore()
	for _, sl := range ix.slots {
		if sl != nil {
			sl.hasVec = false
		}
	}
	ix.cache = ix.loadCacheLocked(ctx, next.Name())
	if old != ix.cache.path {
		os.Remove(old) // vectors of the previous fit are dead weight
	}
	ix.dirty = true
	ix.log.Info("index: fitted local embedder", "chunks", len(all), "vocab", len(m.Vocab), "contexts", len(m.Scale))
	return nil
}
