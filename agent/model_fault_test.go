package agent

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/internal/await"
)

// The model client against the scripted server: every fault a model or its
// server can produce ends as an error a person understands, and never as a
// crash or a hang.

func testModel(t *testing.T, srv *modeltest.Server, edit ...func(*ModelConfig)) *openaiModel {
	t.Helper()
	cfg := ModelConfig{BaseURL: srv.URL, APIKey: "test-key", Name: "fake",
		StreamIdleTimeout: 300 * time.Millisecond, CallTimeout: 10 * time.Second}
	for _, e := range edit {
		e(&cfg)
	}
	m := newOpenAIModel(cfg)
	t.Cleanup(m.CloseIdleConnections)
	return m
}

func userRequest(text string) ModelRequest {
	return ModelRequest{Messages: []Message{{Role: RoleSystem, Content: "You are agentd."}, {Role: RoleUser, Content: text}}}
}

// collect streams a request and returns the reply and the streamed pieces.
func collect(t *testing.T, m Model, req ModelRequest) (ModelReply, string, string, error) {
	t.Helper()
	var text, thought strings.Builder
	reply, err := m.Complete(await.Context(t, 30*time.Second), req, ModelStream{
		OnText:      func(s string) { text.WriteString(s) },
		OnReasoning: func(s string) { thought.WriteString(s) },
	})
	return reply, text.String(), thought.String(), err
}

func TestModelStreamsReasoningApart(t *testing.T) {
	for _, field := range []string{"reasoning_content", "reasoning"} {
		t.Run(field, func(t *testing.T) {
			srv := modeltest.StartT(t, &modeltest.Script{Turns: []modeltest.Turn{
				{Reply: modeltest.Reply{Reasoning: "The user greets; greet back.", ReasoningField: field, Text: "Hello!", Chunks: 4}},
				{Reply: modeltest.Reply{Text: "Again."}},
			}})
			m := testModel(t, srv, func(c *ModelConfig) { c.ReasoningEffort = EffortHigh })
			reply, text, thought, err := collect(t, m, userRequest("hi"))
			require.NoError(t, err)
			assert.Equal(t, "Hello!", reply.Text)
			assert.Equal(t, "Hello!", text, "the answer streams through OnText only")
			assert.Equal(t, "The user greets; greet back.", thought, "the thinking streams through OnReasoning only")
			assert.Equal(t, thought, reply.Reasoning)
			assert.Equal(t, "stop", reply.FinishReason)

			req := userRequest("again")
			req.ReasoningEffort = EffortLow
			_, _, _, err = collect(t, m, req)
			require.NoError(t, err)
			reqs := srv.Requests()
			assert.Equal(t, EffortHigh, reqs[0].ReasoningEffort, "the configured effort is sent")
			assert.Equal(t, EffortLow, reqs[1].ReasoningEffort, "a request's effort wins")
		})
	}
}

func TestModelNoEffortSentWhenUnset(t *testing.T) {
	srv := modeltest.StartT(t, &modeltest.Script{Turns: []modeltest.Turn{{Reply: modeltest.Reply{Text: "ok"}}}})
	m := testModel(t, srv)
	m.base = srv.URL
	_, _, _, err := collect(t, m, userRequest("hi"))
	require.NoError(t, err)
	assert.Empty(t, srv.Requests()[0].ReasoningEffort)
}

func TestModelUsageWithCachedTokens(t *testing.T) {
	srv := modeltest.StartT(t, &modeltest.Script{Turns: []modeltest.Turn{
		{Reply: modeltest.Reply{Text: "cached", Usage: &modeltest.Usage{PromptTokens: 1200, CompletionTokens: 7, CachedTokens: 1024}}},
	}})
	reply, _, _, err := collect(t, testModel(t, srv), userRequest("hi"))
	require.NoError(t, err)
	assert.Equal(t, ModelUsage{PromptTokens: 1200, CompletionTokens: 7, TotalTokens: 1207, CachedTokens: 1024}, reply.Usage)
}

func TestModelWholeReplyToAStream(t *testing.T) {
	srv := modeltest.StartT(t, &modeltest.Script{Turns: []modeltest.Turn{
		{Reply: modeltest.Reply{Whole: true, Reasoning: "think", ToolCalls: []modeltest.ToolCall{{ID: "c1", Name: "read_file", RawArguments: `{"path": "a.go"}`}}}},
	}})
	reply, _, thought, err := collect(t, testModel(t, srv), userRequest("read"))
	require.NoError(t, err)
	require.Len(t, reply.ToolCalls, 1)
	assert.Equal(t, `{"path": "a.go"}`, string(reply.ToolCalls[0].Args))
	assert.Equal(t, "think", thought)
	assert.Equal(t, "tool_calls", reply.FinishReason)
}

