package modeltest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Plain testing, not testify: testify v1.12 needs a go.sum entry for
// go.yaml.in/yaml/v3 that this module does not have.

const testModel = "test-model"

func client(s *Server) *openai.Client {
	cfg := openai.DefaultConfig("test-key")
	cfg.BaseURL = s.URL
	return openai.NewClientWithConfig(cfg)
}

func mustParse(t *testing.T, script string) *Script {
	t.Helper()
	s, err := ParseScript([]byte(script))
	if err != nil {
		t.Fatalf("parse script: %v", err)
	}
	return s
}

func userRequest(text string) openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{
		Model: testModel,
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: "You are agentd."},
			{Role: openai.ChatMessageRoleUser, Content: text},
		},
	}
}

var askUserTool = openai.Tool{
	Type: openai.ToolTypeFunction,
	Function: &openai.FunctionDefinition{
		Name:       "ask_user",
		Parameters: json.RawMessage(`{"type":"object","properties":{"question":{"type":"string"}}}`),
	},
}

func assertPlayedOut(t *testing.T, s *Server) {
	t.Helper()
	if unused := s.Unused(); len(unused) > 0 {
		t.Errorf("turns not played: %v", unused)
	}
	if err := s.Err(); err != nil {
		t.Errorf("unmatched requests: %v", err)
	}
}

// streamed is what a client makes of a whole stream.
type streamed struct {
	text      string
	pieces    int
	calls     []openai.ToolCall
	deltas    map[int]int // tool call deltas per index
	finish    openai.FinishReason
	usage     *openai.Usage
	lastEmpty bool // the usage chunk carried no choices
}

// readStream accumulates a stream the way agentd must: content appended,
// tool call deltas merged by index.
func readStream(t *testing.T, stream *openai.ChatCompletionStream) streamed {
	t.Helper()
	out := streamed{deltas: map[int]int{}}
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("recv: %v", err)
		}
		if chunk.Object != "chat.completion.chunk" || chunk.Model != testModel {
			t.Errorf("chunk object %q model %q", chunk.Object, chunk.Model)
		}
		if chunk.Usage != nil {
			out.usage = chunk.Usage
			out.lastEmpty = len(chunk.Choices) == 0
		}
		for _, c := range chunk.Choices {
			if c.Delta.Content != "" {
				out.text += c.Delta.Content
				out.pieces++
			}
			for _, d := range c.Delta.ToolCalls {
				if d.Index == nil {
					t.Fatalf("tool call delta without index: %+v", d)
				}
				i := *d.Index
				out.deltas[i]++
				for len(out.calls) <= i {
					out.calls = append(out.calls, openai.ToolCall{})
				}
				call := &out.calls[i]
				if d.ID != "" {
					call.ID = d.ID
				}
				if d.Type != "" {
					call.Type = d.Type
				}
				call.Function.Name += d.Function.Name
				call.Function.Arguments += d.Function.Arguments
			}
			if c.FinishReason != "" {
				out.finish = c.FinishReason
			}
		}
	}
}

func TestStreamText(t *testing.T) {
	s := StartT(t, mustParse(t, `{"turns":[
		{"name":"greet","match":{"lastUser":"hello"},"reply":{"text":"Hi! How can I help?","chunks":4}}]}`))
	req := userRequest("hello there")
	req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	stream, err := client(s).CreateChatCompletionStream(t.Context(), req)
	if err != nil {
		t.Fatalf("create stream: %v", err)
	}
	defer stream.Close()
	got := readStream(t, stream)

	if got.text != "Hi! How can I help?" || got.pieces != 4 {
		t.Errorf("text %q in %d pieces, want 4 pieces", got.text, got.pieces)
	}
	if got.finish != openai.FinishReasonStop {
		t.Errorf("finish reason %q", got.finish)
	}
	if got.usage == nil || got.usage.PromptTokens == 0 || got.usage.CompletionTokens == 0 ||
		got.usage.TotalTokens != got.usage.PromptTokens+got.usage.CompletionTokens || !got.lastEmpty {
		t.Errorf("usage %+v (in a chunk without choices: %v)", got.usage, got.lastEmpty)
	}
	reqs := s.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests recorded", len(reqs))
	}
	r := reqs[0]
	if !r.Stream || !r.IncludeUsage || r.Model != testModel || r.Turn != "greet" || r.TurnIndex != 0 {
		t.Errorf("recorded %+v", r)
	}
	want := []Message{{Role: "system", Content: "You are agentd."}, {Role: "user", Content: "hello there"}}
	if !reflect.DeepEqual(r.Messages, want) {
		t.Errorf("messages %+v", r.Messages)
	}
	assertPlayedOut(t, s)
}

