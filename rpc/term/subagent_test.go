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

// TestRunSubagentQuestionStaysInSight: while a subagent's question waits
// for the user, its sibling goes on and prints its work; the question,
// pushed up, is shown again right above the answer line, and printed
// again above the answer given.
func TestRunSubagentQuestionStaysInSight(t *testing.T) {
	const cart = "Find where the cart total is computed."
	const currency = "Which currency should totals use? Ask the user."
	gate := filepath.Join(t.TempDir(), "cart")
	task := func(id, description, prompt string) modeltest.ToolCall {
		return modeltest.ToolCall{ID: id, Name: "task", Arguments: modeltest.Args(map[string]string{"description": description, "prompt": prompt})}
	}
	held := call("call_1", "read_file", map[string]string{"path": "cart.go"})
	held.Gate = gate
	srv := scripted(t,
		modeltest.Turn{Name: "parent done", Match: modeltest.Match{LastUser: "survey the cart", MinToolResults: 2}, Reply: text("Totals are in cart.go; the user wants EUR.")},
		modeltest.Turn{Name: "parent", Match: modeltest.Match{LastUser: "survey the cart"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
			task("t1", "Find the cart total", cart), task("t2", "Ask about the currency", currency)}}},
		modeltest.Turn{Name: "cart done", Match: modeltest.Match{LastUser: cart, AfterTool: "read_file"}, Reply: text("Total is in cart.go, line 4.")},
		modeltest.Turn{Name: "cart", Match: modeltest.Match{LastUser: cart}, Reply: held},
		modeltest.Turn{Name: "currency done", Match: modeltest.Match{LastUser: currency, AfterTool: "ask_user"}, Reply: text("The user wants EUR.")},
		modeltest.Turn{Name: "currency", Match: modeltest.Match{LastUser: currency}, Reply: call("call_1", "ask_user", map[string]string{"question": "Which currency should totals use?"})})
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "cart.go"), []byte("package cart\n\n// Total sums the cart.\nfunc Total(items []int) int { return 0 }\n"), 0o644))
	term := startTerminalIn(t, root, srv.URL, "survey the cart")
	term.waitForScreen("? Which currency should totals use?")
	assert.Equal(t, 1, strings.Count(term.screen(), "? Which currency should totals use?"), "right under its header, the prompt does not repeat it")

	require.NoError(t, os.WriteFile(gate, nil, 0o644))
	term.waitFor("Total is in cart.go, line 4.")
	term.await("the question again right above the answer line", func() bool {
		bottom := bottomLines(term.screen(), 4)
		return strings.Contains(bottom, "↳ subagent “Ask about the currency” asks:") && strings.Contains(bottom, "? Which currency should totals use?")
	})
	term.typeLine("EUR")
	term.waitFor("Totals are in cart.go; the user wants EUR.")
	assert.Equal(t, ExitCompleted, term.exitCode())
	// What scrolled away reads: the question again, then its answer.
	out := term.text()
	i := strings.Index(out, "→ EUR")
	require.GreaterOrEqual(t, i, 0)
	assert.Equal(t, "↳ subagent “Ask about the currency” asks:\n? Which currency should totals use?\n  → EUR",
		bottomLines(out[:i+len("→ EUR")], 3))
	assert.Equal(t, 2, strings.Count(out, "? Which currency should totals use?"), "asked once, recalled once above its answer")
}

// bottomLines are the last n lines of s that are not blank.
func bottomLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n "), "\n")
	var kept []string
	for i := len(lines) - 1; i >= 0 && len(kept) < n; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			kept = append([]string{lines[i]}, kept...)
		}
	}
	return strings.Join(kept, "\n")
}