// TestModelToolArgumentsExact: the arguments string comes back byte for
// byte, through the stored form and into the next request.
func TestModelToolArgumentsExact(t *testing.T) {
	const raw = `{"command":  "go test ./... 2>&1 | tail -5",   "why": "<T> & \"x\" \u00e9"}`
	srv := modeltest.StartT(t, &modeltest.Script{Turns: []modeltest.Turn{
		{Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: "call_1", Name: "run_command", RawArguments: raw}}, Chunks: 7}},
		{Reply: modeltest.Reply{Text: "done"}},
	}})
	m := testModel(t, srv)
	reply, _, _, err := collect(t, m, userRequest("test it"))
	require.NoError(t, err)
	require.Len(t, reply.ToolCalls, 1)
	assert.Equal(t, raw, string(reply.ToolCalls[0].Args))

	stored, err := json.Marshal(Message{Role: RoleAssistant, ToolCalls: reply.ToolCalls})
	require.NoError(t, err)
	var back Message
	require.NoError(t, json.Unmarshal(stored, &back))
	assert.Equal(t, raw, string(back.ToolCalls[0].Args), "the stored form keeps the string")

	req := userRequest("test it")
	req.Messages = append(req.Messages, back, Message{Role: RoleTool, ToolCallID: "call_1", Content: "ok"})
	_, _, _, err = collect(t, m, req)
	require.NoError(t, err)
	sent := srv.Requests()[1].Messages[2].ToolCalls[0].Arguments
	assert.Equal(t, raw, sent, "the model gets back exactly what it wrote")
}

// TestModelReusesConnections: a finished stream leaves its connection for
// the next step; a new TLS handshake per step would cost every request.
func TestModelReusesConnections(t *testing.T) {
	srv := modeltest.StartT(t, &modeltest.Script{Turns: []modeltest.Turn{{Repeat: true, Reply: modeltest.Reply{Text: "again"}}}})
	m := testModel(t, srv)
	var reused []bool
	trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = append(reused, i.Reused) }}
	for range 3 {
		_, err := m.Complete(httptrace.WithClientTrace(context.Background(), trace), userRequest("hi"), ModelStream{})
		require.NoError(t, err)
	}
	assert.Equal(t, []bool{false, true, true}, reused)
}

func TestToolCallStoredForms(t *testing.T) {
	var c ToolCall
	require.NoError(t, json.Unmarshal([]byte(`{"id":"c","name":"grep","args":{"pattern":"a&b"}}`), &c))
	assert.Equal(t, `{"pattern":"a&b"}`, string(c.Args), "records written before exact arguments still load")

	c = ToolCall{ID: "c", Name: "grep", Args: json.RawMessage(`{"pattern": "a`)}
	b, err := json.Marshal(c)
	require.NoError(t, err, "arguments that are not JSON are stored too")
	var back ToolCall
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, c, back)
	assert.JSONEq(t, `"{\"pattern\": \"a"`, string(c.input()), "the editor is shown the string")
	assert.JSONEq(t, `{"a":1}`, string(ToolCall{Args: json.RawMessage(`{"a":1}`)}.input()))
}

// The bounds of TestModelFaults. A fault a timer must end (a stall, a
// trickle, no headers) runs with a short idle timeout or call bound; every
// other fault must end on its own, long before the generous ones end it.
const (
	faultIdle     = 300 * time.Millisecond
	faultCall     = 200 * time.Millisecond
	generousIdle  = 20 * time.Second
	generousCall  = 40 * time.Second
	faultDeadline = 60 * time.Second // collect's own: above every bound
)

// Which timer ends a fault: none (the fault itself), the idle timeout, or
// the call's bound.
const (
	endsItself = iota
	endsByIdle
	endsByCall
)

