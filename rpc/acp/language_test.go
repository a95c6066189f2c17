package acp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/tools"
	"github.com/agentd/agentd/tools/lsp"
	"github.com/agentd/agentd/tools/lsp/lsptest"
)

const brokenGoScript = `{"turns": [
  {"name": "read", "match": {"lastUser": "rename"}, "reply": {"toolCalls": [
    {"id": "call_r", "name": "read_file", "arguments": {"path": "main.go"}}]}},
  {"name": "edit", "match": {"afterTool": "read_file"}, "reply": {"toolCalls": [
    {"id": "call_e", "name": "edit_file", "arguments": {"path": "main.go", "old_string": "return Total(items)", "new_string": "return Totl(items)"}}]}},
  {"name": "done", "match": {"afterTool": "edit_file", "lastTool": "undefined: Totl"}, "reply": {"text": "gopls says Totl is undefined."}},
  {"name": "blind", "match": {"afterTool": "edit_file"}, "reply": {"text": "no diagnostics"}}
]}`

// TestOwnLanguageServerOverACP: an ACP editor answers no language
// request, so agentd's own gopls checks the reply's edit; the model reads
// the error and the editor sees it under the edit.
func TestOwnLanguageServerOverACP(t *testing.T) {
	servers := lsptest.Install(t)
	ws := t.TempDir()
	for name, content := range map[string]string{
		"go.mod":  "module shop\n\ngo 1.22\n",
		"cart.go": "package shop\n\nfunc Total(items []int) int { return len(items) }\n",
		"main.go": "package shop\n\nfunc Checkout(items []int) int {\n\treturn Total(items) * 2\n}\n",
	} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h := start(t, config{stateDir: t.TempDir(), modelURL: script(t, brokenGoScript), policy: tools.ModeAutoEdit,
		languageServers:    lsp.Settings{Auto: true, Servers: map[string]lsp.ServerSetting{"go": {Command: []string{servers.GoplsPath()}}}},
		diagnosticsTimeout: 60 * time.Second})
	id := h.newSession(ws)
	if stop := h.prompt(id, "rename Total"); stop != acpsdk.StopReasonEndTurn {
		t.Fatalf("stop reason %q", stop)
	}
	if got := h.client.text(id); got != "gopls says Totl is undefined." {
		t.Fatalf("the model did not read the diagnostics: %q", got)
	}
	for _, u := range h.client.of(id) {
		if tc := u.ToolCall; tc != nil && tc.ToolCallId == "call_e/diagnostics" {
			if len(tc.Content) != 1 || tc.Content[0].Content == nil || !strings.Contains(tc.Content[0].Content.Content.Text.Text, "main.go:4:9: error: undefined: Totl") {
				t.Fatalf("diagnostics shown: %+v", tc.Content)
			}
			return
		}
	}
	t.Fatal("no diagnostics under the edit")
}
