package rpctest

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/internal/await"
	"github.com/agentd/agentd/rag"
	"github.com/agentd/agentd/rpc"
	"github.com/agentd/agentd/rpc/wire"
)

// The golden transcripts pin the wire: every call with its answer and every
// run notification, byte for byte once normalised, in txtar files under
// testdata/golden. A refactor that changes none of them did not change the
// protocol. Rewrite them with
//
//	go test ./rpc/rpctest -run Golden -update
//
// and read the diff: each change there is a change every editor sees.

var updateGolden = flag.Bool("update", false, "rewrite the golden transcripts in testdata/golden")

const goldenDir = "../../testdata/golden"

// golden records one scenario's exchange in a form that does not vary from
// one run to the next: the calls in the order the test makes them, and each
// run's notifications in seq order, recorded when the test has waited for
// them (a notification with seq n means every one before it has arrived).
type golden struct {
	t        *testing.T
	e        *Editor
	env      *Env
	sections []string
	names    map[string]string // real id → stable name
	counts   map[string]int    // id prefix → ids named so far
	flushed  map[string]int64  // run id → last seq recorded
	runs     []string          // run ids in order of first sight
	foreign  int               // answers to raw frames recorded
}

func newGolden(t *testing.T, env *Env, e *Editor) *golden {
	return &golden{t: t, e: e, env: env, names: map[string]string{}, counts: map[string]int{}, flushed: map[string]int64{}}
}

// call makes a call, records it and its answer, and returns the raw result
// (nil for an error answer, whose code is in err).
func (g *golden) call(method string, params any) (json.RawMessage, error) {
	g.t.Helper()
	g.record("-> "+method, params)
	var raw json.RawMessage
	err := g.e.Call(method, params, &raw)
	var ce *rpc.CallError
	switch {
	case errors.As(err, &ce):
		g.record("<- error", map[string]any{"code": ce.Code, "message": ce.Message})
	case err != nil:
		g.t.Fatalf("%s: %v", method, err)
	default:
		g.record("<- result", raw)
	}
	return raw, err
}

// mustCall is call for a call that must succeed; it decodes the result into out.
func (g *golden) mustCall(method string, params, out any) {
	g.t.Helper()
	raw, err := g.call(method, params)
	require.NoError(g.t, err, method)
	if out != nil {
		require.NoError(g.t, json.Unmarshal(raw, out))
	}
}

func (g *golden) notify(method string, params any) {
	g.t.Helper()
	g.record("-> "+method, params)
	g.e.Notify(method, params)
}

// until waits for a notification of the run that satisfies pred, records
// the run's notifications up to it, and returns it.
func (g *golden) until(runID, desc string, pred func(method string, params runNote) bool) runNote {
	g.t.Helper()
	var found runNote
	g.e.Await(desc, func(m Message) bool {
		var n runNote
		if json.Unmarshal(m.Params, &n) != nil || n.RunID != runID || !pred(m.Method, n) {
			return false
		}
		found = n
		return true
	})
	g.flush(runID, found.Seq)
	return found
}

// runNote is the part of a run notification the recorder reads.
type runNote struct {
	RunID string `json:"runId"`
	Seq   int64  `json:"seq"`
	State string `json:"state"`
	Kind  string `json:"kind"`
	// RequestID is set on input requests.
	RequestID string `json:"requestId"`
	// Update is an agent/update's update.
	Update struct {
		Kind       string `json:"kind"`
		ToolCallID string `json:"toolCallId"`
		Status     string `json:"status"`
	} `json:"update"`
}

// flush records the run's notifications after the last recorded one, up to
// seq, in seq order.
func (g *golden) flush(runID string, upTo int64) {
	g.t.Helper()
	if !slices.Contains(g.runs, runID) {
		g.runs = append(g.runs, runID)
	}
	type note struct {
		seq int64
		msg Message
	}
	var notes []note
	for _, m := range g.e.Messages() {
		var n runNote
		if json.Unmarshal(m.Params, &n) != nil || n.RunID != runID || n.Seq <= g.flushed[runID] || n.Seq > upTo {
			continue
		}
		notes = append(notes, note{n.Seq, m})
	}
	slices.SortFunc(notes, func(a, b note) int { return int(a.seq - b.seq) })
	for i, n := range notes {
		if want := g.flushed[runID] + int64(i) + 1; n.seq != want {
			g.t.Fatalf("run %s: notification seq %d arrived where %d was due", runID, n.seq, want)
		}
		g.record("<- "+n.msg.Method, n.msg.Params)
	}
	g.flushed[runID] += int64(len(notes))
}

