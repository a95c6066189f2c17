package acp

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/agent/modeltest"
)

// An ACP image block reaches the model as an image_url part, and
// session/load replays it after the prompt's text.
func TestPromptWithAnImage(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	img.Set(1, 1, color.RGBA{255, 0, 0, 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString(buf.Bytes())
	s, err := modeltest.ParseScript([]byte(`{"turns": [{"match": {"lastUser": "what is this"}, "reply": {"text": "A red dot."}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	model := modeltest.StartT(t, s)
	state, ws := t.TempDir(), t.TempDir()
	h := start(t, config{stateDir: state, modelURL: model.URL})
	id := h.newSession(ws)
	resp, err := h.conn.Prompt(h.ctx(), acpsdk.PromptRequest{SessionId: id, Prompt: []acpsdk.ContentBlock{
		acpsdk.TextBlock("what is this?"), acpsdk.ImageBlock(b64, "image/png")}})
	if err != nil || resp.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("prompt: %v %v", resp.StopReason, err)
	}
	reqs := model.Requests()
	if len(reqs) != 1 || len(reqs[0].Last().Images) != 1 || reqs[0].Last().Images[0] != "data:image/png;base64,"+b64 {
		t.Fatalf("the model did not get the picture: %+v", reqs)
	}
	h.stop()

	h2 := start(t, config{stateDir: state, modelURL: model.URL})
	if _, err := h2.conn.LoadSession(h2.ctx(), acpsdk.LoadSessionRequest{SessionId: id, Cwd: ws, McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatalf("session/load: %v", err)
	}
	ups := h2.client.of(id)
	if len(ups) < 2 || ups[1].UserMessageChunk == nil || ups[1].UserMessageChunk.Content.Image == nil ||
		ups[1].UserMessageChunk.Content.Image.Data != b64 {
		t.Fatalf("the replay does not show the picture after the prompt: %+v", ups)
	}
}
