package rag

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// benchQueries are natural-language questions about the standard library.
var benchQueries = []string{
	"parse an HTTP request line", "listen and serve TLS connections", "read a gzip compressed stream",
	"format a time value with a layout", "sort a slice with a less function", "walk a directory tree",
	"resolve a DNS hostname", "encode a value as JSON", "decode base64 text", "compute a sha256 checksum",
	"split a string by separator", "parse command line flags", "open a file for writing",
	"escape HTML special characters", "compile a regular expression", "generate a random number",
	"wait for goroutines to finish", "set a deadline on a network connection", "convert an integer to a string",
	"parse a URL query string", "write a tar archive", "verify an x509 certificate chain",
	"context cancellation with timeout", "atomic compare and swap", "garbage collector write barrier",
	"go/parser parse a source file", "reflect call a method by name", "print formatted output", "round a float",
	"utf8 decode a rune",
}

// BenchmarkIndexGOROOT measures the figures docs/index.md reports, once per
// run (use -benchtime=1x): full index of a copy of $(go env GOROOT)/src,
// restart, the delay before a one-file change is searchable, query latency
// and peak memory, next to rg scanning the same tree for the query words.
func BenchmarkIndexGOROOT(b *testing.B) {
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip("no go command to find GOROOT")
	}
	src := filepath.Join(strings.TrimSpace(string(goroot)), "src")
	if _, err := os.Stat(src); err != nil {
		b.Skip("GOROOT/src is missing")
	}
	b.StopTimer()
	// A copy, because the change test writes into the tree.
	root := filepath.Join(b.TempDir(), "src")
	if err := os.CopyFS(root, os.DirFS(src)); err != nil {
		b.Skipf("copy GOROOT/src: %v", err)
	}
	state := b.TempDir()
	ctx := context.Background()
	peak := trackHeap()
	runtime.GC()

	start := time.Now()
	ix, err := Open(ctx, Options{Root: root, StateDir: state})
	if err != nil {
		b.Fatal(err)
	}
	if err := ix.Build(ctx, nil); err != nil {
		b.Fatal(err)
	}
	full := time.Since(start)
	st := ix.Status()
	heapPeak := peak()

	start = time.Now()
	ix2, err := Open(ctx, Options{Root: root, StateDir: state})
	if err != nil {
		b.Fatal(err)
	}
	reopen := time.Since(start)
	start = time.Now()
	if err := ix2.Build(ctx, nil); err != nil {
		b.Fatal(err)
	}
	rebuild := time.Since(start)
	ix2 = nil

	change := measureChange(b, ix, root)

	var lat []time.Duration
	for range 5 {
		for _, q := range benchQueries {
			t0 := time.Now()
			if _, _, err := ix.Search(ctx, q, 10); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
	}
	rgP50, rgP95 := rgLatency(b, root)

	b.ReportMetric(full.Seconds(), "full-index-s")
	b.ReportMetric(float64(change.Milliseconds()), "change-ms")
	b.ReportMetric(float64(pct(lat, 50).Microseconds())/1000, "query-p50-ms")
	b.ReportMetric(float64(pct(lat, 95).Microseconds())/1000, "query-p95-ms")
	b.ReportMetric(float64(heapPeak>>20), "heap-peak-MiB")
	b.Logf("GOROOT/src: %d files, %d chunks, embedder %s", st.Files, st.Chunks, st.Embedder)
	b.Logf("full index %v; reopen (load snapshot + cache) %v; no-change Build %v", full.Round(time.Millisecond),
		reopen.Round(time.Millisecond), rebuild.Round(time.Millisecond))
	b.Logf("one-file change searchable after %v (median of 5, from the write, debounce %v included)", change, debounce)
	b.Logf("query p50 %v p95 %v (BM25+vectors+fusion, %d queries ×5)", pct(lat, 50), pct(lat, 95), len(benchQueries))
	b.Logf("heap in use peak %d MiB, VmHWM %s", heapPeak>>20, vmHWM())
	if rgP50 > 0 {
		b.Logf("rg -i -l over the same tree, the query words OR-ed: p50 %v p95 %v", rgP50, rgP95)
	}
	if fi, err := os.Stat(filepath.Join(state, "index.snapshot")); err == nil {
		b.Logf("snapshot %d MiB", fi.Size()>>20)
	}
}

// measureChange edits one file while Watch runs and times until a query
// for a fresh word finds it.
func measureChange(b *testing.B, ix *Index, root string) time.Duration {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { ix.Watch(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	time.Sleep(2 * time.Second) // watches on every directory
	file := filepath.Join(root, "strings", "strings.go")
	orig, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	var ds []time.Duration
	for i := range 5 {
		word := fmt.Sprintf("Zyzzogeton%c", 'a'+i)
		body := append(append([]byte(nil), orig...), fmt.Sprintf("\n// %s marks an edit.\nfunc %s() {}\n", word, word)...)
		t0 := time.Now()
		if err := os.WriteFile(file, body, 0o644); err != nil {
			b.Fatal(err)
		}
		for {
			hits, _, _ := ix.Search(ctx, word, 3)
			if len(hits) > 0 && strings.Contains(hits[0].Text, word) {
				break
			}
			if time.Since(t0) > 10*time.Second {
				b.Fatal("change not picked up in 10s")
			}
			time.Sleep(time.Millisecond)
		}
		ds = append(ds, time.Since(t0))
		time.Sleep(100 * time.Millisecond)
	}
	return pct(ds, 50)
}

func rgLatency(b *testing.B, root string) (p50, p95 time.Duration) {
	if _, err := exec.LookPath("rg"); err != nil {
		b.Log("rg not installed: no comparison")
		return 0, 0
	}
	var lat []time.Duration
	var tk tokenizer
	for _, q := range benchQueries {
		args := []string{"-i", "-l", "--no-messages"}
		for _, w := range strings.Fields(q) {
			if len(w) > 2 && !isStopword([]byte(strings.ToLower(w))) {
				args = append(args, "-e", w)
			}
		}
		_ = tk
		args = append(args, root)
		t0 := time.Now()
		exec.Command("rg", args...).Run()
		lat = append(lat, time.Since(t0))
	}
	return pct(lat, 50), pct(lat, 95)
}

func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

// trackHeap samples HeapInuse until the returned func is called, which
// returns the peak.
func trackHeap() func() uint64 {
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func() uint64 { close(stop); wg.Wait(); return peak.Load() }
}

func vmHWM() string {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return "n/a"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "n/a"
}
