package rpctest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/tools"
)

// chiVersion is the go-chi/chi the sandbox's Go figures are measured on.
const chiVersion = "v5.2.3"

// chiRepo is go-chi/chi at chiVersion, from the module cache (downloaded
// if missing), copied into a git repository of its own.
func chiRepo(b *testing.B) string {
	b.Helper()
	out, err := exec.Command("go", "mod", "download", "-json", "github.com/go-chi/chi/v5@"+chiVersion).Output()
	if err != nil {
		b.Skipf("go-chi/chi %s is not in the module cache and cannot be downloaded: %v", chiVersion, err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		b.Fatalf("go mod download: %v %s", err, out)
	}
	repo := filepath.Join(b.TempDir(), "chi")
	copyTree(b, mod.Dir, repo)
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.email=b@example.com", "-c", "user.name=b", "commit", "-qm", "chi " + chiVersion}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return repo
}

// copyTree copies the directory src to dst, files writable (the module
// cache's are not).
func copyTree(b *testing.B, src, dst string) {
	b.Helper()
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if fi.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		b.Fatal(err)
	}
}

// goEnv is the user's Go caches, as the go command finds them, for a daemon
// whose HOME the harness moved.
func goEnv(b *testing.B) map[string]string {
	b.Helper()
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		b.Fatal(err)
	}
	v := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(v) != 3 {
		b.Fatalf("go env: %q", out)
	}
	return map[string]string{"GOCACHE": v[0], "GOMODCACHE": v[1], "GOPATH": v[2],
		// agentd's own caches, apart from the user's.
		"XDG_CACHE_HOME": b.TempDir()}
}

// BenchmarkSandboxGoTest is `go test -count=1 ./...` on go-chi/chi run by
// the agent (the real binary, full-auto: workspace-write, no network) as
// the first command of a session, in a new workspace (agentd's caches of it
// empty), against the same command unconfined, with the user's caches warm
// (an unconfined run first, off the clock). chi's tests bind 127.0.0.1: the
// sandboxed run must pass without the network. Target: ≤ 1.3×. Then, in
// the same run, `true` spawned plain and in the read profile: the wall and
// CPU time a confined command adds (targets: ≤ 5 ms, ≤ 10 ms).
//
//	go test ./rpc/rpctest -run '^$' -bench SandboxGoTest -benchtime 3x
func BenchmarkSandboxGoTest(b *testing.B) {
	if _, err := exec.LookPath("go"); err != nil {
		b.Skip("go is not on PATH")
	}
	repo := chiRepo(b)
	line := "go test -count=1 ./..."
	var plainCPU, boxedCPU time.Duration
	unconfined := func() time.Duration {
		cmd := exec.Command("bash", "-c", line)
		cmd.Dir = repo
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("unconfined: %v\n%s", err, out)
		}
		plainCPU += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		return time.Since(start)
	}
	unconfined() // the user's caches are warm
	plainCPU = 0
	vars := goEnv(b)
	var plain, boxed time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		env := NewEnv(b, Binary, Config{Policy: tools.ModeFullAuto, Env: vars, Script: &modeltest.Script{Turns: []modeltest.Turn{
			{Match: modeltest.Match{AfterTool: "run_cmd"}, Reply: modeltest.Reply{Text: "Tested."}},
			{Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "run_cmd",
				Arguments: modeltest.Args(map[string]any{"command": line, "timeout": 600})}}}},
		}}})
		copyTree(b, repo, env.Root)
		e := env.StartInitialized()
		time.Sleep(500 * time.Millisecond) // the model's first turn: the sandbox warms up meanwhile
		plain += unconfined()
		cpu := daemonCPU(e.DaemonPID())
		b.StartTimer()
		start := time.Now()
		run := e.Run(agent.RunParams{Prompt: "run the tests"})
		e.RunState(run.RunID, agent.StateCompleted)
		boxed += time.Since(start)
		b.StopTimer()
		time.Sleep(2 * time.Second) // the command's init is reaped, its CPU time counted
		boxedCPU += daemonCPU(e.DaemonPID()) - cpu
		result := lastToolResult(b, env.Model)
		if !strings.Contains(result, "ok  \tgithub.com/go-chi/chi/v5\t") || strings.Contains(result, "FAIL") {
			b.Fatalf("the sandboxed go test did not pass:\n%s", result)
		}
		e.Close(false)
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(float64(plain.Milliseconds())/float64(b.N), "unconfined-ms/op")
	b.ReportMetric(float64(boxed.Milliseconds())/float64(b.N), "sandboxed-ms/op")
	b.ReportMetric(float64(boxed)/float64(plain), "ratio")
	b.ReportMetric(float64(plainCPU.Milliseconds())/float64(b.N), "unconfined-cpu-ms/op")
	b.ReportMetric(float64(boxedCPU.Milliseconds())/float64(b.N), "sandboxed-cpu-ms/op")
	// And in the same run, what one confined command costs beside an
	// unconfined spawn (BenchmarkSandboxCommandCost has more cases).
	sb := tools.NewSandbox(tools.SandboxConfig{CacheDir: b.TempDir()})
	const spawns = 40
	plainWall, plainCPUs := spawnCost(b, sb, repo, spawnCase{"plain", []string{"true"}, ""}, spawns, nil)
	readWall, readCPU := spawnCost(b, sb, repo, spawnCase{"read", []string{"true"}, tools.ProfileRead}, spawns, nil)
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / spawns }
	b.ReportMetric(per(plainWall), "spawn-plain-wall-ms")
	b.ReportMetric(per(readWall-plainWall), "spawn-read-wall-added-ms")
	b.ReportMetric(per(plainCPUs), "spawn-plain-cpu-ms")
	b.ReportMetric(per(readCPU-plainCPUs), "spawn-read-cpu-added-ms")
}

