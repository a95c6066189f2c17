package mcp

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/tools"
	"github.com/agentd/agentd/tools/mcp/mcptest"
)

// The cost of an MCP server to agentd, on this machine (compare ratios
// within one run):
//
//	go test ./tools/mcp -run '^$' -bench . -benchtime 20x -count 3
//
// BenchmarkStartup: from nothing to a connected server with its tools
// listed (spawn, the MCP handshake, tools/list), unconfined and in the
// read sandbox; the small Go server and the published Node one.
// BenchmarkCall: one tools/call of echo through agentd's client (the
// tools.Tool a run calls) against the SDK's client calling the same
// server directly.

func benchServers(b *testing.B) map[string]Server {
	out := map[string]Server{"go": {Name: "bench", Command: mcptest.Server(b)}}
	if _, err := exec.LookPath("npm"); err == nil {
		script := mcptest.EverythingScript(b)
		out["node"] = Server{Name: "bench", Command: "node", Args: []string{script, "stdio"}, Read: []string{mcptest.NPM(b)}}
	}
	return out
}

func BenchmarkStartup(b *testing.B) {
	root := b.TempDir()
	for _, name := range []string{"go", "node"} {
		srv, ok := benchServers(b)[name]
		if !ok {
			continue
		}
		for _, profile := range []string{"full", "read"} {
			b.Run(name+"/"+profile, func(b *testing.B) {
				s := srv
				s.Sandbox = profile
				m := NewManager(Options{Root: root, StateDir: b.TempDir()})
				defer m.Close()
				for b.Loop() {
					c := newConn(m, s)
					<-c.start(true)
					if st := c.status(); st.State != StateConnected {
						b.Fatalf("%s: %s", st.State, st.Error)
					}
					c.stop()
				}
			})
		}
	}
}

func BenchmarkCall(b *testing.B) {
	root := b.TempDir()
	args := json.RawMessage(`{"text":"hi"}`)
	b.Run("direct", func(b *testing.B) {
		ctx := context.Background()
		cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "bench", Version: "1"}, nil).
			Connect(ctx, &mcpsdk.CommandTransport{Command: exec.Command(mcptest.Server(b))}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		for b.Loop() {
			if _, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "echo", Arguments: args}); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, profile := range []string{"full", "read"} {
		b.Run("agentd/"+profile, func(b *testing.B) {
			m := NewManager(Options{Root: root, StateDir: b.TempDir(),
				User: []Server{{Name: "bench", Command: mcptest.Server(b), Sandbox: profile, Origin: OriginUser}}})
			defer m.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var echo tools.Tool
			for _, t := range m.Tools(ctx, m.Servers("")) {
				if t.Info().Name == "mcp__bench__echo" {
					echo = t
				}
			}
			if echo == nil {
				b.Fatal("no echo tool")
			}
			env := &tools.Env{Root: root}
			for b.Loop() {
				c, refusal := tools.Prepare(ctx, echo, env, args)
				if refusal != nil {
					b.Fatal(refusal.Output)
				}
				if res, err := c.Run(ctx); err != nil || res.IsError {
					b.Fatal(err, res.Output)
				}
			}
		})
	}
}
