package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// rootModes are the two walks: the kernel's openat2 and os.Root's.
func rootModes(t *testing.T, f func(t *testing.T)) {
	for _, fallback := range []bool{false, true} {
		name := "openat2"
		if fallback {
			name = "component-walk"
		}
		t.Run(name, func(t *testing.T) {
			noOpenat2 = fallback
			defer func() { noOpenat2 = false }()
			f(t)
		})
	}
}

func openTestRoot(t *testing.T) (*Root, string, string) {
	t.Helper()
	base := t.TempDir()
	ws, out := filepath.Join(base, "ws"), filepath.Join(base, "outside")
	for _, d := range []string{ws + "/dir", out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r, err := OpenRoot(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	if noOpenat2 != (r.fd < 0) {
		t.Fatalf("fd %d with noOpenat2=%v: this kernel has openat2", r.fd, noOpenat2)
	}
	return r, ws, out
}

func TestRootOperations(t *testing.T) {
	rootModes(t, func(t *testing.T) {
		r, ws, _ := openTestRoot(t)
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(r.MkdirAll("a/b/c", 0o755))
		must(r.WriteFile("a/b/c/f.txt", []byte("one"), 0o600))
		must(os.Chmod(filepath.Join(ws, "a/b/c/f.txt"), 0o640))
		must(r.WriteFile("a/b/c/f.txt", []byte("two"), 0o600))
		data, err := r.ReadFile("a/b/c/f.txt")
		must(err)
		if string(data) != "two" {
			t.Errorf("read %q", data)
		}
		fi, err := r.Stat("a/b/c/f.txt")
		must(err)
		if fi.Mode().Perm() != 0o640 || fi.Size() != 3 {
			t.Errorf("rewrite changed the mode or size: %v %d", fi.Mode(), fi.Size())
		}
		must(r.Rename("a/b/c/f.txt", "a/g.txt"))
		must(os.Symlink("g.txt", filepath.Join(ws, "a", "link")))
		if data, err := r.ReadFile("a/link"); err != nil || string(data) != "two" {
			t.Errorf("a symlink inside: %q %v", data, err)
		}
		if fi, err := r.Lstat("a/link"); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("Lstat of a symlink: %v %v", fi, err)
		}
		list, err := r.ReadDir("a")
		must(err)
		var names []string
		for _, e := range list {
			names = append(names, e.Name())
		}
		if strings.Join(names, ",") != "b,g.txt,link" {
			t.Errorf("ReadDir: %v", names)
		}
		must(r.Remove("a/link"))
		if _, err := os.Stat(filepath.Join(ws, "a/g.txt")); err != nil {
			t.Error("removing a symlink removed its target")
		}
		must(r.Remove("a/b/c"))
		must(r.RemoveAll("a"))
		if _, err := os.Stat(filepath.Join(ws, "a")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("RemoveAll left %v", err)
		}
		if err := r.Mkdir("dir", 0o755); !errors.Is(err, fs.ErrExist) {
			t.Errorf("Mkdir of an existing dir: %v", err)
		}
		if _, err := r.Stat("."); err != nil {
			t.Errorf("Stat(.): %v", err)
		}
	})
}

// Names that leave the workspace fail with ErrEscapes, and nothing is
// written outside. A symlink as the last element is followed by reads and
// creation (and refused), but replaced, not followed, by WriteFile, Rename
// and Remove.
func TestRootRefusesEscapes(t *testing.T) {
	ops := []struct {
		name string
		do   func(r *Root, name string) error
	}{
		{"write", func(r *Root, n string) error { return r.WriteFile(n, []byte("x"), 0o644) }},
		{"create", func(r *Root, n string) error {
			f, err := r.OpenFile(n, os.O_CREATE|os.O_WRONLY, 0o644)
			if err == nil {
				f.Close()
			}
			return err
		}},
		{"read", func(r *Root, n string) error { _, err := r.ReadFile(n); return err }},
		{"mkdir", func(r *Root, n string) error { return r.MkdirAll(n+"/d", 0o755) }},
		{"rename", func(r *Root, n string) error { return r.Rename(n, "moved") }},
		{"remove", func(r *Root, n string) error { return r.Remove(n) }},
		{"stat", func(r *Root, n string) error { _, err := r.Stat(n + "/.."); return err }},
	}
	rootModes(t, func(t *testing.T) {
		for _, name := range []string{"../outside/f", "/etc/passwd", "dir/../../outside/f", "abs/f", "rel/f", "rel", "abs"} {
			for _, op := range ops {
				r, ws, out := openTestRoot(t)
				if err := os.Symlink(out, filepath.Join(ws, "abs")); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("../outside", filepath.Join(ws, "rel")); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(out, "f"), []byte("outside"), 0o644); err != nil {
					t.Fatal(err)
				}
				err := op.do(r, name)
				lastIsLink := name == "rel" || name == "abs"
				switch {
				case lastIsLink && (op.name == "write" || op.name == "rename" || op.name == "remove"):
					if err != nil {
						t.Errorf("%s %s (the link itself): %v", op.name, name, err)
					}
				case err == nil:
					t.Errorf("%s %s: succeeded", op.name, name)
				case !errors.Is(err, ErrEscapes):
					t.Errorf("%s %s: %v, want ErrEscapes", op.name, name, err)
				}
				entries, _ := os.ReadDir(out)
				data, _ := os.ReadFile(filepath.Join(out, "f"))
				if len(entries) != 1 || string(data) != "outside" {
					t.Errorf("%s %s changed the outside: %v %q", op.name, name, entries, data)
				}
			}
		}
	})
}

