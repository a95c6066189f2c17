package rag

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"
)

func TestZZPhase(t *testing.T) {
	root := os.Getenv("RAG_PHASE_ROOT")
	if root == "" {
		t.Skip()
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	t0 := time.Now()
	ix, err := Open(context.Background(), Options{Root: root, StateDir: t.TempDir(), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	c0 := cpuNow()
	if err := ix.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	t.Logf("full %v cpu %v", time.Since(t0), cpuNow()-c0)
}