// foreignAnswers waits for n more answers to raw frames and records them.
func (g *golden) foreignAnswers(n int) {
	g.t.Helper()
	var got []Message
	g.e.Await(fmt.Sprintf("%d answers to raw frames", g.foreign+n), func(Message) bool {
		got = got[:0]
		for _, m := range g.e.msgsLocked() {
			if m.Method == rpc.MethodForeignResponse {
				got = append(got, m)
			}
		}
		return len(got) >= g.foreign+n
	})
	for _, m := range got[g.foreign : g.foreign+n] {
		g.record("<- response to a raw frame", m.Params)
	}
	g.foreign += n
}

func (g *golden) raw(frame string) {
	g.t.Helper()
	g.sections = append(g.sections, "-- -> raw --\n"+strconv.Quote(frame)+"\n")
	g.e.SendRaw([]byte(frame))
}

// record adds one section: a title and the normalised JSON of v.
func (g *golden) record(title string, v any) {
	g.t.Helper()
	data, ok := v.(json.RawMessage)
	if !ok {
		var err error
		if data, err = json.Marshal(v); err != nil {
			g.t.Fatal(err)
		}
	}
	g.sections = append(g.sections, "-- "+title+" --\n"+g.normalise(data)+"\n")
}

var (
	idPattern   = regexp.MustCompile(`\b([rsq])_[0-9a-f]{16,}\b`)
	timePattern = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
)

// normalise rewrites what varies between runs (ids, times, durations, the
// temporary directories, the process id and the build's version) and
// indents the JSON.
func (g *golden) normalise(data []byte) string {
	if len(bytes.TrimSpace(data)) == 0 {
		return "(empty)"
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		g.t.Fatalf("recording %s: %v", data, err)
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(g.walk("", v)); err != nil {
		g.t.Fatal(err)
	}
	return strings.TrimSuffix(out.String(), "\n")
}

func (g *golden) walk(key string, v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			switch k {
			case "durationMs":
				delete(x, k) // how long a tool took; absent when under 1 ms
			case "processId":
				x[k] = "<pid>"
			default:
				x[k] = g.walk(k, val)
			}
		}
		if key == "serverInfo" {
			x["version"] = "<version>"
		}
		if key == "context" {
			// What the system message and the tools take changes with every
			// tool's description: the meter's shape is the contract.
			if _, ok := x["used"]; ok {
				x["used"] = "<tokens>"
			}
		}
		if key == "sandbox" {
			// What the kernel offers depends on the machine: the shape is
			// the contract.
			x["active"], x["profiles"], x["landlock"], x["summary"] = "<bool>", "<profiles>", "<abi>", "<summary>"
			delete(x, "problems")
			delete(x, "off")
		}
		return x
	case []any:
		for i := range x {
			x[i] = g.walk(key, x[i])
		}
		return x
	case string:
		return g.text(x)
	}
	return v
}

// text rewrites the varying parts of a string.
func (g *golden) text(s string) string {
	s = strings.ReplaceAll(s, g.env.Root, "<root>")
	s = strings.ReplaceAll(s, g.env.State, "<state>")
	s = timePattern.ReplaceAllString(s, "<time>")
	return idPattern.ReplaceAllStringFunc(s, func(id string) string {
		if name, ok := g.names[id]; ok {
			return name
		}
		prefix := id[:1]
		g.counts[prefix]++
		name := fmt.Sprintf("%s_%d", prefix, g.counts[prefix])
		g.names[id] = name
		return name
	})
}

// check compares the transcript with testdata/golden/<name>.txtar, or
// writes it there with -update (from the in-process run only).
func (g *golden) check(name, comment string) {
	g.t.Helper()
	got := []byte(strings.TrimSpace(comment) + "\n" + strings.Join(g.sections, ""))
	path := filepath.Join(goldenDir, name+".txtar")
	if *updateGolden {
		if g.env.Mode == InProcess {
			require.NoError(g.t, os.MkdirAll(goldenDir, 0o755))
			require.NoError(g.t, os.WriteFile(path, got, 0o644))
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		g.t.Fatalf("%v (run go test ./rpc/rpctest -run Golden -update)", err)
	}
	if !bytes.Equal(got, want) {
		g.t.Errorf("the wire differs from %s (rerun with -update if the change is meant, and say so in docs/protocol.md):\n%s",
			path, firstDifference(string(want), string(got)))
	}
}

// firstDifference shows the first line that differs, with context.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	from := max(i-6, 0)
	clip := func(lines []string) string { return strings.Join(lines[from:min(i+6, len(lines))], "\n") }
	return fmt.Sprintf("at line %d\n--- want ---\n%s\n--- got ---\n%s", i+1, clip(w), clip(g))
}

