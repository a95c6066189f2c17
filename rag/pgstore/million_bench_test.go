package pgstore

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/pgtest"
	"github.com/agentd/agentd/rag"
)

// BenchmarkTeamMillion measures the team index at a million real chunks:
// the 669 distinct modules of ../testdata/corpus1m.txt (linked into
// $AGENTD_CORPUS1M by ../testdata/corpus1m.sh), each published as its own
// repository (name: the module path, commit: its version) into a
// PostgreSQL 15 server kept in $AGENTD_TEAM_BENCH_DIR (made the first
// time, with the server's default settings; the publish is done once and
// kept, so a second run measures the queries alone). Every figure is of
// processes a team runs:
//   - publish throughput: `agentd index --publish` against the embedded
//     `agentd index` on a sample of modules, interleaved, in chunks/s;
//     then the whole corpus, two publishers at a time;
//   - the database's size per chunk;
//   - queries: N client processes (a daemon each: rag.Team over
//     pgstore.Store, exactly the daemon's path, with a cache of its own),
//     each searching in a closed loop with distinct queries, for its own
//     repository (a developer's daemon in a checkout of one module) and
//     for every repository (1M chunks each query), with 1 and 32 clients:
//     p50/p95 latency, the first search of a new client (nothing cached),
//     the clients' and the server's resident memory.
//
// Use -benchtime=1x -timeout 3h; the first run publishes for an hour or so.
func BenchmarkTeamMillion(b *testing.B) {
	root, dataDir := os.Getenv("AGENTD_CORPUS1M"), os.Getenv("AGENTD_TEAM_BENCH_DIR")
	if root == "" || dataDir == "" {
		b.Skip("set AGENTD_CORPUS1M (a tree made by ../testdata/corpus1m.sh) and AGENTD_TEAM_BENCH_DIR (where the database is kept)")
	}
	b.StopTimer()
	mods := corpusModules(b, root)
	srv, err := pgtest.Kept(dataDir)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Stop()
	tmp := b.TempDir()
	bin := filepath.Join(tmp, "agentd")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/agentd").CombinedOutput(); err != nil {
		b.Fatalf("build agentd: %v\n%s", err, out)
	}
	env := append(os.Environ(), "HOME="+tmp, "XDG_CONFIG_HOME="+filepath.Join(tmp, "config"), "AGENTD_INDEX_URL=")
	psql := func(db, sql string) string {
		out, err := srv.Psql(db, sql)
		if err != nil {
			b.Fatalf("psql %s: %v: %s", sql, err, out)
		}
		return out
	}
	if psql("postgres", `SELECT count(*) FROM pg_database WHERE datname = 'agentd'`) == "0" {
		psql("postgres", "CREATE DATABASE agentd")
	}
	url := srv.URL("agentd")

	// Publish throughput against the embedded build, on a sample, into a
	// database of its own (made afresh each run).
	psql("postgres", "DROP DATABASE IF EXISTS agentd_sample")
	psql("postgres", "CREATE DATABASE agentd_sample")
	var sample []corpusModule
	for i := 0; i < len(mods); i += max(1, len(mods)/12) {
		sample = append(sample, mods[i])
	}
	var emb, pub runFigures
	for i, m := range sample {
		state := filepath.Join(tmp, "state", strconv.Itoa(i))
		e := runAgentd(b, bin, append(env, "AGENTD_STATE_DIR="+state), "index", m.dir)
		p := runAgentd(b, bin, append(env, "AGENTD_STATE_DIR="+state+"-p"), "index", "--publish", srv.URL("agentd_sample"),
			"--name", m.path, "--commit", m.version, m.dir)
		emb.add(e)
		pub.add(p)
		os.RemoveAll(state)
	}
	psql("postgres", "DROP DATABASE agentd_sample")
	b.Logf("publish throughput, %d modules, %d chunks: embedded `agentd index` %s; `agentd index --publish` %s; publish/embedded chunks/s %.2f (wall), %.2f (CPU)",
		len(sample), emb.chunks, emb, pub, pub.rate()/emb.rate(), pub.cpuRate()/emb.cpuRate())

	// The whole corpus, once: two publishers at a time.
	published := map[string]bool{}
	if out, err := srv.Psql("agentd", `SELECT name FROM agentd.repos WHERE head IS NOT NULL`); err == nil {
		for _, n := range strings.Fields(out) {
			published[n] = true
		}
	}
	var todo []corpusModule
	for _, m := range mods {
		if !published[m.path] {
			todo = append(todo, m)
		}
	}
	if len(todo) > 0 {
		var mu sync.Mutex
		var all runFigures
		t0 := time.Now()
		work := make(chan corpusModule)
		var wg sync.WaitGroup
		for w := 0; w < 2; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for m := range work {
					f := runAgentd(b, bin, append(env, "AGENTD_STATE_DIR="+filepath.Join(tmp, "pstate")), "index", "--publish", url,
						"--name", m.path, "--commit", m.version, m.dir)
					mu.Lock()
					all.add(f)
					mu.Unlock()
				}
			}()
		}
		for _, m := range todo {
			work <- m
		}
		close(work)
		wg.Wait()
		wall := time.Since(t0)
		b.Logf("published %d modules (%d were already): %d chunks in %v wall, %.0f chunks/s with 2 publishers; %s",
			len(todo), len(mods)-len(todo), all.chunks, wall.Round(time.Second), float64(all.chunks)/wall.Seconds(), all)
		psql("agentd", "VACUUM ANALYZE")
	}
	chunks, _ := strconv.ParseInt(psql("agentd", `SELECT sum(c.chunks) FROM agentd.repos r JOIN agentd.commits c ON c.id = r.head`), 10, 64)
	size, _ := strconv.ParseInt(psql("agentd", `SELECT pg_database_size(current_database())`), 10, 64)
	tables := psql("agentd", `SELECT string_agg(relname || ' ' || pg_size_pretty(pg_total_relation_size(oid)), ', ' ORDER BY pg_total_relation_size(oid) DESC)
		FROM pg_class WHERE relnamespace = 'agentd'::regnamespace AND relkind = 'r'`)
	b.Logf("team index: %d repositories, %d chunks; database %d MiB, %d bytes a chunk (%s)",
		len(mods), chunks, size>>20, size/max(chunks, 1), tables)

	queries := benchQueries(b)
	for _, scope := range []string{"own", "all"} {
		for _, n := range []int{1, 32} {
			r := runClients(b, srv, url, mods, queries, scope, n)
			b.Logf("%s, %d client(s): p50 %v p95 %v (%d queries, %.1f/s); first search of a new client p50 %v max %v; client resident p50 %d MiB max %d MiB (peak %d MiB); server %d MiB (PSS of its processes)",
				scopeName(scope), n, r.p50, r.p95, r.queries, r.rate, r.first50, r.firstMax, r.rss50>>20, r.rssMax>>20, r.hwmMax>>20, r.server>>20)
			b.ReportMetric(float64(r.p50.Microseconds())/1000, fmt.Sprintf("%s-%d-p50-ms", scope, n))
			b.ReportMetric(float64(r.p95.Microseconds())/1000, fmt.Sprintf("%s-%d-p95-ms", scope, n))
		}
	}
	b.ReportMetric(float64(chunks), "chunks")
	b.ReportMetric(float64(size/max(chunks, 1)), "bytes/chunk")
}

