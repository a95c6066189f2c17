package term

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/internal/await"
	"github.com/agentd/agentd/internal/proctest"
)

// What the terminal shows (issue 18): a spinner with the activity, a
// running command's last lines and a failed one's whole output, markdown
// laid out, reasoning folded, a plain mode without a terminal, --json.

// A running command shows under a spinner that turns, with its last lines;
// a failed one prints its whole output.
func TestRunSpinnerAndStreamedOutput(t *testing.T) {
	srv := scripted(t,
		modeltest.Turn{Name: "stream", Match: modeltest.Match{LastUser: "build"},
			Reply: call("c1", "run_cmd", map[string]string{"command": "echo first; echo second; while [ ! -e go ]; do sleep 0.02; done; echo third"})},
		modeltest.Turn{Name: "fail", Match: modeltest.Match{AfterTool: "run_cmd", LastTool: "third"},
			Reply: call("c2", "run_cmd", map[string]string{"command": "for i in $(seq 1 30); do echo out$i; done; exit 3"})},
		modeltest.Turn{Name: "done", Match: modeltest.Match{AfterTool: "run_cmd", LastTool: "out30"}, Reply: text("The build failed.")})
	term := startTerminal(t, srv.URL, "build it", "--policy", "full-auto")
	term.waitForScreen("│ second")
	status := regexp.MustCompile(`(?m)^([⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]) running echo first.*Ctrl-C to cancel$`)
	first := status.FindStringSubmatch(term.screen())
	require.NotNil(t, first, "no spinner naming the command under its output")
	term.await("the spinner to turn", func() bool {
		m := status.FindStringSubmatch(term.screen())
		return m != nil && m[1] != first[1]
	})
	assert.NotContains(t, term.screen(), "│ third")
	require.NoError(t, os.WriteFile(filepath.Join(term.root, "go"), nil, 0o600))
	term.waitFor("✓ exit 0")
	term.waitFor("✗ exit 3")
	term.waitFor("The build failed.")
	assert.Equal(t, ExitCompleted, term.exitCode())
	all := term.text()
	for i := 1; i <= 30; i++ {
		assert.Contains(t, all, fmt.Sprintf("    out%d\n", i), "a failed command's whole output is shown")
	}
	assert.NotContains(t, all, "│ second", "the tail of a finished command stays on the screen")
}

// The answer is laid out: headings without their hashes, bullets, code in
// colour, paragraphs wrapped at the terminal's width between words.
func TestRunMarkdown(t *testing.T) {
	long := strings.Repeat("wrapping words around ", 8)
	answer := "# Heading One\n\nSome **bold** words.\n\n- apple\n- pear\n\n```go\nfunc main() {}\n```\n\n" + long + "\n"
	srv := scripted(t, modeltest.Turn{Match: modeltest.Match{LastUser: "explain"}, Reply: modeltest.Reply{Text: answer, Chunks: 9}})
	term := startTerminal(t, srv.URL, "explain")
	term.waitFor("• pear")
	assert.Equal(t, ExitCompleted, term.exitCode())
	screen := term.text()
	assert.Regexp(t, `(?m)^Heading One$`, screen)
	assert.NotContains(t, screen, "# Heading")
	assert.NotContains(t, screen, "**bold**")
	assert.Regexp(t, `(?m)^• apple$`, screen)
	assert.Regexp(t, `(?m)^  func main\(\) \{\}$`, screen)
	assert.NotContains(t, screen, "```")
	raw := term.rawOutput()
	assert.Contains(t, raw, "\x1b[35mfunc\x1b[0m", "Go keywords in colour")
	assert.Contains(t, raw, "\x1b[1mbold\x1b[0m")
	var para []string
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, "wrapping") {
			para = append(para, l)
		}
	}
	require.Len(t, para, 2, "the paragraph takes two lines at 100 columns")
	for _, l := range para {
		assert.Regexp(t, `^((wrapping|words|around) ?)+$`, l, "a line broke inside a word")
	}
}

// The model's reasoning streams dimmed and folds into one line; with
// --reasoning it stays whole.
func TestRunReasoningFolded(t *testing.T) {
	reply := modeltest.Reply{Reasoning: "I should weigh the two options carefully first.", Text: "Take the second."}
	srv := scripted(t, modeltest.Turn{Repeat: true, Match: modeltest.Match{LastUser: "choose"}, Reply: reply})
	term := startTerminal(t, srv.URL, "choose")
	term.waitFor("Take the second.")
	assert.Equal(t, ExitCompleted, term.exitCode())
	assert.Regexp(t, `thought for .* \(8 words\)`, term.text())
	assert.NotContains(t, term.text(), "weigh the two options")

	term = startTerminal(t, srv.URL, "choose", "--reasoning")
	term.waitFor("Take the second.")
	assert.Equal(t, ExitCompleted, term.exitCode())
	assert.Contains(t, term.text(), "I should weigh the two options carefully first.")
	assert.Contains(t, term.rawOutput(), "\x1b[2;3m  I should weigh")
}

