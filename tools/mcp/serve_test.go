package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/rag"
	"github.com/agentd/agentd/tools/mcp/mcptest"
)

var (
	agentdOnce sync.Once
	agentdPath string
	agentdErr  error
)

// agentdBinary builds agentd once per test process.
func agentdBinary(t *testing.T) string {
	t.Helper()
	agentdOnce.Do(func() {
		dir, err := os.MkdirTemp("", "agentd-bin")
		if err != nil {
			agentdErr = err
			return
		}
		agentdPath = filepath.Join(dir, "agentd")
		if out, err := exec.Command("go", "build", "-o", agentdPath, "github.com/agentd/agentd/cmd/agentd").CombinedOutput(); err != nil {
			agentdErr = err
			agentdPath = string(out)
		}
	})
	if agentdErr != nil {
		t.Fatalf("go build agentd: %v\n%s", agentdErr, agentdPath)
	}
	return agentdPath
}

// indexedWorkspace is a small workspace for `agentd mcp` to serve.
func indexedWorkspace(t *testing.T) (root string, env []string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	files := map[string]string{
		"cart/cart.go": "package cart\n\n// Total sums the prices of the cart's items.\nfunc Total(items []Item) int {\n\tsum := 0\n\tfor _, it := range items {\n\t\tsum += it.Price\n\t}\n\treturn sum\n}\n\n// Item is one thing in the cart.\ntype Item struct {\n\tName  string\n\tPrice int\n}\n\nfunc (i Item) String() string { return i.Name }\n",
		"README.md":    "# Shop\n\nA shop.\n\n## Cart\n\nThe cart totals prices.\n",
		"notes.txt":    "unrelated notes about gardening\n",
	}
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	home := t.TempDir()
	return root, append(os.Environ(), "AGENTD_STATE_DIR="+t.TempDir(), "HOME="+home, "XDG_CONFIG_HOME="+home)
}

// TestAgentdMCPWithTheSDKClient: `agentd mcp` answers the Go SDK's client
// on stdio: its two tools, a search ranked as `agentd search` ranks, a
// file's outline, and refusals the model reads.
func TestAgentdMCPWithTheSDKClient(t *testing.T) {
	root, env := indexedWorkspace(t)
	cmd := exec.Command(agentdBinary(t), "mcp", root)
	cmd.Env = env
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcpsdk.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	defer cs.Close()
	assert.Contains(t, cs.InitializeResult().Instructions, root)

	tls, err := listTools(ctx, cs, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	require.Len(t, tls, 2)
	assert.Equal(t, "outline", tls[0].Name)
	assert.Equal(t, "search", tls[1].Name)
	assert.True(t, tls[1].Annotations.ReadOnlyHint)

	res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "search", Arguments: map[string]any{"query": "where are the cart prices summed", "limit": 3}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%v", res.Content)
	text := res.Content[0].(*mcpsdk.TextContent).Text
	assert.True(t, strings.HasPrefix(text, "cart/cart.go  (strong 1.00)\n  1-"), text)
	data, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var sr SearchResult
	require.NoError(t, json.Unmarshal(data, &sr))
	require.NotEmpty(t, sr.Hits)
	assert.Equal(t, "cart/cart.go", sr.Hits[0].Path)
	assert.Contains(t, sr.Hits[0].Chunks[0].Symbol, "Total")

	res, err = cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "outline", Arguments: map[string]any{"path": "cart/cart.go"}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	data, _ = json.Marshal(res.StructuredContent)
	var or OutlineResult
	require.NoError(t, json.Unmarshal(data, &or))
	assert.Equal(t, []rag.Symbol{{Name: "Total", Kind: "func", StartLine: 4, EndLine: 10}, {Name: "Item", Kind: "type", StartLine: 13, EndLine: 16},
		{Name: "Item.String", Kind: "method", StartLine: 18, EndLine: 18}}, or.Symbols)
	assert.Equal(t, "4-10  func Total\n13-16  type Item\n18-18  method Item.String\n", res.Content[0].(*mcpsdk.TextContent).Text)

	// A named pipe a command left, and a link out: refused at once.
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "pipe.go"), 0o644))
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(root, "link.go")))
	for args, want := range map[string]string{
		`{"path": "pipe.go"}`:       "cannot be read",
		`{"path": "link.go"}`:       "cannot be read",
		`{"path": "../outside.go"}`: "cannot be read",
		`{"path": "missing.go"}`:    "does not exist",
		`{"path": "cart"}`:          "is a directory",
		`{"path": "/etc/passwd"}`:   "outside the workspace",
	} {
		res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "outline", Arguments: json.RawMessage(args)})
		require.NoError(t, err)
		assert.True(t, res.IsError, args)
		assert.Contains(t, res.Content[0].(*mcpsdk.TextContent).Text, want, args)
	}
	res, err = cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "search", Arguments: map[string]any{"query": "  "}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	res, err = cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "search", Arguments: map[string]any{"query": "quantum chromodynamics"}})
	require.NoError(t, err)
	assert.Contains(t, res.Content[0].(*mcpsdk.TextContent).Text, "Nothing matched")
}

// TestAgentdMCPWithTheInspector: the MCP Inspector's command-line client
// (from npm) lists `agentd mcp`'s tools and calls search.
func TestAgentdMCPWithTheInspector(t *testing.T) {
	cli := mcptest.InspectorCLI(t)
	root, env := indexedWorkspace(t)
	run := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "node", append([]string{cli, "--cli", agentdBinary(t), "mcp", root}, args...)...)
		cmd.Env = env
		out, err := cmd.Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("inspector %v: %v\n%s\n%s", args, err, out, ee.Stderr)
		}
		require.NoError(t, err)
		return string(out)
	}
	var list struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal([]byte(run("--method", "tools/list")), &list))
	require.Len(t, list.Tools, 2)
	assert.Equal(t, "outline", list.Tools[0].Name)
	assert.Equal(t, "search", list.Tools[1].Name)

	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent SearchResult `json:"structuredContent"`
		IsError           bool         `json:"isError"`
	}
	require.NoError(t, json.Unmarshal([]byte(run("--method", "tools/call", "--tool-name", "search", "--tool-arg", "query=cart total prices")), &res))
	assert.False(t, res.IsError)
	require.NotEmpty(t, res.StructuredContent.Hits)
	assert.Equal(t, "cart/cart.go", res.StructuredContent.Hits[0].Path)
}