func scopeName(s string) string {
	if s == "own" {
		return "a daemon's own repository (≈1.6k chunks of 1M)"
	}
	return "every repository (1M chunks)"
}

type corpusModule struct{ path, version, dir string }

// corpusModules reads the corpus list; every module must be in the tree.
func corpusModules(b *testing.B, root string) []corpusModule {
	data, err := os.ReadFile("../testdata/corpus1m.txt")
	if err != nil {
		b.Fatal(err)
	}
	var out []corpusModule
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		path, version, _ := strings.Cut(line, "@")
		dir := filepath.Join(root, filepath.FromSlash(line))
		if _, err := os.Stat(dir); err != nil {
			b.Fatalf("%s is not in %s (run ../testdata/corpus1m.sh %s): %v", line, root, root, err)
		}
		out = append(out, corpusModule{path, version, dir})
	}
	// A trial run on the first few.
	if n, err := strconv.Atoi(os.Getenv("AGENTD_TEAM_BENCH_MODULES")); err == nil && n > 0 && n < len(out) {
		out = out[:n]
	}
	return out
}

// benchQueries are the subjects of rag's commit sets, each once.
func benchQueries(b *testing.B) []string {
	files, _ := filepath.Glob("../testdata/commits/*.jsonl")
	more, _ := filepath.Glob("../testdata/large/*/*.jsonl")
	seen := map[string]bool{}
	var out []string
	for _, f := range append(files, more...) {
		qs, err := rag.LoadEvalSet(f)
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
	if len(out) < 100 {
		b.Fatalf("only %d queries", len(out))
	}
	return out
}

// runFigures sums runs of agentd.
type runFigures struct {
	runs   int
	chunks int64
	wall   time.Duration
	cpu    time.Duration
	maxRSS int64 // KiB
}

func (f *runFigures) add(g runFigures) {
	f.runs += g.runs
	f.chunks += g.chunks
	f.wall += g.wall
	f.cpu += g.cpu
	f.maxRSS = max(f.maxRSS, g.maxRSS)
}

func (f runFigures) rate() float64    { return float64(f.chunks) / f.wall.Seconds() }
func (f runFigures) cpuRate() float64 { return float64(f.chunks) / f.cpu.Seconds() }

func (f runFigures) String() string {
	return fmt.Sprintf("%v wall, %v CPU, %.0f chunks/s (%.0f a CPU second), peak resident %d MiB",
		f.wall.Round(time.Millisecond), f.cpu.Round(time.Millisecond), f.rate(), f.cpuRate(), f.maxRSS>>10)
}

var chunksRe = regexp.MustCompile(`(\d+) chunks`)

// runAgentd runs agentd and reads the chunks it says it indexed.
func runAgentd(b *testing.B, bin string, env []string, args ...string) runFigures {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	t0 := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(t0)
	if err != nil {
		b.Fatalf("agentd %v: %v\n%s", args, err, out)
	}
	m := chunksRe.FindSubmatch(out)
	if m == nil {
		b.Fatalf("agentd %v said no chunks: %s", args, out)
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return runFigures{runs: 1, chunks: n, wall: wall, cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), maxRSS: ru.Maxrss}
}

// The client: this test binary again, with benchClientEnv set to its
// benchClientArgs as JSON.
const benchClientEnv = "AGENTD_TEAM_BENCH_CLIENT"

type benchClientArgs struct {
	URL, Repo, Dir, State, Scope string
	Queries                      []string
	Seconds                      float64
}

type benchClientReady struct {
	First time.Duration // StartTeam to the first answer
}

type benchClientResult struct {
	Latencies []time.Duration
	RSS, HWM  int64
	Notice    string
}

type clientRun struct {
	p50, p95, first50, firstMax time.Duration
	queries                     int
	rate                        float64
	rss50, rssMax, hwmMax       int64
	server                      int64
}

// runClients starts n clients (each in a module of its own, spread over
// the corpus), waits until each answered its first query, then lets them
// search together for a while.
func runClients(b *testing.B, srv *pgtest.Server, url string, mods []corpusModule, queries []string, scope string, n int) clientRun {
	secs := 20.0
	if scope == "all" {
		secs = 40
	}
	type client struct {
		cmd *exec.Cmd
		in  *os.File
		out *bufio.Reader
	}
	tmp := b.TempDir()
	clients := make([]client, n)
	var firsts []time.Duration
	for i := range clients {
		m := mods[(i*len(mods)/max(n, 1)+7)%len(mods)]
		qs := slices.Clone(queries)
		off := (i * 131) % len(qs)
		qs = append(qs[off:], qs[:off]...)
		args, _ := json.Marshal(benchClientArgs{URL: url, Repo: m.path, Dir: m.dir, State: filepath.Join(tmp, strconv.Itoa(i)),
			Scope: scope, Queries: qs, Seconds: secs})
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), benchClientEnv+"="+string(args))
		cmd.Stderr = os.Stderr
		inR, inW, _ := os.Pipe()
		outR, outW, _ := os.Pipe()
		cmd.Stdin, cmd.Stdout = inR, outW
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		inR.Close()
		outW.Close()
		clients[i] = client{cmd, inW, bufio.NewReader(outR)}
		defer cmd.Process.Kill()
	}
	for _, c := range clients {
		line, err := c.out.ReadBytes('\n')
		var r benchClientReady
		if err != nil || json.Unmarshal(line, &r) != nil {
			b.Fatalf("a client did not start: %v %s", err, line)
		}
		firsts = append(firsts, r.First)
	}
	for _, c := range clients {
		c.in.Write([]byte("go\n"))
	}
	// The server's memory midway.
	time.Sleep(time.Duration(secs / 2 * float64(time.Second)))
	var server int64
	for _, pid := range srv.PIDs() {
		server += procKB(pid, "/smaps_rollup", "Pss:") << 10
	}
	var lat []time.Duration
	var rss, hwm []int64
	for _, c := range clients {
		line, err := c.out.ReadBytes('\n')
		var r benchClientResult
		if err != nil || json.Unmarshal(line, &r) != nil {
			b.Fatalf("a client failed: %v %s", err, line)
		}
		if r.Notice != "" {
			b.Fatalf("a client answered from its local index: %s", r.Notice)
		}
		lat = append(lat, r.Latencies...)
		rss = append(rss, r.RSS)
		hwm = append(hwm, r.HWM)
		c.cmd.Wait()
	}
	slices.Sort(lat)
	slices.Sort(firsts)
	slices.Sort(rss)
	return clientRun{p50: pctile(lat, 50), p95: pctile(lat, 95), first50: pctile(firsts, 50), firstMax: firsts[len(firsts)-1],
		queries: len(lat), rate: float64(len(lat)) / secs, rss50: rss[len(rss)/2], rssMax: rss[len(rss)-1], hwmMax: slices.Max(hwm), server: server}
}

