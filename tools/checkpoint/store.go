package checkpoint

import (
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Hash names a blob: the SHA-256 of its content.
type Hash [32]byte

// HashOf hashes content.
func HashOf(data []byte) Hash { return sha256.Sum256(data) }

func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// IsZero reports a hash that names nothing (content not kept).
func (h Hash) IsZero() bool { return h == Hash{} }

// ParseHash reads a hash written by String.
func ParseHash(s string) (Hash, error) {
	var h Hash
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(h) {
		return h, fmt.Errorf("%q is not a content hash", s)
	}
	copy(h[:], b)
	return h, nil
}

// Errors of a blob read. A caller says which pre-image is missing and never
// guesses one.
var (
	ErrMissing = errors.New("not in the checkpoint store")
	ErrCorrupt = errors.New("damaged in the checkpoint store")
)

// Store is a content-addressed store of file contents: one file per blob,
// blobs/<2 hex>/<62 hex>, named by the SHA-256 of the content, so a content
// kept by many checkpoints is stored once. Each blob is
//
//	"agb1" | method (0 raw, 1 deflate) | uvarint raw size | payload
//
// written to a temporary file and renamed, and checked against its name
// when read: a damaged blob is reported as such and costs only itself.
type Store struct {
	dir string

	mu   sync.Mutex // guards made
	made [256]bool  // fan-out directories known to exist
}

const (
	blobMagic    = "agb1"
	methodRaw    = 0
	methodFlate  = 1
	compressMin  = 512 // smaller contents are stored as they are
	tmpPrefix    = ".tmp-"
	blobsDirName = "blobs"
)

// NewStore opens (creating) the store under dir.
func NewStore(dir string) (*Store, error) {
	if err := os.MkdirAll(filepath.Join(dir, blobsDirName), 0o700); err != nil {
		return nil, fmt.Errorf("checkpoint store: %w", err)
	}
	return &Store{dir: dir}, nil
}

func (s *Store) path(h Hash) string {
	x := h.String()
	return filepath.Join(s.dir, blobsDirName, x[:2], x[2:])
}

// Has reports whether the blob is stored (not whether it is intact).
func (s *Store) Has(h Hash) bool {
	_, err := os.Lstat(s.path(h))
	return err == nil
}

// Put stores data under its hash and returns the hash and the bytes it takes
// on disk; content already stored costs a stat.
func (s *Store) Put(data []byte) (Hash, int64, error) {
	h := HashOf(data)
	n, err := s.PutHashed(h, data)
	return h, n, err
}

// PutHashed stores data whose hash the caller computed.
func (s *Store) PutHashed(h Hash, data []byte) (int64, error) {
	p := s.path(h)
	if fi, err := os.Lstat(p); err == nil {
		return fi.Size(), nil
	}
	if err := s.fanout(h); err != nil {
		return 0, err
	}
	enc := encodeBlob(data)
	f, err := os.CreateTemp(filepath.Dir(p), tmpPrefix+"*")
	if err != nil {
		return 0, fmt.Errorf("checkpoint store: %w", err)
	}
	_, werr := f.Write(enc)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), p)
	}
	if werr != nil {
		_ = os.Remove(f.Name())
		return 0, fmt.Errorf("checkpoint store: %w", werr)
	}
	return int64(len(enc)), nil
}

func (s *Store) fanout(h Hash) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.made[h[0]] {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(s.path(h)), 0o700); err != nil {
		return fmt.Errorf("checkpoint store: %w", err)
	}
	s.made[h[0]] = true
	return nil
}

// Get returns the content of a blob, checked against its hash.
func (s *Store) Get(h Hash) ([]byte, error) {
	raw, err := os.ReadFile(s.path(h))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("content %s: %w", h.String()[:12], ErrMissing)
	}
	if err != nil {
		return nil, fmt.Errorf("content %s: %w", h.String()[:12], err)
	}
	data, err := decodeBlob(raw)
	if err != nil || HashOf(data) != h {
		return nil, fmt.Errorf("content %s: %w", h.String()[:12], ErrCorrupt)
	}
	return data, nil
}