// A directory approved for a write, swapped for a symlink to the outside
// before the write happens: the write fails. The same swap sends a plain
// os.WriteFile outside, which is what this guards against.
func TestRootSwapAfterApproval(t *testing.T) {
	rootModes(t, func(t *testing.T) {
		r, ws, out := openTestRoot(t)
		dir := filepath.Join(ws, "dir")
		if err := os.Rename(dir, dir+".bak"); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(out, dir); err != nil {
			t.Fatal(err)
		}
		for op, do := range map[string]func() error{
			"write":  func() error { return r.WriteFile("dir/f", []byte("x"), 0o644) },
			"mkdir":  func() error { return r.Mkdir("dir/d", 0o755) },
			"rename": func() error { return r.Rename("dir.bak", "dir/moved") },
			"remove": func() error { return r.Remove("dir/existing") },
		} {
			if err := do(); !errors.Is(err, ErrEscapes) {
				t.Errorf("%s through the swapped directory: %v", op, err)
			}
		}
		if entries, _ := os.ReadDir(out); len(entries) > 0 {
			t.Fatalf("written outside: %v", entries)
		}
		if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(out, "f")); err != nil {
			t.Fatal("control: a plain write should have gone outside")
		}
	})
}

// The race: one goroutine keeps swapping the directory for a symlink and
// back while another keeps writing into it. No write ever lands outside.
func TestRootSwapRace(t *testing.T) {
	rootModes(t, func(t *testing.T) {
		r, ws, out := openTestRoot(t)
		dir := filepath.Join(ws, "dir")
		var stop atomic.Bool
		var wg sync.WaitGroup
		wg.Add(1)
		swaps := 0
		go func() {
			defer wg.Done()
			for !stop.Load() {
				_ = os.Rename(dir, dir+".real")
				_ = os.Symlink(out, dir)
				_ = os.Remove(dir)
				_ = os.Rename(dir+".real", dir)
				swaps++
			}
		}()
		var ok, refused int
		deadline := time.Now().Add(20 * time.Second)
		for i := 0; ok < 20 || refused < 20; i++ {
			if time.Now().After(deadline) {
				break
			}
			if i%8 == 0 {
				runtime.Gosched() // let the swapper run between some writes, not only during
			}
			err := r.WriteFile("dir/f", []byte{byte(i)}, 0o644)
			switch {
			case err == nil:
				ok++
			case errors.Is(err, ErrEscapes) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrExist) ||
				errors.Is(err, syscall.ENOTDIR):
				refused++
			default:
				t.Errorf("unexpected error: %v", err)
			}
		}
		stop.Store(true)
		wg.Wait()
		if entries, _ := os.ReadDir(out); len(entries) > 0 {
			t.Fatalf("a write landed outside: %v", entries)
		}
		t.Logf("%d swaps, %d writes inside, %d refused", swaps, ok, refused)
		if ok < 20 || refused < 20 {
			t.Errorf("the race did not happen: %d writes, %d swaps", ok, swaps)
		}
	})
}
