package rag

import (
	"hash/maphash"
	"strings"
	"sync"
	"unsafe"
)

// termDict interns index terms: a term gets a dense int32 id the first time
// it is seen and keeps it for the life of the index (ids are not reused; the
// dictionary grows with the workspace's vocabulary, not with edits). BM25
// postings and chunk bags hold ids. The strings live end to end in one
// arena, found through an open-addressing table of ids: about 20 bytes a
// term, where a map of strings cost 70.
type termDict struct {
	mu    sync.RWMutex
	seed  maphash.Seed
	arena []byte
	offs  []uint32 // by id: where its string starts in arena (it ends where the next starts)
	table []int32  // 1 + id, 0 = empty; linear probing; at most half full
}

func newTermDict() *termDict {
	return &termDict{seed: maphash.MakeSeed(), table: make([]int32, 1024)}
}

// term returns id's string. The arena is only appended to, so the string
// stays valid when it grows.
func (d *termDict) term(id int32) string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.termLocked(id)
}

func (d *termDict) termLocked(id int32) string {
	end := len(d.arena)
	if int(id)+1 < len(d.offs) {
		end = int(d.offs[id+1])
	}
	start := int(d.offs[id])
	if start == end {
		return ""
	}
	return unsafe.String(&d.arena[start], end-start)
}

// count is the number of terms.
func (d *termDict) count() int {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return len(d.offs)
}

// find returns b's id, or its table position when absent. The caller holds mu.
func (d *termDict) find(b []byte) (id int32, pos int) {
	mask := len(d.table) - 1
	for i := int(maphash.Bytes(d.seed, b)) & mask; ; i = (i + 1) & mask {
		e := d.table[i]
		if e == 0 {
			return -1, i
		}
		if d.termLocked(e-1) == string(b) {
			return e - 1, i
		}
	}
}

func (d *termDict) lookup(t string) (int32, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	id, _ := d.find(unsafe.Slice(unsafe.StringData(t), len(t)))
	return id, id >= 0
}

// intern returns b's id, adding it if new.
func (d *termDict) intern(b []byte) int32 {
	d.mu.RLock()
	id, _ := d.find(b)
	d.mu.RUnlock()
	if id >= 0 {
		return id
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	id, pos := d.find(b)
	if id >= 0 {
		return id
	}
	id = int32(len(d.offs))
	d.offs = append(d.offs, uint32(len(d.arena)))
	d.arena = append(d.arena, b...)
	d.table[pos] = id + 1
	if 2*len(d.offs) > len(d.table) {
		d.grow()
	}
	return id
}

// grow doubles the table. The caller holds mu.
func (d *termDict) grow() {
	d.table = make([]int32, 2*len(d.table))
	for id := range int32(len(d.offs)) {
		t := d.termLocked(id)
		_, pos := d.find(unsafe.Slice(unsafe.StringData(t), len(t)))
		d.table[pos] = id + 1
	}
}

// bag is a chunk's bag of terms by id, in order of first occurrence.
type bag struct {
	ids   []int32
	freqs []int32
	total int32   // number of term occurrences: the BM25 document length
	syms  []int32 // symbol keys (symbolTerm), looked up but never scored
}

// symbolPrefix marks the dictionary entries of symbol keys: the tokenizer
// never produces a term starting with it, so a query's words cannot score
// against them; the symbol boost looks them up by name.
const symbolPrefix = "\x01"

func symbolTerm(key string) string { return symbolPrefix + key }

func (d *termDict) internString(s string) int32 {
	return d.intern(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// termCounter turns texts into bags. It remembers the terms of every raw word
// it has tokenized (identifiers repeat: splitting, stemming and folding each
// one once is most of the saving), and counts with a dense array indexed by
// term id instead of a map. One per goroutine.
type termCounter struct {
	dict  *termDict
	tk    tokenizer
	fast  [fastWords]fastWord // a direct-mapped cache in front of words: common words hit it
	words map[string]span     // raw word → its term ids in arena
	arena []int32
	pos   []int32 // by term id: 1 + index in the bag being counted
	ids   []int32
	freqs []int32
	total int32
}

type span struct{ off, n uint32 }

// fastWords is the size of the direct-mapped word cache: small enough to
// stay in the CPU's cache, which the big memo map does not.
const fastWords = 4096

type fastWord struct {
	word string
	sp   span
}

// maxWords bounds the word memo; past it the memo restarts.
const maxWords = 1 << 17

func newTermCounter(d *termDict) *termCounter {
	return &termCounter{dict: d, words: make(map[string]span, 1024)}
}

// Field weights (BM25F, folded in at index time): a chunk's path and the
// names it declares count this many times in its bag and its length, the
// text once. A posting stays (chunk, tf), so every store keeps one number.
var pathRepeat, nameRepeat = 1, 2

// countFields is the bag of a chunk: its path, its declared names and
// its text, each weighted.
func (c *termCounter) countFields(path string, names []string, symbol, text string) bag {
	for range pathRepeat {
		eachIdent(path, c.word)
	}
	if nameRepeat == 1 {
		eachIdent(symbol, c.word)
	} else {
		for range nameRepeat - 1 {
			for _, n := range names {
				eachIdent(n, c.word)
			}
		}
		eachIdent(symbol, c.word)
	}
	return c.count(text)
}

// count returns the bag of the concatenation of parts. Parts must be
// separated by non-identifier bytes in the text they stand for (path, symbol
// and text are joined by " " and "\n"), so tokenizing them one by one is the
// same as tokenizing the whole.
func (c *termCounter) count(parts ...string) bag {
	for _, text := range parts {
		eachIdent(text, c.word)
	}
	b := bag{ids: make([]int32, len(c.ids)), freqs: make([]int32, len(c.freqs)), total: c.total}
	copy(b.ids, c.ids)
	copy(b.freqs, c.freqs)
	for _, id := range c.ids {
		c.pos[id] = 0
	}
	c.ids, c.freqs, c.total = c.ids[:0], c.freqs[:0], 0
	return b
}

func (c *termCounter) word(w string) {
	h := uint32(len(w))
	for i := 0; i < len(w); i++ {
		h = h*31 + uint32(w[i])
	}
	f := &c.fast[h%fastWords]
	sp := f.sp
	if f.word != w {
		var ok bool
		sp, ok = c.words[w]
		if !ok {
			if len(c.words) >= maxWords {
				clear(c.words)
				c.fast = [fastWords]fastWord{}
				c.arena = nil
			}
			sp.off = uint32(len(c.arena))
			c.tk.word(w, func(b []byte) { c.arena = append(c.arena, c.dict.intern(b)) })
			sp.n = uint32(len(c.arena)) - sp.off
			w = strings.Clone(w) // w points into a whole file
			c.words[w] = sp
		}
		f.word, f.sp = w, sp
	}
	for _, id := range c.arena[sp.off : sp.off+sp.n] {
		c.total++
		if int(id) >= len(c.pos) {
			c.pos = append(c.pos, make([]int32, int(id)+1-len(c.pos)+1024)...)
		}
		if p := c.pos[id]; p > 0 {
			c.freqs[p-1]++
			continue
		}
		c.ids = append(c.ids, id)
		c.freqs = append(c.freqs, 1)
		c.pos[id] = int32(len(c.ids))
	}
}
