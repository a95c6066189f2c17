package term

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/internal/proctest"
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
	root := b.TempDir()
	env := func(extra ...string) []string {
		return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.TempDir()}, extra...)
	}
	cmds := []benchCmd{{name: "agentd", path: proctest.Agentd(b), args: []string{"run", "--dir", root, "hello"},
		env: env("OPENAI_BASE_URL="+srv.URL, "OPENAI_API_KEY=k", "AGENTD_MODEL=fake", "AGENTD_STATE_DIR="+b.TempDir())}}
	if codex := os.Getenv("AGENTD_BENCH_CODEX"); codex != "" {
		home := b.TempDir()
		config := fmt.Sprintf("model = \"fake\"\nmodel_provider = \"fake\"\n\n[model_providers.fake]\nname = \"fake\"\nbase_url = %q\nwire_api = \"chat\"\nenv_key = \"FAKE_KEY\"\n", srv.URL)
		if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o600); err != nil {
			b.Fatal(err)
		}
		// Without remote_models codex asks chatgpt.com for its model list
		// first, which this offline machine answers after seconds of retries.
		cmds = append(cmds, benchCmd{name: "codex", path: codex, env: env("CODEX_HOME="+home, "FAKE_KEY=k"),
			args: []string{"exec", "--disable", "remote_models", "--skip-git-repo-check", "-C", root, "hello"}})
	} else {
		b.Log("AGENTD_BENCH_CODEX names no codex binary: agentd alone")
	}
	for i := range cmds {
		cmds[i].run(b) // warm the page cache and the state
		cmds[i].wall, cmds[i].maxRSS = 0, 0
	}
	b.ResetTimer()
	// One of each in turn, so that both see the same load on a shared
	// machine.
	for i := 0; i < b.N; i++ {
		for j := range cmds {
			cmds[j].run(b)
		}
	}
	for _, c := range cmds {
		b.ReportMetric(float64(c.wall.Microseconds())/1000/float64(b.N), c.name+"-ms/run")
		b.ReportMetric(float64(c.maxRSS)/1024, c.name+"-MB-maxrss")
	}
}

// benchCmd is one command of the benchmark and what it cost.
type benchCmd struct {
	name, path string
	args, env  []string
	wall       time.Duration
	maxRSS     int64
}

// gnuTime measures a command's peak memory. The rusage of a child Go
// starts is no measure: Linux counts in it the memory of the process that
// exec'd, which for Go is the parent (the child shares its memory until
// exec), so it reports the benchmark's own size when that is larger.
const gnuTime = "/usr/bin/time"

var maxRSSLine = regexp.MustCompile(`(?m)^bench-maxrss-kb=(\d+)$`)

func (c *benchCmd) run(b *testing.B) {
	cmd := exec.Command(c.path, c.args...)
	if _, err := os.Stat(gnuTime); err == nil {
		cmd = exec.Command(gnuTime, append([]string{"-f", "bench-maxrss-kb=%M", c.path}, c.args...)...)
	}
	cmd.Env = c.env
	start := time.Now()
	out, err := cmd.CombinedOutput()
	c.wall += time.Since(start)
	if err != nil || !strings.Contains(string(out), "Hi.") {
		b.Fatalf("%s: %v\n%s", c.name, err, out)
	}
	if m := maxRSSLine.FindSubmatch(out); m != nil {
		kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
		c.maxRSS = max(c.maxRSS, kb)
	} else if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		c.maxRSS = max(c.maxRSS, ru.Maxrss) // an upper bound
	}
}
