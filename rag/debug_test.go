package rag

import (
	"context"
	"os"
	"strings"
	"testing"
)

func TestDebugQueries(t *testing.T) {
	qsEnv := os.Getenv("RAG_DEBUG_Q")
	if qsEnv == "" {
		t.Skip()
	}
	root := moduleDir(t, "mvdan.cc/sh/v3@v3.14.1")
	ctx := context.Background()
	ix, _ := Open(ctx, Options{Root: root, StateDir: t.TempDir()})
	ix.Build(ctx, nil)
	var tk tokenizer
	for _, q := range strings.Split(qsEnv, "|") {
		t.Logf("Q %q terms %v", q, tk.terms(q))
		lex, vec, _ := ix.rankings(ctx, q, 5)
		for i, n := range lex {
			t.Logf("  lex %d %s %s", i+1, ix.slots[n].Path, trunc(ix.slots[n].Symbol))
		}
		for i, n := range vec {
			t.Logf("  vec %d %s %s", i+1, ix.slots[n].Path, trunc(ix.slots[n].Symbol))
		}
	}
}

func trunc(s string) string {
	if len(s) > 60 {
		return s[:60]
	}
	return s
}
