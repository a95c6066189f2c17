package rpctest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/rpc/wire"
	"github.com/agentd/agentd/tools"
)

// testPNG is a small picture: w×h of a gradient.
func testPNG(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 128, 255})
		}
	}
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, img))
	return buf.Bytes()
}

// A prompt's image reaches the model as an image_url part after the
// prompt's text, and every later request of the session (the next step, a
// new daemon, the session's next run) sends the same bytes again.
func TestImageInPromptReachesTheModel(t *testing.T) {
	pic := testPNG(t, 64, 48)
	b64 := base64.StdEncoding.EncodeToString(pic)
	both(t, func(t *testing.T) Config {
		return Config{Policy: tools.ModeFullAuto, Files: map[string]string{"docs/shot.png": string(testPNG(t, 30, 20))},
			Script: &modeltest.Script{Turns: []modeltest.Turn{
				{Match: modeltest.Match{LastUser: "what is wrong"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "list_dir", RawArguments: `{}`}}}},
				{Match: modeltest.Match{AfterTool: "list_dir"}, Reply: modeltest.Reply{Text: "The button is cut off."}},
				{Match: modeltest.Match{LastUser: "and this one"}, Reply: modeltest.Reply{Text: "That one is fine."}},
			}}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "what is wrong with this layout?", Images: []agent.ImageInput{{MimeType: "image/png", Data: b64}}})
		st := e.Finished(run.RunID)
		require.Equal(t, agent.StateCompleted, st.State, st.Error)
		e.Close(false)

		e = env.StartInitialized() // a new daemon goes on with the session
		next := e.Run(agent.RunParams{Prompt: "and this one?", SessionID: run.SessionID, Images: []agent.ImageInput{{Path: "docs/shot.png"}}})
		st = e.Finished(next.RunID)
		require.Equal(t, agent.StateCompleted, st.State, st.Error)

		reqs := env.Model.Requests()
		require.Len(t, reqs, 3)
		want := "data:image/png;base64," + b64
		first := reqs[0].Last()
		assert.Equal(t, agent.RoleUser, first.Role)
		assert.True(t, strings.HasPrefix(first.Content, "what is wrong with this layout?"), first.Content)
		assert.Equal(t, []string{want}, first.Images, "the picture is sent as it was given: it fits")
		for i, r := range reqs[1:] {
			assertExtends(t, reqs[i], r, i+2)
		}
		last := reqs[2].Last()
		require.Len(t, last.Images, 1)
		assert.Equal(t, "data:image/png;base64,"+base64.StdEncoding.EncodeToString([]byte(env.cfg.Files["docs/shot.png"])), last.Images[0])
		imagePartsStable(t, reqs)

		// The history names the prompt's images; agent/image gives them back.
		var h struct {
			Runs []struct {
				Prompt string           `json:"prompt"`
				Images []agent.ImageRef `json:"images"`
			} `json:"runs"`
		}
		e.MustCall(wire.MethodHistory, map[string]any{"sessionId": run.SessionID}, &h)
		require.Len(t, h.Runs, 2)
		require.Len(t, h.Runs[0].Images, 1)
		ref := h.Runs[0].Images[0]
		assert.Equal(t, agent.ImageRef{ID: ref.ID, MimeType: "image/png", Width: 64, Height: 48, Bytes: len(pic), Name: "pasted"}, ref)
		assert.Equal(t, "docs/shot.png", h.Runs[1].Images[0].Name)
		var data agent.ImageData
		e.MustCall(wire.MethodImage, map[string]any{"id": ref.ID}, &data)
		assert.Equal(t, agent.ImageData{MimeType: "image/png", Data: b64, Width: 64, Height: 48}, data)
		e.CallErr(wire.MethodImage, map[string]any{"id": strings.Repeat("0", 64)}, wire.CodeInvalidParams)
		e.CallErr(wire.MethodImage, map[string]any{"id": "../../etc/passwd"}, wire.CodeInvalidParams)
	})
}