// daemonCPU is the CPU time of the daemon, its reaped children (the
// commands' inits, and through them the commands) and its live ones (the
// namespace holders).
func daemonCPU(pid int) time.Duration {
	total := statCPU(pid, true)
	for _, child := range liveChildren(pid) {
		total += statCPU(child, false)
	}
	return total
}

func liveChildren(pid int) []int {
	var out []int
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, t := range tasks {
		data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		for _, f := range strings.Fields(string(data)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// lastToolResult is the last tool result the model read.
func lastToolResult(b *testing.B, m *modeltest.Server) string {
	b.Helper()
	reqs := m.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		for j := len(reqs[i].Messages) - 1; j >= 0; j-- {
			if msg := reqs[i].Messages[j]; msg.Role == "tool" {
				return msg.Content
			}
		}
	}
	b.Fatal("the model read no tool result")
	return ""
}

// BenchmarkSandboxCommandCost is what confining a process costs, beside
// an unconfined spawn, in wall time and CPU time (this process's, its
// reaped children's and the sandbox's namespace holders'): `true`, plain
// and through tools.Sandbox as run_cmd starts it (read and workspace-write,
// in a session's network), and rg and ctags over go-chi/chi, plain and in
// the read profile, as grep and the repository map run them (no caches);
// then `true` again beside 400 MB of heap the process writes between
// commands, as a daemon holding an index does. A pause that is not timed
// (200 ms, AGENTD_BENCH_PAUSE) stands for the model's turn, when the
// sandbox starts its next entry point (its CPU time counts). Target: ≤ 5 ms
// wall, ≤ 10 ms CPU more than plain.
//
//	go test ./rpc/rpctest -run '^$' -bench SandboxCommandCost -benchtime 50x
func BenchmarkSandboxCommandCost(b *testing.B) {
	sb := tools.NewSandbox(tools.SandboxConfig{CacheDir: b.TempDir()})
	if !sb.Supports(tools.ProfileWorkspaceWrite) {
		b.Skip("no kernel sandbox here")
	}
	repo := chiRepo(b)
	var cases []spawnCase
	for _, args := range [][]string{{"true"}, {"rg", "--files"}, {"ctags", "-R", "--output-format=json", "-f", "-", "."}} {
		if _, err := exec.LookPath(args[0]); err != nil {
			continue
		}
		cases = append(cases, spawnCase{args[0] + "/plain", args, ""}, spawnCase{args[0] + "/read", args, tools.ProfileRead})
		if args[0] == "true" {
			cases = append(cases, spawnCase{args[0] + "/workspace-write", args, tools.ProfileWorkspaceWrite})
		}
	}
	// A daemon holding a workspace's index is large; before the namespace
	// holders, each command forked it whole (CLONE_NEWUSER rules out
	// vfork) and its next writes faulted page by page. The last cases run
	// beside 400 MB of heap the process writes between commands, as a
	// daemon does.
	cases = append(cases, spawnCase{"true/plain-400MB-daemon", []string{"true"}, ""},
		spawnCase{"true/read-400MB-daemon", []string{"true"}, tools.ProfileRead})
	var heap [][]byte
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			if strings.HasSuffix(c.name, "-400MB-daemon") && heap == nil {
				for range 400 {
					heap = append(heap, bytes.Repeat([]byte{1}, 1<<20))
				}
			}
			wall, cpu := spawnCost(b, sb, repo, c, b.N, heap)
			b.ReportMetric(float64(wall.Microseconds())/1000/float64(b.N), "wall-ms/op")
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}

// spawnCase is a process to spawn: plain (no profile) or through
// tools.Sandbox, as run_cmd starts it (rg and ctags as grep and the
// repository map do: with no toolchain caches).
type spawnCase struct {
	name    string
	args    []string
	profile tools.Profile
}

// spawnCost spawns c n times in repo and returns the wall time of the
// spawns and the CPU time of everything (this process, its children, the
// namespace holders). Between spawns it writes a quarter of heap (a
// daemon's work) and pauses, untimed, for the model's turn (200 ms,
// AGENTD_BENCH_PAUSE), when the sandbox starts its next entry point.
func spawnCost(b *testing.B, sb *tools.Sandbox, repo string, c spawnCase, n int, heap [][]byte) (wall, cpu time.Duration) {
	b.Helper()
	pause := 200 * time.Millisecond
	if d, err := time.ParseDuration(os.Getenv("AGENTD_BENCH_PAUSE")); err == nil {
		pause = d
	}
	cpu0 := sandboxCPU()
	for i := 0; i < n; i++ {
		for _, h := range heap[:min(len(heap), 100)] {
			for j := 0; j < len(h); j += 4096 {
				h[j]++
			}
		}
		time.Sleep(pause)
		start := time.Now()
		if c.profile == "" {
			cmd := exec.Command(c.args[0], c.args[1:]...)
			cmd.Dir = repo
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		} else {
			var out bytes.Buffer
			p, err := sb.Command(context.Background(), tools.ProcSpec{Args: c.args, Workspace: repo, Session: "bench",
				NoCaches: c.args[0] != "true", Confine: tools.Confine{Profile: c.profile}, Stdout: &out, Stderr: &out,
				WaitDelay: time.Second})
			if err != nil {
				b.Fatal(err)
			}
			if err := p.Wait(); err != nil || p.ExitCode() != 0 {
				b.Fatalf("%v exit %d: %s", err, p.ExitCode(), out.String())
			}
		}
		wall += time.Since(start)
	}
	time.Sleep(pause) // the last entry point started
	return wall, sandboxCPU() - cpu0
}

// sandboxCPU is the CPU time of this process, its reaped children and its
// live children (the namespace holders).
func sandboxCPU() time.Duration { return daemonCPU(os.Getpid()) }

// statCPU reads utime and stime (and, with children, cutime and cstime)
// of pid.
func statCPU(pid int, children bool) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	fields := []int{11, 12}
	if children {
		fields = append(fields, 13, 14)
	}
	var ticks int64
	for _, i := range fields {
		n, _ := strconv.ParseInt(f[i], 10, 64)
		ticks += n
	}
	return time.Duration(ticks) * (time.Second / 100) // USER_HZ
}
