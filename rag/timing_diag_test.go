package rag

import (
	"context"
	"log/slog"
	"os"
	"syscall"
	"testing"
	"time"
)

func TestTimingDiag(t *testing.T) {
	root := os.Getenv("AGENTD_DIAG_ROOT")
	if root == "" {
		t.Skip()
	}
	ctx := context.Background()
	state := t.TempDir()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	c0 := cpu()
	t0 := time.Now()
	ix, err := Open(ctx, Options{Root: root, StateDir: state, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Build(ctx, nil); err != nil {
		t.Fatal(err)
	}
	t.Logf("build %v cpu %v", time.Since(t0), cpu()-c0)
	c0 = cpu()
	t0 = time.Now()
	ix.mu.Lock()
	ix.dirty = true
	ix.mu.Unlock()
	ix.saveIfDirty()
	t.Logf("save %v cpu %v", time.Since(t0), cpu()-c0)
	c0 = cpu()
	t0 = time.Now()
	ix2, _ := Open(ctx, Options{Root: root, StateDir: state, Logger: log})
	t.Logf("reopen %v cpu %v", time.Since(t0), cpu()-c0)
	c0 = cpu()
	t0 = time.Now()
	ix2.Build(ctx, nil)
	t.Logf("nochange build %v cpu %v", time.Since(t0), cpu()-c0)
}