// goldenScenario runs fn in process and against the binary, and checks its
// transcript against testdata/golden/<name>.txtar.
func goldenScenario(t *testing.T, name, comment string, fn func(g *golden)) {
	goldenScenarioIn(t, name, comment, func(t *testing.T) Config { return Config{Script: script(t, "golden.json")} }, fn)
}

// goldenScenarioIn is goldenScenario in the world cfg makes.
func goldenScenarioIn(t *testing.T, name, comment string, cfg func(t *testing.T) Config, fn func(g *golden)) {
	t.Parallel()
	for _, mode := range Modes {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t, mode, cfg(t))
			g := newGolden(t, env, env.Start())
			fn(g)
			g.check(name, comment)
		})
	}
}

// initialize runs the handshake, recording the call but not the result:
// lifecycle.txtar holds that once, so a new tool or kind changes one file.
func (g *golden) initialize() {
	g.t.Helper()
	g.record("-> "+wire.MethodInitialize, g.env.InitializeParams(nil))
	g.e.MustCall(wire.MethodInitialize, g.env.InitializeParams(nil), nil)
	g.sections = append(g.sections, "-- <- result --\n(as in lifecycle.txtar)\n")
	g.notify(wire.MethodInitialized, map[string]any{})
}

// exit sends shutdown and exit and records the exit code.
func (g *golden) exit() {
	g.t.Helper()
	g.mustCall(wire.MethodShutdown, nil, nil)
	g.notify(wire.MethodExit, nil)
	g.record("exit code", g.e.daemon.stop(false))
}

func (g *golden) run(prompt string) (runID, sessionID string) {
	g.t.Helper()
	var res struct{ RunID, SessionID string }
	g.mustCall(wire.MethodRun, map[string]any{"prompt": prompt}, &res)
	return res.RunID, res.SessionID
}

func isRequest(kind string) func(string, runNote) bool {
	return func(method string, n runNote) bool { return method == wire.MethodInputRequest && n.Kind == kind }
}

func isState(state string) func(string, runNote) bool {
	return func(method string, n runNote) bool { return method == wire.MethodRunState && n.State == state }
}

// isUpdate matches an agent/update of the kind.
func isUpdate(kind string) func(string, runNote) bool {
	return func(method string, n runNote) bool { return method == wire.MethodUpdate && n.Update.Kind == kind }
}

func TestGoldenLifecycle(t *testing.T) {
	goldenScenario(t, "lifecycle", `
The LSP lifecycle: a call before initialize, initialize (twice), initialized,
the empty lists of a new workspace (params absent, null, [null] or []),
shutdown, a call after it, exit.`, func(g *golden) {
		g.call(wire.MethodSessions, nil)
		g.mustCall(wire.MethodInitialize, g.env.InitializeParams(nil), nil)
		g.notify(wire.MethodInitialized, map[string]any{})
		g.call(wire.MethodInitialize, g.env.InitializeParams(nil))
		g.mustCall(wire.MethodSessions, nil, nil)
		g.mustCall(wire.MethodSessions, []any{nil}, nil) // what vscode-jsonrpc sends for no params
		g.mustCall(wire.MethodPending, map[string]any{}, nil)
		g.mustCall(wire.MethodPending, []any{}, nil)
		g.mustCall(wire.MethodShutdown, nil, nil)
		g.call(wire.MethodSessions, nil)
		g.notify(wire.MethodExit, nil)
		g.record("exit code", g.e.daemon.stop(false))
	})
}

