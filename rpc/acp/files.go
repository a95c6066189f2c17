package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/tools"
)

// editorFiles is a session's file content served by the client through
// fs/read_text_file and fs/write_text_file, so the agent sees unsaved
// buffers and the editor tracks its changes. What the client does not offer
// goes to the disk.
type editorFiles struct {
	ws      *workspace
	agentID string
	read    bool // the client offers fs/read_text_file
	write   bool // the client offers fs/write_text_file
}

// filesOf returns agent.Config.Files for a client named client with
// capabilities fsc: nil (the disk) when it offers neither method. A client
// that confirms each fs/write_text_file itself is not sent the writes (see
// confirmsWrites).
func filesOf(ws *workspace, fsc acpsdk.FileSystemCapabilities, client string) func(agentID string) tools.FileSystem {
	write := fsc.WriteTextFile && !confirmsWrites(client)
	if !fsc.ReadTextFile && !write {
		return nil
	}
	return func(agentID string) tools.FileSystem {
		return &editorFiles{ws: ws, agentID: agentID, read: fsc.ReadTextFile, write: write}
	}
}

// writeConfirmers are the ACP clients (initialize's clientInfo.name) that
// ask their user to confirm every fs/write_text_file on their own: acpx
// asks "Allow write to …? (y/N)" with no way for the agent to say the
// write was already allowed (ACP has none). Every write agentd makes was
// allowed first, by its own permission request (which shows the diff) or
// by the mode and rules the user chose, so sending it to such a client
// asks the same question twice, and in a session where nobody can answer,
// its non-interactive policy refuses it. agentd writes those to the disk
// instead, as for a client without the capability; reads still go through
// the client. A client that applies writes without asking (Zed,
// CodeCompanion: buffers, unsaved changes, its review of the agent's
// edits) keeps getting them.
var writeConfirmers = map[string]bool{"acpx": true}

// confirmsWrites says whether the client confirms fs/write_text_file
// itself.
func confirmsWrites(client string) bool { return writeConfirmers[client] }

// sessionID is the client's id of the agent session. It is looked up at
// each call, not when the run starts: a new session is routed only once its
// first run has started.
func (f *editorFiles) sessionID() (acpsdk.SessionId, bool) {
	sess := f.ws.route(f.agentID)
	if sess == nil {
		return "", false
	}
	return acpsdk.SessionId(sess.id), true
}

func (f *editorFiles) ReadFile(ctx context.Context, abs string) ([]byte, error) {
	id, ok := f.sessionID()
	if !f.read || !ok { // no session of this client to ask under: the disk
		return tools.DiskAt(f.ws.root).ReadFile(ctx, abs)
	}
	resp, err := f.ws.srv.client().ReadTextFile(ctx, acpsdk.ReadTextFileRequest{SessionId: id, Path: abs})
	if err != nil {
		var re *acpsdk.RequestError
		if errors.As(err, &re) && re.Code == -32002 { // resource not found
			return nil, fmt.Errorf("fs/read_text_file: %w: %w", fs.ErrNotExist, editorError{err})
		}
		return nil, fmt.Errorf("fs/read_text_file: %w", editorError{err})
	}
	return []byte(resp.Content), nil
}

func (f *editorFiles) WriteFile(ctx context.Context, abs string, data []byte) error {
	id, ok := f.sessionID()
	// An empty file goes to the disk: clients built on the Go SDK refuse an
	// empty content as missing.
	if !f.write || !ok || len(data) == 0 {
		return tools.DiskAt(f.ws.root).WriteFile(ctx, abs, data)
	}
	_, err := f.ws.srv.client().WriteTextFile(ctx, acpsdk.WriteTextFileRequest{SessionId: id, Path: abs, Content: string(data)})
	if err != nil {
		return fmt.Errorf("fs/write_text_file: %w", editorError{err})
	}
	return nil
}

// editorError is an error the editor answered an fs request with, as the
// model reads it: the editor's message and its details in words, not the
// JSON-RPC error object the SDK prints.
type editorError struct{ err error }

func (e editorError) Unwrap() error { return e.err }

func (e editorError) Error() string {
	var re *acpsdk.RequestError
	if !errors.As(e.err, &re) {
		return e.err.Error()
	}
	msg := strings.TrimSpace(re.Message)
	if d := details(re.Data); d != "" && !strings.Contains(msg, d) {
		if msg == "" {
			return d
		}
		msg += ": " + d
	}
	if msg == "" {
		return fmt.Sprintf("the editor failed (code %d)", re.Code)
	}
	return msg
}

// details are an error's data in words: its text, or the texts under the
// keys clients use (details, error, message, reason), or its fields.
func details(data any) string {
	switch d := data.(type) {
	case nil:
		return ""
	case string:
		return strings.TrimSpace(d)
	case map[string]any:
		var parts []string
		for _, k := range []string{"details", "error", "message", "reason"} {
			if s, ok := d[k].(string); ok && strings.TrimSpace(s) != "" {
				parts = append(parts, strings.TrimSpace(s))
			}
		}
		if len(parts) > 0 {
			return strings.Join(parts, "; ")
		}
		keys := slices.Sorted(maps.Keys(d))
		for _, k := range keys {
			parts = append(parts, k+": "+details(d[k]))
		}
		return strings.Join(parts, ", ")
	}
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Sprint(data)
	}
	return string(b)
}
