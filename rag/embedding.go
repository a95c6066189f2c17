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
func (ix *Index) embedMissing(ctx context.Context, bags map[int32]termFreqs, progress func(float64)) error {
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
			ix.cache.vecs[sl.hash] = v
			if err := ix.vec.add(ctx, sl.id, v); err != nil {
				ix.mu.Unlock()
				return err
			}
			sl.hasVec = true
			ix.dirty = true
		}
		ix.mu.Unlock()
		progress(float64(start+len(batch)) / float64(len(todo)))
	}
	return nil
}

// embedSlots computes vectors for slots; the local embedder works from the
// bags of terms directly and in parallel.
func (ix *Index) embedSlots(ctx context.Context, emb Embedder, batch []int32, bags map[int32]termFreqs) ([][]float32, error) {
	ix.mu.RLock()
	slots := make([]*slot, len(batch))
	for i, n := range batch {
		slots[i] = ix.slots[n]
	}
	ix.mu.RUnlock()
	if le, ok := emb.(*localEmbedder); ok {
		out := make([][]float32, len(batch))
		workers := runtime.GOMAXPROCS(0)
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				var tk tokenizer
				for i := w; i < len(batch); i += workers {
					bag, ok := bags[batch[i]]
					if !ok {
						bag = countTerms(&tk, slots[i].indexText())
					}
					out[i] = le.vector(bag)
				}
			}(w)
		}
		wg.Wait()
		return out, ctx.Err()
	}
	texts := make([]string, len(slots))
	for i, sl := range slots {
		texts[i] = sl.indexText()
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

func (ix *Index) refitIfStale(ctx context.Context, bags map[int32]termFreqs) error {
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
	var missing []int32
	for _, n := range all {
		if _, ok := bags[n]; !ok {
			missing = append(missing, n)
		}
	}
	fresh := tokenizeAll(missing, func(n int32) string { return ix.slots[n].indexText() })
	for i, n := range missing {
		bags[n] = fresh[i]
	}
	list := make([]termFreqs, len(all))
	for i, n := range all {
		list[i] = bags[n]
	}
	m, err := fitLocalModel(ctx, list, runtime.GOMAXPROCS(0))
	if err != nil {
		return fmt.Errorf("fit local embedder: %w", err)
	}
	next := newLocalEmbedder(m)
	cache := loadEmbedCache(ix.stateDir, next.Name(), ix.log)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if old := ix.cache.path; old != cache.path {
		os.Remove(old) // vectors of the previous fit are dead weight
	}
	ix.emb = next
	ix.cache = cache
	ix.vec = newVectorStore()
	for _, sl := range ix.slots {
		if sl == nil {
			continue
		}
		sl.hasVec = false
		if v, ok := cache.vecs[sl.hash]; ok {
			if err := ix.vec.add(ctx, sl.id, v); err != nil {
				return err
			}
			sl.hasVec = true
		}
	}
	ix.dirty = true
	ix.log.Info("index: fitted local embedder", "chunks", len(all), "vocab", len(m.Vocab), "contexts", len(m.Scale))
	return nil
}
