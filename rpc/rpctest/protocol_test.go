package rpctest

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/rag"
	"github.com/agentd/agentd/rpc"
	"github.com/agentd/agentd/rpc/wire"
	"github.com/agentd/agentd/tools"
)

func script(t testing.TB, name string) *modeltest.Script {
	t.Helper()
	s, err := modeltest.LoadScript(filepath.Join("..", "..", "testdata", "models", name))
	require.NoError(t, err)
	return s
}

// both runs a scenario in process and against the real binary, in
// parallel with the other scenarios: each has its own workspace, state and
// model, and waits on conditions, not on time.
func both(t *testing.T, cfg func(t *testing.T) Config, fn func(t *testing.T, env *Env)) {
	t.Parallel()
	for _, mode := range Modes {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			fn(t, NewEnv(t, mode, cfg(t)))
		})
	}
}

// binary runs a scenario against the real binary only. For scenarios whose
// cost is in what the daemon runs (real language servers, floods of
// output), not in how the editor reaches it: the in-process daemon would
// run the same code over another pipe, at the same cost again.
func binary(t *testing.T, cfg func(t *testing.T) Config, fn func(t *testing.T, env *Env)) {
	t.Parallel()
	fn(t, NewEnv(t, Binary, cfg(t)))
}

func withScript(name string) func(t *testing.T) Config {
	return func(t *testing.T) Config { return Config{Script: script(t, name)} }
}

func TestLifecycle(t *testing.T) {
	both(t, withScript("stream.json"), func(t *testing.T, env *Env) {
		e := env.Start()
		e.CallErr(wire.MethodSessions, nil, wire.CodeServerNotInitialized)
		var res struct {
			ServerInfo      struct{ Name string }
			ProtocolVersion int
			Capabilities    struct {
				Experimental struct {
					Agentd wire.ServerAgentCapabilities
				}
			}
		}
		e.MustCall(wire.MethodInitialize, env.InitializeParams(nil), &res)
		assert.Equal(t, "agentd", res.ServerInfo.Name)
		assert.Equal(t, wire.ProtocolVersion, res.ProtocolVersion)
		assert.Contains(t, res.Capabilities.Experimental.Agentd.Tools, "ask_user")
		e.CallErr(wire.MethodInitialize, env.InitializeParams(nil), wire.CodeInvalidRequest)
		e.Notify(wire.MethodInitialized, struct{}{})
		e.MustCall(wire.MethodShutdown, nil, nil)
		e.CallErr(wire.MethodSessions, nil, wire.CodeShuttingDown)
		e.Notify(wire.MethodExit, nil)
		assert.Equal(t, 0, e.daemon.stop(false), "exit after shutdown")
	})
}

func TestExitWithoutShutdown(t *testing.T) {
	both(t, withScript("stream.json"), func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		e.Notify(wire.MethodExit, nil)
		assert.Equal(t, 1, e.daemon.stop(false))
	})
}

func TestStreamedAnswer(t *testing.T) {
	both(t, withScript("stream.json"), func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "hello"})
		st := e.RunState(run.RunID, agent.StateCompleted)
		assert.Equal(t, agent.StopEndTurn, st.StopReason)
		assert.Equal(t, "Hello there, I am agentd, at your service.", e.Text(run.RunID))
		chunks := 0
		for _, u := range e.Updates(run.RunID) {
			if u.Kind == agent.UpdateMessageChunk {
				chunks++
			}
		}
		assert.Greater(t, chunks, 1, "the answer is streamed in pieces")
		assertContiguous(t, e.Seqs(run.RunID))
		var sessions rpc.SessionsResult
		e.MustCall(wire.MethodSessions, nil, &sessions)
		require.Len(t, sessions.Sessions, 1)
		assert.Equal(t, "hello", sessions.Sessions[0].Title)
		assert.Equal(t, agent.StateCompleted, sessions.Sessions[0].State)
	})
}

func assertContiguous(t *testing.T, seqs []int64) {
	t.Helper()
	require.NotEmpty(t, seqs)
	for i, s := range seqs {
		require.Equal(t, int64(i+1), s, "seq must rise by exactly one: %v", seqs)
	}
}

