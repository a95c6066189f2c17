package acp

import (
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/tools"
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

// TestFinalToolCallUpdateRepeatsTheTitle: the update that ends a call
// carries the title its start had (a command's, in a code span), so a
// client that prints updates one by one names the call, not its id; an
// update of a running call does not.
func TestFinalToolCallUpdateRepeatsTheTitle(t *testing.T) {
	tr := newTranslator("/ws", 0, nil)
	for _, c := range []struct {
		id, title, want string
		status          agent.Status
		toolKind        string
		input           string
	}{
		{id: "call_r", title: "Read cart.go", want: "Read cart.go", status: agent.StatusCompleted, toolKind: "read", input: `{"path":"cart.go"}`},
		{id: "call_c", title: "Run go test", want: "`go test ./...`", status: agent.StatusFailed, toolKind: "execute", input: `{"command":"go test ./..."}`},
	} {
		start := tr.translate(agent.Update{Kind: agent.UpdateToolCall, ToolCallID: c.id, Title: c.title,
			ToolKind: tools.Kind(c.toolKind), Status: agent.StatusPending, Input: []byte(c.input)})
		if len(start) != 1 || start[0].ToolCall == nil || start[0].ToolCall.Title != c.want {
			t.Fatalf("%s: start %+v", c.id, start)
		}
		running := tr.translate(agent.Update{Kind: agent.UpdateToolCallUpdate, ToolCallID: c.id, Status: agent.StatusInProgress})
		if len(running) != 1 || running[0].ToolCallUpdate == nil || running[0].ToolCallUpdate.Title != nil {
			t.Fatalf("%s: in-progress update %+v", c.id, running)
		}
		end := tr.translate(agent.Update{Kind: agent.UpdateToolCallUpdate, ToolCallID: c.id, Status: c.status, Output: "ok"})
		if len(end) != 1 || end[0].ToolCallUpdate == nil || end[0].ToolCallUpdate.Title == nil || *end[0].ToolCallUpdate.Title != c.want {
			t.Fatalf("%s: the final update does not repeat the title %q: %+v", c.id, c.want, end)
		}
	}
}

// TestToolOutputIsSaidOnce: a call's output is its content or, where the
// content is the diffs, its raw output, never both (acpx prints each: an
// answered choice read "The user chose: blue" twice). A command's output
// is a code block; a line of prose (the user's answer) is not.
func TestToolOutputIsSaidOnce(t *testing.T) {
	tr := newTranslator("/ws", 0, nil)
	tr.translate(agent.Update{Kind: agent.UpdateToolCall, ToolCallID: "call_a", Title: "Ask the user", ToolKind: tools.KindOther,
		Status: agent.StatusPending})
	tr.translate(agent.Update{Kind: agent.UpdateToolCall, ToolCallID: "call_c", Title: "Run ls", ToolKind: tools.KindExecute,
		Status: agent.StatusPending, Input: []byte(`{"command":"ls"}`)})
	tr.translate(agent.Update{Kind: agent.UpdateToolCall, ToolCallID: "call_w", Title: "create a.txt", ToolKind: tools.KindEdit,
		Status: agent.StatusPending})
	exit, newText := 0, "x\n"
	for _, c := range []struct {
		u        agent.Update
		content  string
		rawOuput string
	}{
		{u: agent.Update{ToolCallID: "call_a", Output: "The user chose: blue"}, content: "The user chose: blue"},
		{u: agent.Update{ToolCallID: "call_c", Output: "a.txt\n[exit code 0]", ExitCode: &exit}, content: "```\na.txt\n[exit code 0]\n```"},
		{u: agent.Update{ToolCallID: "call_w", Output: "added a.txt", Files: []tools.FileDiff{{Path: "a.txt", Status: "added",
			Diff: "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+x\n", NewText: &newText}}}, rawOuput: "added a.txt"},
	} {
		c.u.Kind, c.u.Status = agent.UpdateToolCallUpdate, agent.StatusCompleted
		us := tr.translate(c.u)
		if len(us) != 1 || us[0].ToolCallUpdate == nil {
			t.Fatalf("%s: %+v", c.u.ToolCallID, us)
		}
		tu := us[0].ToolCallUpdate
		var texts []string
		for _, b := range tu.Content {
			if b.Content != nil && b.Content.Content.Text != nil {
				texts = append(texts, b.Content.Content.Text.Text)
			}
		}
		raw, _ := tu.RawOutput.(map[string]any)
		rawText, _ := raw["output"].(string)
		switch {
		case c.content != "" && (len(texts) != 1 || texts[0] != c.content || tu.RawOutput != nil):
			t.Errorf("%s: content %q, raw output %+v; want content %q alone", c.u.ToolCallID, texts, tu.RawOutput, c.content)
		case c.rawOuput != "" && (len(texts) != 0 || rawText != c.rawOuput):
			t.Errorf("%s: content %q, raw output %q; want the raw output %q and the diff", c.u.ToolCallID, texts, rawText, c.rawOuput)
		}
	}
}

// TestDiagnosticsUnderTheEdit: the diagnostics after a reply's last edit
// show as a finished read of their own under the edit (an update of the
// edit would replace its diff), with the text the model read.
func TestDiagnosticsUnderTheEdit(t *testing.T) {
	tr := newTranslator("/ws", 0, nil)
	rep := &tools.DiagnosticsReport{Files: []string{"main.go"}, New: 1, Servers: []string{"gopls"},
		Items: []tools.DiagnosticItem{{Path: "main.go", Line: 4, Column: 9, Severity: "error", Message: "undefined: Totl", New: true}},
		Text:  "Diagnostics after your edits (gopls): 1 problem in the files you changed, 1 of them new.\nmain.go:4:9: error: undefined: Totl (new)"}
	us := tr.translate(agent.Update{Kind: agent.UpdateToolCallUpdate, ToolCallID: "call_e", Diagnostics: rep})
	if len(us) != 1 || us[0].ToolCall == nil {
		t.Fatalf("want one tool call, got %+v", us)
	}
	tc := us[0].ToolCall
	if tc.ToolCallId != "call_e/diagnostics" || tc.Title != "Diagnostics: 1 problem(s), 1 new" || tc.Status != acpsdk.ToolCallStatusCompleted || tc.Kind != acpsdk.ToolKindRead {
		t.Fatalf("tool call %+v", tc)
	}
	if len(tc.Content) != 1 || tc.Content[0].Content == nil || tc.Content[0].Content.Content.Text == nil || tc.Content[0].Content.Content.Text.Text != rep.Text {
		t.Fatalf("content %+v", tc.Content)
	}
}
