package acp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/tools"
)

const subagentScript = `{"turns": [
  {"name": "parent done", "match": {"lastUser": "survey the cart", "minToolResults": 2}, "reply": {"text": "Totals are in cart.go; made.txt is made."}},
  {"name": "parent", "match": {"lastUser": "survey the cart"}, "reply": {"toolCalls": [
    {"id": "call_cart", "name": "task", "arguments": {"description": "Find the cart total", "prompt": "Find where the cart total is computed, and ask which currency."}},
    {"id": "call_make", "name": "task", "arguments": {"description": "Make a file", "prompt": "Create made.txt.", "tools": ["run_cmd"]}}]}},
  {"name": "cart done", "match": {"lastUser": "cart total is computed", "afterTool": "ask_user"}, "reply": {"text": "Total is in cart.go; EUR."}},
  {"name": "cart asks", "match": {"lastUser": "cart total is computed", "afterTool": "read_file"}, "reply": {"toolCalls": [
    {"id": "call_2", "name": "ask_user", "arguments": {"question": "Which currency?"}}]}},
  {"name": "cart", "match": {"lastUser": "cart total is computed"}, "reply": {"toolCalls": [
    {"id": "call_1", "name": "read_file", "arguments": {"path": "cart.go"}}]}},
  {"name": "make done", "match": {"lastUser": "Create made.txt", "afterTool": "run_cmd"}, "reply": {"text": "Made it."}},
  {"name": "make", "match": {"lastUser": "Create made.txt"}, "reply": {"toolCalls": [
    {"id": "call_1", "name": "run_cmd", "arguments": {"command": "touch made.txt"}}]}}
]}`

// Subagents over ACP: their tool calls are the session's, scoped by the
// task call and labelled with the subagent, with _meta naming the task; the
// permission one of them needs names its call and the subagent; the
// question another asks goes into the chat labelled, and the next prompt
// answers it.
func TestSubagentsInACP(t *testing.T) {
	h := start(t, config{stateDir: t.TempDir(), modelURL: script(t, subagentScript), policy: tools.ModeAsk})
	h.client.setPermission(func(acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
		return selected(tools.AllowOnce)
	})
	cwd := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "cart.go"), []byte("package cart\n\nfunc Total() int { return 0 }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := h.newSession(cwd)
	if stop := h.prompt(id, "survey the cart"); stop != acpsdk.StopReasonEndTurn {
		t.Fatalf("stop reason %q", stop)
	}
	if got := h.client.text(id); !strings.Contains(got, "Subagent “Find the cart total” asks: Question") || !strings.Contains(got, "Which currency?") {
		t.Fatalf("the subagent's question in the chat: %q", got)
	}
	perm := <-h.client.asked
	if perm.ToolCall.ToolCallId != "call_make/call_1" || perm.ToolCall.Title == nil || !strings.HasPrefix(*perm.ToolCall.Title, "[Make a file] ") {
		t.Fatalf("the subagent's permission: %+v (title %v)", perm.ToolCall, *perm.ToolCall.Title)
	}
	h.prompt(id, "EUR")
	if got := h.client.text(id); !strings.HasSuffix(got, "Totals are in cart.go; made.txt is made.") {
		t.Fatalf("the parent's answer: %q", got)
	}
	if _, err := os.Stat(filepath.Join(cwd, "made.txt")); err != nil {
		t.Fatalf("the approved command did not run: %v", err)
	}

	calls := map[string]*acpsdk.SessionUpdateToolCall{}
	for _, u := range h.client.of(id) {
		if u.ToolCall != nil {
			calls[string(u.ToolCall.ToolCallId)] = u.ToolCall
		}
	}
	read := calls["call_cart/call_1"]
	if read == nil || read.Title != "[Find the cart total] read cart.go" || read.Kind != acpsdk.ToolKindRead {
		t.Fatalf("the subagent's read: %+v (calls %v)", read, keys(calls))
	}
	meta, _ := read.Meta["agentd"].(map[string]any)
	if meta["parentToolCallId"] != "call_cart" {
		t.Fatalf("the read's _meta: %v", read.Meta)
	}
	if task := calls["call_cart"]; task == nil || task.Title != "Subagent: Find the cart total" || task.Meta["agentd"] == nil {
		t.Fatalf("the task call: %+v", task)
	}
	if calls["call_make/call_1"] == nil || calls["call_1"] != nil {
		t.Fatalf("the subagents' ids are scoped by their task: %v", keys(calls))
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