func TestQuestionAnswered(t *testing.T) {
	both(t, withScript("question.json"), func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "what is the meaning?"})
		req := e.Requests(run.RunID, 1)[0]
		assert.Equal(t, agent.KindQuestion, req.Kind)
		assert.Equal(t, "Which number do you mean?", req.Message)
		assert.Equal(t, "The README mentions several.", req.Context)
		assert.NotNil(t, req.ExpiresAt, "questions expire by default")
		e.RunState(run.RunID, agent.StateRequiresAction)
		e.Answer(ReplyText(req.RequestID, "42"))
		assert.Equal(t, agent.ByUser, e.Resolved(req.RequestID).By)
		e.RunState(run.RunID, agent.StateCompleted)
		assert.Equal(t, "You mean 42.", e.Text(run.RunID))
		assertContiguous(t, e.Seqs(run.RunID))
	})
}

func TestTwoQuestionsReverseOrder(t *testing.T) {
	both(t, withScript("two_questions.json"), func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "set up the service"})
		reqs := e.Requests(run.RunID, 2)
		var pending rpc.PendingResult
		e.MustCall(wire.MethodPending, rpc.PendingParams{RunID: run.RunID}, &pending)
		require.Len(t, pending.Requests, 2)
		assert.Equal(t, 2, reqs[1].PendingCount)
		assert.Equal(t, agent.KindChoice, reqs[1].Kind)
		// The second first: answering one never touches the other.
		e.Answer(ReplyOption(reqs[1].RequestID, "2"))
		e.Resolved(reqs[1].RequestID)
		e.MustCall(wire.MethodPending, rpc.PendingParams{RunID: run.RunID}, &pending)
		require.Len(t, pending.Requests, 1)
		assert.Equal(t, reqs[0].RequestID, pending.Requests[0].RequestID)
		e.Answer(ReplyText(reqs[0].RequestID, "8080"))
		e.RunState(run.RunID, agent.StateCompleted)
		assert.Equal(t, "Port 8080 with sqlite it is.", e.Text(run.RunID))
		assertToolResults(t, env, map[string]string{"call_port": "8080", "call_db": "sqlite"})
	})
}

// assertToolResults checks that the model received each call's answer as
// its tool result.
func assertToolResults(t *testing.T, env *Env, want map[string]string) {
	t.Helper()
	got := toolResults(env)
	for id, text := range want {
		assert.Contains(t, got[id], text, "tool result of %s", id)
	}
}

func TestConfirmationRejectedRunGoesOn(t *testing.T) {
	both(t, withScript("reject_write.json"), func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "save my notes"})
		req := e.Requests(run.RunID, 1)[0]
		assert.Equal(t, agent.KindConfirmWrite, req.Kind)
		require.Len(t, req.Diff, 1)
		assert.Equal(t, "notes.txt", req.Diff[0].Path)
		assert.Contains(t, req.Diff[0].Diff, "+remember the milk")
		assert.NotEmpty(t, req.Rule)
		e.CallErr(wire.MethodReply, agent.ReplyParams{RequestID: req.RequestID, OptionID: "1"}, wire.CodeWrongKind)
		e.CallErr(wire.MethodConfirm, agent.ConfirmParams{RequestID: req.RequestID, Decision: "maybe"}, wire.CodeWrongKind)
		e.Answer(Decide(req.RequestID, tools.RejectOnce, "not now"))
		st := e.RunState(run.RunID, agent.StateCompleted)
		assert.Equal(t, agent.StopEndTurn, st.StopReason)
		assert.Equal(t, "Understood, I left notes.txt alone.", e.Text(run.RunID))
		assert.NoFileExists(t, filepath.Join(env.Root, "notes.txt"))
		assertToolResults(t, env, map[string]string{"call_w": "not now"})
	})
}

func TestCancelWhileQuestionOpen(t *testing.T) {
	both(t, withScript("question.json"), func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "what is the meaning?"})
		req := e.Requests(run.RunID, 1)[0]
		e.MustCall(wire.MethodCancel, rpc.RunRef{RunID: run.RunID}, nil)
		res := e.Resolved(req.RequestID)
		assert.Equal(t, agent.OutcomeCancelled, res.Outcome)
		assert.Equal(t, agent.ByCancel, res.By)
		st := e.RunState(run.RunID, agent.StateCancelled)
		assert.Equal(t, agent.StopCancelled, st.StopReason)
		e.CallErr(wire.MethodReply, agent.ReplyParams{RequestID: req.RequestID, Text: ptr("42")}, wire.CodeAlreadyResolved)
		e.MustCall(wire.MethodCancel, rpc.RunRef{RunID: run.RunID}, nil) // a no-op now
		var pending rpc.PendingResult
		e.MustCall(wire.MethodPending, rpc.PendingParams{}, &pending)
		assert.Empty(t, pending.Requests)
	})
}