func TestStreamWithoutUsage(t *testing.T) {
	s := StartT(t, &Script{Turns: []Turn{{Reply: Reply{Text: "héllo wörld ✓"}}}})
	stream, err := client(s).CreateChatCompletionStream(t.Context(), userRequest("x"))
	if err != nil {
		t.Fatalf("create stream: %v", err)
	}
	defer stream.Close()
	got := readStream(t, stream)
	// Split on runes, so multi-byte characters arrive whole.
	if got.text != "héllo wörld ✓" || got.pieces != 3 || got.usage != nil {
		t.Errorf("text %q in %d pieces, usage %+v", got.text, got.pieces, got.usage)
	}
}

func TestStreamParallelToolCalls(t *testing.T) {
	s := StartT(t, mustParse(t, `{"turns":[{"reply":{"chunks":4,"toolCalls":[
		{"id":"call_a","name":"read_file","arguments":{"path":"cart.go","offset":10}},
		{"id":"call_b","name":"grep","arguments":{"pattern":"func Total","glob":"**/*.go"}},
		{"name":"list_dir","rawArguments":"{\"path\": "}]}}]}`))
	req := userRequest("look around")
	req.Tools = []openai.Tool{askUserTool}
	stream, err := client(s).CreateChatCompletionStream(t.Context(), req)
	if err != nil {
		t.Fatalf("create stream: %v", err)
	}
	defer stream.Close()
	got := readStream(t, stream)

	if got.finish != openai.FinishReasonToolCalls || got.text != "" {
		t.Errorf("finish %q text %q", got.finish, got.text)
	}
	want := []openai.ToolCall{
		{ID: "call_a", Type: "function", Function: openai.FunctionCall{Name: "read_file", Arguments: `{"path":"cart.go","offset":10}`}},
		{ID: "call_b", Type: "function", Function: openai.FunctionCall{Name: "grep", Arguments: `{"pattern":"func Total","glob":"**/*.go"}`}},
		{ID: "call_0_2", Type: "function", Function: openai.FunctionCall{Name: "list_dir", Arguments: `{"path": `}},
	}
	if !reflect.DeepEqual(got.calls, want) {
		t.Errorf("calls\n got %+v\nwant %+v", got.calls, want)
	}
	for i := range want {
		// One delta with id and name, then the arguments in four pieces.
		if got.deltas[i] != 5 {
			t.Errorf("call %d came in %d deltas, want 5", i, got.deltas[i])
		}
	}
	if r := s.Requests()[0]; !reflect.DeepEqual(r.Tools, []string{"ask_user"}) {
		t.Errorf("tools offered %v", r.Tools)
	}
}

