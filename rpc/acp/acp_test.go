package acp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/internal/await"
	"github.com/agentd/agentd/rag"
	"github.com/agentd/agentd/tools"
)

const planScript = `{"turns": [
  {"name": "plan", "match": {"lastUser": "refactor"}, "reply": {"toolCalls": [
    {"id": "call_p1", "name": "update_plan", "arguments": {"plan": [
      {"step": "Read the code", "status": "in_progress"}, {"step": "Change it", "status": "pending"}]}}]}},
  {"name": "done", "match": {"afterTool": "update_plan"}, "reply": {"text": "Done with the refactor.", "chunks": 4}}
]}`

func TestPromptStreamsPlanAndAnswer(t *testing.T) {
	h := start(t, config{stateDir: t.TempDir(), modelURL: script(t, planScript)})
	id := h.newSession(t.TempDir())
	if stop := h.prompt(id, "please refactor"); stop != acpsdk.StopReasonEndTurn {
		t.Fatalf("stop reason %q", stop)
	}
	if got := h.client.text(id); got != "Done with the refactor." {
		t.Fatalf("answer %q", got)
	}
	var plan *acpsdk.SessionUpdatePlan
	chunks := 0
	for _, u := range h.client.of(id) {
		if u.Plan != nil {
			plan = u.Plan
		}
		if u.AgentMessageChunk != nil {
			chunks++
		}
	}
	if plan == nil || len(plan.Entries) != 2 || plan.Entries[0].Status != acpsdk.PlanEntryStatusInProgress {
		t.Fatalf("plan %+v", plan)
	}
	if chunks < 2 {
		t.Fatalf("answer not streamed: %d chunks", chunks)
	}
}

const writeScript = `{"turns": [
  {"name": "write-again", "match": {"lastUser": "again", "minToolResults": 0, "anyMessage": "left notes.txt alone"}, "reply": {"toolCalls": [
    {"id": "call_w", "name": "write_file", "arguments": {"path": "notes.txt", "content": "remember the milk\n"}}]}},
  {"name": "write", "match": {"lastUser": "notes"}, "reply": {"toolCalls": [
    {"id": "call_w", "name": "write_file", "arguments": {"path": "notes.txt", "content": "remember the milk\n"}}]}},
  {"name": "after-reject", "match": {"afterTool": "write_file", "lastTool": "rejected"}, "reply": {"text": "Understood, I left notes.txt alone."}},
  {"name": "after-write", "match": {"afterTool": "write_file"}, "reply": {"text": "Wrote notes.txt."}}
]}`

func TestPermissionRejectedThenGranted(t *testing.T) {
	ws := t.TempDir()
	h := start(t, config{stateDir: t.TempDir(), modelURL: script(t, writeScript)})
	id := h.newSession(ws)

	h.client.setPermission(func(p acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
		return selected(tools.RejectOnce)
	})
	if stop := h.prompt(id, "write my notes"); stop != acpsdk.StopReasonEndTurn {
		t.Fatalf("stop reason %q", stop)
	}
	req := <-h.client.asked
	checkWritePermission(t, req, filepath.Join(mustReal(t, ws), "notes.txt"))
	if !strings.Contains(h.client.text(id), "left notes.txt alone") {
		t.Fatalf("after a rejection: %q", h.client.text(id))
	}
	if _, err := os.Stat(filepath.Join(ws, "notes.txt")); err == nil {
		t.Fatal("rejected write happened")
	}

	h.client.setPermission(func(p acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
		return selected(tools.AllowOnce)
	})
	h.prompt(id, "write my notes again")
	<-h.client.asked
	data, err := os.ReadFile(filepath.Join(ws, "notes.txt"))
	if err != nil || string(data) != "remember the milk\n" {
		t.Fatalf("granted write: %q, %v", data, err)
	}
	if !strings.Contains(h.client.text(id), "Wrote notes.txt.") {
		t.Fatalf("after a grant: %q", h.client.text(id))
	}
}