func ptr(s string) *string { return &s }

func TestPendingAndEventsAfterReconnect(t *testing.T) {
	both(t, withScript("question.json"), func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "what is the meaning?"})
		req := e.Requests(run.RunID, 1)[0]
		seen := e.Seqs(run.RunID)
		e.Close(true) // the daemon dies with the question open

		e2 := env.StartInitialized()
		var pending rpc.PendingResult
		e2.MustCall(wire.MethodPending, rpc.PendingParams{}, &pending)
		require.Len(t, pending.Requests, 1)
		assert.Equal(t, req.RequestID, pending.Requests[0].RequestID)
		assert.Equal(t, req.Message, pending.Requests[0].Message)

		var evs rpc.EventsResult
		e2.MustCall(wire.MethodEvents, rpc.EventsParams{RunID: run.RunID, AfterSeq: 0}, &evs)
		assert.Equal(t, agent.StateRequiresAction, evs.State)
		require.GreaterOrEqual(t, len(evs.Events), len(seen))
		for i, ev := range evs.Events {
			assert.Equal(t, int64(i+1), ev.Seq)
		}
		var after rpc.EventsResult
		e2.MustCall(wire.MethodEvents, rpc.EventsParams{RunID: run.RunID, AfterSeq: 2}, &after)
		assert.Equal(t, len(evs.Events)-2, len(after.Events))

		e2.Answer(ReplyText(req.RequestID, "42"))
		st := e2.Finished(run.RunID)
		assert.Equal(t, agent.StateCompleted, st.State)
		assert.Equal(t, "You mean 42.", e2.Text(run.RunID))
		assert.Greater(t, st.Seq, seen[len(seen)-1], "seq goes on after the restart")
	})
}

func TestQuestionExpires(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{Script: script(t, "question.json"), QuestionTimeout: 300 * time.Millisecond}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "what is the meaning?"})
		req := e.Requests(run.RunID, 1)[0]
		res := e.Resolved(req.RequestID)
		assert.Equal(t, agent.OutcomeTimeout, res.Outcome)
		assert.Equal(t, agent.ByTimeout, res.By)
		e.CallErr(wire.MethodReply, agent.ReplyParams{RequestID: req.RequestID, Text: ptr("42")}, wire.CodeExpired)
		e.RunState(run.RunID, agent.StateCompleted)
		assert.Equal(t, "No answer came, so I assume 42.", e.Text(run.RunID))
	})
}

