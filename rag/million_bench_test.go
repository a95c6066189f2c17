package rag

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkMillionChunks measures the index at a million real chunks: the
// 669 distinct modules of testdata/corpus1m.txt, linked into one tree by
// testdata/corpus1m.sh into $AGENTD_CORPUS1M (skipped when unset). Every
// figure is of a process a person runs: `agentd index` (wall, CPU, peak
// resident memory), the daemon's path (this process opens the saved
// index: resident memory once loaded, query latency from memory), and
// `agentd search` (as a process, each query distinct: the commit sets'
// subjects), with `rg -i -l` over the same tree on a few of them in the
// same run. Use -benchtime=1x; it takes minutes.
func BenchmarkMillionChunks(b *testing.B) {
	root := os.Getenv("AGENTD_CORPUS1M")
	if root == "" {
		b.Skip("set AGENTD_CORPUS1M to a tree made by testdata/corpus1m.sh")
	}
	b.StopTimer()
	dir := b.TempDir()
	bin := filepath.Join(dir, "agentd")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/agentd").CombinedOutput(); err != nil {
		b.Fatalf("build agentd: %v\n%s", err, out)
	}
	state := filepath.Join(dir, "state")
	env := append(os.Environ(), "AGENTD_STATE_DIR="+state, "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	run := func(args ...string) (time.Duration, *syscall.Rusage, error) {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		t0 := time.Now()
		out, err := cmd.CombinedOutput()
		d := time.Since(t0)
		if err != nil && !strings.Contains(string(out), "nothing matched") {
			return 0, nil, fmt.Errorf("%v: %v\n%s", args, err, out)
		}
		return d, cmd.ProcessState.SysUsage().(*syscall.Rusage), nil
	}
	queries := distinctQueries(b)

	wall, ru, err := run("index", root)
	if err != nil {
		b.Fatal(err)
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	b.Logf("agentd index: %v wall, %v CPU, peak resident %d MiB", wall.Round(time.Second), cpu.Round(time.Second), ru.Maxrss>>10)
	stateDir := filepath.Join(state, filepath.Base(mustStateDir(b, root)))
	if fi, err := os.Stat(snapshotPathIn(stateDir)); err == nil {
		b.Logf("snapshot: %d MiB", fi.Size()>>20)
	}

	// The daemon's path: load the saved index, answer from memory.
	runtime.GC()
	rss0 := vmRSS()
	t0 := time.Now()
	ix, err := Open(context.Background(), Options{Root: root, StateDir: stateDir})
	if err != nil {
		b.Fatal(err)
	}
	load := time.Since(t0)
	st := ix.Status()
	runtime.GC()
	rss1 := vmRSS()
	var mem []time.Duration
	for _, q := range queries {
		t := time.Now()
		ix.Search(context.Background(), q, 10)
		mem = append(mem, time.Since(t))
	}
	b.Logf("daemon: %d files, %d chunks; loaded in %v; resident %d MiB (process before: %d MiB); query from memory p50 %v p95 %v (%d distinct queries)",
		st.Files, st.Chunks, load.Round(time.Millisecond), rss1>>20, rss0>>20, pct(mem, 50).Round(time.Microsecond), pct(mem, 95).Round(time.Microsecond), len(mem))
	ix = nil
	runtime.GC()

	// agentd search as a process, then rg on a few of the same queries.
	var cli []time.Duration
	var cliRSS int64
	for _, q := range queries[:min(len(queries), 100)] {
		d, ru, err := run("search", "--limit", "10", q, root)
		if err != nil {
			b.Fatal(err)
		}
		cli = append(cli, d)
		cliRSS = max(cliRSS, ru.Maxrss)
	}
	var rg []time.Duration
	if _, err := exec.LookPath("rg"); err == nil {
		for _, q := range queries[:5] {
			args := []string{"-i", "-l", "--no-messages"}
			for _, w := range strings.Fields(q) {
				if len(w) > 2 && !isStopword([]byte(strings.ToLower(w))) {
					args = append(args, "-e", w)
				}
			}
			t := time.Now()
			exec.Command("rg", append(args, root)...).Run()
			rg = append(rg, time.Since(t))
		}
	}
	b.Logf("agentd search (process): p50 %v p95 %v, peak resident %d MiB (%d distinct queries)", pct(cli, 50).Round(time.Millisecond),
		pct(cli, 95).Round(time.Millisecond), cliRSS>>10, len(cli))
	if len(rg) > 0 {
		b.Logf("rg -i -l over the same tree: p50 %v (%d queries)", pct(rg, 50).Round(time.Millisecond), len(rg))
	}
	b.ReportMetric(float64(st.Chunks), "chunks")
	b.ReportMetric(float64(ru.Maxrss>>10), "index-peak-rss-MiB")
	b.ReportMetric(float64(rss1>>20), "daemon-rss-MiB")
	b.ReportMetric(float64(pct(mem, 50).Microseconds())/1000, "mem-p50-ms")
	b.ReportMetric(float64(pct(cli, 50).Microseconds())/1000, "cli-p50-ms")
}

// distinctQueries are the subjects of every commit set here, each once.
func distinctQueries(b *testing.B) []string {
	seen := map[string]bool{}
	var out []string
	files, _ := filepath.Glob("testdata/commits/*.jsonl")
	more, _ := filepath.Glob("testdata/large/*/*.jsonl")
	for _, f := range append(files, more...) {
		qs, err := LoadEvalSet(f)
		if err != nil {
			b.Fatal(err)
		}
		for _, q := range qs {
			if !seen[q.Query] {
				seen[q.Query] = true
				out = append(out, q.Query)
			}
		}
	}
	return out
}

func mustStateDir(b *testing.B, root string) string {
	d, err := StateDirFor(root)
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// vmRSS is this process's resident memory in bytes (Linux; 0 elsewhere).
func vmRSS() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
