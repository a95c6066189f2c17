package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd/agentd/rpc/wire"
)

func TestIndexAndSearchCommands(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	t.Setenv("AGENTD_STATE_DIR", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // no user config: keyword search
	files := map[string]string{
		"retry/backoff.go": "package retry\n\n// Backoff returns the delay before attempt n, doubling each time.\nfunc Backoff(n int) int { return 1 << n }\n",
		"main.go":          "package main\n\nfunc main() {}\n",
		"README.md":        "# Demo\n\nA demo workspace.\n",
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	var stderr bytes.Buffer
	if code := runIndex(ctx, []string{root}, io.Discard, &stderr); code != 0 {
		t.Fatalf("index exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "indexed 3 files") || !strings.Contains(stderr.String(), "keyword search") {
		t.Errorf("index summary: %q", stderr.String())
	}

	var stdout bytes.Buffer
	stderr.Reset()
	// Flags after the query work too.
	if code := runSearch(ctx, []string{"delay before retrying", root, "--json", "--limit", "2"}, &stdout, &stderr); code != 0 {
		t.Fatalf("search exit %d: %s", code, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) == 0 || len(lines) > 2 {
		t.Fatalf("want 1..2 JSON lines, got %q", stdout.String())
	}
	var hit wire.SearchHit
	if err := json.Unmarshal([]byte(lines[0]), &hit); err != nil {
		t.Fatal(err)
	}
	if hit.Path != "retry/backoff.go" || len(hit.Chunks) == 0 || hit.Chunks[0].StartLine != 1 || hit.Chunks[0].EndLine != 4 ||
		!strings.Contains(hit.Chunks[0].Text, "func Backoff") || len(hit.Chunks[0].Lines) == 0 {
		t.Errorf("top hit: %+v", hit)
	}

	// Plain output, indexing on first use with an explicit state dir.
	stdout.Reset()
	stderr.Reset()
	if code := runSearch(ctx, []string{"--state-dir", t.TempDir(), "Backoff", root}, &stdout, &stderr); code != 0 {
		t.Fatalf("search exit %d: %s", code, stderr.String())
	}
	if !strings.HasPrefix(stdout.String(), "retry/backoff.go  (strong 1.00)\n  1-4 package retry, Backoff\n") {
		t.Errorf("plain output: %q", stdout.String())
	}

	// A query about nothing in the workspace says so, and exits 1 like grep.
	stdout.Reset()
	stderr.Reset()
	if code := runSearch(ctx, []string{"purple elephant xylophone", root}, &stdout, &stderr); code != 1 {
		t.Errorf("nonsense query: exit %d, want 1", code)
	}
	if stdout.Len() > 0 || !strings.Contains(stderr.String(), "nothing matched") {
		t.Errorf("nonsense query: stdout %q stderr %q", stdout.String(), stderr.String())
	}

	for _, args := range [][]string{{}, {"--limit", "0", "q"}, {"--bogus", "q"}} {
		if code := runSearch(ctx, args, &stdout, &stderr); code != 2 {
			t.Errorf("search %q: exit %d, want 2", args, code)
		}
	}
	if code := runIndex(ctx, []string{filepath.Join(root, "missing")}, io.Discard, &stderr); code != 1 {
		t.Errorf("index of a missing dir: exit %d, want 1", code)
	}
}

// TestSearchAnswersFromTheSnapshot checks that a warm search reads the
// saved snapshot without rewriting it, and that a change to the workspace
// is seen by the next search.
func TestSearchAnswersFromTheSnapshot(t *testing.T) {
	ctx := context.Background()
	root, state := t.TempDir(), t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("cart.go", "package cart\n\n// Total sums the prices in the cart.\nfunc Total(p []int) int { return 0 }\n")
	search := func(q string) string {
		var stdout, stderr bytes.Buffer
		runSearch(ctx, []string{"--state-dir", state, q, root}, &stdout, &stderr)
		return stdout.String()
	}
	if out := search("cart total"); !strings.HasPrefix(out, "cart.go  (strong 1.00)\n  1-4 ") {
		t.Fatalf("first search: %q", out)
	}
	snap := filepath.Join(state, "index.snapshot")
	before, err := os.Stat(snap)
	if err != nil {
		t.Fatal(err)
	}
	if out := search("cart total"); !strings.HasPrefix(out, "cart.go  (strong 1.00)\n  1-4 ") {
		t.Fatalf("warm search: %q", out)
	}
	if after, _ := os.Stat(snap); !after.ModTime().Equal(before.ModTime()) {
		t.Error("a search with nothing changed rewrote the snapshot")
	}
	write("tax.go", "package cart\n\n// Tax adds the sales tax to a total.\nfunc Tax(t int) int { return t }\n")
	if out := search("sales tax"); !strings.HasPrefix(out, "tax.go  (strong 1.00)\n  1-4 ") {
		t.Errorf("after adding a file: %q", out)
	}
	// A new file goes into a delta beside the snapshot: the snapshot is not
	// rewritten.
	if after, _ := os.Stat(snap); !after.ModTime().Equal(before.ModTime()) {
		t.Error("a one-file change rewrote the snapshot")
	}
	if _, err := os.Stat(filepath.Join(state, "index.delta")); err != nil {
		t.Errorf("no delta after a one-file change: %v", err)
	}
}