// TestErrorsWhileAnotherRunStreams sends every kind of bad message while a
// slow run streams, and checks that run is undisturbed.
func TestErrorsWhileAnotherRunStreams(t *testing.T) {
	both(t, withScript("slow.json"), func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		slow := e.Run(agent.RunParams{Prompt: "count slowly"})
		asking := e.Run(agent.RunParams{Prompt: "ask me"})
		q := e.Requests(asking.RunID, 1)[0]
		writing := e.Run(agent.RunParams{Prompt: "write it"})
		w := e.Requests(writing.RunID, 1)[0]

		// Framing and request shape.
		e.SendRaw([]byte("Content-Length: 9\r\n\r\n{\"bad\": }"))
		e.SendRaw([]byte("this is not a header\r\n\r\n"))
		e.SendRaw(frame(`{"jsonrpc":"2.0"}`))
		e.SendRaw(frame(`{"jsonrpc":"1.0","id":"raw-1","method":"agent/sessions"}`))
		codes := e.foreignCodes(4)
		assert.Equal(t, []int{wire.CodeParseError, wire.CodeParseError, wire.CodeInvalidRequest, wire.CodeInvalidRequest}, codes)

		e.CallErr("agent/nope", nil, wire.CodeMethodNotFound)
		msg := e.CallErr(wire.MethodRun, map[string]any{"prompt": 5}, wire.CodeInvalidParams)
		assert.Contains(t, msg, "prompt")
		e.CallErr(wire.MethodRun, agent.RunParams{Prompt: " "}, wire.CodeInvalidParams)
		e.CallErr(wire.MethodRun, agent.RunParams{Prompt: "x", ApprovalPolicy: "yolo"}, wire.CodeInvalidParams)
		e.CallErr(wire.MethodCancel, rpc.RunRef{RunID: "r_nope"}, wire.CodeUnknownRun)
		e.CallErr(wire.MethodEvents, rpc.EventsParams{RunID: "../../etc"}, wire.CodeUnknownRun)
		e.CallErr(wire.MethodReply, agent.ReplyParams{RequestID: "q_nope", Text: ptr("x")}, wire.CodeUnknownRequest)
		e.CallErr(wire.MethodReply, agent.ReplyParams{RequestID: q.RequestID, OptionID: "7"}, wire.CodeWrongKind)
		e.CallErr(wire.MethodReply, agent.ReplyParams{RequestID: q.RequestID, Text: ptr("c")}, wire.CodeWrongKind)
		e.CallErr(wire.MethodReply, agent.ReplyParams{RequestID: q.RequestID}, wire.CodeInvalidParams)
		e.CallErr(wire.MethodConfirm, agent.ConfirmParams{RequestID: q.RequestID, Decision: tools.AllowOnce}, wire.CodeWrongKind)
		e.CallErr(wire.MethodReply, agent.ReplyParams{RequestID: w.RequestID, Text: ptr("yes")}, wire.CodeWrongKind)
		e.CallErr(wire.MethodConfirm, agent.ConfirmParams{RequestID: w.RequestID}, wire.CodeInvalidParams)
		e.CallErr(wire.MethodSteer, agent.SteerParams{RunID: asking.RunID, Text: ""}, wire.CodeInvalidParams)
		e.CallErr(wire.MethodSteer, agent.SteerParams{RunID: "r_nope", Text: "x"}, wire.CodeUnknownRun)
		e.CallErr(wire.MethodRun, agent.RunParams{Prompt: "again", SessionID: "s_nope"}, wire.CodeUnknownSession)
		e.CallErr(wire.MethodResume, rpc.RunRef{RunID: asking.RunID}, wire.CodeRunNotPaused)
		e.CallErr(wire.MethodIndexStatus, nil, wire.CodeIndexUnavailable)
		e.Answer(ReplyOption(q.RequestID, "1"))
		e.CallErr(wire.MethodReply, agent.ReplyParams{RequestID: q.RequestID, OptionID: "1"}, wire.CodeAlreadyResolved)

		st := e.RunState(slow.RunID, agent.StateCompleted)
		assert.Equal(t, agent.StopEndTurn, st.StopReason)
		assert.Equal(t, "one two three four five six seven eight", e.Text(slow.RunID))
		assertContiguous(t, e.Seqs(slow.RunID))
		e.MustCall(wire.MethodCancel, rpc.RunRef{RunID: writing.RunID}, nil)
	})
}

func frame(body string) []byte {
	return []byte(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body))
}

// foreignCodes waits for n answers to raw frames and returns their codes.
func (e *Editor) foreignCodes(n int) []int {
	e.t.Helper()
	var codes []int
	e.Await(fmt.Sprintf("%d answers to raw frames", n), func(Message) bool {
		codes = nil
		for _, m := range e.msgsLocked() {
			if m.Method != rpc.MethodForeignResponse {
				continue
			}
			var r struct {
				Error struct{ Code int } `json:"error"`
			}
			_ = json.Unmarshal(m.Params, &r)
			codes = append(codes, r.Error.Code)
		}
		return len(codes) >= n
	})
	return codes
}

func TestNoModelConfigured(t *testing.T) {
	both(t, func(t *testing.T) Config { return Config{NoModel: true} }, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		msg := e.CallErr(wire.MethodRun, agent.RunParams{Prompt: "hello"}, wire.CodeNoModel)
		assert.Contains(t, msg, "no model is configured")
		assert.Contains(t, msg, "OPENAI_BASE_URL")
		assert.Contains(t, msg, "initializationOptions.model.baseUrl", "an editor's user is told where the editor sets it")
		assert.Contains(t, msg, "agentd search")
	})
}

