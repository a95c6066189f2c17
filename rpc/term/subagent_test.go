package term

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent/modeltest"
)

// Subagents in the terminal: the task calls' subagents run at once, each
// one's calls printed indented under the tasks and labelled with it; the
// question one asks is put to the user labelled with it; each task ends
// with the subagent's answer.
func TestRunSubagentsNested(t *testing.T) {
	const cart = "Find where the cart total is computed."
	const currency = "Which currency should totals use? Ask the user."
	task := func(id, description, prompt string) modeltest.ToolCall {
		return modeltest.ToolCall{ID: id, Name: "task", Arguments: modeltest.Args(map[string]string{"description": description, "prompt": prompt})}
	}
	srv := scripted(t,
		modeltest.Turn{Name: "parent done", Match: modeltest.Match{LastUser: "survey the cart", MinToolResults: 2}, Reply: text("Totals are in cart.go; the user wants EUR.")},
		modeltest.Turn{Name: "parent", Match: modeltest.Match{LastUser: "survey the cart"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
			task("t1", "Find the cart total", cart), task("t2", "Ask about the currency", currency)}}},
		modeltest.Turn{Name: "cart done", Match: modeltest.Match{LastUser: cart, AfterTool: "read_file"}, Reply: text("Total is in cart.go, line 4.")},
		modeltest.Turn{Name: "cart", Match: modeltest.Match{LastUser: cart}, Reply: call("call_1", "read_file", map[string]string{"path": "cart.go"})},
		modeltest.Turn{Name: "currency done", Match: modeltest.Match{LastUser: currency, AfterTool: "ask_user"}, Reply: text("The user wants EUR.")},
		modeltest.Turn{Name: "currency", Match: modeltest.Match{LastUser: currency}, Reply: call("call_1", "ask_user", map[string]string{"question": "Which currency should totals use?"})})
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "cart.go"), []byte("package cart\n\n// Total sums the cart.\nfunc Total(items []int) int { return 0 }\n"), 0o644))
	term := startTerminalIn(t, root, srv.URL, "survey the cart")
	term.waitFor("• Subagent: Find the cart total")
	term.waitFor("• Subagent: Ask about the currency")
	term.waitForScreen("↳ subagent “Ask about the currency” asks:")
	term.waitForScreen("? Which currency should totals use?")
	term.typeLine("EUR")
	term.waitFor("→ EUR")
	term.waitFor("Totals are in cart.go; the user wants EUR.")
	assert.Equal(t, ExitCompleted, term.exitCode())
	out := term.text()
	assert.Contains(t, out, "↳ Find the cart total · read cart.go", "the subagent's call, under its task, labelled")
	assert.Contains(t, out, "Total is in cart.go, line 4.", "the task's answer")
	assert.Contains(t, out, "read 1 file")
	assert.NotContains(t, out, "Files the subagent read", "said in the task's line")
	// The subagent's own text is not printed as the run's answer.
	assert.Equal(t, 1, strings.Count(out, "Totals are in cart.go; the user wants EUR."))
}
