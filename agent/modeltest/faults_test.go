package modeltest

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The fault replies, read as raw bytes off the wire: what a client gets is
// exactly the fault named, and nothing more.

// chat posts a streaming request and returns the response.
func chat(t *testing.T, ctx context.Context, s *Server, user string) *http.Response {
	t.Helper()
	body := `{"model":"m","stream":true,"stream_options":{"include_usage":true},"reasoning_effort":"low","messages":[{"role":"user","content":` +
		string(mustJSON(t, user)) + `}]}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("post: %v", err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// dataLines reads a whole stream's data payloads.
func dataLines(t *testing.T, r io.Reader) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if p, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, p)
		}
	}
	return out
}

func TestStallSendsHeadersOnly(t *testing.T) {
	s := StartT(t, &Script{Turns: []Turn{{Reply: Reply{Stall: true}}}})
	ctx, cancel := context.WithCancel(t.Context())
	resp := chat(t, ctx, s, "hi")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stall answered %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	got := make(chan int, 1)
	go func() {
		n, _ := io.Copy(io.Discard, resp.Body)
		got <- int(n)
	}()
	select {
	case n := <-got:
		t.Fatalf("the stall ended by itself after %d bytes", n)
	case <-time.After(200 * time.Millisecond):
	}
	cancel()
	if n := <-got; n != 0 {
		t.Errorf("a stall sent %d bytes of body", n)
	}
}

func TestTrickleSendsCommentBytes(t *testing.T) {
	s := StartT(t, &Script{Turns: []Turn{{Reply: Reply{TrickleMs: 5}}}})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	resp := chat(t, ctx, s, "hi")
	buf := make([]byte, 40)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatalf("read: %v", err)
	}
	for _, line := range strings.Split(string(buf), "\n")[:3] {
		if line != ": keep-alive" {
			t.Errorf("trickled line %q, want a comment", line)
		}
	}
}

func TestCutEndsWithoutFinishOrDone(t *testing.T) {
	s := StartT(t, &Script{Turns: []Turn{{Reply: Reply{Text: "half", Cut: true,
		ToolCalls: []ToolCall{{Name: "read_file", RawArguments: `{"pa`}}}}}})
	lines := dataLines(t, chat(t, t.Context(), s, "hi").Body)
	if len(lines) == 0 {
		t.Fatal("no data")
	}
	for _, l := range lines {
		if l == "[DONE]" || strings.Contains(l, `"finish_reason":"`) || strings.Contains(l, `"usage"`) {
			t.Errorf("a cut stream sent %s", l)
		}
	}
	if !strings.Contains(strings.Join(lines, ""), `"name":"read_file"`) {
		t.Errorf("the call's start was not sent: %v", lines)
	}
}

func TestReasoningIndexAndCachedTokens(t *testing.T) {
	big := 1_000_000_000
	s := StartT(t, &Script{Turns: []Turn{
		{Reply: Reply{Reasoning: "thinking", Text: "ok", Chunks: 1, Usage: &Usage{PromptTokens: 10, CompletionTokens: 2, CachedTokens: 8}}},
		{Reply: Reply{Reasoning: "more", ReasoningField: "reasoning", ToolCalls: []ToolCall{{Name: "x", Index: &big}}, Chunks: 1}},
	}})
	first := strings.Join(dataLines(t, chat(t, t.Context(), s, "a").Body), "\n")
	for _, want := range []string{`"reasoning_content":"thinking"`, `"content":"ok"`, `"prompt_tokens_details":{"cached_tokens":8}`, "[DONE]"} {
		if !strings.Contains(first, want) {
			t.Errorf("stream lacks %s:\n%s", want, first)
		}
	}
	second := strings.Join(dataLines(t, chat(t, t.Context(), s, "b").Body), "\n")
	for _, want := range []string{`"reasoning":"more"`, `"index":1000000000`} {
		if !strings.Contains(second, want) {
			t.Errorf("stream lacks %s:\n%s", want, second)
		}
	}
	if strings.Contains(second, "reasoning_content") {
		t.Error("reasoningField reasoning sent reasoning_content too")
	}
	if got := s.Requests()[0].ReasoningEffort; got != "low" {
		t.Errorf("reasoning effort recorded %q", got)
	}
}

func TestWholeAnswerToAStream(t *testing.T) {
	s := StartT(t, &Script{Turns: []Turn{{Reply: Reply{Whole: true, Text: "all at once"}}}})
	resp := chat(t, t.Context(), s, "hi")
	var c wireCompletion
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("not a whole completion: %v", err)
	}
	if *c.Choices[0].Message.Content != "all at once" {
		t.Errorf("content %q", *c.Choices[0].Message.Content)
	}
}

