package acp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

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

// filesOf returns agent.Config.Files for a client with capabilities fsc:
// nil (the disk) when it offers neither method.
func filesOf(ws *workspace, fsc acpsdk.FileSystemCapabilities) func(agentID string) tools.FileSystem {
	if !fsc.ReadTextFile && !fsc.WriteTextFile {
		return nil
	}
	return func(agentID string) tools.FileSystem {
		return &editorFiles{ws: ws, agentID: agentID, read: fsc.ReadTextFile, write: fsc.WriteTextFile}
	}
}

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
			return nil, fmt.Errorf("fs/read_text_file: %w: %w", fs.ErrNotExist, err)
		}
		return nil, fmt.Errorf("fs/read_text_file: %w", err)
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
		return fmt.Errorf("fs/write_text_file: %w", err)
	}
	return nil
}
