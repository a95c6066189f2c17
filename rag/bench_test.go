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

// gorootSrc is $(go env GOROOT)/src, or a skip.
func gorootSrc(b *testing.B) string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip("no go command to find GOROOT")
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "src")
	if _, err := os.Stat(src); err != nil {
		b.Skip("GOROOT/src is missing")
	}
	return src
}

// BenchmarkIndexGOROOT measures the figures docs/index.md reports, once per
// run (use -benchtime=1x) on a copy of $(go env GOROOT)/src: the cold
// build (wall, CPU, peak heap), memory per chunk once built, a restart, a
// build with nothing changed, the delay before a one-file change is
// searchable, query latency from memory and from the memory-mapped
// snapshot (what `agentd search` does), next to rg over the same tree.
func BenchmarkIndexGOROOT(b *testing.B) {
	src := gorootSrc(b)
	b.StopTimer()
	// A copy, because the change test writes into the tree.
	root := filepath.Join(b.TempDir(), "src")
	if err := os.CopyFS(root, os.DirFS(src)); err != nil {
		b.Skipf("copy GOROOT/src: %v", err)
	}
	state := b.TempDir()
	ctx := context.Background()
	runtime.GC()
	base := heapInUse()
	peak := trackHeap()

	start, cpu0 := time.Now(), cpuTime()
	ix, err := Open(ctx, Options{Root: root, StateDir: state})
	if err != nil {
		b.Fatal(err)
	}
	if err := ix.Build(ctx, nil); err != nil {
		b.Fatal(err)
	}
	full, fullCPU := time.Since(start), cpuTime()-cpu0
	heapPeak := peak()
	st := ix.Status()
	runtime.GC()
	perChunk := float64(heapInUse()-base) / float64(st.Chunks)

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
	ix2.Close()

	memLat := queryLatency(b, func(q string) { ix.Search(ctx, q, 10) })
	v, err := OpenView(root, state)
	if err != nil {
		b.Fatal(err)
	}
	start = time.Now()
	fresh := v.Fresh(ctx)
	freshDur := time.Since(start)
	viewLat := queryLatency(b, func(q string) { v.Search(ctx, q, 10) })
	v.Close()
	rgLat := rgLatency(b, root)
	change := measureChange(b, ix, root)

	b.ReportMetric(full.Seconds(), "full-index-s")
	b.ReportMetric(fullCPU.Seconds(), "full-index-cpu-s")
	b.ReportMetric(float64(heapPeak>>20), "heap-peak-MiB")
	b.ReportMetric(perChunk, "heap-B/chunk")
	b.ReportMetric(float64(change.Milliseconds()), "change-ms")
	b.ReportMetric(float64(pct(memLat, 50).Microseconds())/1000, "query-p50-ms")
	b.ReportMetric(float64(pct(memLat, 95).Microseconds())/1000, "query-p95-ms")
	b.Logf("GOROOT/src: %d files, %d chunks, keyword search", st.Files, st.Chunks)
	b.Logf("full index %v wall, %v CPU; heap in use peak %d MiB, VmHWM %s", full.Round(time.Millisecond),
		fullCPU.Round(time.Millisecond), heapPeak>>20, vmHWM())
	b.Logf("heap per chunk once built: %.0f B", perChunk)
	b.Logf("reopen (load snapshot) %v; no-change Build %v", reopen.Round(time.Millisecond), rebuild.Round(time.Millisecond))
	b.Logf("query from memory: p50 %v p95 %v (%d queries ×5)", pct(memLat, 50), pct(memLat, 95), len(benchQueries))
	b.Logf("snapshot: freshness check %v (fresh %v); query p50 %v p95 %v", freshDur.Round(time.Microsecond), fresh,
		pct(viewLat, 50), pct(viewLat, 95))
	if rgLat != nil {
		b.Logf("rg -i -l over the same tree, the query words OR-ed: p50 %v p95 %v", pct(rgLat, 50), pct(rgLat, 95))
	}
	b.Logf("one-file change searchable after %v (median of 5, from the write, debounce %v included)", change, debounce)
	if fi, err := os.Stat(filepath.Join(state, "index.snapshot")); err == nil {
		b.Logf("snapshot %d MiB", fi.Size()>>20)
	}
}

