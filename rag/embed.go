package rag

import (
	"context"
	"fmt"
)

// embedBatch is how many chunks go to the embedder between progress reports
// and cache insertions.
const embedBatch = 256

// embedMissing gives a vector to every chunk without one, when the index
// has an embedder. The caller holds ix.work.
func (ix *Index) embedMissing(ctx context.Context, progress func(float64)) error {
	if ix.emb == nil {
		return nil
	}
	var todo []int32
	ix.mu.RLock()
	for n := range ix.slots {
		if sl := &ix.slots[n]; sl.file >= 0 && !sl.hasVec {
			todo = append(todo, int32(n))
		}
	}
	ix.mu.RUnlock()
	for start := 0; start < len(todo); start += embedBatch {
		batch := todo[start:min(start+embedBatch, len(todo))]
		vecs, err := ix.embedSlots(ctx, batch)
		if err != nil {
			return err
		}
		ix.mu.Lock()
		for i, n := range batch {
			sl := &ix.slots[n]
			v := vecs[i]
			if sl.file < 0 || v == nil || !normalize(v) {
				continue // removed meanwhile
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

// embedSlots computes vectors for slots from their text, read back from the
// files. A slot removed meanwhile gets a nil vector.
func (ix *Index) embedSlots(ctx context.Context, batch []int32) ([][]float32, error) {
	ix.mu.RLock()
	metas := make([]hitMeta, len(batch))
	for i, n := range batch {
		sl := &ix.slots[n]
		if sl.file >= 0 {
			metas[i] = hitMeta{path: ix.pathOf(sl), slot: *sl}
		}
	}
	ix.mu.RUnlock()
	texts := make([]string, len(metas))
	for i := range metas {
		m := &metas[i]
		text, _ := readChunkText(ix.fsys, m.path, &m.slot)
		texts[i] = indexText(m.path, m.slot.Symbol, text)
	}
	vecs, err := ix.emb.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed with %s: %w", ix.emb.Name(), err)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("embed with %s: %d vectors for %d texts", ix.emb.Name(), len(vecs), len(texts))
	}
	for i := range metas {
		if metas[i].path == "" {
			vecs[i] = nil
		}
	}
	return vecs, nil
}