func TestModelFaults(t *testing.T) {
	big := `{"content":"` + strings.Repeat("x", maxArgsBytes) + `"}`
	huge := `{"content":"` + strings.Repeat("y", maxLineBytes) + `"}`
	for name, tc := range map[string]struct {
		reply modeltest.Reply
		ends  int
		want  string
		final bool // not worth a retry
	}{
		"index 1e9": {reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "read_file", Index: ptrInt(1_000_000_000)}}},
			want: "the model sent a tool call with index 1000000000 (a reply holds at most 64 calls)"},
		"negative index": {reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "read_file", Index: ptrInt(-1)}}},
			want: "index -1"},
		"arguments too large": {reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "write_file", RawArguments: big}}, Chunks: 4},
			want: "the model's arguments for tool call 0 grew past 8 MiB"},
		"line too long": {reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "write_file", RawArguments: huge}}, Chunks: 1},
			want: "the model sent a chunk longer than 16 MiB"},
		"stall after headers": {reply: modeltest.Reply{Stall: true}, ends: endsByIdle, want: "the model stopped sending for 300ms"},
		"trickle":             {reply: modeltest.Reply{TrickleMs: 20}, ends: endsByIdle, want: "the model stopped sending for 300ms"},
		"hang after text":     {reply: modeltest.Reply{Text: "partial", Hang: true}, ends: endsByIdle, want: "the model stopped sending for 300ms"},
		"no headers":          {reply: modeltest.Reply{DelayMs: 5000}, ends: endsByIdle, want: "the model's server did not answer for 300ms"},
		"call bound":          {reply: modeltest.Reply{TrickleMs: 10}, ends: endsByCall, want: "the model's answer took longer than 200ms"},
		"cut":                 {reply: modeltest.Reply{Text: "half an ans", Cut: true}, want: "the model's stream ended before the answer was complete (no finish reason, no [DONE])"},
		"abort":               {reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "read_file", RawArguments: `{"path":"a"}`}}, Abort: true}, want: "the connection to the model broke: unexpected EOF"},
		"cut in call":         {reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "read_file", RawArguments: `{"pa`}}, Cut: true}, want: "ended before the answer was complete"},
		"500":                 {reply: modeltest.Reply{Status: 500, Body: "upstream exploded"}, want: "500 Internal Server Error: upstream exploded"},
		"503 html":            {reply: modeltest.Reply{Status: 503, Body: "<html>busy</html>"}, want: "503 Service Unavailable"},
		"401":                 {reply: modeltest.Reply{Status: 401, Body: "bad key"}, want: "401 Unauthorized: bad key (check the API key)", final: true},
		"404":                 {reply: modeltest.Reply{Status: 404, Body: "no such model"}, want: "(check the base URL and the model name)", final: true},
		"400":                 {reply: modeltest.Reply{Status: 400, Body: "messages: bad role"}, want: "the model's server rejected the request: 400 Bad Request: messages: bad role", final: true},
		"garbage":             {reply: modeltest.Reply{Garbage: true}, want: "the model sent a malformed chunk"},
		"error chunk": {reply: modeltest.Reply{Text: "Hal", StreamError: "upstream provider timed out"},
			want: "the model's server reported an error mid-answer: upstream provider timed out"},
		"no events": {reply: modeltest.Reply{Cut: true}, want: `the model's server answered without a single event (Content-Type "text/event-stream")`},
		"empty":     {reply: modeltest.Reply{}, want: "the model returned an empty reply"},
		"length":    {reply: modeltest.Reply{FinishReason: "length"}, want: "ran out of output tokens"},
		"nameless":  {reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "", RawArguments: `{}`}}}, want: "the model sent tool call 0 without a name"},
		"same index, new id": {reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
			{Name: "read_file", Index: ptrInt(1), RawArguments: `{"path":"a"}`}, {Name: "grep", Index: ptrInt(1), RawArguments: `{"pattern":"b"}`}}}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// The generous bounds scale with the machine's load: a 16 MiB
			// line takes half a minute under -race at load 250. So does the
			// short idle timeout: at 300 ms the headers of a stall came
			// after it on a loaded machine, which read as no answer at all;
			// the messages name the idle timeout given, and a server that
			// must not answer waits longer than it.
			idle, call := await.Timeout(generousIdle), await.Timeout(generousCall)
			switch tc.ends {
			case endsByIdle:
				idle = await.Timeout(faultIdle).Round(time.Millisecond)
				tc.want = strings.ReplaceAll(tc.want, faultIdle.String(), idle.String())
				if tc.reply.DelayMs > 0 {
					tc.reply.DelayMs = int(idle.Milliseconds()) + 5000
				}
			case endsByCall:
				call = faultCall
			}
			srv := modeltest.StartT(t, &modeltest.Script{Turns: []modeltest.Turn{{Reply: tc.reply}}})
			m := testModel(t, srv, func(c *ModelConfig) { c.StreamIdleTimeout, c.CallTimeout = idle, call })
			ctx := await.Context(t, faultDeadline)
			start := time.Now()
			reply, err := m.Complete(ctx, userRequest("go"), ModelStream{})
			elapsed := time.Since(start)
			if tc.want == "" {
				// Two calls streamed as index 1 with different ids: two
				// calls, each with its arguments, and the gap at 0 dropped.
				require.NoError(t, err)
				require.Len(t, reply.ToolCalls, 2)
				assert.Equal(t, `{"path":"a"}`, string(reply.ToolCalls[0].Args))
				assert.Equal(t, "grep", reply.ToolCalls[1].Name)
				assert.Equal(t, `{"pattern":"b"}`, string(reply.ToolCalls[1].Args))
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, !tc.final, isRetryable(err), "retryable")
			// The fault ends the attempt promptly: by itself before either
			// timer could, or by its timer (not before it is due) before the
			// other one. The margins are the generous bounds, 60 times the
			// short ones, so a loaded machine does not fail them.
			switch tc.ends {
			case endsItself:
				assert.Less(t, elapsed, idle, "the fault ended the attempt, not a timer")
			case endsByIdle:
				assert.GreaterOrEqual(t, elapsed, idle, "the idle timeout is not due before it")
				assert.Less(t, elapsed, call, "the idle timeout ended the attempt, not the call's bound")
			case endsByCall:
				assert.GreaterOrEqual(t, elapsed, call, "the call's bound is not due before it")
				assert.Less(t, elapsed, idle, "the call's bound ended the attempt, not the idle timeout")
			}
		})
	}
}

