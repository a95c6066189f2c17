package main

import (
	"bytes"
	"context"
	"encoding/json"
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
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // no user config: the in-process embedder
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
	if code := runIndex(ctx, []string{root}, &stderr); code != 0 {
		t.Fatalf("index exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "indexed 3 files") {
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
	if hit.Path != "retry/backoff.go" || hit.StartLine != 1 || hit.EndLine != 4 || !strings.Contains(hit.Text, "func Backoff") {
		t.Errorf("top hit: %+v", hit)
	}

	// Plain output, indexing on first use with an explicit state dir.
	stdout.Reset()
	stderr.Reset()
	if code := runSearch(ctx, []string{"--state-dir", t.TempDir(), "Backoff", root}, &stdout, &stderr); code != 0 {
		t.Fatalf("search exit %d: %s", code, stderr.String())
	}
	if !strings.HasPrefix(stdout.String(), "retry/backoff.go:1-4  package retry, Backoff") {
		t.Errorf("plain output: %q", stdout.String())
	}

	for _, args := range [][]string{{}, {"--limit", "0", "q"}, {"--bogus", "q"}} {
		if code := runSearch(ctx, args, &stdout, &stderr); code != 2 {
			t.Errorf("search %q: exit %d, want 2", args, code)
		}
	}
	if code := runIndex(ctx, []string{filepath.Join(root, "missing")}, &stderr); code != 1 {
		t.Errorf("index of a missing dir: exit %d, want 1", code)
	}
}