// TestInitializationOptions configures the model and the mode from the
// editor alone: they apply over the daemon's settings; what an editor may
// not set, or no setting knows, is ignored; a bad value is refused.
func TestInitializationOptions(t *testing.T) {
	both(t, func(t *testing.T) Config { return Config{Script: script(t, "stream.json"), NoModel: true} }, func(t *testing.T, env *Env) {
		e := env.Start()
		bad := env.InitializeParams(nil)
		bad["initializationOptions"] = map[string]any{"approvalPolicy": "yolo"}
		msg := e.CallErr(wire.MethodInitialize, bad, wire.CodeInvalidParams)
		assert.Contains(t, msg, "initializationOptions: approvalPolicy")

		p := env.InitializeParams(nil)
		p["initializationOptions"] = map[string]any{"model": map[string]any{"baseUrl": env.Model.URL, "name": "fake"},
			"approvalPolicy": "read-only", "maxSteps": 1, "colour": "blue"}
		e.MustCall(wire.MethodInitialize, p, nil)
		e.Notify(wire.MethodInitialized, struct{}{})
		run := e.Run(agent.RunParams{Prompt: "hello"})
		st := e.RunState(run.RunID, agent.StateCompleted)
		assert.Equal(t, agent.StopEndTurn, st.StopReason, "maxSteps is not the editor's to set")
		assert.Equal(t, "Hello there, I am agentd, at your service.", e.Text(run.RunID))
		if env.Mode == InProcess {
			log := e.daemon.stderr()
			assert.Contains(t, log, `unknown key \"colour\"`)
			assert.Contains(t, log, `\"maxSteps\" cannot be set here`)
		}
	})
}

func TestMain(m *testing.M) {
	flag.Parse()
	// The scenarios mostly wait, on pipes, processes and timers, not on the
	// CPU: unless -parallel says otherwise, run four times as many at once
	// as there are CPUs (the default, one per CPU, leaves a 2-core machine
	// idle for most of the package's time); twice as many under -race,
	// where the in-process daemons do use the CPU and timers get tight.
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		per := 4
		if raceDetector {
			per = 2
		}
		_ = flag.Set("test.parallel", strconv.Itoa(per*runtime.GOMAXPROCS(0)))
	}
	code := m.Run()
	if buildPath != "" {
		os.RemoveAll(filepath.Dir(buildPath))
	}
	os.Exit(code)
}

// TestSessionContinuesAtOnce sends the next prompt the moment the first run
// ends: the session must already hold the whole conversation.
func TestSessionContinuesAtOnce(t *testing.T) {
	both(t, withScript("session.json"), func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		first := e.Run(agent.RunParams{Prompt: "first question"})
		e.RunState(first.RunID, agent.StateCompleted)
		second := e.Run(agent.RunParams{Prompt: "second question", SessionID: first.SessionID})
		assert.Equal(t, first.SessionID, second.SessionID)
		e.RunState(second.RunID, agent.StateCompleted)
		assert.Equal(t, "I remember the first answer.", e.Text(second.RunID))
	})
}

// TestIndexOverTheWire runs the real binary with its index: progress comes
// as LSP $/progress under a token the editor can tell apart, and index/search
// finds a function by what it does.
func TestIndexOverTheWire(t *testing.T) {
	t.Parallel()
	env := NewEnv(t, Binary, Config{Index: true, Files: map[string]string{
		"cart/cart.go": "package cart\n\n// Total sums the prices of the items in the cart.\nfunc Total(prices []int) int {\n\tsum := 0\n\tfor _, p := range prices {\n\t\tsum += p\n\t}\n\treturn sum\n}\n",
		"README.md":    "# shop\n\nA small shop.\n",
	}})
	e := env.StartInitialized()
	create := e.Await("a progress token", func(m Message) bool { return m.Method == wire.MethodProgressCreate })
	var p struct {
		Token any `json:"token"`
	}
	require.NoError(t, json.Unmarshal(create.Params, &p))
	token, ok := p.Token.(string)
	require.True(t, ok, "the token is a string: %s", create.Params)
	require.NotEmpty(t, token)
	e.Await("progress end", func(m Message) bool {
		return m.Method == wire.MethodProgress && strings.Contains(string(m.Params), `"kind":"end"`) && strings.Contains(string(m.Params), token)
	})
	var st wire.IndexStatus
	e.MustCall(wire.MethodIndexStatus, nil, &st)
	assert.Equal(t, "ready", st.State)
	assert.Equal(t, 2, st.Files)
	var res wire.IndexSearchResult
	e.MustCall(wire.MethodIndexSearch, wire.IndexSearchParams{Query: "sum the prices in the cart", Limit: 3}, &res)
	require.NotEmpty(t, res.Hits)
	assert.Equal(t, "cart/cart.go", res.Hits[0].Path)
	assert.Contains(t, res.Hits[0].Chunks[0].Symbol, "Total")
	e.CallErr(wire.MethodIndexSearch, wire.IndexSearchParams{Query: " "}, wire.CodeInvalidParams)
}

