package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

func startBridge(t *testing.T) (string, *openai.Client) {
	t.Helper()
	dir := t.TempDir()
	b := &bridge{dir: dir, poll: 10 * time.Millisecond, logf: t.Logf}
	srv := httptest.NewServer(b.handler())
	t.Cleanup(srv.Close)
	cfg := openai.DefaultConfig("x")
	cfg.BaseURL = srv.URL + "/v1"
	return dir, openai.NewClientWithConfig(cfg)
}

// awaitFile waits, with a deadline, for a file to appear and returns it.
func awaitFile(t *testing.T, path string) []byte {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, err := os.ReadFile(path)
		if err == nil {
			return data
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared: %v", path, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// writeReply writes a reply as a player should: to a temporary name, then
// renamed into place.
func writeReply(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path+".tmp", []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}

func request(stream bool) openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{
		Model:  "bridge",
		Stream: stream,
		Messages: []openai.ChatCompletionMessage{
			{Role: "system", Content: "You are a tester. <html> & \"quotes\" stay as sent."},
			{Role: "user", Content: "Fix it."},
		},
		Tools: []openai.Tool{{Type: "function", Function: &openai.FunctionDefinition{
			Name: "read_file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`),
		}}},
	}
}

// The request file holds the request's bytes, only indented; a streamed
// reply comes back whole through an independent client, text and tool calls
// (arguments as an object and as a raw string) with ids and finish reason.
func TestStreamedReply(t *testing.T) {
	dir, client := startBridge(t)
	type result struct {
		msg    openai.ChatCompletionMessage
		finish openai.FinishReason
		err    error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() { done <- r }()
		s, err := client.CreateChatCompletionStream(context.Background(), request(true))
		if err != nil {
			r.err = err
			return
		}
		defer s.Close()
		var text strings.Builder
		calls := map[int]*openai.ToolCall{}
		for {
			chunk, err := s.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				r.err = err
				return
			}
			for _, c := range chunk.Choices {
				text.WriteString(c.Delta.Content)
				if c.FinishReason != "" {
					r.finish = c.FinishReason
				}
				for _, d := range c.Delta.ToolCalls {
					call, ok := calls[*d.Index]
					if !ok {
						call = &openai.ToolCall{}
						calls[*d.Index] = call
					}
					call.ID += d.ID
					call.Function.Name += d.Function.Name
					call.Function.Arguments += d.Function.Arguments
				}
			}
		}
		r.msg.Content = text.String()
		for i := range len(calls) {
			r.msg.ToolCalls = append(r.msg.ToolCalls, *calls[i])
		}
	}()

	got := awaitFile(t, filepath.Join(dir, "001.request.json"))
	var compact bytes.Buffer
	if err := json.Compact(&compact, got); err != nil {
		t.Fatalf("request file is not JSON: %v\n%s", err, got)
	}
	if !strings.Contains(compact.String(), `"content":"You are a tester. \u003chtml\u003e \u0026 \"quotes\" stay as sent."`) {
		t.Errorf("request file changed the strings it was sent:\n%s", got)
	}
	if !bytes.Contains(got, []byte("\n  \"model\": \"bridge\"")) {
		t.Errorf("request file is not indented:\n%s", got)
	}

	writeReply(t, filepath.Join(dir, "001.reply.json"),
		`{"content": "Reading it.", "tool_calls": [{"name": "read_file", "arguments": {"path": "a.go"}}, {"name": "run_cmd", "arguments": "{\"command\": \"go te"}]}`)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.msg.Content != "Reading it." || r.finish != openai.FinishReasonToolCalls {
		t.Errorf("content %q finish %q", r.msg.Content, r.finish)
	}
	if len(r.msg.ToolCalls) != 2 {
		t.Fatalf("tool calls: %+v", r.msg.ToolCalls)
	}
	first, second := r.msg.ToolCalls[0], r.msg.ToolCalls[1]
	if first.ID != "call_001_0" || first.Function.Name != "read_file" || first.Function.Arguments != `{"path":"a.go"}` {
		t.Errorf("first call: %+v", first)
	}
	if second.ID != "call_001_1" || second.Function.Arguments != `{"command": "go te` {
		t.Errorf("second call keeps raw arguments: %+v", second)
	}
}

// A reply that does not parse is set aside and the bridge waits for the
// next; a request without streaming gets one JSON body.
func TestWholeReplyAfterBadOne(t *testing.T) {
	dir, client := startBridge(t)
	type result struct {
		resp openai.ChatCompletionResponse
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := client.CreateChatCompletion(context.Background(), request(false))
		done <- result{resp, err}
	}()
	awaitFile(t, filepath.Join(dir, "001.request.json"))
	reply := filepath.Join(dir, "001.reply.json")
	writeReply(t, reply, `{"text": "wrong field"}`)
	awaitFile(t, reply+".bad")
	writeReply(t, reply, `{"content": "All done."}`)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if len(r.resp.Choices) != 1 || r.resp.Choices[0].Message.Content != "All done." || r.resp.Choices[0].FinishReason != openai.FinishReasonStop {
		t.Errorf("response: %+v", r.resp)
	}
	if r.resp.Usage.PromptTokens == 0 {
		t.Errorf("no usage: %+v", r.resp.Usage)
	}
}

func TestModels(t *testing.T) {
	_, client := startBridge(t)
	list, err := client.ListModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Models) != 1 || list.Models[0].ID != "bridge" {
		t.Errorf("models: %+v", list.Models)
	}
}
