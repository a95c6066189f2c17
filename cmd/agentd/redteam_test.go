package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent/modeltest"
)

// osc52 would set the terminal's clipboard (here to "echo pwned"), ready
// for the next paste into a shell.
const (
	osc52   = "\x1b]52;c;ZWNobyBwd25lZA==\x07"
	escaped = `\x1b]52;c;ZWNobyBwd25lZA==\x07`
)

// TestRedTeamUndoListShowsWhatCommandsWroteAsText: `agentd undo --list`
// and `--diff` show command lines, file names and contents a full-auto
// command wrote; a file named with an escape sequence, and one holding
// one, reach the terminal as text.
func TestRedTeamUndoListShowsWhatCommandsWroteAsText(t *testing.T) {
	w := newUndoWorld(t)
	// A script, so that the command line itself is one a full-auto run
	// runs unasked.
	line := `echo 'printf "x\033]52;c;ZWNobyBwd25lZA==\007\n" > "$(printf "n\033]52;c;ZWNobyBwd25lZA==\007")"' > p.sh && bash p.sh`
	s := &modeltest.Script{Turns: []modeltest.Turn{
		{Match: modeltest.Match{LastUser: "plant"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: "c1", Name: "run_cmd", Arguments: modeltest.Args(map[string]string{"command": line})}}}},
		{Match: modeltest.Match{AfterTool: "run_cmd"}, Reply: modeltest.Reply{Text: "Planted."}},
	}}
	model := modeltest.StartT(t, s)
	for i, kv := range w.env {
		if strings.HasPrefix(kv, "OPENAI_BASE_URL=") {
			w.env[i] = "OPENAI_BASE_URL=" + model.URL
		}
	}
	out, code := w.agentd("run", "--policy", "full-auto", "plant")
	require.Equal(t, 0, code, out)
	require.FileExists(t, filepath.Join(w.root, "n"+osc52), out)
	for _, args := range [][]string{{"undo", "--list"}, {"undo", "--dry-run", "--diff"}} {
		out, code = w.agentd(args...)
		require.Equal(t, 0, code, out)
		assert.NotContains(t, out, "\x1b]52", args)
		assert.Contains(t, out, escaped, args)
	}
}