func ptrInt(i int) *int { return &i }

func TestModelRetryAfter(t *testing.T) {
	srv := modeltest.StartT(t, &modeltest.Script{Turns: []modeltest.Turn{
		{Reply: modeltest.Reply{Status: 429, Body: "slow down", Headers: map[string]string{"Retry-After": "7"}}},
		{Reply: modeltest.Reply{Status: 503, Headers: map[string]string{"Retry-After": time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)}}},
	}})
	m := testModel(t, srv)
	_, _, _, err := collect(t, m, userRequest("a"))
	require.Error(t, err)
	assert.Equal(t, "429 Too Many Requests: slow down", err.Error())
	assert.Equal(t, 7*time.Second, retryWait(err))
	_, _, _, err = collect(t, m, userRequest("b"))
	require.Error(t, err)
	assert.InDelta(t, 90, retryWait(err).Seconds(), 2, "an HTTP date")
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"":                              0,
		"0":                             0,
		"-5":                            0,
		"3":                             3 * time.Second,
		"1.5":                           1500 * time.Millisecond,
		"soon":                          0,
		"Fri, 02 Jan 2026 03:05:05 GMT": time.Minute,
		"Fri, 02 Jan 2026 03:00:00 GMT": 0,
		"99999999999":                   1e6 * time.Second,
	} {
		assert.Equal(t, want, parseRetryAfter(v, now), v)
	}
}

func TestRetryDelay(t *testing.T) {
	assert.Equal(t, 7*time.Second, retryDelay(time.Second, 1, 7*time.Second, time.Minute), "the server's wait")
	assert.Equal(t, time.Minute, retryDelay(time.Second, 1, time.Hour, time.Minute), "capped")
	d := retryDelay(time.Second, 2, 0, time.Minute)
	assert.True(t, d >= 2*time.Second && d <= 2500*time.Millisecond, "backoff with jitter: %s", d)
	assert.Equal(t, 50*time.Millisecond, retryDelay(time.Second, 3, 0, 50*time.Millisecond), "backoff capped too")
}

func TestModelCancelIsNotAFailure(t *testing.T) {
	srv := modeltest.StartT(t, &modeltest.Script{Turns: []modeltest.Turn{{Reply: modeltest.Reply{Text: "never ending", Hang: true}}}})
	m := testModel(t, srv, func(c *ModelConfig) { c.StreamIdleTimeout = time.Minute })
	ctx, cancel := context.WithCancelCause(context.Background())
	got := make(chan error, 1)
	go func() {
		_, err := m.Complete(ctx, userRequest("go"), ModelStream{OnText: func(string) { cancel(errCancelled) }})
		got <- err
	}()
	err := await.Recv(t, "the cancel to end the call", 10*time.Second, got)
	assert.ErrorIs(t, err, errCancelled)
	assert.False(t, isRetryable(err))
}

