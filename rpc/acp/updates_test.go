package acp

import (
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/agent"
)

// TestInstructionsAndNotice: the instruction files show as a finished read
// with their locations; a notice as text that does not count as the answer.
func TestInstructionsAndNotice(t *testing.T) {
	tr := newTranslator("/ws", 0, nil)
	us := tr.translate(agent.Update{Kind: agent.UpdateInstructions, Instructions: []agent.InstructionFile{
		{Path: "AGENTS.md", Scope: agent.ScopeWorkspace, Bytes: 10},
		{Path: "web/AGENTS.md", Scope: agent.ScopeDirectory, Bytes: 40000, Truncated: true}}})
	if len(us) != 1 || us[0].ToolCall == nil {
		t.Fatalf("want one tool call, got %+v", us)
	}
	tc := us[0].ToolCall
	if tc.Title != "Instructions: AGENTS.md, web/AGENTS.md (first 32 KB)" || tc.Kind != acpsdk.ToolKindRead || tc.Status != acpsdk.ToolCallStatusCompleted {
		t.Fatalf("tool call %+v", tc)
	}
	if len(tc.Locations) != 2 || tc.Locations[1].Path != "/ws/web/AGENTS.md" {
		t.Fatalf("locations %+v", tc.Locations)
	}
	again := tr.translate(agent.Update{Kind: agent.UpdateInstructions, Instructions: []agent.InstructionFile{{Path: "AGENTS.md"}}})
	if again[0].ToolCall.ToolCallId == tc.ToolCallId {
		t.Fatal("two instruction updates share an id")
	}

	us = tr.translate(agent.Update{Kind: agent.UpdateNotice, Text: "The window is small."})
	if len(us) != 1 || us[0].AgentMessageChunk == nil || !strings.Contains(us[0].AgentMessageChunk.Content.Text.Text, "The window is small.") {
		t.Fatalf("notice %+v", us)
	}
	// A text-mode answer (not streamed) is still sent whole after a notice.
	us = tr.translate(agent.Update{Kind: agent.UpdateResult, Text: "Done."})
	if len(us) != 1 {
		t.Fatalf("the answer after a notice was not sent: %+v", us)
	}
}
