// Command mcpserver is the small MCP server agentd's tests build and run
// as a real process: on stdio (the default) or on streamable HTTP
// (-http 127.0.0.1:0, which prints "listening on URL" to stdout). Its
// tools exercise what the client must handle: a plain result, an error
// result, a crash in the middle of a call, a question (elicitation), a new
// tool announced at run time, a slow call, and what the sandbox allows.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type textArgs struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

type pathArgs struct {
	Path string `json:"path" jsonschema:"a file path"`
}

type addrArgs struct {
	Addr string `json:"addr" jsonschema:"host:port to dial"`
}

type sleepArgs struct {
	Ms int `json:"ms" jsonschema:"milliseconds to sleep"`
}

type nameArgs struct {
	Name string `json:"name" jsonschema:"an environment variable"`
}

type sizeArgs struct {
	Bytes int `json:"bytes" jsonschema:"how many bytes of text to answer"`
}

type none struct{}

func main() {
	httpAddr := flag.String("http", "", "serve streamable HTTP on this address instead of stdio")
	startDelay := flag.Duration("start-delay", 0, "wait this long before serving")
	failStart := flag.String("fail", "", "print this to stderr and exit 2 at start")
	starts := flag.String("starts", "", "append a line to this file at every start")
	flag.IntVar(&manyTools, "many", 0, "offer this many more tools (many0001 …), the first with a 1 MiB schema")
	flag.Parse()
	if *starts != "" {
		if f, err := os.OpenFile(*starts, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintln(f, os.Getpid())
			f.Close()
		}
	}
	if *failStart != "" {
		fmt.Fprintln(os.Stderr, *failStart)
		os.Exit(2)
	}
	time.Sleep(*startDelay)
	if *httpAddr != "" {
		serveHTTP(*httpAddr)
		return
	}
	if err := newServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil && !errors.Is(err, context.Canceled) {
		log.Fatal(err)
	}
}

func serveHTTP(addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	srv := newServer()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", requireHeader(h))
	mux.HandleFunc("/exit", func(http.ResponseWriter, *http.Request) { os.Exit(0) })
	fmt.Printf("listening on http://%s/mcp\n", ln.Addr())
	log.Fatal(http.Serve(ln, mux))
}

