package acp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/internal/await"
	"github.com/agentd/agentd/tools"
)

// editorScript reads f.txt and, when it saw the editor's unsaved line, edits
// that line.
const editorScript = `{"turns": [
  {"name": "edit", "match": {"afterTool": "read_file", "anyMessage": "unsaved"}, "reply": {"toolCalls": [
    {"id": "call_e", "name": "edit_file", "arguments": {"path": "f.txt", "old_string": "unsaved", "new_string": "edited"}}]}},
  {"name": "disk", "match": {"afterTool": "read_file"}, "reply": {"text": "I saw the disk."}},
  {"name": "edited", "match": {"afterTool": "edit_file"}, "reply": {"text": "Edited f.txt."}},
  {"name": "read", "match": {"lastUser": "f.txt"}, "reply": {"toolCalls": [
    {"id": "call_r", "name": "read_file", "arguments": {"path": "f.txt"}}]}}
]}`

// editorWorkspace is a workspace whose f.txt differs on disk and in the
// editor's unsaved buffer.
func editorWorkspace(t *testing.T, h *harness) (ws, abs string) {
	ws = mustReal(t, t.TempDir())
	abs = filepath.Join(ws, "f.txt")
	if err := os.WriteFile(abs, []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.client.setBuffer(abs, "one\nunsaved\n")
	h.client.setPermission(func(acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
		return selected(tools.AllowOnce)
	})
	return ws, abs
}

func readDisk(t *testing.T, abs string) string {
	t.Helper()
	b, err := os.ReadFile(abs)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestEditorFilesReadUnsavedBufferAndWriteThroughEditor(t *testing.T) {
	h := start(t, config{stateDir: t.TempDir(), modelURL: script(t, editorScript),
		fs: acpsdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}})
	ws, abs := editorWorkspace(t, h)
	id := h.newSession(ws)
	if stop := h.prompt(id, "fix f.txt"); stop != acpsdk.StopReasonEndTurn {
		t.Fatalf("stop reason %q", stop)
	}
	if got := h.client.text(id); got != "Edited f.txt." {
		t.Fatalf("answer %q: read_file did not show the unsaved buffer", got)
	}
	req := <-h.client.asked
	var diff *acpsdk.ToolCallContentDiff
	for _, c := range req.ToolCall.Content {
		if c.Diff != nil {
			diff = c.Diff
		}
	}
	if diff == nil || diff.OldText == nil || *diff.OldText != "one\nunsaved\n" || diff.NewText != "one\nedited\n" {
		t.Fatalf("the permission's diff is not against the buffer: %+v", diff)
	}

	reads, writes := h.client.fsCalls()
	if len(reads) == 0 || reads[0].Path != abs || reads[0].SessionId != id {
		t.Fatalf("fs/read_text_file calls %+v", reads)
	}
	if len(writes) != 1 || writes[0].Path != abs || writes[0].SessionId != id || writes[0].Content != "one\nedited\n" {
		t.Fatalf("fs/write_text_file calls %+v", writes)
	}
	if got := readDisk(t, abs); got != "one\ntwo\n" {
		t.Fatalf("the write reached the disk: %q", got)
	}
	if got, _ := h.client.buffer(abs); got != "one\nedited\n" {
		t.Fatalf("buffer %q", got)
	}
}

// A client that confirms every fs/write_text_file itself (acpx) is not
// sent the write agentd's own permission already allowed: it goes to the
// disk, and is asked once. Reads still go through the client.
func TestEditorFilesClientThatConfirmsWritesIsNotAskedAgain(t *testing.T) {
	h := start(t, config{stateDir: t.TempDir(), modelURL: script(t, editorScript), client: "acpx",
		fs: acpsdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}})
	ws, abs := editorWorkspace(t, h)
	id := h.newSession(ws)
	h.prompt(id, "fix f.txt")
	if got := h.client.text(id); got != "Edited f.txt." {
		t.Fatalf("answer %q", got)
	}
	if len(h.client.asked) != 1 {
		t.Fatalf("agentd's permissions asked: %d, want 1", len(h.client.asked))
	}
	reads, writes := h.client.fsCalls()
	if len(reads) == 0 || len(writes) != 0 {
		t.Fatalf("fs calls: reads %+v, writes %+v", reads, writes)
	}
	if got := readDisk(t, abs); got != "one\nedited\n" {
		t.Fatalf("disk %q", got)
	}
}

// A client that offers only reads gets the write on the disk.
func TestEditorFilesReadOnlyCapabilityWritesToDisk(t *testing.T) {
	h := start(t, config{stateDir: t.TempDir(), modelURL: script(t, editorScript),
		fs: acpsdk.FileSystemCapabilities{ReadTextFile: true}})
	ws, abs := editorWorkspace(t, h)
	id := h.newSession(ws)
	h.prompt(id, "fix f.txt")
	if got := h.client.text(id); got != "Edited f.txt." {
		t.Fatalf("answer %q", got)
	}
	reads, writes := h.client.fsCalls()
	if len(reads) == 0 || len(writes) != 0 {
		t.Fatalf("fs calls: reads %+v, writes %+v", reads, writes)
	}
	if got := readDisk(t, abs); got != "one\nedited\n" {
		t.Fatalf("disk %q", got)
	}
}

// A client that offers neither is never asked: the tools see the disk.
func TestEditorFilesNotOffered(t *testing.T) {
	h := start(t, config{stateDir: t.TempDir(), modelURL: script(t, editorScript)})
	ws, _ := editorWorkspace(t, h)
	id := h.newSession(ws)
	h.prompt(id, "fix f.txt")
	if got := h.client.text(id); got != "I saw the disk." {
		t.Fatalf("answer %q", got)
	}
	if reads, writes := h.client.fsCalls(); len(reads)+len(writes) != 0 {
		t.Fatalf("fs calls without the capability: %+v %+v", reads, writes)
	}
}

