package rag

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
)

// embedCache maps chunk hashes to normalised vectors for one embedder. It is
// written as a flat binary file, one per embedder name, because gob encodes
// floats one by one and is an order of magnitude slower on millions of them.
// In memory, the entry of an indexed chunk is the chunk's matrix row itself
// (no copy); only vectors of chunks no longer indexed own their memory.
type embedCache struct {
	name string
	path string
	vecs map[[16]byte][]float32
}

const cacheMagic = "agentd-vectors-1"

func cachePath(stateDir, name string) string {
	h := fnv.New64a()
	h.Write([]byte(name))
	return filepath.Join(stateDir, fmt.Sprintf("vectors-%016x.bin", h.Sum64()))
}

// loadCacheLocked makes the cache of embedder name the index's cache and
// reads its file, putting each vector straight into the row of the chunk it
// belongs to; vectors of chunks not indexed are kept aside. The caller holds
// ix.mu (or owns the index, in Open).
func (ix *Index) loadCacheLocked(ctx context.Context, name string) *embedCache {
	c := &embedCache{name: name, path: cachePath(ix.stateDir, name), vecs: make(map[[16]byte][]float32)}
	ix.cache = c
	byHash := make(map[[16]byte]int32, ix.live)
	for n := range ix.slots {
		if sl := &ix.slots[n]; sl.file >= 0 && !sl.hasVec {
			byHash[sl.hash] = int32(n)
		}
	}
	err := c.load(func(h [16]byte, v []float32) bool {
		n, ok := byHash[h]
		return ok && ix.setVecLocked(ctx, n, v) == nil
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		ix.log.Warn("embedding cache unusable, starting with what was read", "err", err)
	}
	// Chunks sharing a hash (identical blocks in one file) got one row above.
	for n := range ix.slots {
		if sl := &ix.slots[n]; sl.file >= 0 && !sl.hasVec {
			if v, ok := c.vecs[sl.hash]; ok {
				ix.setVecLocked(ctx, int32(n), v)
			}
		}
	}
	return c
}

// loadCache is loadCacheLocked for Open.
func (ix *Index) loadCache(ctx context.Context, name string) *embedCache {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.loadCacheLocked(ctx, name)
}

// load reads the file; place stores a vector in the index (and the cache
// entry as its row) and reports whether it did; otherwise the cache keeps a
// copy.
func (c *embedCache) load(place func(h [16]byte, v []float32) bool) error {
	f, err := os.Open(c.path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var hdr struct {
		Magic [len(cacheMagic)]byte
		Dim   uint32
		Count uint32
		NameN uint32
	}
	if err := binary.Read(r, binary.LittleEndian, &hdr); err != nil {
		return fmt.Errorf("read cache header: %w", err)
	}
	if hdr.NameN > 1<<16 || hdr.Dim > 1<<16 {
		return fmt.Errorf("cache %s: bad header", c.path)
	}
	name := make([]byte, hdr.NameN)
	if _, err := io.ReadFull(r, name); err != nil || string(hdr.Magic[:]) != cacheMagic || string(name) != c.name {
		return fmt.Errorf("cache %s is not for %s", c.path, c.name)
	}
	buf := make([]byte, 16+4*int(hdr.Dim))
	v := make([]float32, hdr.Dim)
	for i := 0; i < int(hdr.Count); i++ {
		if _, err := io.ReadFull(r, buf); err != nil {
			return fmt.Errorf("read cache: %w", err)
		}
		for j := range v {
			v[j] = math.Float32frombits(binary.LittleEndian.Uint32(buf[16+4*j:]))
		}
		h := [16]byte(buf[:16])
		if !place(h, v) {
			c.vecs[h] = slices.Clone(v)
		}
	}
	return nil
}

func (c *embedCache) save() error {
	dim, count := 0, 0
	for _, v := range c.vecs {
		dim = len(v)
		break
	}
	for _, v := range c.vecs {
		if len(v) == dim {
			count++
		}
	}
	return writeAtomic(c.path, func(w io.Writer) error {
		hdr := struct {
			Magic [len(cacheMagic)]byte
			Dim   uint32
			Count uint32
			NameN uint32
		}{Dim: uint32(dim), Count: uint32(count), NameN: uint32(len(c.name))}
		copy(hdr.Magic[:], cacheMagic)
		if err := binary.Write(w, binary.LittleEndian, &hdr); err != nil {
			return err
		}
		if _, err := io.WriteString(w, c.name); err != nil {
			return err
		}
		buf := make([]byte, 16+4*dim)
		for k, v := range c.vecs {
			if len(v) != dim {
				continue // a corrupt entry is dropped, not fatal
			}
			copy(buf, k[:])
			for j, x := range v {
				binary.LittleEndian.PutUint32(buf[16+4*j:], math.Float32bits(x))
			}
			if _, err := w.Write(buf); err != nil {
				return err
			}
		}
		return nil
	})
}

// prune bounds the cache: entries of chunks no longer indexed are kept (a
// branch switch back is then free) until they outnumber the live ones.
func (c *embedCache) prune(live map[[16]byte]bool) {
	if len(c.vecs) <= 2*len(live)+1024 {
		return
	}
	for k := range c.vecs {
		if !live[k] {
			delete(c.vecs, k)
		}
	}
}
