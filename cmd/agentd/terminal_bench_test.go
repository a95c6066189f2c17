package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/agent/modeltest"
)

// BenchmarkTrivialRunVsCodex is a trivial one-shot run ("hello", the model
// answers "Hi.") of `agentd run` and, in the same run, of `codex exec`
// against the same scripted model, when AGENTD_BENCH_CODEX names a codex
// binary: npm's @openai/codex, at a version that still speaks chat
// completions (0.89.0; from 0.99 codex speaks only the Responses API, which
// the scripted model does not), either its node launcher or the native
// binary under vendor/. Wall time per run and the peak resident memory of
// the process tree.
//
//	npm install --prefix /tmp/codex @openai/codex@0.89.0
//	AGENTD_BENCH_CODEX=/tmp/codex/node_modules/.bin/codex go test ./cmd/agentd -run '^$' -bench TrivialRunVsCodex -benchtime 20x
func BenchmarkTrivialRunVsCodex(b *testing.B) {
	srv := modeltest.Start(&modeltest.Script{Turns: []modeltest.Turn{{Repeat: true, Reply: modeltest.Reply{Text: "Hi.", Chunks: 2}}}})
	defer srv.Close()
	bin := agentdBinary(b)
	root := b.TempDir()
	env := func(extra ...string) []string {
		return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.TempDir()}, extra...)
	}
	b.Run("agentd", func(b *testing.B) {
		vars := env("OPENAI_BASE_URL="+srv.URL, "OPENAI_API_KEY=k", "AGENTD_MODEL=fake", "AGENTD_STATE_DIR="+b.TempDir())
		benchCommand(b, vars, bin, "run", "--dir", root, "hello")
	})
	b.Run("codex-exec", func(b *testing.B) {
		codex := os.Getenv("AGENTD_BENCH_CODEX")
		if codex == "" {
			b.Skip("AGENTD_BENCH_CODEX names no codex binary")
		}
		home := b.TempDir()
		config := fmt.Sprintf("model = \"fake\"\nmodel_provider = \"fake\"\n\n[model_providers.fake]\nname = \"fake\"\nbase_url = %q\nwire_api = \"chat\"\nenv_key = \"FAKE_KEY\"\n", srv.URL)
		if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o600); err != nil {
			b.Fatal(err)
		}
		// Without remote_models codex asks chatgpt.com for its model list
		// first, which this offline machine answers after seconds of retries.
		benchCommand(b, env("CODEX_HOME="+home, "FAKE_KEY=k"), codex, "exec", "--disable", "remote_models",
			"--skip-git-repo-check", "-C", root, "hello")
	})
}

func benchCommand(b *testing.B, vars []string, name string, args ...string) {
	run := func() int64 {
		cmd := exec.Command(name, args...)
		cmd.Env = vars
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "Hi.") {
			b.Fatalf("%s: %v\n%s", name, err, out)
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			return ru.Maxrss
		}
		return 0
	}
	run() // warm the page cache and the state
	var maxRSS int64
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		maxRSS = max(maxRSS, run())
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/run")
	b.ReportMetric(float64(maxRSS)/1024, "MB-maxrss")
}
