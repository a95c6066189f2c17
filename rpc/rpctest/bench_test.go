package rpctest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/rpc"
	"github.com/agentd/agentd/rpc/wire"
	"github.com/agentd/agentd/tools"
)

// The speed targets, measured against an instant scripted model. Compare the
// ratios within one run: these machines are noisy.

// BenchmarkStartToInitialize is process start to the initialize answer, for
// agentd and for a do-nothing Go responder, started in turn so that a busy
// machine weighs on both alike (target: agentd under 3× the responder). It
// reports each one's 10th percentile and median and their ratios:
//
//	go test ./rpc/rpctest -run '^$' -bench StartToInitialize -benchtime 200x -count 3
func BenchmarkStartToInitialize(b *testing.B) {
	root := b.TempDir()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"rootUri":"file://%s","capabilities":{}}}`, root)
	frame := fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
	agentd, null := []string{BuildAgentd(b), "serve", "--no-index"}, []string{buildNullResponder(b)}
	// A home of its own: the sandbox's kept status (~/.cache/agentd) is
	// written by the first start, as on a user's machine, and not pruned
	// by the test binaries of other processes on this one.
	env := append(cleanEnv(), "AGENTD_STATE_DIR="+b.TempDir(), "HOME="+b.TempDir())
	startAndInitialize(b, agentd, env, frame)
	var ta, tn []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ta = append(ta, startAndInitialize(b, agentd, env, frame))
		tn = append(tn, startAndInitialize(b, null, env, frame))
	}
	b.StopTimer()
	slices.Sort(ta)
	slices.Sort(tn)
	at := func(d []time.Duration, q float64) float64 {
		return float64(d[int(float64(len(d)-1)*q)].Microseconds()) / 1000
	}
	for _, q := range []struct {
		name string
		q    float64
	}{{"p10", 0.1}, {"median", 0.5}} {
		b.ReportMetric(at(ta, q.q), "ms-agentd-"+q.name)
		b.ReportMetric(at(tn, q.q), "ms-null-"+q.name)
		b.ReportMetric(at(ta, q.q)/at(tn, q.q), "ratio-"+q.name)
	}
}

// startAndInitialize starts the process, sends the frame, and returns how
// long the answer took from the start; the process is ended off the clock.
func startAndInitialize(b *testing.B, args, env []string, frame string) time.Duration {
	begin := time.Now()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = env
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	if _, err := io.WriteString(stdin, frame); err != nil {
		b.Fatal(err)
	}
	if err := readFrame(bufio.NewReader(stdout)); err != nil {
		b.Fatal(err)
	}
	took := time.Since(begin)
	b.StopTimer()
	stdin.Close()
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	b.StartTimer()
	return took
}

func readFrame(r *bufio.Reader) error {
	n := 0
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		line = strings.TrimSpace(line)
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length:"); ok {
			n, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	_, err := io.CopyN(io.Discard, r, int64(n))
	return err
}

func buildNullResponder(b *testing.B) string {
	out := filepath.Join(b.TempDir(), "nullresponder")
	if msg, err := exec.Command("go", "build", "-o", out, "../../testdata/bench/nullresponder").CombinedOutput(); err != nil {
		b.Fatalf("building the null responder: %v\n%s", err, msg)
	}
	return out
}

// BenchmarkTextTurn is agent/run to the completed run state for a streamed
// text answer, over the real binary's stdio.
func BenchmarkTextTurn(b *testing.B) {
	env := NewEnv(b, Binary, Config{Script: &modeltest.Script{Turns: []modeltest.Turn{
		{Repeat: true, Reply: modeltest.Reply{Text: "Hello there, I am agentd.", Chunks: 5}}}}})
	e := env.StartInitialized()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run := e.Run(agent.RunParams{Prompt: "hello"})
		e.RunState(run.RunID, agent.StateCompleted)
	}
}

// BenchmarkAgentRunCommand is a trivial `agentd run`: wall time per run and
// the process's peak resident memory.
func BenchmarkAgentRunCommand(b *testing.B) {
	srv := modeltest.Start(&modeltest.Script{Turns: []modeltest.Turn{{Repeat: true, Reply: modeltest.Reply{Text: "Hi.", Chunks: 2}}}})
	defer srv.Close()
	bin, root := BuildAgentd(b), b.TempDir()
	vars := append(cleanEnv(), "OPENAI_BASE_URL="+srv.URL, "OPENAI_API_KEY=k", "AGENTD_MODEL=fake",
		"AGENTD_STATE_DIR="+b.TempDir(), "HOME="+b.TempDir())
	var maxRSS int64
	start := time.Now()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(bin, "run", "--dir", root, "hello")
		cmd.Env = vars
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("agentd run: %v\n%s", err, out)
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > maxRSS {
			maxRSS = ru.Maxrss
		}
	}
	b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "ms/run")
	b.ReportMetric(float64(maxRSS)/1024, "MB-maxrss")
	_ = os.Getpid
}

// BenchmarkInitializeWithSessions is process start to the initialize answer
// with no stored session and with 1,000 (three runs each, made by the real
// daemon): start-up must not grow with history (issue 12). The two are
// measured in turn, one start each, so that a busy machine weighs on both
// alike; it reports each one's mean and their ratio (target: under 1.2):
//
//	go test ./rpc/rpctest -run '^$' -bench InitializeWithSessions -benchtime 200x -count 3
func BenchmarkInitializeWithSessions(b *testing.B) {
	const runsPerSession = 3
	type world struct {
		n     int
		vars  []string
		frame string
		took  time.Duration
	}
	var worlds []*world
	for _, n := range []int{0, 1000} {
		env := NewEnv(b, Binary, Config{Script: &modeltest.Script{Turns: []modeltest.Turn{
			{Repeat: true, Reply: modeltest.Reply{Text: "Done.", Chunks: 1}}}}})
		seedSessions(b, env, n, runsPerSession)
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"rootUri":"file://%s","capabilities":{}}}`, env.Root)
		worlds = append(worlds, &world{n: n, vars: append(cleanEnv(), env.binaryEnv()...),
			frame: fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)})
	}
	// Measured after all seeding, with the seeding's memory returned:
	// starting a process costs more from a bigger parent.
	debug.FreeOSMemory()
	args := []string{BuildAgentd(b), "serve", "--no-index"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, w := range worlds {
			w.took += startAndInitialize(b, args, w.vars, w.frame)
		}
	}
	mean := func(w *world) float64 { return float64(w.took.Microseconds()) / 1000 / float64(b.N) }
	for _, w := range worlds {
		b.ReportMetric(mean(w), fmt.Sprintf("ms/init-%d-sessions", w.n))
	}
	b.ReportMetric(mean(worlds[1])/mean(worlds[0]), "ratio")
}