// Tool calls show their key argument, not raw JSON.
func TestRunToolCallLines(t *testing.T) {
	srv := scripted(t,
		modeltest.Turn{Match: modeltest.Match{LastUser: "look"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
			{ID: "c1", Name: "run_cmd", Arguments: modeltest.Args(map[string]string{"command": "echo a && echo b"})},
			{ID: "c2", Name: "no_such_tool", Arguments: modeltest.Args(map[string]any{"query": "x & y", "n": 2})},
		}}},
		modeltest.Turn{Match: modeltest.Match{MinToolResults: 2}, Reply: text("Looked.")})
	term := startTerminal(t, srv.URL, "look around", "--policy", "full-auto")
	term.waitFor("Looked.")
	assert.Equal(t, ExitCompleted, term.exitCode())
	screen := term.text()
	assert.Contains(t, screen, "• $ echo a && echo b")
	assert.Contains(t, screen, `• no_such_tool n=2 query="x & y"`)
	assert.NotContains(t, term.rawOutput(), `\u0026`)
}

// runPiped runs agentd run without a terminal and returns its exit code,
// stdout and stderr.
func runPiped(t *testing.T, model, root string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(proctest.Agentd(t), append([]string{"run", "--dir", root}, args...)...)
	cmd.Env = runEnv(t, model, t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	if t.Failed() {
		t.Logf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

// Without a terminal the output is plain text: the answer as written, the
// calls and the command's output, no escape sequences.
func TestRunPlainWithoutTerminal(t *testing.T) {
	srv := scripted(t,
		modeltest.Turn{Match: modeltest.Match{LastUser: "count"}, Reply: call("c1", "run_cmd", map[string]string{"command": "echo one; echo two"})},
		modeltest.Turn{Match: modeltest.Match{AfterTool: "run_cmd"}, Reply: text("# Counted\n\nTwo **lines**.\n")})
	code, stdout, stderr := runPiped(t, srv.URL, t.TempDir(), "count", "--policy", "full-auto")
	assert.Equal(t, ExitCompleted, code)
	assert.NotContains(t, stdout, "\x1b")
	assert.Contains(t, stdout, "• $ echo one; echo two\n    one\n    two\n  ✓ exit 0")
	assert.Contains(t, stdout, "# Counted\n\nTwo **lines**.\n")
	assert.Contains(t, stderr, "no terminal")
	assert.Regexp(t, `session s_\w+, run r_\w+: completed`, stderr)
}

// --json prints every notification as a line of JSON, in order, the run's
// end last; stdout carries nothing else.
func TestRunJSONLines(t *testing.T) {
	srv := scripted(t,
		modeltest.Turn{Match: modeltest.Match{LastUser: "count"}, Reply: call("c1", "run_cmd", map[string]string{"command": "echo one"})},
		modeltest.Turn{Match: modeltest.Match{AfterTool: "run_cmd"}, Reply: text("Counted & done.")})
	code, stdout, _ := runPiped(t, srv.URL, t.TempDir(), "count", "--json", "--policy", "full-auto")
	assert.Equal(t, ExitCompleted, code)
	var events []agent.Event
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		var e agent.Event
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e), "not a JSON line: %s", sc.Text())
		events = append(events, e)
	}
	require.NotEmpty(t, events)
	kinds := map[string]bool{}
	var answer strings.Builder
	for i, e := range events {
		assert.Equal(t, int64(i+1), e.Seq, "events in seq order, none missing")
		if e.Kind == agent.EventUpdate {
			var p agent.UpdateParams
			require.NoError(t, json.Unmarshal(e.Params, &p))
			kinds[string(p.Update.Kind)] = true
			if p.Update.Kind == agent.UpdateMessageChunk {
				answer.WriteString(p.Update.Text)
			}
		}
	}
	assert.Equal(t, "Counted & done.", answer.String())
	assert.NotContains(t, stdout, `\u0026`)
	for _, k := range []string{"tool_call", "tool_call_update", "message_chunk", "result"} {
		assert.True(t, kinds[k], "no %s update", k)
	}
	last := events[len(events)-1]
	assert.Equal(t, agent.EventRunState, last.Kind)
	var st agent.RunState
	require.NoError(t, json.Unmarshal(last.Params, &st))
	assert.Equal(t, agent.StateCompleted, st.State)
}