func TestEndpointRoutes(t *testing.T) {
	s := StartT(t, &Script{Endpoint: &Endpoint{Models: []ModelEntry{{ID: "m", MaxModelLen: 4096}},
		PropsNCtx: 2048, OllamaNumCtx: 8192, OllamaContextLength: 32768, OllamaLoaded: 1024}})
	root := strings.TrimSuffix(s.URL, "/v1")
	get := func(method, url, body string) string {
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s %s: %s %s", method, url, resp.Status, b)
		}
		return string(b)
	}
	for url, want := range map[string]string{
		s.URL + "/models": `"max_model_len":4096`,
		root + "/props":   `"n_ctx":2048`,
		root + "/api/ps":  `"context_length":1024`,
	} {
		if got := get(http.MethodGet, url, ""); !strings.Contains(got, want) {
			t.Errorf("%s: %s lacks %s", url, got, want)
		}
	}
	show := get(http.MethodPost, root+"/api/show", `{"model":"m"}`)
	if !strings.Contains(show, `num_ctx 8192`) || !strings.Contains(show, `"llama.context_length":32768`) {
		t.Errorf("/api/show: %s", show)
	}

	bare := StartT(t, nil)
	resp, err := http.Get(strings.TrimSuffix(bare.URL, "/v1") + "/props")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("/props without an endpoint answered %s", resp.Status)
	}
}

func TestChaosFailsWithoutTakingTurns(t *testing.T) {
	s := StartT(t, &Script{Turns: []Turn{{Repeat: true, Reply: Reply{Text: "fine"}}},
		Chaos: &Chaos{Seed: 7, Status500: 0.2, Status429: 0.2, RetryAfter: "2", Cut: 0.2}})
	kinds := map[string]int{}
	for range 100 {
		resp := chat(t, t.Context(), s, "hi")
		switch resp.StatusCode {
		case 429:
			if resp.Header.Get("Retry-After") != "2" {
				t.Errorf("429 with Retry-After %q", resp.Header.Get("Retry-After"))
			}
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	for _, r := range s.Requests() {
		kinds[r.Turn]++
	}
	for _, k := range []string{"chaos:500", "chaos:429", "chaos:cut", "#0"} {
		if kinds[k] < 5 {
			t.Errorf("%s answered %d of 100: %v", k, kinds[k], kinds)
		}
	}
	if len(s.Unused()) != 0 {
		t.Errorf("unused %v", s.Unused())
	}
}

func TestParseFaultFields(t *testing.T) {
	for name, script := range map[string]string{
		"trickle negative": `{"turns":[{"reply":{"trickleMs":-1}}]}`,
		"two faults":       `{"turns":[{"reply":{"stall":true,"cut":true}}]}`,
		"reasoning field":  `{"turns":[{"reply":{"reasoning":"x","reasoningField":"thoughts"}}]}`,
		"chaos over 1":     `{"turns":[],"chaos":{"status500":0.7,"stall":0.6}}`,
		"endpoint typo":    `{"turns":[],"endpoint":{"propNCtx":1}}`,
	} {
		if _, err := ParseScript([]byte(script)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	ok := `{"turns":[{"reply":{"text":"a","reasoning":"b","reasoningField":"reasoning","usage":{"prompt_tokens":1,"completion_tokens":1,"cached_tokens":1},
		"toolCalls":[{"name":"n","index":3}]}},{"reply":{"trickleMs":10}},{"reply":{"whole":true,"text":"w"}}],
		"endpoint":{"models":[{"id":"m","context_length":9}],"propsNCtx":1},"chaos":{"seed":1,"status429":0.5,"retryAfter":"1"}}`
	if _, err := ParseScript([]byte(ok)); err != nil {
		t.Errorf("a script with every new field: %v", err)
	}
}

// TestClientScripts: the scripts the editor clients' tests serve still
// parse.
func TestClientScripts(t *testing.T) {
	paths, err := filepath.Glob("../../editor-clients/*/test/models/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, p := range paths {
		if _, err := LoadScript(p); err != nil {
			t.Errorf("%v", err)
		}
	}
}
