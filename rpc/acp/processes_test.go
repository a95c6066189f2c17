package acp

import (
	"strings"
	"testing"

	"github.com/agentd/agentd/tools"
)

// A background process started in an ACP session is listed by /processes
// and stopped by /stop, without the model.
func TestBackgroundProcessCommands(t *testing.T) {
	url := script(t, `{"turns": [
  {"match": {"lastUser": "watch"}, "reply": {"toolCalls": [{"id": "c1", "name": "run_cmd",
    "arguments": {"command": "echo watching; sleep 300", "background": true}}]}},
  {"match": {"afterTool": "run_cmd"}, "reply": {"text": "Watching."}}]}`)
	h := start(t, config{stateDir: t.TempDir(), modelURL: url, policy: tools.ModeFullAuto})
	id := h.newSession(t.TempDir())
	h.prompt(id, "/processes")
	if got := h.client.text(id); !strings.Contains(got, "has not run anything yet") {
		t.Fatalf("/processes before a run: %q", got)
	}
	h.prompt(id, "watch the files")
	h.prompt(id, "/processes")
	if got := h.client.text(id); !strings.Contains(got, "- **p1** `echo watching; sleep 300` (in .): running for") || !strings.Contains(got, "`/stop <id>`") {
		t.Fatalf("/processes: %q", got)
	}
	h.prompt(id, "/stop p1")
	if got := h.client.text(id); !strings.Contains(got, "p1 `echo watching; sleep 300`: stopped.") {
		t.Fatalf("/stop: %q", got)
	}
	h.prompt(id, "/stop p7")
	if got := h.client.text(id); !strings.Contains(got, "Not stopped: ") {
		t.Fatalf("/stop of an unknown id: %q", got)
	}
}