// Flags may follow the prompt: `agentd run "hi" --policy read-only` runs
// read-only with the prompt "hi".
func TestRunFlagsAfterThePrompt(t *testing.T) {
	srv := scripted(t,
		modeltest.Turn{Match: modeltest.Match{LastUser: "hi"}, Reply: call("w1", "write_file", map[string]string{"path": "note.txt", "content": "x\n"})},
		modeltest.Turn{Match: modeltest.Match{AfterTool: "write_file"}, Reply: text("Could not write.")})
	term := startTerminal(t, srv.URL, "hi", "--policy", "read-only")
	term.waitFor("Could not write.")
	assert.Equal(t, ExitCompleted, term.exitCode())
	assert.Contains(t, term.text(), "policy read-only")
	assert.Equal(t, "hi", firstPrompt(t, srv))
	assert.NotContains(t, term.text(), "Allow this change", "read-only refuses writes without asking")
	assert.False(t, noteWritten(term))
}

// The model can search the workspace index in the terminal, as in the
// editors; with --no-index the tool says to use grep.
func TestRunSearchSemantic(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "billing"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(root, "billing", "invoice.go"), []byte(
		"package billing\n\n// ComputeInvoiceTotal adds the invoice lines and the tax.\nfunc ComputeInvoiceTotal(lines []int, tax int) int {\n\ttotal := tax\n\tfor _, l := range lines {\n\t\ttotal += l\n\t}\n\treturn total\n}\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(root, "README.md"), []byte("# Shop\n\nA small shop.\n"), 0o600))
	search := call("s1", "search_semantic", map[string]string{"query": "compute the invoice total"})
	srv := scripted(t,
		modeltest.Turn{Repeat: true, Match: modeltest.Match{AfterTool: "search_semantic", LastTool: "billing/invoice.go  (strong"}, Reply: text("In billing/invoice.go.")},
		modeltest.Turn{Repeat: true, Match: modeltest.Match{AfterTool: "search_semantic", LastTool: "not available"}, Reply: text("No index here.")},
		modeltest.Turn{Repeat: true, Match: modeltest.Match{LastUser: "where", MinToolResults: 0}, Reply: search})
	code, stdout, _ := runPiped(t, srv.URL, root, "where is the invoice total computed")
	assert.Equal(t, ExitCompleted, code)
	assert.Contains(t, stdout, "In billing/invoice.go.")

	code, stdout, _ = runPiped(t, srv.URL, root, "where is the invoice total computed", "--no-index")
	assert.Equal(t, ExitCompleted, code)
	assert.Contains(t, stdout, "No index here.")
}

// A one-shot run leaves nothing behind: it exits as soon as the run ends,
// its index (started by a search) watching the workspace, and no process of
// its session survives it, not even a command's background job.
func TestRunLeavesNothingRunning(t *testing.T) {
	root := t.TempDir()
	for i := range 300 {
		dir := filepath.Join(root, "pkg"+strconv.Itoa(i%20))
		require.NoError(t, os.MkdirAll(dir, 0o700))
		src := fmt.Sprintf("package p\n\n// F%d does thing %d.\nfunc F%d() int { return %d }\n", i, i, i, i)
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.go", i)), []byte(src), 0o600))
	}
	srv := scripted(t,
		modeltest.Turn{Match: modeltest.Match{LastUser: "bye"}, Reply: call("s1", "search_semantic", map[string]string{"query": "thing 7"})},
		modeltest.Turn{Match: modeltest.Match{AfterTool: "search_semantic"}, Reply: call("c1", "run_cmd", map[string]string{"command": "sleep 30 & echo started"})},
		modeltest.Turn{Match: modeltest.Match{AfterTool: "run_cmd"}, Reply: text("Bye.")})
	term := startTerminalIn(t, root, srv.URL, "bye", "--policy", "full-auto")
	term.waitFor("Bye.")
	start := time.Now()
	assert.Equal(t, ExitCompleted, term.exitWithin(5*time.Second))
	t.Logf("exited %v after the answer", time.Since(start).Round(time.Millisecond))
	sid := term.cmd.Process.Pid // pty.Start makes agentd a session leader
	self, err := os.ReadFile("/proc/self/stat")
	require.NoError(t, err)
	mine := strings.Fields(string(self)[strings.LastIndexByte(string(self), ')')+1:])[3]
	require.NotEmpty(t, sessionProcesses(atoi(t, mine)), "sessionProcesses finds nothing, not even this test")
	dl := await.NewDeadline(5 * time.Second)
	for left := sessionProcesses(sid); len(left) > 0; left = sessionProcesses(sid) {
		if dl.Passed() {
			t.Fatalf("processes of agentd's session still run: %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func atoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	require.NoError(t, err)
	return n
}

// sessionProcesses lists the processes of session sid, from /proc.
func sessionProcesses(sid int) []string {
	var out []string
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		s := string(b)
		end := strings.LastIndexByte(s, ')')
		if end < 0 {
			continue
		}
		// After "pid (comm)": state ppid pgrp session …
		f := strings.Fields(s[end+1:])
		if len(f) > 3 && f[3] == strconv.Itoa(sid) {
			out = append(out, s[:end+1])
		}
	}
	return out
}
