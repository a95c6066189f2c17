package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/internal/await"
)

// TestModelViewSubagent pins what a subagent reads (its first request: its
// own system message, the prompt its parent wrote, its tools) and what its
// parent reads back: its answer with the files it read, and the refusals a
// task call or a subagent's call can get.
func TestModelViewSubagent(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "cart.go"), []byte(cartGo), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte("Money is in cents.\n"), 0o644))
	const prompt = "Find where the cart total is computed; answer with the file, the line and the function's signature."
	srv := modeltest.StartT(t, &modeltest.Script{Turns: []modeltest.Turn{
		{Name: "parent done", Match: modeltest.Match{LastUser: "look at this", MinToolResults: 3}, Reply: modeltest.Reply{Text: "done"}},
		{Name: "parent", Match: modeltest.Match{LastUser: "look at this"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
			call("task", map[string]any{"description": "Find the cart total", "prompt": prompt}),
			call("task", map[string]any{"description": "Fix it", "prompt": "Fix the total.", "tools": []string{"edit_file", "task"}}),
			call("task", map[string]any{"description": "", "prompt": " "})}}},
		{Name: "child answers", Match: modeltest.Match{LastUser: prompt, MinToolResults: 2},
			Reply: modeltest.Reply{Text: "cart.go:4: func Total(items []int) int — it sums the items."}},
		{Name: "child", Match: modeltest.Match{LastUser: prompt}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
			call("read_file", map[string]any{"path": "cart.go"}),
			call("edit_file", map[string]any{"path": "cart.go", "old_string": "sum := 0", "new_string": "sum := 1"})}}},
	}})
	a, finished := viewAgent(t, root, srv, "", nil, nil)
	_, err = a.Run(context.Background(), RunParams{Prompt: "look at this"})
	require.NoError(t, err)
	st := await.Recv(t, "the run to finish", 60*time.Second, finished)
	require.Equal(t, StateCompleted, st.State, st.Error)
	require.Empty(t, srv.Unused())

	var child, childLast, parentLast modeltest.Request
	for _, r := range srv.Requests() {
		switch r.Turn {
		case "child":
			child = r
		case "child answers":
			childLast = r
		case "parent done":
			parentLast = r
		}
	}
	var b strings.Builder
	b.WriteString("# A subagent: its first request (its own system message and the prompt its parent wrote, nothing of the parent's conversation), its tools, what its calls read; then what its parent reads of each task call\n")
	fmt.Fprintf(&b, "\n== the subagent's system message:\n%s\n\n== the subagent's first user message:\n%s\n\n== the subagent's tools: %s\n",
		child.Messages[0].Content, child.Messages[1].Content, strings.Join(child.Tools, ", "))
	writeCalls(&b, childLast)
	b.WriteString("\n# The parent\n")
	writeCalls(&b, parentLast)
	view := strings.ReplaceAll(b.String(), root, "/home/ada/shop")
	golden(t, "subagent.txt", normalizeView(t, view))
}

// writeCalls writes each call of a request's conversation with what the
// model read of it.
func writeCalls(b *strings.Builder, req modeltest.Request) {
	results := map[string]string{}
	for _, m := range req.Messages {
		if m.Role == RoleTool {
			results[m.ToolCallID] = m.Content
		}
	}
	for _, m := range req.Messages {
		for _, tc := range m.ToolCalls {
			fmt.Fprintf(b, "\n== call: %s %s\n== result (what the model reads):\n%s\n", tc.Name, tc.Arguments, results[tc.ID])
		}
	}
}
