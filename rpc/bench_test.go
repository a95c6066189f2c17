package rpc

import (
	"context"
	"encoding/json"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/rpc/wire"
)

type pipeRWC struct {
	r *os.File
	w *os.File
}

func (p pipeRWC) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p pipeRWC) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p pipeRWC) Close() error {
	p.r.Close()
	return p.w.Close()
}

// BenchmarkUpdatesThroughPipe sends agent/update notifications from a
// server stream to a client over real OS pipes and reports updates/s.
func BenchmarkUpdatesThroughPipe(b *testing.B) {
	r1, w1, _ := os.Pipe() // server → client
	r2, w2, _ := os.Pipe() // client → server (idle)
	server := newFramedConn(pipeRWC{r: r2, w: w1}, nil)
	conn := jsonrpc2.NewConn(server)
	var got atomic.Int64
	done := make(chan struct{})
	want := int64(b.N)
	client := NewClient(context.Background(), pipeRWC{r: r1, w: w2}, func(string, json.RawMessage) {
		if got.Add(1) == want {
			close(done)
		}
	})
	defer client.Close()
	params, _ := json.Marshal(agent.UpdateParams{RunID: "r_0123456789abcdef", SessionID: "s_0123456789abcdef", Seq: 1,
		Update: agent.Update{Kind: agent.UpdateMessageChunk, Text: "a streamed piece of the answer "}})
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if err := conn.Notify(context.Background(), wire.MethodUpdate, json.RawMessage(params)); err != nil {
			b.Fatal(err)
		}
	}
	<-done
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "updates/s")
}