// imagePartsStable checks that each image part of a request is sent byte
// for byte the same in every later request that holds it.
func imagePartsStable(t *testing.T, reqs []modeltest.Request) {
	t.Helper()
	seen := map[int]json.RawMessage{} // message index → its raw content
	for n, r := range reqs {
		var body struct {
			Messages []struct {
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		require.NoError(t, json.Unmarshal(r.Body, &body))
		for i, m := range body.Messages {
			if !bytes.Contains(m.Content, []byte(`"image_url"`)) {
				continue
			}
			if prev, ok := seen[i]; ok {
				assert.True(t, bytes.Equal(prev, m.Content), "request %d: message %d with an image is not the bytes sent before", n+1, i)
			}
			seen[i] = m.Content
		}
	}
	assert.NotEmpty(t, seen, "no request carried an image")
}

// A picture too large for the model is scaled down once; a bad one is
// refused with an error that names it, and nothing of the run is kept.
func TestImageInPromptScaledOrRefused(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{Env: map[string]string{"AGENTD_IMAGE_MAX_SIDE": "100"}, Files: map[string]string{"notes.txt": "hello"},
			Script: &modeltest.Script{Turns: []modeltest.Turn{{Match: modeltest.Match{LastUser: "look"}, Reply: modeltest.Reply{Text: "Seen."}}}}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		big := base64.StdEncoding.EncodeToString(testPNG(t, 400, 200))
		msg := e.CallErr(wire.MethodRun, agent.RunParams{Prompt: "look", Images: []agent.ImageInput{{MimeType: "image/png", Data: "not base64!"}}}, wire.CodeInvalidParams)
		assert.Contains(t, msg, "image 1")
		msg = e.CallErr(wire.MethodRun, agent.RunParams{Prompt: "look", Images: []agent.ImageInput{{Path: "notes.txt"}}}, wire.CodeInvalidParams)
		assert.Contains(t, msg, "not a PNG, JPEG, GIF or WebP")
		msg = e.CallErr(wire.MethodRun, agent.RunParams{Prompt: "look", Images: []agent.ImageInput{{Path: "../outside.png"}}}, wire.CodeInvalidParams)
		assert.Contains(t, msg, "outside")
		msg = e.CallErr(wire.MethodRun, agent.RunParams{Prompt: "look", Images: []agent.ImageInput{{MimeType: "image/jpeg", Data: big}}}, wire.CodeInvalidParams)
		assert.Contains(t, msg, "says image/jpeg but is image/png")
		var sessions SessionsResultShape
		e.MustCall(wire.MethodSessions, nil, &sessions)
		assert.Empty(t, sessions.Sessions, "a refused prompt leaves no session behind")

		run := e.Run(agent.RunParams{Prompt: "look", Images: []agent.ImageInput{{MimeType: "image/png", Data: big}}})
		require.Equal(t, agent.StateCompleted, e.Finished(run.RunID).State)
		sent := env.Model.Requests()[0].Last().Images
		require.Len(t, sent, 1)
		data, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(sent[0], "data:image/jpeg;base64,"))
		require.NoError(t, err, "a scaled picture is sent as JPEG")
		cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
		require.NoError(t, err)
		assert.Equal(t, [2]int{100, 50}, [2]int{cfg.Width, cfg.Height})
	})
}

// SessionsResultShape is agent/sessions' result as far as these tests read it.
type SessionsResultShape struct {
	Sessions []json.RawMessage `json:"sessions"`
}