// Size is the bytes a blob takes on disk, 0 when it is not stored.
func (s *Store) Size(h Hash) int64 {
	fi, err := os.Lstat(s.path(h))
	if err != nil {
		return 0
	}
	return fi.Size()
}

// remove deletes a blob (garbage collection).
func (s *Store) remove(h Hash) error {
	err := os.Remove(s.path(h))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// walk calls fn for every stored blob with its size and modification time,
// and removes temporary files older than grace (left by a crash).
func (s *Store) walk(grace time.Duration, fn func(h Hash, size int64, mtime time.Time)) error {
	base := filepath.Join(s.dir, blobsDirName)
	fans, err := os.ReadDir(base)
	if err != nil {
		return err
	}
	for _, fan := range fans {
		if !fan.IsDir() || len(fan.Name()) != 2 {
			continue
		}
		des, err := os.ReadDir(filepath.Join(base, fan.Name()))
		if err != nil {
			return err
		}
		for _, de := range des {
			info, err := de.Info()
			if err != nil {
				continue
			}
			if len(de.Name()) > len(tmpPrefix) && de.Name()[:len(tmpPrefix)] == tmpPrefix {
				if time.Since(info.ModTime()) > grace {
					_ = os.Remove(filepath.Join(base, fan.Name(), de.Name()))
				}
				continue
			}
			h, err := ParseHash(fan.Name() + de.Name())
			if err != nil {
				continue
			}
			fn(h, info.Size(), info.ModTime())
		}
	}
	return nil
}

func encodeBlob(data []byte) []byte {
	var hdr [len(blobMagic) + 1 + binary.MaxVarintLen64]byte
	copy(hdr[:], blobMagic)
	n := len(blobMagic) + 1
	n += binary.PutUvarint(hdr[n:], uint64(len(data)))
	if len(data) >= compressMin {
		var buf bytes.Buffer
		buf.Grow(len(data)/3 + n + 64)
		buf.Write(hdr[:n])
		w := flaters.Get().(*flate.Writer)
		w.Reset(&buf)
		_, _ = w.Write(data)
		_ = w.Close()
		flaters.Put(w)
		// Keep the compressed form only when it saves a tenth.
		if buf.Len() < len(data)*9/10 {
			out := buf.Bytes()
			out[len(blobMagic)] = methodFlate
			return out
		}
	}
	out := make([]byte, 0, n+len(data))
	out = append(out, hdr[:n]...)
	out[len(blobMagic)] = methodRaw
	return append(out, data...)
}

var flaters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.BestSpeed)
	return w
}}

func decodeBlob(raw []byte) ([]byte, error) {
	if len(raw) < len(blobMagic)+2 || string(raw[:len(blobMagic)]) != blobMagic {
		return nil, ErrCorrupt
	}
	method := raw[len(blobMagic)]
	size, n := binary.Uvarint(raw[len(blobMagic)+1:])
	if n <= 0 || size > 1<<40 {
		return nil, ErrCorrupt
	}
	payload := raw[len(blobMagic)+1+n:]
	switch method {
	case methodRaw:
		if uint64(len(payload)) != size {
			return nil, ErrCorrupt
		}
		return payload, nil
	case methodFlate:
		out := make([]byte, 0, size)
		buf := bytes.NewBuffer(out)
		r := flate.NewReader(bytes.NewReader(payload))
		defer r.Close()
		if _, err := io.CopyN(buf, r, int64(size)+1); err != nil && !errors.Is(err, io.EOF) {
			return nil, ErrCorrupt
		}
		if uint64(buf.Len()) != size {
			return nil, ErrCorrupt
		}
		return buf.Bytes(), nil
	}
	return nil, ErrCorrupt
}
