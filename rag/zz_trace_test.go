package rag

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"syscall"
	"testing"
	"time"
)

func TestZZTrace(t *testing.T) {
	root := os.Getenv("RAG_TRACE_ROOT")
	if root == "" {
		t.Skip()
	}
	state := t.TempDir()
	ctx := context.Background()
	peak := trackHeap()
	c0 := cpuTime()
	t0 := time.Now()
	ix, err := Open(ctx, Options{Root: root, StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Build(ctx, nil); err != nil {
		t.Fatal(err)
	}
	t.Logf("full %v cpu %v peak %d MiB", time.Since(t0), cpuTime()-c0, peak()>>20)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("steady heap in use %d MiB", ms.HeapInuse>>20)
	if f, err := os.Create("/tmp/ragperf/heap_steady.prof"); err == nil {
		pprof.WriteHeapProfile(f)
		f.Close()
	}
	runtime.KeepAlive(ix)
	var lexT, vecT, allT []time.Duration
	for range 3 {
		for _, q := range benchQueries {
			var tk tokenizer
			bag := countTerms(&tk, q)
			t1 := time.Now()
			ix.mu.RLock()
			ix.bm.search(bag.terms, candidates)
			ix.mu.RUnlock()
			lexT = append(lexT, time.Since(t1))
			qv := ix.emb.(*localEmbedder).vector(bag)
			t1 = time.Now()
			ix.mu.RLock()
			ix.vec.query(qv, candidates, vecMinSim)
			ix.mu.RUnlock()
			vecT = append(vecT, time.Since(t1))
			t1 = time.Now()
			ix.Search(ctx, q, 10)
			allT = append(allT, time.Since(t1))
		}
	}
	t.Logf("bm25 p50 %v p95 %v; vec p50 %v p95 %v; search p50 %v p95 %v", pct(lexT, 50), pct(lexT, 95), pct(vecT, 50), pct(vecT, 95), pct(allT, 50), pct(allT, 95))
	c0 = cpuTime()
	t0 = time.Now()
	ix2, err := Open(ctx, Options{Root: root, StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("reopen %v cpu %v, %d chunks", time.Since(t0), cpuTime()-c0, ix2.Status().Chunks)
	runtime.GC()
	runtime.ReadMemStats(&ms)
	t.Logf("after reopen heap in use %d MiB (two indexes)", ms.HeapInuse>>20)
	runtime.KeepAlive(ix)
	runtime.KeepAlive(ix2)
	_ = filepath.Join
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
