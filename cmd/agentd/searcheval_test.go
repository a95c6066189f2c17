package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSearchEvalCommand(t *testing.T) {
	ctx := context.Background()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	// A module the cache does not have is skipped with the way to get it.
	set := filepath.Join(t.TempDir(), "missing.jsonl")
	rec := `{"id":"x-001","query":"a query","module":"example.invalid/nothing","version":"v0.0.1","files":["a.go"],"funcs":[],"noleak":true}` + "\n"
	if err := os.WriteFile(set, []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := runSearchEval(ctx, []string{set}, &stdout, &stderr); code != 1 {
		t.Errorf("missing module: exit %d, want 1", code)
	}
	if !strings.Contains(stderr.String(), "go mod download example.invalid/nothing@v0.0.1") {
		t.Errorf("missing module: %q", stderr.String())
	}

	// The tuning set's smallest module, when the cache has it.
	stdout.Reset()
	stderr.Reset()
	code := runSearchEval(ctx, []string{"../../rag/testdata/commits/cobra.jsonl"}, &stdout, &stderr)
	if code != 0 && strings.Contains(stderr.String(), "no corpus available") {
		t.Skip("github.com/spf13/cobra@v1.2.1 is not in the module cache")
	}
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"All queries: 87 queries", "The noleak subset", "| agentd |", "| BM25 whole files |", "cobra (87)"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, stdout.String())
		}
	}
}
