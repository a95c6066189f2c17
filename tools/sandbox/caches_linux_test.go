package sandbox

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An overlay shows the user's directory to a command at its own path: the
// command reads it, its writes land in the upper layer, the user's
// directory never changes; a read-only overlay shows the layers and takes
// no write; the upper layer itself is out of the command's reach. Without
// namespaces (Landlock alone) there is no overlay: the path is only read.
func TestOverlay(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	user := filepath.Join(f.home, "cache")
	layers := filepath.Join(filepath.Dir(f.home), "layers")
	upper, work := filepath.Join(layers, "upper"), filepath.Join(layers, "work")
	for _, d := range []string{user, upper, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(user, "a"), []byte("user\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	writing := f.spec(WorkspaceWrite, fmt.Sprintf(`cat %[1]s/a && echo new > %[1]s/b && echo changed > %[1]s/a && cat %[1]s/a %[1]s/b`, user))
	writing.Overlays = []Overlay{{Path: user, Upper: upper, Work: work}}
	r := run(t, modes[0], writing)
	if r.err != nil || r.code != 0 || r.out != "user\nchanged\nnew\n" {
		t.Fatalf("through the overlay: exit %d, %v:\n%s", r.code, r.err, r.out)
	}
	if len(r.conf.Overlays) != 1 || len(r.conf.OverlayErrors) > 0 {
		t.Errorf("confinement: %+v", r.conf)
	}
	if got, _ := os.ReadFile(filepath.Join(user, "a")); string(got) != "user\n" {
		t.Errorf("the user's file became %q", got)
	}
	if _, err := os.Stat(filepath.Join(user, "b")); err == nil {
		t.Error("a file appeared in the user's directory")
	}
	if got, _ := os.ReadFile(filepath.Join(upper, "b")); string(got) != "new\n" {
		t.Errorf("the upper layer holds %q", got)
	}

	reading := f.spec(Read, fmt.Sprintf(`cat %[1]s/a %[1]s/b; echo x > %[1]s/c || echo refused; cat %[2]s/b || echo unreachable`, user, upper))
	reading.Overlays = []Overlay{{Path: user, Lower: []string{upper}}}
	r = run(t, modes[0], reading)
	if r.err != nil || !strings.HasPrefix(r.out, "changed\nnew\n") || !strings.Contains(r.out, "refused") || !strings.Contains(r.out, "unreachable") {
		t.Errorf("read-only overlay: exit %d, %v:\n%s", r.code, r.err, r.out)
	}

	alone := f.spec(Read, fmt.Sprintf(`cat %[1]s/a; echo x > %[1]s/d || echo refused`, user))
	alone.Overlays = []Overlay{{Path: user, Upper: upper, Work: work}}
	r = run(t, modes[1], alone)
	if r.err != nil || !strings.HasPrefix(r.out, "user\n") || !strings.Contains(r.out, "refused") {
		t.Errorf("Landlock alone: exit %d, %v:\n%s", r.code, r.err, r.out)
	}
	if _, err := os.Stat(filepath.Join(user, "d")); err == nil {
		t.Error("with Landlock alone the user's directory was written")
	}
}

// The go command builds with GOCACHEPROG set to this binary: what the
// user's cache holds comes from it, what is new is stored in the cache the
// program writes, and the second build stores nothing more.
func TestGoCacheProg(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	userCache, err := exec.Command(goBin, "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	mod := t.TempDir()
	own := filepath.Join(t.TempDir(), "own")
	marker := fmt.Sprintf("cacheprog-%d", time.Now().UnixNano())
	for name, content := range map[string]string{
		"go.mod":  "module example.com/p\n\ngo 1.21\n",
		"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"" + marker + "\") }\n",
	} {
		if err := os.WriteFile(filepath.Join(mod, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	build := func() {
		t.Helper()
		cmd := exec.Command(goBin, "build", "-o", filepath.Join(mod, "p"), ".")
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "GOCACHE="+own, "GOCACHEPROG="+GoCacheProg(exe, own, strings.TrimSpace(string(userCache))))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		out, err := exec.Command(filepath.Join(mod, "p")).Output()
		if err != nil || strings.TrimSpace(string(out)) != marker {
			t.Fatalf("the program built says %q (%v)", out, err)
		}
	}
	build()
	first := outputs(own)
	if first == 0 || first > 10 {
		t.Errorf("the first build stored %d outputs: want this package's alone (fmt and the runtime come from the user's cache)", first)
	}
	build()
	if again := outputs(own); again != first {
		t.Errorf("the second build stored more: %d, then %d", first, again)
	}
}

func outputs(dir string) int {
	n := 0
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, "-d") {
			n++
		}
		return nil
	})
	return n
}

// A put whose body does not hash to its output id is refused; a get finds
// an entry in the caches it reads before the one it writes.
func TestGoCachePutAndGet(t *testing.T) {
	user, own := t.TempDir(), t.TempDir()
	c := &goCache{write: own, dirs: []string{user, own}}
	action := sha256.Sum256([]byte("action"))
	body := []byte("object code")
	out := sha256.Sum256(body)
	bad := sha256.Sum256([]byte("other"))
	if r := c.put(action[:], bad[:], body); r.Err == "" {
		t.Fatal("a put whose output id is not its body's hash was taken")
	}
	if r := c.get(action[:]); !r.Miss {
		t.Fatalf("found %+v", r)
	}
	r := c.put(action[:], out[:], body)
	if r.Err != "" || !strings.HasPrefix(r.DiskPath, own) {
		t.Fatalf("put: %+v", r)
	}
	if g := c.get(action[:]); g.Miss || g.DiskPath != r.DiskPath || g.Size != int64(len(body)) {
		t.Fatalf("get after put: %+v", g)
	}
	// The same output in the user's cache serves first.
	u := &goCache{write: user, dirs: []string{user}}
	if r := u.put(action[:], out[:], body); r.Err != "" {
		t.Fatal(r.Err)
	}
	if g := c.get(action[:]); !strings.HasPrefix(g.DiskPath, user) {
		t.Errorf("served from %s, not the user's cache", g.DiskPath)
	}
}
