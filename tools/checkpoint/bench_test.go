package checkpoint

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The checkpoint cost of a command on a copy of $(go env GOROOT)/src:
//
//	go test ./tools/checkpoint -run '^$' -bench . -benchtime 20x
//
// BenchmarkFill is the one-time fill of the store; the others run on a
// filled store: a command that changes nothing, one that changes one file
// (Begin, the write, End, Record), and the store's growth over those
// commands (reported as bytes per command and in all after 100).

var (
	goSrcOnce sync.Once
	goSrcDir  string
	goSrcErr  error
)

// goSrcCopy copies GOROOT/src once per test binary.
func goSrcCopy(b *testing.B) string {
	b.Helper()
	goSrcOnce.Do(func() {
		src := filepath.Join(runtime.GOROOT(), "src")
		if _, err := os.Stat(src); err != nil {
			goSrcErr = err
			return
		}
		dir, err := os.MkdirTemp("", "checkpoint-bench")
		if err != nil {
			goSrcErr = err
			return
		}
		goSrcDir = filepath.Join(dir, "src")
		if out, err := exec.Command("cp", "-a", src, goSrcDir).CombinedOutput(); err != nil {
			goSrcErr = fmt.Errorf("cp: %v: %s", err, out)
		}
	})
	if goSrcErr != nil {
		b.Skip("no GOROOT/src to copy:", goSrcErr)
	}
	return goSrcDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if goSrcDir != "" {
		os.RemoveAll(filepath.Dir(goSrcDir))
	}
	os.Exit(code)
}

func benchWorkspace(b *testing.B, warm bool) *Workspace {
	b.Helper()
	root := goSrcCopy(b)
	w, err := Open(root, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { w.Close() })
	if warm {
		if err := w.Warm(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
	return w
}

func BenchmarkFill(b *testing.B) {
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		w := benchWorkspace(b, false)
		b.StartTimer()
		c0 := cpuTime()
		if err := w.Warm(b.Context()); err != nil {
			b.Fatal(err)
		}
		cpu += cpuTime() - c0
		b.StopTimer()
		n, _ := w.DiskUsage()
		var covered int64
		for _, e := range w.man {
			covered += e.st.size
		}
		b.ReportMetric(float64(len(w.man)), "paths")
		b.ReportMetric(float64(covered)/(1<<20), "covered-MiB")
		b.ReportMetric(float64(n)/(1<<20), "store-MiB")
		w.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
}

// cpuTime is the process's user and system time: on a shared machine the
// wall time is mostly queueing, the CPU time is the work.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ways runs a benchmark with the watcher (Begin and End look at inotify's
// events) and with full stat scans (no inotify, or its events lost).
func ways(b *testing.B, bench func(b *testing.B, w *Workspace)) {
	for _, watch := range []bool{true, false} {
		name := "scan"
		if watch {
			name = "watch"
		}
		b.Run(name, func(b *testing.B) {
			w := benchWorkspace(b, false)
			w.noWatch = !watch
			if err := w.Warm(b.Context()); err != nil {
				b.Fatal(err)
			}
			cpu := cpuTime()
			bench(b, w)
			b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}

func BenchmarkCommandNoChange(b *testing.B) { ways(b, benchNoChange) }

func benchNoChange(b *testing.B, w *Workspace) {
	for b.Loop() {
		tok := w.Begin(b.Context())
		chs, _, err := w.End(b.Context(), tok)
		if err != nil || len(chs) != 0 {
			b.Fatalf("%v %v", chs, err)
		}
	}
}

func BenchmarkCommandOneFile(b *testing.B) { ways(b, benchOneFile) }

func benchOneFile(b *testing.B, w *Workspace) {
	target := filepath.Join(w.root, "strings", "strings.go")
	orig, err := os.ReadFile(target)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.WriteFile(target, orig, 0o644) })
	before, _ := w.DiskUsage()
	i := 0
	for b.Loop() {
		i++
		tok := w.Begin(b.Context())
		// What a sed -i of one line does: the file rewritten, one line changed.
		edited := strings.Replace(string(orig), "package strings", fmt.Sprintf("package strings // edit %d", i), 1)
		if err := os.WriteFile(target, []byte(edited), 0o644); err != nil {
			b.Fatal(err)
		}
		chs, _, err := w.End(b.Context(), tok)
		if err != nil || len(chs) != 1 {
			b.Fatalf("%v %v", chs, err)
		}
		if err := w.Record(&Checkpoint{Session: "bench", Tool: "run_cmd", Changes: chs}); err != nil {
			b.Fatal(err)
		}
	}
	after, _ := w.DiskUsage()
	b.ReportMetric(float64(after-before)/float64(i), "store-B/cmd")
}

// TestStoreGrowthOver100Commands reports the disk the store takes after 100
// one-file commands on GOROOT/src (run with -v; skipped in -short).
func TestStoreGrowthOver100Commands(t *testing.T) {
	if testing.Short() || os.Getenv("CHECKPOINT_BENCH") == "" {
		t.Skip("set CHECKPOINT_BENCH=1 (copies GOROOT/src)")
	}
	var w *Workspace
	testing.Benchmark(func(b *testing.B) { w = benchWorkspace(b, true) })
	_ = w
	res := testing.Benchmark(func(b *testing.B) {
		w := benchWorkspace(b, true)
		filled, _ := w.DiskUsage()
		target := filepath.Join(w.root, "strings", "strings.go")
		orig, _ := os.ReadFile(target)
		defer os.WriteFile(target, orig, 0o644)
		var noop, one time.Duration
		for i := 1; i <= 100; i++ {
			start := time.Now()
			tok := w.Begin(b.Context())
			chs, _, _ := w.End(b.Context(), tok)
			noop += time.Since(start)
			if len(chs) != 0 {
				b.Fatal(chs)
			}
			start = time.Now()
			tok = w.Begin(b.Context())
			edited := strings.Replace(string(orig), "package strings", fmt.Sprintf("package strings // edit %d", i), 1)
			os.WriteFile(target, []byte(edited), 0o644)
			chs, _, _ = w.End(b.Context(), tok)
			if err := w.Record(&Checkpoint{Session: "bench", Tool: "run_cmd", Changes: chs}); err != nil {
				b.Fatal(err)
			}
			one += time.Since(start)
		}
		after, _ := w.DiskUsage()
		t.Logf("filled store %.1f MiB; after 100 no-op and 100 one-file commands %.1f MiB (+%.1f KiB, %.1f KiB per changing command); mean no-op %v, one-file %v",
			float64(filled)/(1<<20), float64(after)/(1<<20), float64(after-filled)/1024, float64(after-filled)/1024/100,
			noop/100, one/100)
	})
	_ = res
}