// seedSessions makes n sessions of runs runs each through a daemon, then
// shuts it down. Sessions run side by side; each waits for its last run.
func seedSessions(b *testing.B, env *Env, n, runs int) {
	if n == 0 {
		return
	}
	e := env.StartInitialized()
	sessions := make([]string, n)
	for r := 0; r < runs; r++ {
		ids := make([]string, n)
		for i := range n {
			res := e.Run(agent.RunParams{Prompt: fmt.Sprintf("task %d, step %d", i, r), SessionID: sessions[i]})
			sessions[i], ids[i] = res.SessionID, res.RunID
		}
		for _, id := range ids {
			e.RunState(id, agent.StateCompleted)
		}
	}
	var list rpc.SessionsResult
	e.MustCall(wire.MethodSessions, nil, &list)
	if len(list.Sessions) != n || list.Sessions[0].RunCount != runs {
		b.Fatalf("seeded %d sessions, the first with %d runs", len(list.Sessions), list.Sessions[0].RunCount)
	}
	e.MustCall(wire.MethodShutdown, nil, nil)
	e.Notify(wire.MethodExit, nil)
	if code := e.Close(false); code != 0 {
		b.Fatalf("daemon exit code %d", code)
	}
}

// BenchmarkCommandTurn is agent/run to the completed run state for a turn
// that runs one `true` command and then answers, over the real binary's
// stdio: unasked in the read profile (ask mode, a read-only command) and in
// workspace-write (full-auto); approved by the editor in workspace-write,
// and approved without the sandbox (sandbox: off, where every command runs
// with the user's rights once approved). The sandbox's cost is the
// difference between the two approved cases. A pause that is not timed
// stands for the model's thinking between turns, when the sandbox starts
// its next entry point.
func BenchmarkCommandTurn(b *testing.B) {
	for _, c := range []struct {
		name, line string
		policy     tools.Mode
		env        map[string]string
	}{
		{"read-unasked", "true", tools.ModeAsk, nil},
		{"workspace-write-unasked", "true", tools.ModeFullAuto, nil},
		{"workspace-write-approved", "X=1 true", tools.ModeAsk, nil},
		{"no-sandbox-approved", "X=1 true", tools.ModeAsk, map[string]string{"AGENTD_SANDBOX": "off"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			env := NewEnv(b, Binary, Config{Policy: c.policy, Env: c.env, Script: &modeltest.Script{Turns: []modeltest.Turn{
				{Match: modeltest.Match{AfterTool: "run_cmd"}, Repeat: true, Reply: modeltest.Reply{Text: "Ran it."}},
				{Repeat: true, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "run_cmd", Arguments: modeltest.Args(map[string]string{"command": c.line})}}}},
			}}})
			e := env.StartInitialized()
			e.Respond(agent.KindConfirmCommand, func(req agent.InputRequest) (string, any) {
				return Decide(req.RequestID, tools.AllowOnce, "")
			})
			cpu0 := processCPU(b, e.DaemonPID())
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				time.Sleep(30 * time.Millisecond)
				b.StartTimer()
				run := e.Run(agent.RunParams{Prompt: "run it"})
				e.RunState(run.RunID, agent.StateCompleted)
			}
			b.StopTimer()
			time.Sleep(100 * time.Millisecond) // the last entry point started and was reaped
			b.ReportMetric(float64((processCPU(b, e.DaemonPID())-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}

// processCPU is the CPU time pid and its reaped children used: the daemon,
// the commands and the sandbox's entry points. On a loaded machine it is
// steadier than the latency.
func processCPU(b *testing.B, pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	var ticks int64
	for _, i := range []int{11, 12, 13, 14} { // utime, stime, cutime, cstime
		n, _ := strconv.ParseInt(f[i], 10, 64)
		ticks += n
	}
	return time.Duration(ticks) * (time.Second / 100) // USER_HZ
}