func pctile(s []time.Duration, p int) time.Duration {
	if len(s) == 0 {
		return 0
	}
	return s[min(len(s)-1, len(s)*p/100)]
}

// procKB reads a "Key: N kB" line of /proc/PID/FILE.
func procKB(pid int, file, key string) int64 {
	data, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + file)
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, key) {
			f := strings.Fields(line)
			if len(f) >= 2 {
				n, _ := strconv.ParseInt(f[1], 10, 64)
				return n
			}
		}
	}
	return 0
}

// benchClient is one client process: a daemon's team index in a checkout
// of one module.
func benchClient(spec string) int {
	var a benchClientArgs
	if err := json.Unmarshal([]byte(spec), &a); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx := context.Background()
	fail := func(err error) int { fmt.Fprintf(os.Stderr, "bench client %s: %v\n", a.Repo, err); return 1 }
	t0 := time.Now()
	st, err := Open(ctx, a.URL, Options{MaxConns: 2})
	if err != nil {
		return fail(err)
	}
	defer st.Close()
	tm := rag.StartTeam(rag.TeamOptions{Options: rag.Options{Root: a.Dir, StateDir: a.State, Logger: slog.New(slog.DiscardHandler)},
		Store: st, Repo: a.Repo, NoWatch: true, Timeout: 5 * time.Minute}, rag.Progress{})
	defer tm.Close()
	if err := tm.WaitBuilt(ctx); err != nil {
		return fail(err)
	}
	search := func(q string) error {
		var err error
		if a.Scope == "all" {
			_, _, err = tm.SearchRepos(ctx, nil, q, 10)
		} else {
			_, _, err = tm.Search(ctx, q, 10)
		}
		return err
	}
	if err := search(a.Queries[0]); err != nil {
		return fail(err)
	}
	ready, _ := json.Marshal(benchClientReady{First: time.Since(t0)})
	os.Stdout.Write(append(ready, '\n'))
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return fail(err)
	}
	var res benchClientResult
	end := time.Now().Add(time.Duration(a.Seconds * float64(time.Second)))
	for i := 1; time.Now().Before(end); i++ {
		t := time.Now()
		if err := search(a.Queries[i%len(a.Queries)]); err != nil {
			return fail(err)
		}
		res.Latencies = append(res.Latencies, time.Since(t))
	}
	if ts := tm.Status().Team; ts == nil || ts.Notice != "" {
		res.Notice = "no team index"
		if ts != nil {
			res.Notice = ts.Notice + " (" + ts.Reason + ")"
		}
	}
	runtime.GC()
	pid := os.Getpid()
	res.RSS = procKB(pid, "/status", "VmRSS:") << 10
	res.HWM = procKB(pid, "/status", "VmHWM:") << 10
	out, _ := json.Marshal(res)
	os.Stdout.Write(append(out, '\n'))
	return 0
}