// TestOpenDocumentsReachTheModel opens a file in the "editor": the model's
// context names it; a URI outside the workspace is ignored.
func TestOpenDocumentsReachTheModel(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{Script: script(t, "open_files.json"), Files: map[string]string{"cart/cart.go": "package cart\n"}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		doc := func(path string) map[string]any {
			return map[string]any{"textDocument": map[string]any{"uri": (&url.URL{Scheme: "file", Path: path}).String(),
				"languageId": "go", "version": 1, "text": "package cart\n"}}
		}
		e.Notify(wire.MethodDidOpen, doc(filepath.Join(env.Root, "cart", "cart.go")))
		e.Notify(wire.MethodDidOpen, doc("/etc/hostname"))
		e.Notify(wire.MethodDidSave, doc(filepath.Join(env.Root, "cart", "cart.go")))
		run := e.Run(agent.RunParams{Prompt: "what am I looking at?"})
		e.RunState(run.RunID, agent.StateCompleted)
		assert.Equal(t, "You have cart/cart.go open.", e.Text(run.RunID))
		first := env.Model.Requests()[0]
		assert.NotContains(t, first.Messages[0].Content, "cart.go", "the editor's state is not in the system message")
		assert.NotContains(t, first.Last().Content, "hostname", "a file outside the workspace is not named")
	})
}

// TestConfirmationExpiresAsRejection: a confirmation never expires into an
// approval; the model is told it timed out.
func TestConfirmationExpiresAsRejection(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{Script: script(t, "reject_write.json"), ConfirmTimeout: 300 * time.Millisecond}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "save my notes"})
		req := e.Requests(run.RunID, 1)[0]
		require.NotNil(t, req.ExpiresAt)
		res := e.Resolved(req.RequestID)
		assert.Equal(t, agent.OutcomeTimeout, res.Outcome)
		e.RunState(run.RunID, agent.StateCompleted)
		assert.NoFileExists(t, filepath.Join(env.Root, "notes.txt"))
		assert.Contains(t, toolResults(env)["call_w"], "timeout")
		e.CallErr(wire.MethodConfirm, agent.ConfirmParams{RequestID: req.RequestID, Decision: tools.AllowOnce}, wire.CodeExpired)
	})
}

// slowIndex answers searches only when they are cancelled.
type slowIndex struct{}

func (slowIndex) Search(ctx context.Context, q string, n int) ([]rag.SearchHit, bool, error) {
	<-ctx.Done()
	return nil, false, ctx.Err()
}
func (slowIndex) Status() rag.Status { return rag.Status{State: rag.StateReady} }
func (slowIndex) Err() error         { return nil }
func (slowIndex) Changed(...string)  {}
func (slowIndex) SetOpen([]string)   {}
func (slowIndex) StopBuild()         {}
func (slowIndex) Close() error       { return nil }

// TestCancelRequest cancels an in-flight request with $/cancelRequest: it is
// answered with RequestCancelled and the daemon keeps serving. In process
// only: the slow index is a test double.
func TestCancelRequest(t *testing.T) {
	t.Parallel()
	env := NewEnv(t, InProcess, Config{OpenIndex: func(root, dir string, p rpc.IndexProgress) rpc.Index { return slowIndex{} }})
	e := env.StartInitialized()
	e.SendRaw(frame(`{"jsonrpc":"2.0","id":"slow-1","method":"index/search","params":{"query":"anything"}}`))
	e.SendRaw(frame(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"slow-1"}}`))
	assert.Equal(t, []int{wire.CodeRequestCancelled}, e.foreignCodes(1))
	var sessions rpc.SessionsResult
	e.MustCall(wire.MethodSessions, nil, &sessions)
}
