package checkpoint

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func blobFiles(t *testing.T, s *Store) []string {
	t.Helper()
	var out []string
	require.NoError(t, s.walk(time.Hour, func(h Hash, size int64, mtime time.Time) { out = append(out, h.String()) }))
	return out
}

func TestStoreDeduplicatesAndCompresses(t *testing.T) {
	s, err := NewStore(t.TempDir())
	require.NoError(t, err)
	text := []byte(strings.Repeat("func main() { fmt.Println(\"hello\") }\n", 400))
	h1, n1, err := s.Put(text)
	require.NoError(t, err)
	h2, n2, err := s.Put(bytes.Clone(text))
	require.NoError(t, err)
	assert.Equal(t, h1, h2)
	assert.Equal(t, n1, n2)
	assert.Len(t, blobFiles(t, s), 1, "the same content is stored once")
	assert.Less(t, n1, int64(len(text))/5, "text is stored compressed")

	small := []byte("x")
	hs, _, err := s.Put(small)
	require.NoError(t, err)
	for _, c := range []struct {
		h    Hash
		want []byte
	}{{h1, text}, {hs, small}} {
		got, err := s.Get(c.h)
		require.NoError(t, err)
		assert.Equal(t, c.want, got)
	}
	random := make([]byte, 4096)
	for i := range random {
		random[i] = byte(i*7919 + i*i*31)
	}
	hr, nr, err := s.Put(random)
	require.NoError(t, err)
	assert.LessOrEqual(t, nr, int64(len(random))+16, "incompressible content costs at most a header")
	got, err := s.Get(hr)
	require.NoError(t, err)
	assert.Equal(t, random, got)
}

// A damaged blob is reported as damaged; every other blob still reads.
func TestStoreCorruptionLosesOnlyTheBlob(t *testing.T) {
	s, err := NewStore(t.TempDir())
	require.NoError(t, err)
	var hs []Hash
	for i := range 4 {
		h, _, err := s.Put([]byte(strings.Repeat("content "+string(rune('a'+i)), 200)))
		require.NoError(t, err)
		hs = append(hs, h)
	}
	// Flip a byte of the first, truncate the second, delete the third.
	p0 := s.path(hs[0])
	b, err := os.ReadFile(p0)
	require.NoError(t, err)
	b[len(b)-3] ^= 0xff
	require.NoError(t, os.WriteFile(p0, b, 0o600))
	b1, err := os.ReadFile(s.path(hs[1]))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(s.path(hs[1]), b1[:len(b1)/2], 0o600))
	require.NoError(t, os.Remove(s.path(hs[2])))

	_, err = s.Get(hs[0])
	assert.True(t, errors.Is(err, ErrCorrupt), "flipped byte: %v", err)
	_, err = s.Get(hs[1])
	assert.True(t, errors.Is(err, ErrCorrupt), "truncated: %v", err)
	_, err = s.Get(hs[2])
	assert.True(t, errors.Is(err, ErrMissing), "deleted: %v", err)
	got, err := s.Get(hs[3])
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat("content d", 200), string(got))

	// Putting the damaged content again does not heal it silently: the
	// name exists. A restore reports it missing (restore_test.go); the next
	// capture of a file with that content keeps the damaged blob, so the
	// check on read is what protects.
	assert.True(t, s.Has(hs[0]))
}

func TestManifestRoundTripAndDamage(t *testing.T) {
	man := map[string]*entry{
		"a.go":     {st: fstat{size: 3, mtime: 10, ctime: 11, ino: 7, mode: sIFREG | 0o644}, hash: HashOf([]byte("abc"))},
		"big.bin":  {st: fstat{size: 1 << 30, mode: sIFREG | 0o600}, why: "larger than the 8 MiB cap"},
		"dir":      {st: fstat{mode: sIFDIR | 0o755}},
		"dir/link": {st: fstat{size: 4, mode: sIFLNK | 0o777}, hash: HashOf([]byte("a.go"))},
	}
	data := encodeManifest(man)
	got, err := decodeManifest(data)
	require.NoError(t, err)
	require.Len(t, got, len(man))
	for k, v := range man {
		assert.Equal(t, v.st, got[k].st, k)
		assert.Equal(t, v.hash, got[k].hash, k)
		assert.Equal(t, v.why, got[k].why, k)
	}
	for _, cut := range []int{0, 3, len(data) / 2, len(data) - 1} {
		_, err := decodeManifest(data[:cut])
		assert.Error(t, err, "cut at %d", cut)
	}
	bad := bytes.Clone(data)
	bad[10] ^= 1
	_, err = decodeManifest(bad)
	assert.Error(t, err)
}

func TestCollectKeepsWhatIsNamed(t *testing.T) {
	old := collectGrace
	collectGrace = 0
	t.Cleanup(func() { collectGrace = old })
	w := newTestWorkspace(t, map[string]string{"keep.txt": "kept by the manifest\n"})
	require.NoError(t, w.Warm(t.Context()))
	orphan, _, err := w.store.Put([]byte("nobody names me"))
	require.NoError(t, err)
	named, _, err := w.store.Put([]byte("a checkpoint names me"))
	require.NoError(t, err)
	require.NoError(t, w.Record(&Checkpoint{Session: "s1", Tool: "write_file",
		Changes: []Change{{Path: "x.txt", After: &State{Kind: KindFile, Hash: named}}}}))
	got, err := w.Collect()
	require.NoError(t, err)
	assert.Equal(t, 1, got.Blobs)
	assert.False(t, w.store.Has(orphan))
	assert.True(t, w.store.Has(named))
	assert.True(t, w.store.Has(HashOf([]byte("kept by the manifest\n"))))

	// A dropped session lets its contents go.
	require.NoError(t, w.DropSession("s1"))
	_, err = w.Collect()
	require.NoError(t, err)
	assert.False(t, w.store.Has(named))
}

func newTestWorkspace(t *testing.T, files map[string]string) *Workspace {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	writeFiles(t, root, files)
	w, err := Open(root, t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { w.Close() })
	return w
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}
