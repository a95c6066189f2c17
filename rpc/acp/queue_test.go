package acp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/internal/await"
)

const queueScript = `{"turns": [
  {"name": "write", "match": {"lastUser": "write notes"}, "reply": {"toolCalls": [
    {"id": "call_w", "name": "write_file", "arguments": {"path": "notes.txt", "content": "milk\n"}}]}},
  {"name": "wrote", "match": {"afterTool": "write_file"}, "reply": {"text": "Wrote the notes."}},
  {"name": "then", "match": {"lastUser": "then read them"}, "reply": {"text": "They say milk."}}
]}`

// A prompt sent while a turn is at work (here, waiting on a permission)
// queues, as Zed queues its own: it is neither refused nor taken as an
// answer; its run starts when the turn before it ends, with the
// conversation so far, and its session/prompt ends with its own run.
func TestPromptDuringATurnQueues(t *testing.T) {
	state := t.TempDir()
	h := start(t, config{stateDir: state, modelURL: script(t, queueScript)})
	id := h.newSession(t.TempDir())
	release := make(chan struct{})
	h.client.setPermission(func(p acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
		<-release // the turn waits on the user while the next prompt comes
		return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{
			Selected: &acpsdk.RequestPermissionOutcomeSelected{OptionId: p.Options[0].OptionId}}}
	})
	first := make(chan acpsdk.StopReason, 1)
	go func() { first <- h.prompt(id, "write notes") }()
	await.Recv(t, "the permission", 20*time.Second, h.client.asked)

	second := make(chan acpsdk.StopReason, 1)
	go func() { second <- h.prompt(id, "then read them") }()
	await.Until(t, "the second prompt's run queued", 20*time.Second, func() bool {
		return queuedRuns(state) == 1
	})
	select {
	case <-second:
		t.Fatal("the queued prompt ended before the turn before it")
	default:
	}
	close(release)
	if got := await.Recv(t, "the first turn's end", 20*time.Second, first); got != acpsdk.StopReasonEndTurn {
		t.Fatalf("first turn: %q", got)
	}
	if got := await.Recv(t, "the second turn's end", 20*time.Second, second); got != acpsdk.StopReasonEndTurn {
		t.Fatalf("second turn: %q", got)
	}
	if text := h.client.text(id); !strings.Contains(text, "Wrote the notes.") || !strings.HasSuffix(text, "They say milk.") {
		t.Fatalf("the answers: %q", text)
	}
}

// queuedRuns counts the runs of the state directory saved as queued.
func queuedRuns(stateDir string) int {
	n := 0
	files, _ := filepath.Glob(filepath.Join(stateDir, "runs", "*.json"))
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), `"state":"queued"`) {
			n++
		}
	}
	return n
}