func TestNonStreamToolCalls(t *testing.T) {
	s := StartT(t, &Script{Turns: []Turn{
		{Reply: Reply{ToolCalls: []ToolCall{
			{ID: "call_1", Name: "ask_user", Arguments: Args(map[string]any{"question": "Which colour?", "options": []string{"red", "blue"}})},
			{ID: "call_2", Name: "list_dir"},
		}}},
		{Reply: Reply{Text: "plain", Usage: &Usage{PromptTokens: 7, CompletionTokens: 2}, FinishReason: "length"}},
	}})
	c := client(s)
	resp, err := c.CreateChatCompletion(t.Context(), userRequest("colour?"))
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if len(resp.Choices) != 1 {
		t.Fatalf("%d choices", len(resp.Choices))
	}
	ch := resp.Choices[0]
	if ch.FinishReason != openai.FinishReasonToolCalls || ch.Message.Role != "assistant" || ch.Message.Content != "" {
		t.Errorf("choice %+v", ch)
	}
	want := []openai.ToolCall{
		{ID: "call_1", Type: "function", Function: openai.FunctionCall{Name: "ask_user", Arguments: `{"options":["red","blue"],"question":"Which colour?"}`}},
		{ID: "call_2", Type: "function", Function: openai.FunctionCall{Name: "list_dir", Arguments: `{}`}},
	}
	if !reflect.DeepEqual(ch.Message.ToolCalls, want) {
		t.Errorf("calls\n got %+v\nwant %+v", ch.Message.ToolCalls, want)
	}
	if resp.Usage.PromptTokens == 0 || resp.Usage.CompletionTokens == 0 || resp.Object != "chat.completion" {
		t.Errorf("response %+v", resp)
	}
	if s.Requests()[0].Stream {
		t.Error("recorded as streaming")
	}

	resp, err = c.CreateChatCompletion(t.Context(), userRequest("again"))
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if got := resp.Choices[0]; got.Message.Content != "plain" || got.FinishReason != openai.FinishReasonLength {
		t.Errorf("choice %+v", got)
	}
	if resp.Usage != (openai.Usage{PromptTokens: 7, CompletionTokens: 2, TotalTokens: 9}) {
		t.Errorf("usage %+v", resp.Usage)
	}
	assertPlayedOut(t, s)
}

func TestStatusTimesThenSuccess(t *testing.T) {
	s := StartT(t, mustParse(t, `{"turns":[
		{"name":"flaky","reply":{"status":500,"body":"upstream exploded","times":2}},
		{"reply":{"status":429,"body":"{\"error\":{\"message\":\"slow down\",\"type\":\"requests\"}}","headers":{"Retry-After":"1"}}},
		{"reply":{"text":"finally"}}]}`))
	c := client(s)
	for i := range 2 {
		_, err := c.CreateChatCompletionStream(t.Context(), userRequest("x"))
		var apiErr *openai.APIError
		if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 500 || apiErr.Message != "upstream exploded" {
			t.Fatalf("attempt %d: error %v, want APIError 500", i, err)
		}
		if i == 0 && !slicesEqual(s.Unused(), []string{"flaky", "#1", "#2"}) {
			t.Errorf("after one error unused %v", s.Unused())
		}
	}
	_, err := c.CreateChatCompletion(t.Context(), userRequest("x"))
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 429 || apiErr.Message != "slow down" {
		t.Fatalf("error %v, want APIError 429", err)
	}
	resp, err := c.CreateChatCompletion(t.Context(), userRequest("x"))
	if err != nil || resp.Choices[0].Message.Content != "finally" {
		t.Fatalf("third answer %+v, %v", resp, err)
	}
	assertPlayedOut(t, s)
}

func slicesEqual(a, b []string) bool { return reflect.DeepEqual(a, b) }

func TestGarbage(t *testing.T) {
	s := StartT(t, &Script{Turns: []Turn{{Reply: Reply{Garbage: true}}, {Reply: Reply{Garbage: true}}}})
	c := client(s)

	stream, err := c.CreateChatCompletionStream(t.Context(), userRequest("x"))
	if err != nil {
		t.Fatalf("create stream: %v", err)
	}
	defer stream.Close()
	_, err = stream.Recv()
	if err == nil || errors.Is(err, io.EOF) {
		t.Errorf("stream garbage: recv error %v, want a parse error", err)
	}

	_, err = c.CreateChatCompletion(t.Context(), userRequest("x"))
	if err == nil {
		t.Error("non-stream garbage: no error")
	}
	assertPlayedOut(t, s)
}

