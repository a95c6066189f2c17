package acp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/tools"
)

const undoScript = `{"turns": [
  {"name": "make", "match": {"lastUser": "make files"}, "reply": {"toolCalls": [
    {"id": "call_m", "name": "run_cmd", "arguments": {"command": "echo one > f.txt && echo x > x.txt"}}]}},
  {"name": "made", "match": {"lastUser": "make files", "afterTool": "run_cmd"}, "reply": {"text": "Made."}},
  {"name": "more", "match": {"lastUser": "more please"}, "reply": {"toolCalls": [
    {"id": "call_o", "name": "run_cmd", "arguments": {"command": "echo two >> f.txt"}}]}},
  {"name": "mored", "match": {"lastUser": "more please", "afterTool": "run_cmd"}, "reply": {"text": "More."}},
  {"name": "fresh", "match": {"lastUser": "after the rewind"}, "reply": {"text": "Fresh start."}}
]}`

// /undo undoes the last turn's command; /rewind 2 goes back two turns,
// asking about a file the user changed since (here: leave it), and the next
// prompt continues from before them.
func TestUndoAndRewindCommands(t *testing.T) {
	s, err := modeltest.ParseScript([]byte(undoScript))
	if err != nil {
		t.Fatal(err)
	}
	model := modeltest.StartT(t, s)
	h := start(t, config{stateDir: t.TempDir(), modelURL: model.URL, policy: tools.ModeFullAuto})
	ws := mustReal(t, t.TempDir())
	id := h.newSession(ws)
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(ws, name))
		if err != nil {
			return "(absent)"
		}
		return string(b)
	}

	h.prompt(id, "make files")
	h.prompt(id, "more please")
	if got := read("f.txt"); got != "one\ntwo\n" {
		t.Fatalf("f.txt = %q", got)
	}
	h.prompt(id, "/checkpoints")
	if got := h.client.text(id); !strings.Contains(got, "**c1** run_cmd") || !strings.Contains(got, "**c2** run_cmd `echo two >> f.txt`") {
		t.Fatalf("/checkpoints: %q", got)
	}

	h.prompt(id, "/undo")
	if got := read("f.txt"); got != "one\n" {
		t.Fatalf("after /undo f.txt = %q", got)
	}
	if got := h.client.text(id); !strings.Contains(got, "Undid c2") || !strings.Contains(got, "`/undo c3` brings the files back") {
		t.Fatalf("/undo said %q", got)
	}

	if err := os.WriteFile(filepath.Join(ws, "x.txt"), []byte("the user's x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.client.setPermission(func(p acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
		return selected("skip")
	})
	h.prompt(id, "/rewind 2")
	req := <-h.client.asked
	if !strings.Contains(*req.ToolCall.Title, "Rewind: 1 file(s) changed") || len(req.Options) != 3 || len(req.ToolCall.Content) < 2 {
		t.Fatalf("the conflict was asked as %+v", req)
	}
	if got := read("f.txt"); got != "(absent)" {
		t.Fatalf("after /rewind 2 f.txt = %q", got)
	}
	if got := read("x.txt"); got != "the user's x\n" {
		t.Fatalf("the user's x.txt was overwritten: %q", got)
	}
	if got := h.client.text(id); !strings.Contains(got, "Rewound 2 turn(s)") || !strings.Contains(got, "x.txt left as it is") {
		t.Fatalf("/rewind said %q", got)
	}

	h.prompt(id, "after the rewind")
	reqs := model.Requests()
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == "user" && (strings.Contains(m.Content, "make files") || strings.Contains(m.Content, "more please")) {
			t.Fatalf("the model still sees a rewound turn: %q", m.Content)
		}
	}
}