func TestGoldenErrors(t *testing.T) {
	goldenScenario(t, "errors", `
Every error an editor can provoke in a live daemon, with its code and
message: bad frames, unknown methods, bad params, unknown ids, answers of the
wrong kind, steers that cannot be taken; then the runs go on undisturbed.`, func(g *golden) {
		g.initialize()
		for _, f := range []string{"Content-Length: 9\r\n\r\n{\"bad\": }", "this is not a header\r\n\r\n",
			string(frame(`{"jsonrpc":"2.0"}`)), string(frame(`{"jsonrpc":"1.0","id":"raw-1","method":"agent/sessions"}`))} {
			g.raw(f)
		}
		g.foreignAnswers(4)
		g.call("agent/nope", nil)
		g.call(wire.MethodRun, map[string]any{"prompt": 5})
		g.call(wire.MethodRun, map[string]any{"prompt": " "})
		g.call(wire.MethodRun, map[string]any{"prompt": "x", "approvalPolicy": "yolo"})

		asking, askingSession := g.run("ask me")
		q := g.until(asking, "the choice", isRequest("choice"))
		writing, _ := g.run("write it")
		w := g.until(writing, "the write confirmation", isRequest("confirm_write"))

		g.call(wire.MethodCancel, map[string]any{"runId": "r_nope"})
		g.call(wire.MethodEvents, map[string]any{"runId": "../../etc"})
		g.call(wire.MethodReply, map[string]any{"requestId": "q_nope", "text": "x"})
		g.call(wire.MethodReply, map[string]any{"requestId": q.RequestID, "optionId": "7"})
		g.call(wire.MethodReply, map[string]any{"requestId": q.RequestID, "text": "c"})
		g.call(wire.MethodReply, map[string]any{"requestId": q.RequestID})
		g.call(wire.MethodConfirm, map[string]any{"requestId": q.RequestID, "decision": "allow_once"})
		g.call(wire.MethodReply, map[string]any{"requestId": w.RequestID, "text": "yes"})
		g.call(wire.MethodConfirm, map[string]any{"requestId": w.RequestID})
		g.call(wire.MethodConfirm, map[string]any{"requestId": w.RequestID, "decision": "maybe"})
		g.call(wire.MethodRun, map[string]any{"prompt": "again", "sessionId": "s_nope"})
		g.call(wire.MethodSteer, map[string]any{"runId": "r_nope", "text": "x"})
		g.call(wire.MethodSteer, map[string]any{"runId": asking, "text": " "})
		g.call(wire.MethodResume, map[string]any{"runId": asking})
		g.call(wire.MethodIndexStatus, nil)
		g.call(wire.MethodHistory, nil)
		g.call(wire.MethodHistory, map[string]any{"sessionId": askingSession, "beforeRunId": "r_nope"})
		g.call(wire.MethodConfigure, map[string]any{"sessionId": askingSession, "reasoningEffort": "max"})

		g.mustCall(wire.MethodReply, map[string]any{"requestId": q.RequestID, "optionId": "1"}, nil)
		g.call(wire.MethodReply, map[string]any{"requestId": q.RequestID, "optionId": "1"})
		g.until(asking, "the choice run to complete", isState("completed"))
		g.call(wire.MethodSteer, map[string]any{"runId": asking, "text": "one more thing"})
		g.mustCall(wire.MethodCancel, map[string]any{"runId": writing}, nil)
		g.until(writing, "the write run to be cancelled", isState("cancelled"))
		g.call(wire.MethodConfirm, map[string]any{"requestId": w.RequestID, "decision": "allow_once"})
		g.exit()
	})
}

func TestGoldenQueue(t *testing.T) {
	goldenScenario(t, "queue", `
Steering and queueing: a steer while the run waits on the user reaches the
model with the answer; two prompts sent while the session's run works
queue; one is cancelled and never runs, the other starts when the first
run ends, with its conversation.`, func(g *golden) {
		g.initialize()
		asking, session := g.run("ask me")
		q := g.until(asking, "the choice", isRequest("choice"))
		g.mustCall(wire.MethodSteer, map[string]any{"runId": asking, "text": "and say why"}, nil)
		g.until(asking, "the steer", isUpdate("steer"))
		var second, third struct{ RunID string }
		g.mustCall(wire.MethodRun, map[string]any{"prompt": "then this", "sessionId": session}, &second)
		g.until(second.RunID, "the second run queued", isState("queued"))
		g.mustCall(wire.MethodRun, map[string]any{"prompt": "and that", "sessionId": session}, &third)
		g.until(third.RunID, "the third run queued", isState("queued"))
		g.mustCall(wire.MethodCancel, map[string]any{"runId": third.RunID}, nil)
		g.until(third.RunID, "the third run cancelled", isState("cancelled"))
		g.mustCall(wire.MethodReply, map[string]any{"requestId": q.RequestID, "optionId": "1"}, nil)
		g.until(asking, "the first run to complete", isState("completed"))
		g.until(second.RunID, "the second run to complete", isState("completed"))
		g.exit()
	})
}

