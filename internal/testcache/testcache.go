// Package testcache is where agentd's tests keep what they install once
// and reuse across runs (npm packages, language servers): a directory per
// name and key under the user's cache, filled once under a lock, so that
// the test binaries `go test ./...` runs side by side, and two checkouts
// tested at once, never write the same files at the same time nor read a
// half-filled directory.
//
//	dir := testcache.Dir(t, "mcp-npm", "server-everything@2026.8.31 inspector@2.12.0", func(dir string) error {
//		return exec.Command("npm", "install", "--prefix", dir, …).Run()
//	})
//
// The key names what fills it (the versions): another key is another
// directory, so a branch pinning other versions never replaces this one
// under a running test. A fill that fails or is killed leaves no stamp;
// the next caller empties the directory and fills it again.
package testcache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// BaseEnv overrides the base directory
// ($XDG_CACHE_HOME/agentd-test, ~/.cache/agentd-test by default).
const BaseEnv = "AGENTD_TEST_CACHE"

// stamp is written last, once the fill succeeded; it holds the key.
const stamp = ".agentd-test-complete"

// ErrSkip, wrapped by a fill's error, skips the test instead of failing
// it (the registry cannot be reached): Dir calls t.Skip with the error.
var ErrSkip = errors.New("cannot be installed here")

// Base is the directory the caches live in.
func Base() (string, error) {
	if b := os.Getenv(BaseEnv); b != "" {
		return b, nil
	}
	c, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(c, "agentd-test"), nil
}

// Path is the directory of name and key, filled or not.
func Path(name, key string) (string, error) {
	base, err := Base()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(base, name+"-"+hex.EncodeToString(sum[:6])), nil
}

// Dir returns the directory of name and key, calling fill on it (empty)
// first if no one has filled it yet. Only one process fills it; the others
// wait for it.
func Dir(t testing.TB, name, key string, fill func(dir string) error) string {
	t.Helper()
	dir, err := Ensure(name, key, fill)
	switch {
	case errors.Is(err, ErrSkip):
		t.Skip(err)
	case err != nil:
		t.Fatal(err)
	}
	return dir
}

// Ensure is Dir without a test: for a program that fills the cache ahead
// (.ci/test).
func Ensure(name, key string, fill func(dir string) error) (string, error) {
	dir, err := Path(name, key)
	if err != nil {
		return "", err
	}
	if complete(dir, key) {
		return dir, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close() // releases the lock
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("locking %s: %w", dir, err)
	}
	if complete(dir, key) {
		return dir, nil // another process filled it while this one waited
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := fill(dir); err != nil {
		return "", fmt.Errorf("filling the test cache %s: %w", dir, err)
	}
	if err := os.WriteFile(filepath.Join(dir, stamp), []byte(key), 0o644); err != nil {
		return "", err
	}
	return dir, nil
}

func complete(dir, key string) bool {
	b, err := os.ReadFile(filepath.Join(dir, stamp))
	return err == nil && string(b) == key
}
