package rag

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sync"
)

// snapshotVersion changes whenever chunking, tokenization or the layout
// below changes, so an old snapshot is rebuilt rather than misread.
const snapshotVersion = 1

// snapshot is everything needed to answer queries after a restart, except
// the vectors, which live in the embedding cache. On disk it is a gob
// stream: the header fields, then the chunks in batches, because gob builds
// each message in memory and one message of 100 MB of text spends its time
// growing buffers.
type snapshot struct {
	snapshotHeader
	Chunks []chunkRecord
}

type snapshotHeader struct {
	Version int
	Root    string
	Files   map[string]*fileEntry
	Model   *localModel // the default embedder's fitted model; nil otherwise
	NChunks int
}

const snapshotBatch = 4096

// chunkRecord names its chunk field: gob skips embedded fields of an
// unexported type.
type chunkRecord struct {
	ID    string
	Chunk chunk
	Hash  [16]byte
}

func (ix *Index) snapshotPath() string { return filepath.Join(ix.stateDir, "index.snapshot") }

func readSnapshot(path, root string) (*snapshot, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read snapshot: %w", err)
	}
	defer f.Close()
	var s snapshot
	dec := gob.NewDecoder(bufio.NewReaderSize(f, 1<<20))
	if err := dec.Decode(&s.snapshotHeader); err != nil {
		return nil, fmt.Errorf("decode snapshot: %w", err)
	}
	if s.Version != snapshotVersion || s.Root != root {
		return nil, fmt.Errorf("snapshot is version %d for %s", s.Version, s.Root)
	}
	s.Chunks = make([]chunkRecord, 0, s.NChunks)
	for len(s.Chunks) < s.NChunks {
		var batch []chunkRecord
		if err := dec.Decode(&batch); err != nil {
			return nil, fmt.Errorf("decode snapshot chunks: %w", err)
		}
		s.Chunks = append(s.Chunks, batch...)
	}
	return &s, nil
}

// restore loads a snapshot into an empty index; only chunks whose vector is
// in the embedding cache get one, the next Build embeds the rest.
func (ix *Index) restore(ctx context.Context, s *snapshot) error {
	bags := tokenizeAll(s.Chunks, func(r chunkRecord) string { return r.Chunk.indexText() })
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.files = s.Files
	for i := range s.Chunks {
		r := &s.Chunks[i]
		sl := &slot{chunk: r.Chunk, id: r.ID, hash: r.Hash}
		ix.addSlotLocked(sl, bags[i])
		if v, ok := ix.cache.vecs[r.Hash]; ok {
			if err := ix.vec.add(ctx, sl.id, v); err != nil {
				return err
			}
			sl.hasVec = true
		}
	}
	return nil
}

// tokenizeAll counts the terms of many texts on all CPUs.
func tokenizeAll[T any](items []T, text func(T) string) []termFreqs {
	out := make([]termFreqs, len(items))
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var tk tokenizer
			for i := w; i < len(items); i += workers {
				out[i] = countTerms(&tk, text(items[i]))
			}
		}(w)
	}
	wg.Wait()
	return out
}

// saveIfDirty writes the snapshot and the embedding cache. The caller holds
// ix.work, so nothing changes the index meanwhile; queries go on.
func (ix *Index) saveIfDirty() error {
	ix.mu.RLock()
	if !ix.dirty {
		ix.mu.RUnlock()
		return nil
	}
	s := &snapshot{snapshotHeader: snapshotHeader{Version: snapshotVersion, Root: ix.root, Files: make(map[string]*fileEntry, len(ix.files))}}
	for p, e := range ix.files {
		s.Files[p] = e
	}
	live := make(map[[16]byte]bool, len(ix.byID))
	for _, sl := range ix.slots {
		if sl != nil {
			s.Chunks = append(s.Chunks, chunkRecord{ID: sl.id, Chunk: sl.chunk, Hash: sl.hash})
			live[sl.hash] = true
		}
	}
	if le, ok := ix.emb.(*localEmbedder); ok {
		s.Model = le.model
	}
	ix.mu.RUnlock()

	s.NChunks = len(s.Chunks)
	if err := writeAtomic(ix.snapshotPath(), func(w io.Writer) error { return encodeSnapshot(w, s) }); err != nil {
		return fmt.Errorf("save index: %w", err)
	}
	ix.cache.prune(live)
	if err := ix.cache.save(); err != nil {
		return fmt.Errorf("save index: %w", err)
	}
	ix.mu.Lock()
	ix.dirty = false
	ix.mu.Unlock()
	return nil
}

func encodeSnapshot(w io.Writer, s *snapshot) error {
	enc := gob.NewEncoder(w)
	if err := enc.Encode(&s.snapshotHeader); err != nil {
		return err
	}
	for i := 0; i < len(s.Chunks); i += snapshotBatch {
		if err := enc.Encode(s.Chunks[i:min(i+snapshotBatch, len(s.Chunks))]); err != nil {
			return err
		}
	}
	return nil
}

// writeAtomic writes path through a temporary file in the same directory,
// synced and renamed over the old one: a crash leaves the old or the new
// file, never a torn one.
func writeAtomic(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // no-op after the rename
	bw := bufio.NewWriterSize(f, 1<<20)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return os.Rename(f.Name(), path)
}

// embedCache maps chunk hashes to normalised vectors for one embedder. It is
// written as a flat binary file, one per embedder name, because gob encodes
// floats one by one and is an order of magnitude slower on millions of them.
type embedCache struct {
	name string
	path string
	vecs map[[16]byte][]float32
}

const cacheMagic = "agentd-vectors-1"

func loadEmbedCache(stateDir, name string, log *slog.Logger) *embedCache {
	h := fnv.New64a()
	h.Write([]byte(name))
	c := &embedCache{
		name: name,
		path: filepath.Join(stateDir, fmt.Sprintf("vectors-%016x.bin", h.Sum64())),
		vecs: make(map[[16]byte][]float32),
	}
	if err := c.load(); err != nil && !errors.Is(err, os.ErrNotExist) {
		log.Warn("embedding cache unusable, starting empty", "err", err)
		clear(c.vecs)
	}
	return c
}

func (c *embedCache) load() error {
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
	name := make([]byte, hdr.NameN)
	if _, err := io.ReadFull(r, name); err != nil || string(hdr.Magic[:]) != cacheMagic || string(name) != c.name {
		return fmt.Errorf("cache %s is not for %s", c.path, c.name)
	}
	buf := make([]byte, 16+4*int(hdr.Dim))
	all := make([]float32, int(hdr.Dim)*int(hdr.Count)) // one allocation for every vector
	for i := 0; i < int(hdr.Count); i++ {
		if _, err := io.ReadFull(r, buf); err != nil {
			return fmt.Errorf("read cache: %w", err)
		}
		v := all[i*int(hdr.Dim) : (i+1)*int(hdr.Dim) : (i+1)*int(hdr.Dim)]
		for j := range v {
			v[j] = math.Float32frombits(binary.LittleEndian.Uint32(buf[16+4*j:]))
		}
		c.vecs[[16]byte(buf[:16])] = v
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