// read_file of a picture hands it to a model that reads images: the tool
// result says what it is, and a user message with the picture follows the
// step's results. To a model that does not, one line says so.
func TestReadFileOfAPicture(t *testing.T) {
	pic := testPNG(t, 32, 32)
	script := func() *modeltest.Script {
		return &modeltest.Script{Turns: []modeltest.Turn{
			{Match: modeltest.Match{LastUser: "look at the icon"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
				{Name: "read_file", RawArguments: `{"path": "icon.png"}`}, {Name: "list_dir", RawArguments: `{}`}}}},
			{Match: modeltest.Match{AnyMessage: "icon.png"}, Reply: modeltest.Reply{Text: "A gradient."}},
		}}
	}
	for _, setting := range []string{"on", "off"} {
		t.Run(setting, func(t *testing.T) {
			both(t, func(t *testing.T) Config {
				return Config{Policy: tools.ModeFullAuto, Files: map[string]string{"icon.png": string(pic)}, Script: script(),
					Env: map[string]string{"AGENTD_MODEL_IMAGES": setting}}
			}, func(t *testing.T, env *Env) {
				e := env.StartInitialized()
				run := e.Run(agent.RunParams{Prompt: "look at the icon"})
				require.Equal(t, agent.StateCompleted, e.Finished(run.RunID).State)
				reqs := env.Model.Requests()
				require.Len(t, reqs, 2)
				msgs := reqs[1].Messages
				assert.Contains(t, msgs[len(msgs)-1-boolInt(setting == "on")].Content, "icon.png", "list_dir lists pictures")
				if setting == "off" {
					require.Equal(t, "tool", msgs[len(msgs)-2].Role)
					assert.Contains(t, msgs[len(msgs)-2].Content, "icon.png is an image (image/png, ")
					assert.Contains(t, msgs[len(msgs)-2].Content, "setting model.images is off")
					for _, m := range msgs {
						assert.Empty(t, m.Images)
					}
					return
				}
				// on: both results, then the picture
				require.Equal(t, "tool", msgs[len(msgs)-3].Role)
				require.Equal(t, "tool", msgs[len(msgs)-2].Role)
				assert.Contains(t, msgs[len(msgs)-3].Content, "icon.png is an image (PNG, 32×32")
				pm := msgs[len(msgs)-1]
				assert.Equal(t, "user", pm.Role)
				assert.Equal(t, "[agentd: the image from read icon.png]", pm.Content)
				assert.Equal(t, []string{"data:image/png;base64," + base64.StdEncoding.EncodeToString(pic)}, pm.Images)
			})
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// A steer may bring a picture: it reaches the model with the words, after
// the result of the command that was running, and the steer update names it.
func TestSteerWithAnImage(t *testing.T) {
	pic := testPNG(t, 20, 10)
	b64 := base64.StdEncoding.EncodeToString(pic)
	both(t, func(t *testing.T) Config {
		return Config{Policy: tools.ModeFullAuto, Script: &modeltest.Script{Turns: []modeltest.Turn{
			{Match: modeltest.Match{LastUser: "build it"},
				Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{callOf("call_wait", "run_cmd", cmd("while [ ! -e go ]; do sleep 0.02; done; echo built"))}}},
			{Match: modeltest.Match{LastUser: "it looks like this"}, Reply: modeltest.Reply{Text: "I see the broken button."}},
		}}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "build it"})
		e.ToolRunning()
		e.MustCall(wire.MethodSteer, agent.SteerParams{RunID: run.RunID, Text: "it looks like this",
			Images: []agent.ImageInput{{MimeType: "image/png", Data: b64, Name: "button.png"}}}, nil)
		require.NoError(t, os.WriteFile(filepath.Join(env.Root, "go"), nil, 0o644))
		st := e.Finished(run.RunID)
		require.Equal(t, agent.StateCompleted, st.State, st.Error)
		last := env.Model.Requests()[1].Last()
		assert.Equal(t, "it looks like this", last.Content)
		assert.Equal(t, []string{"data:image/png;base64," + b64}, last.Images)
		var steered []agent.ImageRef
		for _, u := range e.Updates(run.RunID) {
			if u.Kind == agent.UpdateSteer {
				steered = u.Images
			}
		}
		require.Len(t, steered, 1)
		assert.Equal(t, "button.png", steered[0].Name)
		e.CallErr(wire.MethodSteer, agent.SteerParams{RunID: run.RunID, Images: []agent.ImageInput{{Data: "x"}}}, wire.CodeInvalidParams)
	})
}