// BenchmarkQuery250k measures query latency and memory at about 250k
// chunks: five hard-linked copies of GOROOT/src in one workspace (set
// AGENTD_BENCH_COPIES to change the number).
func BenchmarkQuery250k(b *testing.B) {
	src := gorootSrc(b)
	b.StopTimer()
	copies := 5
	if n, err := fmt.Sscan(os.Getenv("AGENTD_BENCH_COPIES"), &copies); n != 1 || err != nil {
		copies = 5
	}
	root := b.TempDir()
	for i := range copies {
		// Hard links: the copies cost no disk and no page cache.
		dst := filepath.Join(root, fmt.Sprintf("src%d", i))
		if out, err := exec.Command("cp", "-al", src, dst).CombinedOutput(); err != nil {
			b.Skipf("cp -al: %v %s", err, out)
		}
	}
	ctx := context.Background()
	runtime.GC()
	base := heapInUse()
	peak := trackHeap()
	state := b.TempDir()
	start, cpu0 := time.Now(), cpuTime()
	ix, err := Open(ctx, Options{Root: root, StateDir: state})
	if err != nil {
		b.Fatal(err)
	}
	if err := ix.Build(ctx, nil); err != nil {
		b.Fatal(err)
	}
	full, fullCPU := time.Since(start), cpuTime()-cpu0
	heapPeak := peak()
	st := ix.Status()
	runtime.GC()
	perChunk := float64(heapInUse()-base) / float64(st.Chunks)
	memLat := queryLatency(b, func(q string) { ix.Search(ctx, q, 10) })
	v, err := OpenView(root, state)
	if err != nil {
		b.Fatal(err)
	}
	viewLat := queryLatency(b, func(q string) { v.Search(ctx, q, 10) })
	v.Close()
	b.ReportMetric(float64(st.Chunks), "chunks")
	b.ReportMetric(perChunk, "heap-B/chunk")
	b.ReportMetric(float64(pct(memLat, 50).Microseconds())/1000, "query-p50-ms")
	b.ReportMetric(float64(pct(memLat, 95).Microseconds())/1000, "query-p95-ms")
	b.Logf("%d copies of GOROOT/src: %d files, %d chunks; index %v wall, %v CPU; heap peak %d MiB, VmHWM %s",
		copies, st.Files, st.Chunks, full.Round(time.Millisecond), fullCPU.Round(time.Millisecond), heapPeak>>20, vmHWM())
	b.Logf("heap per chunk once built: %.0f B (a million chunks: %.2f GiB)", perChunk, perChunk*1e6/(1<<30))
	b.Logf("query from memory: p50 %v p95 %v; from the snapshot: p50 %v p95 %v", pct(memLat, 50), pct(memLat, 95),
		pct(viewLat, 50), pct(viewLat, 95))
	if fi, err := os.Stat(filepath.Join(state, "index.snapshot")); err == nil {
		b.Logf("snapshot %d MiB", fi.Size()>>20)
	}
}

// queryLatency runs every bench query five times.
func queryLatency(b *testing.B, search func(q string)) []time.Duration {
	b.Helper()
	var lat []time.Duration
	for range 5 {
		for _, q := range benchQueries {
			t0 := time.Now()
			search(q)
			lat = append(lat, time.Since(t0))
		}
	}
	return lat
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
			if len(hits) > 0 && strings.Contains(hits[0].Chunks[0].Text, word) {
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

// rgLatency runs rg -i -l with each query's words, or returns nil without rg.
func rgLatency(b *testing.B, root string) []time.Duration {
	if _, err := exec.LookPath("rg"); err != nil {
		b.Log("rg not installed: no comparison")
		return nil
	}
	var lat []time.Duration
	for _, q := range benchQueries {
		args := []string{"-i", "-l", "--no-messages"}
		for _, w := range strings.Fields(q) {
			if len(w) > 2 && !isStopword([]byte(strings.ToLower(w))) {
				args = append(args, "-e", w)
			}
		}
		args = append(args, root)
		t0 := time.Now()
		exec.Command("rg", args...).Run()
		lat = append(lat, time.Since(t0))
	}
	return lat
}

func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

func heapInUse() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
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
		for {
			if h := heapInUse(); h > peak.Load() {
				peak.Store(h)
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