func TestListModelsAndContextWindow(t *testing.T) {
	for name, tc := range map[string]struct {
		endpoint modeltest.Endpoint
		want     ContextWindowInfo
	}{
		"vllm models":   {modeltest.Endpoint{Models: []modeltest.ModelEntry{{ID: "other"}, {ID: "fake", MaxModelLen: 32768}}}, ContextWindowInfo{Tokens: 32768, Max: 32768, Source: "GET /models"}},
		"openrouter":    {modeltest.Endpoint{Models: []modeltest.ModelEntry{{ID: "fake", ContextLength: 200000}}}, ContextWindowInfo{Tokens: 200000, Max: 200000, Source: "GET /models"}},
		"llama.cpp":     {modeltest.Endpoint{PropsNCtx: 8192}, ContextWindowInfo{Tokens: 8192, Source: "llama.cpp /props"}},
		"ollama loaded": {modeltest.Endpoint{Models: []modeltest.ModelEntry{{ID: "fake"}}, OllamaLoaded: 4096, OllamaContextLength: 131072}, ContextWindowInfo{Tokens: 4096, Source: "ollama /api/ps"}},
		"ollama num_ctx": {modeltest.Endpoint{OllamaNumCtx: 16384, OllamaContextLength: 131072},
			ContextWindowInfo{Tokens: 16384, Max: 131072, Source: "ollama /api/show"}},
		"ollama default": {modeltest.Endpoint{OllamaContextLength: 131072}, ContextWindowInfo{Max: 131072, Source: "ollama /api/show"}},
		"says nothing":   {modeltest.Endpoint{}, ContextWindowInfo{}},
	} {
		t.Run(name, func(t *testing.T) {
			srv := modeltest.StartT(t, &modeltest.Script{Endpoint: &tc.endpoint})
			cfg := ModelConfig{BaseURL: srv.URL, Name: "fake"}
			info, err := ProbeContextWindow(context.Background(), cfg)
			assert.Equal(t, tc.want, info)
			if tc.want == (ContextWindowInfo{}) {
				assert.Error(t, err, "an endpoint that says nothing says why")
			}
		})
	}
	srv := modeltest.StartT(t, &modeltest.Script{Endpoint: &modeltest.Endpoint{Models: []modeltest.ModelEntry{{ID: "a"}, {ID: "b", ContextLength: 9}}}})
	models, err := ListModels(context.Background(), ModelConfig{BaseURL: srv.URL, Name: "a"})
	require.NoError(t, err)
	assert.Equal(t, []ModelInfo{{ID: "a", OwnedBy: "modeltest"}, {ID: "b", OwnedBy: "modeltest", ContextWindow: 9}}, models)
}

// TestAgentAsksTheContextWindow: a run's first step asks the endpoint for
// the window when none is configured, and compaction budgets for it.
func TestAgentAsksTheContextWindow(t *testing.T) {
	srv := modeltest.StartT(t, &modeltest.Script{Endpoint: &modeltest.Endpoint{PropsNCtx: 8192},
		Turns: []modeltest.Turn{{Repeat: true, Reply: modeltest.Reply{Text: "Hi."}}}})
	for _, configured := range []int{0, 5000} {
		finished := make(chan State, 1)
		a, err := New(Config{Root: t.TempDir(), StateDir: t.TempDir(),
			Model:    ModelConfig{BaseURL: srv.URL, Name: "fake", ContextWindow: configured},
			Listener: seqListener{onSeq: func(string, int64) {}, onEnd: func(st RunState) { finished <- st.State }}})
		require.NoError(t, err)
		assert.Equal(t, configured, a.ContextWindow(), "nothing asked before a run")
		_, err = a.Run(context.Background(), RunParams{Prompt: "hello"})
		require.NoError(t, err)
		assert.Equal(t, StateCompleted, await.Recv(t, "the run to finish", 10*time.Second, finished))
		want := 8192
		if configured > 0 {
			want = configured
		}
		assert.Equal(t, want, a.ContextWindow())
		a.Shutdown()
	}
}

// TestToolCallEncodingMatchesJSON: the hand-written encoding of a stored
// call decodes to exactly what it encoded, for every kind of character.
func TestToolCallEncodingMatchesJSON(t *testing.T) {
	for _, args := range []string{``, `{}`, "{\"a\":\"tab\\there\"}", "raw\ttab\nnewline\r\x00\x1f", `quote " backslash \ slash /`,
		"<T> & 2>&1 \u2028 \u00e9 日本 🎉", "invalid \xff utf-8"} {
		c := ToolCall{ID: "call \"1\"", Name: "n\\m", Args: json.RawMessage(args)}
		b, err := json.Marshal(c)
		require.NoError(t, err, args)
		var back ToolCall
		require.NoError(t, json.Unmarshal(b, &back), string(b))
		want := args
		if !utf8.ValidString(args) {
			want = strings.ToValidUTF8(args, "\uFFFD")
		}
		assert.Equal(t, want, string(back.Args))
		assert.Equal(t, c.ID, back.ID)
		assert.Equal(t, c.Name, back.Name)
	}
}
