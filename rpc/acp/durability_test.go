package acp

import (
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/rpc/rpctest"
	"github.com/agentd/agentd/tools"
)

const shortCommandScript = `{"turns": [
  {"name": "run", "match": {"lastUser": "build"}, "reply": {"toolCalls": [
    {"id": "call_b", "name": "run_cmd", "arguments": {"command": "sleep 1"}}]}},
  {"name": "done", "match": {"afterTool": "run_cmd"}, "reply": {"text": "Built."}}
]}`

// TestTurnEndsWhenTheRunCannotBeSaved: the state directory stops taking
// writes while a command runs; the run pauses instead of claiming an end,
// and the ACP turn, which has no resume, ends with an error that says why.
func TestTurnEndsWhenTheRunCannotBeSaved(t *testing.T) {
	state := t.TempDir()
	h := start(t, config{stateDir: state, modelURL: script(t, shortCommandScript), policy: tools.ModeFullAuto})
	id := h.newSession(t.TempDir())
	ended := make(chan error, 1)
	go func() {
		_, err := h.conn.Prompt(h.ctx(), acpsdk.PromptRequest{SessionId: id, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("build it")}})
		ended <- err
	}()
	waitFor(t, "the command to run", func() bool {
		for _, u := range h.client.of(id) {
			if u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == acpsdk.ToolCallStatusInProgress {
				return true
			}
		}
		return false
	})
	thaw := rpctest.FreezeTree(t, state)
	err := <-ended
	thaw()
	if err == nil || !strings.Contains(err.Error(), "state not saved") {
		t.Fatalf("the turn ended with %v, not the reason the run stopped", err)
	}
}