// requireHeader refuses requests without X-Test-Token when the server was
// started with TEST_TOKEN set: the client's configured headers must arrive.
func requireHeader(h http.Handler) http.Handler {
	want := os.Getenv("TEST_TOKEN")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if want != "" && r.Header.Get("X-Test-Token") != want {
			http.Error(w, "missing X-Test-Token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// manyTools is how many more tools the server offers (-many).
var manyTools int

func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "mcpserver", Version: "1"}, nil)
	for i := 1; i <= manyTools; i++ {
		schema := map[string]any{"type": "object", "properties": map[string]any{}}
		if i == 1 {
			schema["description"] = strings.Repeat("x", 1<<20)
		}
		s.AddTool(&mcp.Tool{Name: fmt.Sprintf("many%04d", i), Description: "One of many.", InputSchema: schema},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("many"), nil })
	}
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text back.", Annotations: readOnly},
		func(_ context.Context, _ *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
			return text("echo: " + a.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always fails."},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			return nil, nil, errors.New("this tool always fails")
		})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Exits the server in the middle of the call."},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "crashing on purpose")
			os.Exit(3)
			return nil, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "sleep", Description: "Sleeps."},
		func(ctx context.Context, _ *mcp.CallToolRequest, a sleepArgs) (*mcp.CallToolResult, any, error) {
			select {
			case <-time.After(time.Duration(a.Ms) * time.Millisecond):
				return text("slept"), nil, nil
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		})
	mcp.AddTool(s, &mcp.Tool{Name: "flood", Description: "Answers that many bytes of text."},
		func(_ context.Context, _ *mcp.CallToolRequest, a sizeArgs) (*mcp.CallToolResult, any, error) {
			return text(strings.Repeat("a", a.Bytes)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "env", Description: "Reads an environment variable."},
		func(_ context.Context, _ *mcp.CallToolRequest, a nameArgs) (*mcp.CallToolResult, any, error) {
			return text(a.Name + "=" + os.Getenv(a.Name)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "write", Description: "Writes a file; says whether it could."},
		func(_ context.Context, _ *mcp.CallToolRequest, a pathArgs) (*mcp.CallToolResult, any, error) {
			if err := os.WriteFile(a.Path, []byte("written by mcpserver\n"), 0o644); err != nil {
				return text("write failed: " + err.Error()), nil, nil
			}
			return text("wrote " + a.Path), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "read", Description: "Reads a file; says whether it could."},
		func(_ context.Context, _ *mcp.CallToolRequest, a pathArgs) (*mcp.CallToolResult, any, error) {
			data, err := os.ReadFile(a.Path)
			if err != nil {
				return text("read failed: " + err.Error()), nil, nil
			}
			return text("read: " + string(data)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "dial", Description: "Dials a TCP address; says whether it could."},
		func(_ context.Context, _ *mcp.CallToolRequest, a addrArgs) (*mcp.CallToolResult, any, error) {
			c, err := net.DialTimeout("tcp", a.Addr, 2*time.Second)
			if err != nil {
				return text("dial failed: " + err.Error()), nil, nil
			}
			c.Close()
			return text("dialed " + a.Addr), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "state", Description: "Writes a file in the server's state directory."},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			p := filepath.Join(os.Getenv("AGENTD_MCP_STATE_DIR"), "note")
			if err := os.WriteFile(p, []byte("kept"), 0o644); err != nil {
				return text("state failed: " + err.Error()), nil, nil
			}
			return text("state kept in " + p), nil, nil
		})
	// ask uses multi round-trip requests (SEP-2322): it returns its
	// question, and is called again with the answer. The SDK asks older
	// clients with elicitation/create itself.
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Description: "Asks the user for a name and a color."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			resp, ok := req.Params.InputResponses["who"].(*mcp.ElicitResult)
			if !ok {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"who": &mcp.ElicitParams{Message: "Who is asking?",
					RequestedSchema: map[string]any{
						"type": "object",
						"properties": map[string]any{
							"name":  map[string]any{"type": "string", "title": "Name", "description": "your name"},
							"color": map[string]any{"type": "string", "title": "Color", "enum": []string{"red", "blue"}},
							"age":   map[string]any{"type": "integer", "title": "Age", "default": 30},
						},
						"required": []string{"name", "color"},
					}}}}, nil, nil
			}
			if resp.Action != "accept" {
				return text("the user did not answer: " + resp.Action), nil, nil
			}
			return text(fmt.Sprintf("name=%v color=%v age=%v", resp.Content["name"], resp.Content["color"], resp.Content["age"])), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "login", Description: "Asks the user for an API token (which servers should not)."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			resp, ok := req.Params.InputResponses["cred"].(*mcp.ElicitResult)
			if !ok {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"cred": &mcp.ElicitParams{Message: "Log in",
					RequestedSchema: map[string]any{
						"type":       "object",
						"properties": map[string]any{"api_token": map[string]any{"type": "string", "title": "API token"}},
						"required":   []string{"api_token"},
					}}}}, nil, nil
			}
			if resp.Action != "accept" {
				return text("not logged in: " + resp.Action), nil, nil
			}
			return text(fmt.Sprintf("logged in with a token of %d characters", len(fmt.Sprint(resp.Content["api_token"])))), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "grow", Description: "Adds the tool 'late' and announces it."},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			mcp.AddTool(s, &mcp.Tool{Name: "late", Description: "A tool added at run time."},
				func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
					return text("late tool"), nil, nil
				})
			return text("added late"), nil, nil
		})
	return s
}
