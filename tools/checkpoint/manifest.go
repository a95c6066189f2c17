package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// entry is what the manifest knows of one covered path: how it looked when
// last scanned and, for a file or link, the content it held, which is in
// the store unless why says why not.
type entry struct {
	st   fstat
	hash Hash
	why  string // non-empty: the content is not kept
	gen  uint32 // the scan that last saw the path
}

// state is the entry as a checkpoint records it.
func (e *entry) state() *State {
	if e == nil {
		return nil
	}
	s := &State{Kind: e.st.kind(), Mode: e.st.perm()}
	if s.Kind == KindDir {
		return s
	}
	s.Size = e.st.size
	if e.why != "" {
		s.NotKept = e.why
	} else {
		s.Hash = e.hash
	}
	return s
}

// The manifest file: "agm1", the entry count, each entry (path, size,
// mtime, ctime, inode, mode, flags, hash?, why?), then the SHA-256 of all
// that. A manifest that does not check out is dropped: it is a cache of
// what the scan would find, and the next scan reads everything again (the
// store keeps what it already has, so only hashing is redone).
const manifestMagic = "agm1"

const (
	flagHash = 1 << iota
	flagWhy
)

func encodeManifest(man map[string]*entry) []byte {
	buf := make([]byte, 0, 64*len(man)+64)
	buf = append(buf, manifestMagic...)
	buf = binary.AppendUvarint(buf, uint64(len(man)))
	for rel, e := range man {
		buf = binary.AppendUvarint(buf, uint64(len(rel)))
		buf = append(buf, rel...)
		buf = binary.AppendVarint(buf, e.st.size)
		buf = binary.AppendVarint(buf, e.st.mtime)
		buf = binary.AppendVarint(buf, e.st.ctime)
		buf = binary.AppendUvarint(buf, e.st.ino)
		buf = binary.AppendUvarint(buf, uint64(e.st.mode))
		var flags byte
		if !e.hash.IsZero() {
			flags |= flagHash
		}
		if e.why != "" {
			flags |= flagWhy
		}
		buf = append(buf, flags)
		if flags&flagHash != 0 {
			buf = append(buf, e.hash[:]...)
		}
		if flags&flagWhy != 0 {
			buf = binary.AppendUvarint(buf, uint64(len(e.why)))
			buf = append(buf, e.why...)
		}
	}
	sum := sha256.Sum256(buf)
	return append(buf, sum[:]...)
}

var errBadManifest = errors.New("checkpoint manifest is damaged")

func decodeManifest(data []byte) (map[string]*entry, error) {
	if len(data) < len(manifestMagic)+sha256.Size || !bytes.HasPrefix(data, []byte(manifestMagic)) {
		return nil, errBadManifest
	}
	body, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if s := sha256.Sum256(body); !bytes.Equal(s[:], sum) {
		return nil, errBadManifest
	}
	d := decoder{b: body[len(manifestMagic):]}
	n := d.uvarint()
	if n > uint64(len(body)) {
		return nil, errBadManifest
	}
	man := make(map[string]*entry, n)
	for i := uint64(0); i < n && d.err == nil; i++ {
		rel := d.str()
		e := &entry{}
		e.st.size, e.st.mtime, e.st.ctime = d.varint(), d.varint(), d.varint()
		e.st.ino, e.st.mode = d.uvarint(), uint32(d.uvarint())
		flags := d.byte()
		if flags&flagHash != 0 {
			copy(e.hash[:], d.bytes(len(e.hash)))
		}
		if flags&flagWhy != 0 {
			e.why = d.str()
		}
		man[rel] = e
	}
	if d.err != nil || len(d.b) != 0 {
		return nil, errBadManifest
	}
	return man, nil
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errBadManifest
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errBadManifest
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.err = errBadManifest
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) bytes(n int) []byte {
	if n < 0 || len(d.b) < n {
		d.err = errBadManifest
		return make([]byte, max(n, 0))
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *decoder) str() string { return string(d.bytes(int(d.uvarint()))) }

// writeFileAtomic writes through a temporary file and a rename, so a reader
// sees the old content or the new.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Base(path), err)
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", filepath.Base(path), werr)
	}
	return nil
}
