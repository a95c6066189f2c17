package acp

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/tools"
	"github.com/agentd/agentd/tools/mcp/mcptest"
)

// TestSessionMCPServers: the MCP servers a client passes in session/new
// give the model their tools; a call asks (with what the server claims),
// runs the real server with the environment the client gave, and its
// result reaches the model; /mcp shows the server.
func TestSessionMCPServers(t *testing.T) {
	model := modeltest.StartT(t, &modeltest.Script{Turns: []modeltest.Turn{
		{Name: "env", Match: modeltest.Match{LastUser: "which"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
			{ID: "call_env", Name: "mcp__test__env", Arguments: json.RawMessage(`{"name":"GIVEN"}`)}}}},
		{Name: "answer", Match: modeltest.Match{AfterTool: "mcp__test__env"}, Reply: modeltest.Reply{Text: "It is acp."}},
	}})
	h := start(t, config{stateDir: t.TempDir(), modelURL: model.URL})
	waitFor(t, "initialize to offer HTTP MCP servers", func() bool {
		return strings.Contains(h.out.String(), `"mcpCapabilities":{"http":true`)
	})
	resp, err := h.conn.NewSession(h.ctx(), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{
		{Stdio: &acpsdk.McpServerStdio{Name: "test", Command: mcptest.Server(t), Args: []string{},
			Env: []acpsdk.EnvVariable{{Name: "GIVEN", Value: "acp"}}}},
		{Sse: &acpsdk.McpServerSseInline{Name: "old", Type: "sse", Url: "http://127.0.0.1:1/sse", Headers: []acpsdk.HttpHeader{}}},
	}})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	id := resp.SessionId
	h.client.setPermission(func(acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
		return selected(tools.AllowOnce)
	})
	if stop := h.prompt(id, "which value did the editor give?"); stop != acpsdk.StopReasonEndTurn {
		t.Fatalf("stop reason %q", stop)
	}
	req := <-h.client.asked
	if req.ToolCall.Title == nil || *req.ToolCall.Title != "Call test: env" {
		t.Fatalf("permission title %v", req.ToolCall.Title)
	}
	var shown []string
	for _, c := range req.ToolCall.Content {
		if c.Content != nil && c.Content.Content.Text != nil {
			shown = append(shown, c.Content.Content.Text.Text)
		}
	}
	if joined := strings.Join(shown, "\n"); !strings.Contains(joined, "The tool env of the MCP server test") ||
		!strings.Contains(joined, `mcp__test__env {"name":"GIVEN"}`) {
		t.Fatalf("the permission shows %q", joined)
	}
	reqs := model.Requests()
	if !slices.Contains(reqs[0].Tools, "mcp__test__echo") || slices.ContainsFunc(reqs[0].Tools, func(s string) bool { return strings.HasPrefix(s, "mcp__old__") }) {
		t.Fatalf("tools offered: %v", reqs[0].Tools)
	}
	if last := reqs[1].Last(); last.Content != "GIVEN=acp" {
		t.Fatalf("the model read %q", last.Content)
	}
	h.prompt(id, "/mcp")
	if got := h.client.text(id); !strings.Contains(got, "**test** (session, stdio): connected") || !strings.Contains(got, "`mcp__test__echo` — says: read-only") {
		t.Fatalf("/mcp says %q", got)
	}
}
