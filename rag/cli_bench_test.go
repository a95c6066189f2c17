package rag

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkCLIAfterOneFileChange is the figure a person sees: on a copy of
// GOROOT/src indexed by `agentd index`, one file is edited, then `agentd
// search` runs as a process beside `rg -i -l` with the query's words, in
// the same run, alternating, each query after a fresh edit (so every agentd
// search first brings the edit into the index). It also times the update
// alone in process (the delta: stat pass, read, write). Use -benchtime=1x.
func BenchmarkCLIAfterOneFileChange(b *testing.B) {
	src := gorootSrc(b)
	if _, err := exec.LookPath("rg"); err != nil {
		b.Skip("rg is not installed")
	}
	b.StopTimer()
	dir := b.TempDir()
	root := filepath.Join(dir, "src")
	if err := os.CopyFS(root, os.DirFS(src)); err != nil {
		b.Skipf("copy GOROOT/src: %v", err)
	}
	bin := filepath.Join(dir, "agentd")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/agentd").CombinedOutput(); err != nil {
		b.Fatalf("build agentd: %v\n%s", err, out)
	}
	state := filepath.Join(dir, "state")
	env := append(os.Environ(), "AGENTD_STATE_DIR="+state, "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	run := func(args ...string) (time.Duration, error) {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		t0 := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil && !strings.Contains(string(out), "nothing matched") {
			return 0, fmt.Errorf("%v: %v\n%s", args, err, out)
		}
		return time.Since(t0), nil
	}
	if _, err := run("index", root); err != nil {
		b.Fatal(err)
	}
	edited := filepath.Join(root, "net/http/server.go")
	orig, err := os.ReadFile(edited)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	edit := func() {
		n++
		data := fmt.Appendf(append([]byte{}, orig...), "\n// edit %d: the server keeps a count of hijacked connections\n", n)
		if err := os.WriteFile(edited, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}

	// The update alone, in process: what the saved index costs to update.
	stateDir, _ := StateDirFor(root)
	if d := os.Getenv("AGENTD_STATE_DIR"); d == "" {
		stateDir = filepath.Join(state, filepath.Base(stateDir))
	}
	var upd []time.Duration
	for range 5 {
		edit()
		v, err := OpenView(root, stateDir)
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if err := v.Update(context.Background()); err != nil {
			b.Fatal(err)
		}
		upd = append(upd, time.Since(t0))
		v.Close()
	}

	var ours, rg []time.Duration
	for round := range 3 {
		for _, q := range benchQueries {
			edit()
			d, err := run("search", "--limit", "10", q, root)
			if err != nil {
				b.Fatal(err)
			}
			ours = append(ours, d)
			args := []string{"-i", "-l", "--no-messages"}
			for _, w := range strings.Fields(q) {
				if len(w) > 2 && !isStopword([]byte(strings.ToLower(w))) {
					args = append(args, "-e", w)
				}
			}
			t0 := time.Now()
			exec.Command("rg", append(args, root)...).Run()
			rg = append(rg, time.Since(t0))
		}
		_ = round
	}
	b.ReportMetric(float64(pct(upd, 50).Microseconds())/1000, "update-p50-ms")
	b.ReportMetric(float64(pct(ours, 50).Microseconds())/1000, "agentd-p50-ms")
	b.ReportMetric(float64(pct(rg, 50).Microseconds())/1000, "rg-p50-ms")
	b.Logf("one changed file into the saved index (View.Update: stat pass, read, delta written): p50 %v, max %v (%d edits)",
		pct(upd, 50).Round(time.Microsecond), pct(upd, 100).Round(time.Microsecond), len(upd))
	b.Logf("agentd search after a one-file edit, as a process: p50 %v p95 %v; rg -i -l: p50 %v p95 %v (%d queries each, alternating)",
		pct(ours, 50).Round(time.Millisecond), pct(ours, 95).Round(time.Millisecond),
		pct(rg, 50).Round(time.Millisecond), pct(rg, 95).Round(time.Millisecond), len(ours))
}
