package term

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent/modeltest"
)

// agentd run --image attaches a picture from anywhere the user names: the
// terminal lists it under the header and the model gets it.
func TestRunWithAnImage(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 120, 80))
	for x := range 120 {
		img.Set(x, 40, color.RGBA{0, 0, 255, 255})
	}
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, img))
	pic := filepath.Join(t.TempDir(), "dialog.png") // outside the workspace: the user named it
	require.NoError(t, os.WriteFile(pic, buf.Bytes(), 0o644))
	srv := modeltest.StartT(t, &modeltest.Script{Turns: []modeltest.Turn{
		{Match: modeltest.Match{LastUser: "what does the dialog say"}, Reply: modeltest.Reply{Text: "It shows a blue line."}}}})

	term := startTerminal(t, srv.URL, "--image", pic, "what does the dialog say?")
	term.waitFor("It shows a blue line.")
	assert.Contains(t, term.text(), "• image dialog.png (PNG, 120×80, ")
	assert.Equal(t, ExitCompleted, term.exitCode())
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, []string{"data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())}, reqs[0].Last().Images)

	bad := startTerminal(t, srv.URL, "--image", filepath.Join(t.TempDir(), "missing.png"), "look")
	bad.waitFor("--image: open ")
	assert.Equal(t, ExitUsage, bad.exitCode())
}