func TestGoldenPlan(t *testing.T) {
	goldenScenario(t, "plan", `
Plan mode: a run in mode plan ends its planning with propose_plan, put to
the user as a confirm_plan request; approved into auto-edit, the session's
mode changes (a settings update) and the run writes unasked.`, func(g *golden) {
		g.initialize()
		var res struct{ RunID string }
		g.mustCall(wire.MethodRun, map[string]any{"prompt": "plan the hello file", "approvalPolicy": "plan"}, &res)
		p := g.until(res.RunID, "the plan", isRequest("confirm_plan"))
		g.mustCall(wire.MethodReply, map[string]any{"requestId": p.RequestID, "optionId": "auto-edit"}, nil)
		g.until(res.RunID, "the run to complete", isState("completed"))
		require.Equal(t, "hello\n", g.env.WorkspaceFile("hello.txt"))
		g.exit()
	})
}

func TestGoldenRun(t *testing.T) {
	goldenScenario(t, "run", `
One whole run: the model publishes a plan, asks the user a question, writes
a file the user approves, and answers. Then the run's event log, the open
requests, the sessions and the session's history, as an editor reconnecting
would read them; then the session's settings changed, and the model list.`, func(g *golden) {
		g.initialize()
		run, session := g.run("write a greeting file")
		q := g.until(run, "the question", isRequest("question"))
		g.mustCall(wire.MethodReply, map[string]any{"requestId": q.RequestID, "text": "World"}, nil)
		w := g.until(run, "the write confirmation", isRequest("confirm_write"))
		g.mustCall(wire.MethodConfirm, map[string]any{"requestId": w.RequestID, "decision": "allow_once"}, nil)
		g.until(run, "the run to complete", isState("completed"))
		require.Equal(t, "Hello, World\n", g.env.WorkspaceFile("greeting.txt"))
		g.mustCall(wire.MethodEvents, map[string]any{"runId": run, "afterSeq": 0}, nil)
		g.mustCall(wire.MethodEvents, map[string]any{"runId": run, "afterSeq": 20}, nil)
		g.mustCall(wire.MethodPending, map[string]any{"runId": run}, nil)
		g.mustCall(wire.MethodSessions, nil, nil)
		g.mustCall(wire.MethodHistory, map[string]any{"sessionId": session}, nil)
		g.mustCall(wire.MethodConfigure, map[string]any{"sessionId": session, "model": "fake-large", "reasoningEffort": "low"}, nil)
		g.mustCall(wire.MethodModels, nil, nil)
		g.exit()
	})
}

func TestGoldenIndex(t *testing.T) {
	goldenScenarioIn(t, "index", `
The workspace index over the wire: its status once built, a search, a search
with a limit, and a search without a query. The daemon runs the real index
(keyword search, no embeddings) in process and in the binary alike.`, func(t *testing.T) Config {
		return Config{Index: true, Files: map[string]string{
			"cart/cart.go":      "package cart\n\n// Total sums the prices of the items in the cart.\nfunc Total(prices []int) int {\n\tsum := 0\n\tfor _, p := range prices {\n\t\tsum += p\n\t}\n\treturn sum\n}\n",
			"cart/cart_test.go": "package cart\n\nimport \"testing\"\n\nfunc TestTotal(t *testing.T) {\n\tif Total([]int{1, 2}) != 3 {\n\t\tt.Fatal(\"total\")\n\t}\n}\n",
			"README.md":         "# shop\n\nA small shop: a cart whose total is the sum of its prices.\n",
		}, OpenIndex: func(root, dir string, p rpc.IndexProgress) rpc.Index {
			return rag.StartLive(rag.Options{Root: root, StateDir: dir}, rag.Progress{Begin: p.Begin, Report: p.Report, End: p.End})
		}}
	}, func(g *golden) {
		g.initialize()
		await.Until(g.t, "the index to be built", DefaultTimeout, func() bool {
			var st wire.IndexStatus
			return g.e.Call(wire.MethodIndexStatus, nil, &st) == nil && st.State == rag.StateReady
		})
		g.mustCall(wire.MethodIndexStatus, nil, nil)
		g.mustCall(wire.MethodIndexSearch, map[string]any{"query": "sum the prices in the cart"}, nil)
		g.mustCall(wire.MethodIndexSearch, map[string]any{"query": "cart total", "limit": 1}, nil)
		g.call(wire.MethodIndexSearch, map[string]any{"query": "  "})
		g.exit()
	})
}