const refusedScript = `{"turns": [
  {"name": "refused", "match": {"afterTool": "write_file", "lastTool": "read-only buffer"}, "reply": {"text": "The editor refused."}},
  {"name": "written", "match": {"afterTool": "write_file"}, "reply": {"text": "Wrote it."}},
  {"name": "write", "match": {"lastUser": "g.txt"}, "reply": {"toolCalls": [
    {"id": "call_w", "name": "write_file", "arguments": {"path": "g.txt", "content": "new\n"}}]}}
]}`

// An error from the client is a failed tool result the model reads: the
// editor's message and details in words, not the JSON-RPC error object.
func TestEditorFilesClientErrorFailsTheCall(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"Go SDK client", errors.New("read-only buffer"), "Internal error: read-only buffer"},
		{"TypeScript SDK client", &acpsdk.RequestError{Code: -32603, Message: "Internal error",
			Data: map[string]any{"details": "read-only buffer: g.txt is locked"}}, "Internal error: read-only buffer: g.txt is locked"},
		{"message only", &acpsdk.RequestError{Code: -32000, Message: "read-only buffer"}, "read-only buffer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := scriptServer(t, refusedScript)
			h := start(t, config{stateDir: t.TempDir(), modelURL: model.URL, policy: tools.ModeAutoEdit,
				fs: acpsdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}})
			h.client.setWriteErr(tc.err)
			ws := mustReal(t, t.TempDir())
			id := h.newSession(ws)
			h.prompt(id, "write g.txt")
			if got := h.client.text(id); got != "The editor refused." {
				t.Fatalf("answer %q", got)
			}
			failed := false
			for _, u := range h.client.of(id) {
				if tc := u.ToolCallUpdate; tc != nil && tc.Status != nil && *tc.Status == acpsdk.ToolCallStatusFailed {
					failed = true
				}
			}
			if !failed {
				t.Fatal("the write_file call was not reported failed")
			}
			if _, err := os.Stat(filepath.Join(ws, "g.txt")); err == nil {
				t.Fatal("a refused write reached the disk")
			}
			got := lastToolResult(t, model)
			if !strings.Contains(got, tc.want) || strings.Contains(got, `{"code"`) || strings.Contains(got, `"data"`) {
				t.Fatalf("the model read %q; want the editor's words %q, no JSON", got, tc.want)
			}
		})
	}
}

// scriptServer is script's model server, for a test that reads what the
// model was sent.
func scriptServer(t *testing.T, js string) *modeltest.Server {
	t.Helper()
	s, err := modeltest.ParseScript([]byte(js))
	if err != nil {
		t.Fatalf("script: %v", err)
	}
	return modeltest.StartT(t, s)
}

// lastToolResult is the last tool result the model was sent.
func lastToolResult(t *testing.T, model *modeltest.Server) string {
	t.Helper()
	reqs := model.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		msgs := reqs[i].Messages
		for j := len(msgs) - 1; j >= 0; j-- {
			if msgs[j].Role == "tool" {
				return msgs[j].Content
			}
		}
	}
	t.Fatal("the model was sent no tool result")
	return ""
}

const writeThenSleepScript = `{"turns": [
  {"name": "sleep", "match": {"afterTool": "write_file"}, "reply": {"toolCalls": [
    {"id": "call_s", "name": "run_cmd", "arguments": {"command": "sleep 30"}}]}},
  {"name": "write", "match": {"afterTool": "read_file"}, "reply": {"toolCalls": [
    {"id": "call_w", "name": "write_file", "arguments": {"path": "g.txt", "content": "new\n"}}]}},
  {"name": "read", "match": {"lastUser": "g.txt"}, "reply": {"toolCalls": [
    {"id": "call_r", "name": "read_file", "arguments": {"path": "g.txt"}}]}}
]}`

// A cancel is answered at once although the stopping run asks the editor
// for its files (the final diff): the SDK holds that answer until the
// cancel's handler returns.
func TestEditorFilesCancelDoesNotWaitOnTheEditor(t *testing.T) {
	h := start(t, config{stateDir: t.TempDir(), modelURL: script(t, writeThenSleepScript), policy: tools.ModeFullAuto,
		fs: acpsdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}})
	ws := mustReal(t, t.TempDir())
	if err := os.WriteFile(filepath.Join(ws, "g.txt"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := h.newSession(ws)
	go func() {
		waitFor(t, "the command to run", func() bool {
			for _, u := range h.client.of(id) {
				if tc := u.ToolCallUpdate; tc != nil && tc.ToolCallId == "call_s" && tc.Status != nil && *tc.Status == acpsdk.ToolCallStatusInProgress {
					return true
				}
			}
			return false
		})
		_ = h.conn.Cancel(context.Background(), acpsdk.CancelNotification{SessionId: id})
	}()
	begin := time.Now()
	if stop := h.prompt(id, "write g.txt"); stop != acpsdk.StopReasonCancelled {
		t.Fatalf("stop reason %q", stop)
	}
	if d := time.Since(begin); d > await.Timeout(5*time.Second) {
		t.Fatalf("cancel took %v", d)
	}
	if got, _ := h.client.buffer(filepath.Join(ws, "g.txt")); got != "new\n" {
		t.Fatalf("buffer %q", got)
	}
}