func TestHangThenCancel(t *testing.T) {
	s := StartT(t, mustParse(t, `{"turns":[{"reply":{"text":"never finishes","hang":true,"chunks":2}}]}`))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stream, err := client(s).CreateChatCompletionStream(ctx, userRequest("x"))
	if err != nil {
		t.Fatalf("create stream: %v", err)
	}
	defer stream.Close()
	var text string
	for text != "never finishes" {
		chunk, err := stream.Recv()
		if err != nil {
			t.Fatalf("recv after %q: %v", text, err)
		}
		text += chunk.Choices[0].Delta.Content
	}
	errc := make(chan error, 1)
	go func() {
		_, err := stream.Recv()
		errc <- err
	}()
	select {
	case err := <-errc:
		t.Fatalf("recv returned %v before cancel", err)
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	select {
	case err := <-errc:
		if err == nil || errors.Is(err, io.EOF) {
			t.Errorf("recv after cancel: %v, want an error", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("recv did not return after cancel")
	}
}

func TestCloseEndsHangAndDelay(t *testing.T) {
	s := Start(&Script{Turns: []Turn{
		{Reply: Reply{Hang: true}},
		{Reply: Reply{Text: "late", DelayMs: 60_000}},
	}})
	c := client(s)
	done := make(chan struct{}, 2)
	for _, text := range []string{"x", "y"} {
		go func() {
			_, _ = c.CreateChatCompletion(context.Background(), userRequest(text))
			done <- struct{}{}
		}()
	}
	// Both are being answered once both are recorded.
	deadline := time.Now().Add(2 * time.Second)
	for len(s.Requests()) < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	begin := time.Now()
	s.Close()
	for range 2 {
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			t.Fatal("request still blocked after Close")
		}
	}
	if d := time.Since(begin); d > time.Second {
		t.Errorf("Close took %v", d)
	}
	s.Close() // twice is fine
}

func TestDelayRespectsCancel(t *testing.T) {
	s := StartT(t, &Script{Turns: []Turn{{Reply: Reply{Text: "slow", DelayMs: 50}}, {Reply: Reply{Text: "never", DelayMs: 60_000}}}})
	c := client(s)
	begin := time.Now()
	resp, err := c.CreateChatCompletion(t.Context(), userRequest("x"))
	if err != nil || resp.Choices[0].Message.Content != "slow" || time.Since(begin) < 50*time.Millisecond {
		t.Fatalf("delayed answer %+v, %v after %v", resp, err, time.Since(begin))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	begin = time.Now()
	_, err = c.CreateChatCompletion(ctx, userRequest("x"))
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(begin) > 2*time.Second {
		t.Errorf("error %v after %v, want deadline exceeded promptly", err, time.Since(begin))
	}
}

// askUserConversation is the request after the user answered an ask_user
// call with answer; the assistant also made a parallel read_file call.
func askUserConversation(answer string) openai.ChatCompletionRequest {
	req := userRequest("pick a colour")
	req.Tools = []openai.Tool{askUserTool}
	req.Messages = append(req.Messages,
		openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{
			{ID: "call_r", Type: "function", Function: openai.FunctionCall{Name: "read_file", Arguments: `{"path":"a"}`}},
			{ID: "call_q", Type: "function", Function: openai.FunctionCall{Name: "ask_user", Arguments: `{"question":"Which colour?"}`}},
		}},
		openai.ChatCompletionMessage{Role: "tool", ToolCallID: "call_r", Content: "contents of a"},
		openai.ChatCompletionMessage{Role: "tool", ToolCallID: "call_q", Content: answer},
	)
	return req
}

func TestMatchRules(t *testing.T) {
	s := StartT(t, mustParse(t, `{"turns":[
		{"name":"red","match":{"afterTool":"ask_user","lastTool":"red"},"reply":{"text":"You chose red."}},
		{"name":"blue","match":{"afterTool":"ask_user","lastTool":"blue","minToolResults":2},"reply":{"text":"You chose blue."}},
		{"name":"ask","match":{"lastUser":"colour","hasTools":true},"reply":{"toolCalls":[
			{"id":"call_q","name":"ask_user","arguments":{"question":"Which colour?","options":["red","blue"]}}]}},
		{"name":"ping","repeat":true,"match":{"lastUser":"ping"},"reply":{"text":"pong"}}]}`))
	c := client(s)
	ask := func(req openai.ChatCompletionRequest) string {
		t.Helper()
		resp, err := c.CreateChatCompletion(t.Context(), req)
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		m := resp.Choices[0].Message
		if len(m.ToolCalls) > 0 {
			return "call " + m.ToolCalls[0].Function.Name
		}
		return m.Content
	}

	// The red and blue turns come first in the file but need a tool result.
	req := userRequest("pick a colour")
	req.Tools = []openai.Tool{askUserTool}
	if got := ask(req); got != "call ask_user" {
		t.Errorf("first answer %q", got)
	}
	if got := ask(askUserConversation("blue")); got != "You chose blue." {
		t.Errorf("after blue %q", got)
	}
	for range 3 {
		if got := ask(userRequest("ping")); got != "pong" {
			t.Errorf("ping answered %q", got)
		}
	}
	if got := s.Unused(); !slicesEqual(got, []string{"red"}) {
		t.Errorf("unused %v, want [red]", got)
	}
	var turns []string
	for _, r := range s.Requests() {
		turns = append(turns, r.Turn)
	}
	if want := []string{"ask", "blue", "ping", "ping", "ping"}; !slicesEqual(turns, want) {
		t.Errorf("turns %v, want %v", turns, want)
	}
	// The tool messages were recorded with their call ids.
	r := s.Requests()[1]
	if last := r.Last(); last.Role != "tool" || last.ToolCallID != "call_q" || last.Content != "blue" {
		t.Errorf("last message %+v", last)
	}
	if calls := r.Messages[2].ToolCalls; len(calls) != 2 || calls[1] != (MessageToolCall{ID: "call_q", Name: "ask_user", Arguments: `{"question":"Which colour?"}`}) {
		t.Errorf("assistant calls %+v", calls)
	}
}

func TestMatchHolds(t *testing.T) {
	conv := []Message{
		{Role: "system", Content: "You are agentd. Mode: ask."},
		{Role: "user", Content: "first"},
		{Role: "assistant", Content: "ok"},
		{Role: "user", Content: "fix the bug"},
		{Role: "assistant", ToolCalls: []MessageToolCall{{ID: "c1", Name: "grep"}, {ID: "c2", Name: "read_file"}}},
		{Role: "tool", ToolCallID: "c1", Content: "cart.go:12"},
		{Role: "tool", ToolCallID: "c2", Content: "package cart"},
	}
	cases := []struct {
		name  string
		match Match
		tools bool
		want  bool
	}{
		{"empty", Match{}, false, true},
		{"lastUser", Match{LastUser: "the bug"}, false, true},
		{"lastUser earlier message", Match{LastUser: "first"}, false, false},
		{"lastTool", Match{LastTool: "package"}, false, true},
		{"lastTool earlier result", Match{LastTool: "cart.go"}, false, false},
		{"afterTool", Match{AfterTool: "read_file"}, false, true},
		{"afterTool other call", Match{AfterTool: "grep"}, false, false},
		{"system", Match{System: "Mode: ask"}, false, true},
		{"system absent", Match{System: "Mode: full-auto"}, false, false},
		{"hasTools", Match{HasTools: Bool(true)}, true, true},
		{"hasTools false", Match{HasTools: Bool(false)}, true, false},
		{"anyMessage", Match{AnyMessage: "cart.go:12"}, false, true},
		{"anyMessage absent", Match{AnyMessage: "nowhere"}, false, false},
		{"minToolResults", Match{MinToolResults: 2}, false, true},
		{"minToolResults too many", Match{MinToolResults: 3}, false, false},
		{"all", Match{LastUser: "bug", AfterTool: "read_file", MinToolResults: 1, HasTools: Bool(true)}, true, true},
	}
	for _, c := range cases {
		if got := c.match.holds(conv, c.tools); got != c.want {
			t.Errorf("%s: holds %v, want %v", c.name, got, c.want)
		}
	}
	if (Match{AfterTool: "grep"}).holds(conv[:6], false) != true {
		t.Error("afterTool grep on the first result")
	}
	if (Match{LastUser: "x"}).holds(nil, false) || !(Match{MinToolResults: 0}).holds(nil, false) {
		t.Error("no messages")
	}
}

func TestNoMatch(t *testing.T) {
	s := Start(&Script{Turns: []Turn{{Name: "only", Match: Match{LastUser: "hello"}, Reply: Reply{Text: "hi"}}}})
	defer s.Close()
	_, err := client(s).CreateChatCompletionStream(t.Context(), userRequest("goodbye"))
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 500 || apiErr.Type != "server_error" ||
		!strings.Contains(apiErr.Message, "fakemodel: no scripted turn matches") || !strings.Contains(apiErr.Message, `"goodbye"`) {
		t.Fatalf("error %v, want a 500 naming the last message", err)
	}
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "goodbye") {
		t.Errorf("Err() = %v", err)
	}
	r := s.Requests()[0]
	if r.TurnIndex != -1 || r.Turn != "" || r.Error == "" {
		t.Errorf("recorded %+v", r)
	}
	if !slicesEqual(s.Unused(), []string{"only"}) {
		t.Errorf("unused %v", s.Unused())
	}
}

func TestHTTPControl(t *testing.T) {
	// Start, not StartT: the bad request below is meant to go unanswered.
	s := Start(nil)
	defer s.Close()
	root := strings.TrimSuffix(s.URL, "/v1")
	post := func(url, body string) *http.Response {
		t.Helper()
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatalf("post: %v", err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	getJSON := func(url string, v any) {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("get %s: %s", url, resp.Status)
		}
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("decode %s: %v", url, err)
		}
	}

	if resp := post(root+"/_turns", `[{"name":"a","reply":{"text":"one"}},{"name":"b","reply":{"text":"two"}}]`); resp.StatusCode != 200 {
		t.Fatalf("append: %s", resp.Status)
	}
	if resp := post(s.URL+"/_turns", `{"turns":[{"name":"c","reply":{"txet":"typo"}}]}`); resp.StatusCode != 400 {
		t.Errorf("bad turns answered %s", resp.Status)
	}
	var unused []string
	getJSON(root+"/_unused", &unused)
	if !slicesEqual(unused, []string{"a", "b"}) {
		t.Errorf("unused %v", unused)
	}
	var models struct {
		Data []struct{ ID string } `json:"data"`
	}
	getJSON(s.URL+"/models", &models)
	if len(models.Data) != 1 || models.Data[0].ID != "fakemodel" {
		t.Errorf("models before any request %+v", models)
	}

	if _, err := client(s).CreateChatCompletion(t.Context(), userRequest("x")); err != nil {
		t.Fatalf("create: %v", err)
	}
	s.Append(Turn{Name: "d", Reply: Reply{Text: "four"}})
	getJSON(s.URL+"/_unused", &unused)
	if !slicesEqual(unused, []string{"b", "d"}) {
		t.Errorf("unused %v", unused)
	}
	var reqs []Request
	getJSON(root+"/_requests", &reqs)
	if len(reqs) != 1 || reqs[0].Turn != "a" || reqs[0].Last().Content != "x" {
		t.Errorf("requests %+v", reqs)
	}
	list, err := client(s).ListModels(t.Context())
	if err != nil || len(list.Models) != 1 || list.Models[0].ID != testModel {
		t.Errorf("models %+v, %v", list, err)
	}

	resp := post(s.URL+"/chat/completions", `not json`)
	if resp.StatusCode != 400 {
		t.Errorf("bad request answered %s", resp.Status)
	}
	if s.Err() == nil {
		t.Error("bad request not recorded as an error")
	}
}

func TestParseScriptErrors(t *testing.T) {
	for name, script := range map[string]string{
		"unknown field":      `{"turns":[{"match":{"lastUsr":"x"},"reply":{"text":"y"}}]}`,
		"status not error":   `{"turns":[{"reply":{"status":200}}]}`,
		"tool without name":  `{"turns":[{"reply":{"toolCalls":[{"id":"c"}]}}]}`,
		"both argument kind": `{"turns":[{"reply":{"toolCalls":[{"name":"n","arguments":{},"rawArguments":"{"}]}}]}`,
		"negative times":     `{"turns":[{"reply":{"status":500,"times":-1}}]}`,
		"trailing data":      `{"turns":[]} {}`,
		"not json":           `turns:`,
	} {
		if _, err := ParseScript([]byte(script)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestTestdataScripts(t *testing.T) {
	paths, err := filepath.Glob("../../testdata/models/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, p := range paths {
		if _, err := LoadScript(p); err != nil {
			t.Errorf("%v", err)
		}
	}
}
