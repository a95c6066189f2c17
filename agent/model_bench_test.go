package agent

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// memTransport answers every request with the same event stream from
// memory, so the benchmark measures the client, not the network.
type memTransport struct{ body []byte }

func (m memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(bytes.NewReader(m.body)), Request: r}, nil
}

// sseBody is a reply of n text chunks as OpenAI streams it.
func sseBody(n int) []byte {
	var b strings.Builder
	b.WriteString(`data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n")
	for i := range n {
		fmt.Fprintf(&b, `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":"fp","choices":[{"index":0,"delta":{"content":"word%d "},"finish_reason":null}]}`+"\n\n", i%10)
	}
	b.WriteString(`data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n")
	b.WriteString(`data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":20,"total_tokens":30}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return []byte(b.String())
}

// BenchmarkStreamChunk is the client's cost per streamed chunk: reading the
// line, decoding the chunk, the runaway guard and the idle watchdog.
func BenchmarkStreamChunk(b *testing.B) {
	const n = 1000
	m := newOpenAIModel(ModelConfig{BaseURL: "http://model.invalid/v1", Name: "m"})
	m.client.Transport = memTransport{sseBody(n)}
	req := ModelRequest{Messages: []Message{{Role: RoleUser, Content: "hi"}}}
	b.ReportAllocs()
	for b.Loop() {
		r, err := m.Complete(context.Background(), req, ModelStream{})
		if err != nil || r.Text == "" {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/chunk")
}