func checkWritePermission(t *testing.T, req acpsdk.RequestPermissionRequest, path string) {
	t.Helper()
	kinds := map[acpsdk.PermissionOptionKind]bool{}
	for _, o := range req.Options {
		kinds[o.Kind] = true
	}
	if len(kinds) != 4 {
		t.Fatalf("options %+v", req.Options)
	}
	if req.ToolCall.Kind == nil || *req.ToolCall.Kind != acpsdk.ToolKindEdit || req.ToolCall.ToolCallId != "call_w" {
		t.Fatalf("tool call %+v", req.ToolCall)
	}
	for _, c := range req.ToolCall.Content {
		if c.Diff != nil && c.Diff.Path == path && c.Diff.NewText == "remember the milk\n" {
			return
		}
	}
	t.Fatalf("no diff of %s in %+v", path, req.ToolCall.Content)
}

func mustReal(t *testing.T, p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

const questionScript = `{"turns": [
  {"name": "ask", "match": {"lastUser": "meaning"}, "reply": {"toolCalls": [
    {"id": "call_q", "name": "ask_user", "arguments": {"question": "Which number do you mean?"}}]}},
  {"name": "answered", "match": {"afterTool": "ask_user", "lastTool": "42"}, "reply": {"text": "You mean 42."}}
]}`

func TestQuestionAnsweredByNextPrompt(t *testing.T) {
	h := start(t, config{stateDir: t.TempDir(), modelURL: script(t, questionScript)})
	id := h.newSession(t.TempDir())
	if stop := h.prompt(id, "what is the meaning"); stop != acpsdk.StopReasonEndTurn {
		t.Fatalf("stop reason %q", stop)
	}
	if !strings.Contains(h.client.text(id), "Which number do you mean?") {
		t.Fatalf("question not asked: %q", h.client.text(id))
	}
	if stop := h.prompt(id, "42"); stop != acpsdk.StopReasonEndTurn {
		t.Fatalf("stop reason %q", stop)
	}
	if !strings.HasSuffix(h.client.text(id), "You mean 42.") {
		t.Fatalf("answer not taken: %q", h.client.text(id))
	}
}

func TestQuestionAsForm(t *testing.T) {
	h := start(t, config{stateDir: t.TempDir(), modelURL: script(t, questionScript), form: true})
	h.client.elicit = func(p acpsdk.UnstableCreateElicitationRequest) acpsdk.UnstableCreateElicitationResponse {
		return acpsdk.UnstableCreateElicitationResponse{Accept: &acpsdk.UnstableCreateElicitationAccept{
			Action: "accept", Content: map[string]any{"answer": "42"}}}
	}
	id := h.newSession(t.TempDir())
	if stop := h.prompt(id, "what is the meaning"); stop != acpsdk.StopReasonEndTurn {
		t.Fatalf("stop reason %q", stop)
	}
	if !strings.HasSuffix(h.client.text(id), "You mean 42.") {
		t.Fatalf("form answer not taken: %q", h.client.text(id))
	}
	// The scope the SDK type lacks is on the wire.
	for _, line := range strings.Split(h.out.String(), "\n") {
		if strings.Contains(line, `"elicitation/create"`) {
			if !strings.Contains(line, `"sessionId":"`+string(id)+`"`) || !strings.Contains(line, `"toolCallId":"call_q"`) || strings.Contains(line, scopeKey) {
				t.Fatalf("elicitation without its scope: %s", line)
			}
			return
		}
	}
	t.Fatal("no elicitation/create sent")
}

const sleepScript = `{"turns": [
  {"name": "sleep", "match": {"lastUser": "sleep"}, "reply": {"toolCalls": [
    {"id": "call_s", "name": "run_cmd", "arguments": {"command": "sleep 30"}}]}}
]}`

func TestCancelEndsTurnCancelled(t *testing.T) {
	h := start(t, config{stateDir: t.TempDir(), modelURL: script(t, sleepScript), policy: tools.ModeFullAuto})
	id := h.newSession(t.TempDir())
	go func() {
		waitFor(t, "the command to run", func() bool {
			for _, u := range h.client.of(id) {
				if u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == acpsdk.ToolCallStatusInProgress {
					return true
				}
			}
			return false
		})
		_ = h.conn.Cancel(context.Background(), acpsdk.CancelNotification{SessionId: id})
	}()
	begin := time.Now()
	if stop := h.prompt(id, "sleep a while"); stop != acpsdk.StopReasonCancelled {
		t.Fatalf("stop reason %q", stop)
	}
	if time.Since(begin) > await.Timeout(10*time.Second) {
		t.Fatal("cancel took too long")
	}
}

func TestLoadAfterRestartAsksAgain(t *testing.T) {
	state, ws := t.TempDir(), t.TempDir()
	url := script(t, writeScript)
	h := start(t, config{stateDir: state, modelURL: url})
	id := h.newSession(ws)
	prompted := make(chan acpsdk.StopReason, 1)
	go func() {
		resp, _ := h.conn.Prompt(context.Background(), acpsdk.PromptRequest{SessionId: id, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("write my notes")}})
		prompted <- resp.StopReason
	}()
	<-h.client.asked // the permission is open: agentd goes away
	h.stop()

	h2 := start(t, config{stateDir: state, modelURL: url})
	h2.client.setPermission(func(acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
		return selected(tools.AllowOnce)
	})
	if _, err := h2.conn.LoadSession(h2.ctx(), acpsdk.LoadSessionRequest{SessionId: id, Cwd: ws, McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatalf("session/load: %v", err)
	}
	ups := h2.client.of(id)
	if len(ups) == 0 || ups[0].UserMessageChunk == nil || ups[0].UserMessageChunk.Content.Text.Text != "write my notes" {
		t.Fatalf("replay does not start with the prompt: %+v", ups)
	}
	req := <-h2.client.asked
	checkWritePermission(t, req, filepath.Join(mustReal(t, ws), "notes.txt"))
	waitFor(t, "the run to finish", func() bool { return strings.Contains(h2.client.text(id), "Wrote notes.txt.") })
	if data, _ := os.ReadFile(filepath.Join(ws, "notes.txt")); string(data) != "remember the milk\n" {
		t.Fatalf("notes.txt = %q", data)
	}
	list, err := h2.conn.ListSessions(h2.ctx(), acpsdk.ListSessionsRequest{})
	if err != nil || len(list.Sessions) != 1 || list.Sessions[0].SessionId != id {
		t.Fatalf("session/list: %+v, %v", list, err)
	}
}

type stubIndex struct{}

func (stubIndex) Close() error { return nil }
func (stubIndex) Search(ctx context.Context, q string, limit int) ([]rag.SearchHit, bool, error) {
	return []rag.SearchHit{{Path: "cart.go", Score: 1, Match: rag.MatchStrong, Chunks: []rag.ChunkHit{{StartLine: 10, EndLine: 14, Symbol: "Total",
		Cover: 0.9, Lines: []rag.SnippetLine{{Line: 10, Text: "func Total() int"}}, Text: "func Total() int"}}}}, false, nil
}

func TestSearchCommandAndModes(t *testing.T) {
	open := func(root, dir string) Index { return stubIndex{} }
	h := start(t, config{stateDir: t.TempDir(), modelURL: script(t, `{"turns": []}`), index: open})
	id := h.newSession(t.TempDir())
	waitFor(t, "available commands", func() bool {
		for _, u := range h.client.of(id) {
			if u.AvailableCommandsUpdate != nil && u.AvailableCommandsUpdate.AvailableCommands[0].Name == "search" {
				return true
			}
		}
		return false
	})
	h.prompt(id, "/search where is the total")
	if got := h.client.text(id); !strings.Contains(got, "**cart.go** (strong 1.00)\n- lines 10-14 `Total`") || !strings.Contains(got, "func Total() int") {
		t.Fatalf("search answer %q", got)
	}
	if _, err := h.conn.SetSessionMode(h.ctx(), acpsdk.SetSessionModeRequest{SessionId: id, ModeId: "full-auto"}); err != nil {
		t.Fatalf("set_mode: %v", err)
	}
	if _, err := h.conn.SetSessionMode(h.ctx(), acpsdk.SetSessionModeRequest{SessionId: id, ModeId: "yolo"}); err == nil {
		t.Fatal("unknown mode accepted")
	}
	if _, err := h.conn.CloseSession(h.ctx(), acpsdk.CloseSessionRequest{SessionId: id}); err != nil {
		t.Fatalf("session/close: %v", err)
	}
}
