package agent

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/internal/await"
	"github.com/agentd/agentd/tools"
)

// What the model receives, pinned as golden files in testdata/modelview:
// the system message, the tool list, and each tool's result in its common
// cases, exactly as the next request carries them. They are reviewed like
// an API: read each as a small model would, which reads a result literally
// and acts on what it says (go test ./agent -run ModelView -update, then
// read the diff).

var update = flag.Bool("update", false, "rewrite the golden files of testdata/modelview")

const viewDir = "../testdata/modelview"

// viewCase is a run whose steps make the given calls, in a workspace.
type viewCase struct {
	name, about string
	files       map[string]string
	steps       [][]modeltest.ToolCall
	policy      tools.Mode
	kinds       []RequestKind // nil: every kind can be asked
	// lang, when set, is the session's language servers (its root is
	// filled in).
	lang *fakeLanguage
}

// call is a tool call with its arguments as a model writes them (no HTML
// escaping: 2>&1 stays 2>&1).
func call(name string, args any) modeltest.ToolCall {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(args); err != nil {
		panic(err)
	}
	return modeltest.ToolCall{Name: name, RawArguments: strings.TrimSpace(b.String())}
}

func viewCases() []viewCase {
	big := bigGoFile(1885)
	gotest := "for i in $(seq 1 700); do echo \"=== RUN   TestCase$i\"; echo \"--- PASS: TestCase$i (0.00s)\";" +
		" if [ $i = 350 ]; then echo '=== RUN   TestTotal'; echo '    cart_test.go:42: Total() = 9, want 10'; echo '--- FAIL: TestTotal (0.00s)'; fi; done;" +
		" echo FAIL; echo 'FAIL\tshop/cart\t0.412s'; exit 1"
	tabbed := "package p\n\nfunc F(xs []int) int {\n\ttotal := 0\n\tfor _, x := range xs {\n\t\ttotal += x\n\t}\n\treturn total\n}\n"
	return []viewCase{
		{name: "read_big_file", about: "read_file without a limit on a 1,885-line file",
			files: map[string]string{"big.go": big},
			steps: [][]modeltest.ToolCall{{call("read_file", map[string]any{"path": "big.go"})}}},
		{name: "read_range", about: "read_file of a window in the middle, then the end of the file",
			files: map[string]string{"big.go": big},
			steps: [][]modeltest.ToolCall{{call("read_file", map[string]any{"path": "big.go", "offset": 900, "limit": 12})},
				{call("read_file", map[string]any{"path": "big.go", "offset": 1880})}}},
		{name: "run_test_failures", about: "run_cmd with long test output whose failure is in the middle",
			policy: tools.ModeFullAuto,
			steps:  [][]modeltest.ToolCall{{call("run_cmd", map[string]any{"command": gotest})}}},
		{name: "run_pipefail", about: "run_cmd of a failing command piped through tail: the failure is reported",
			policy: tools.ModeFullAuto,
			steps:  [][]modeltest.ToolCall{{call("run_cmd", map[string]any{"command": "(echo 'ok  \tshop/a'; echo 'FAIL\tshop/cart'; exit 1) 2>&1 | tail -80"})}}},
		{name: "run_denied", about: "run_cmd of a command the policy never allows",
			steps: [][]modeltest.ToolCall{{call("run_cmd", map[string]any{"command": "sudo rm -rf /var/cache/shop"})}}},
		{name: "run_unconfirmable", about: "run_cmd that needs approval when no one can give it",
			kinds: []RequestKind{},
			steps: [][]modeltest.ToolCall{{call("run_cmd", map[string]any{"command": "go build ./..."})}}},
		{name: "edit_result", about: "edit_file that applies: the changed lines as they now read",
			files: map[string]string{"p/p.go": tabbed}, policy: tools.ModeFullAuto,
			steps: [][]modeltest.ToolCall{{call("read_file", map[string]any{"path": "p/p.go"})},
				{call("edit_file", map[string]any{"path": "p/p.go", "old_string": "\t\ttotal += x\n", "new_string": "\t\tif x > 0 {\n\t\t\ttotal += x\n\t\t}\n"})}}},
		{name: "edit_reindented", about: "edit_file matched ignoring indentation (spaces for the file's tabs): re-indented",
			files: map[string]string{"p/p.go": tabbed}, policy: tools.ModeFullAuto,
			steps: [][]modeltest.ToolCall{{call("read_file", map[string]any{"path": "p/p.go"})},
				{call("edit_file", map[string]any{"path": "p/p.go", "old_string": "    for _, x := range xs {\n        total += x\n    }",
					"new_string": "    for _, x := range xs {\n        if x < 0 {\n            continue\n        }\n        total += x\n    }"})}}},
		{name: "edit_no_match", about: "edit_file whose old_string is not in the file",
			files: map[string]string{"p/p.go": tabbed}, policy: tools.ModeFullAuto,
			steps: [][]modeltest.ToolCall{{call("read_file", map[string]any{"path": "p/p.go"})},
				{call("edit_file", map[string]any{"path": "p/p.go", "old_string": "\tfor i, x := range xs {\n\t\ttotal += x", "new_string": "\tfor _, x := range xs {\n\t\ttotal -= x"})}}},
		{name: "edit_batch", about: "three edit_file calls of one file in one reply, applied in order",
			files: map[string]string{"p/p.go": "package p\n\nfunc A() int { return 1 }\n\nfunc B() int { return 2 }\n\nfunc C() int { return 3 }\n"}, policy: tools.ModeFullAuto,
			steps: [][]modeltest.ToolCall{{call("read_file", map[string]any{"path": "p/p.go"})},
				{call("edit_file", map[string]any{"path": "p/p.go", "old_string": "return 1", "new_string": "return 10"}),
					call("edit_file", map[string]any{"path": "p/p.go", "old_string": "return 2", "new_string": "return 20"}),
					call("edit_file", map[string]any{"path": "p/p.go", "old_string": "return 3", "new_string": "return 30"})}}},
		{name: "syntax_gate", about: "edit_file that would break Go syntax far from where the parser notices",
			files: map[string]string{"p/p.go": longGoFile()}, policy: tools.ModeFullAuto,
			steps: [][]modeltest.ToolCall{{call("read_file", map[string]any{"path": "p/p.go"})},
				{call("edit_file", map[string]any{"path": "p/p.go", "old_string": "\tif n > 1 {\n\t\treturn n\n\t}\n", "new_string": "\tif n > 1 {\n\t\treturn n\n"})}}},
		{name: "patch_result", about: "apply_patch of two files: each file's changed lines as they now read",
			files: map[string]string{"a.txt": "alpha\nbeta\ngamma\n", "b.txt": "one\ntwo\nthree\n"}, policy: tools.ModeFullAuto,
			steps: [][]modeltest.ToolCall{{call("apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n alpha\n-beta\n+BETA\n gamma\n*** Update File: b.txt\n@@\n one\n+one and a half\n two\n*** End Patch"})}}},
		{name: "grep_many", about: "grep matching more lines than one result holds",
			files: map[string]string{"log.txt": strings.Repeat("ERROR something failed\n", 400)},
			steps: [][]modeltest.ToolCall{{call("grep", map[string]any{"pattern": "ERROR"})}}},
		{name: "write_partly_read", about: "write_file over a file read only in part",
			files: map[string]string{"big.go": big}, policy: tools.ModeFullAuto,
			steps: [][]modeltest.ToolCall{{call("read_file", map[string]any{"path": "big.go", "limit": 30})},
				{call("write_file", map[string]any{"path": "big.go", "content": "package big\n"})}}},
		{name: "nested_instructions", about: "the first read under a directory with its own AGENTS.md",
			files: map[string]string{"web/AGENTS.md": "Use pnpm, never npm.\nRun `pnpm test` before you finish.\n", "web/app.ts": "export const x = 1\n", "web/util.ts": "export const y = 2\n"},
			steps: [][]modeltest.ToolCall{{call("read_file", map[string]any{"path": "web/app.ts"})}, {call("read_file", map[string]any{"path": "web/util.ts"})}}},
		{name: "call_mistakes", about: "calls a model gets wrong: a tool that does not exist, arguments cut short or of the wrong type, a regular expression that does not compile",
			files: map[string]string{"p/p.go": tabbed}, kinds: []RequestKind{},
			steps: [][]modeltest.ToolCall{{call("view_file", map[string]any{"path": "p/p.go"}),
				{Name: "read_file", RawArguments: `{"path": "p/p.go"`},
				{Name: "read_file", RawArguments: `{"path": "p/p.go", "offset": "3"}`},
				call("grep", map[string]any{"pattern": "F(xs"})}}},
		{name: "arg_mistakes", about: "arguments that do not fit the tool's schema: a parameter under another name, one missing, a bound passed; refused before the tool runs, every problem named",
			files: map[string]string{"p/p.go": tabbed}, kinds: []RequestKind{},
			steps: [][]modeltest.ToolCall{{call("read_file", map[string]any{"file_path": "p/p.go"}),
				call("list_dir", map[string]any{"path": "p", "depth": 10}),
				call("run_cmd", map[string]any{"cmd": "go test ./...", "timeout": 3600}),
				call("edit_file", map[string]any{"path": "p/p.go", "old_string": "x", "newString": "y"})}}},
		{name: "plan_mistakes", about: "update_plan with two steps in progress (taken, with a reminder), then with a status that does not exist",
			steps: [][]modeltest.ToolCall{{call("update_plan", map[string]any{"plan": []map[string]string{{"step": "Read the code", "status": "in_progress"}, {"step": "Fix the bug", "status": "in_progress"}}})},
				{call("update_plan", map[string]any{"plan": []map[string]string{{"step": "Read the code", "status": "done"}}})}}},
		{name: "lsp_navigation", about: "go_to_definition, find_references and hover; then a name on no line given, an ambiguous name, a symbol not on the line, definitions outside the workspace",
			files: map[string]string{"cart.go": cartGo, "main.go": mainGo, "util.go": "package shop\n\nfunc Max(a, b int) int { return a }\n", "web/max.ts": "export function Max() {}\n"},
			lang: &fakeLanguage{defs: map[string][]string{"Total": {"cart.go:4:6"}, "Max": {"util.go:3:6", "web/max.ts:1:17"},
				"secret": {"/home/ada/.ssh/id_rsa:1:1"}},
				refs:   map[string][]string{"Total": {"main.go:4:9", "main.go:8:14"}},
				hovers: map[string]string{"Total": "```go\nfunc Total(items []int) int\n```\n\nTotal sums the cart."}},
			steps: [][]modeltest.ToolCall{{call("go_to_definition", map[string]any{"symbol": "Total", "path": "main.go", "line": 4}),
				call("find_references", map[string]any{"symbol": "Total", "path": "cart.go", "line": 4}),
				call("hover", map[string]any{"symbol": "Total", "path": "main.go", "line": 4})},
				{call("go_to_definition", map[string]any{"symbol": "Total"}),
					call("go_to_definition", map[string]any{"symbol": "Max"}),
					call("go_to_definition", map[string]any{"symbol": "Total", "path": "main.go", "line": 3}),
					call("go_to_definition", map[string]any{"symbol": "secret", "path": "main.go", "line": 9})}}},
		{name: "lsp_diagnostics", about: "a reply of three edits: the language server's diagnostics once, after the last edit, new problems first (a file no server covers is not mentioned)",
			files: map[string]string{"cart.go": cartGo, "main.go": mainGo, "README.md": "# shop\n"}, policy: tools.ModeFullAuto,
			lang: &fakeLanguage{
				before: map[string][]tools.Diagnostic{"main.go": {diag(3, 6, tools.SeverityWarning, "lint", "", "exported func Checkout should have a comment")}},
				after: map[string][]tools.Diagnostic{
					"main.go": {diag(3, 6, tools.SeverityWarning, "lint", "", "exported func Checkout should have a comment"),
						diag(4, 9, tools.SeverityError, "compiler", "UndeclaredName", "undefined: Totl"),
						diag(8, 2, tools.SeverityHint, "unusedresult", "", "result of fmt.Sprintf call not used")},
					"cart.go": {diag(6, 2, tools.SeverityError, "compiler", "", "declared and not used: unused\nsee https://go.dev/ref/spec#Variable_declarations")}}},
			steps: [][]modeltest.ToolCall{{call("read_file", map[string]any{"path": "cart.go"}), call("read_file", map[string]any{"path": "main.go"}), call("read_file", map[string]any{"path": "README.md"})},
				{call("edit_file", map[string]any{"path": "main.go", "old_string": "return Total(items)", "new_string": "return Totl(items)"}),
					call("edit_file", map[string]any{"path": "cart.go", "old_string": "\tsum := 0\n", "new_string": "\tsum := 0\n\tunused := 1\n"}),
					call("edit_file", map[string]any{"path": "README.md", "old_string": "# shop", "new_string": "# Shop"})}}},
		{name: "lsp_diagnostics_other", about: "a rename in one file that breaks its caller in a file the reply did not change",
			files: map[string]string{"cart.go": cartGo, "main.go": mainGo}, policy: tools.ModeFullAuto,
			lang: &fakeLanguage{before: map[string][]tools.Diagnostic{"cart.go": nil},
				related: map[string][]tools.Diagnostic{"main.go": {diag(4, 9, tools.SeverityError, "compiler", "UndeclaredName", "undefined: Total"),
					diag(8, 14, tools.SeverityError, "compiler", "UndeclaredName", "undefined: Total")}}},
			steps: [][]modeltest.ToolCall{{call("read_file", map[string]any{"path": "cart.go"})},
				{call("edit_file", map[string]any{"path": "cart.go", "old_string": "func Total(", "new_string": "func Sum("})}}},
		{name: "lsp_diagnostics_slow", about: "a reply whose language server did not finish checking in time",
			files: map[string]string{"main.go": mainGo}, policy: tools.ModeFullAuto,
			lang: &fakeLanguage{pending: map[string]bool{"main.go": true},
				before: map[string][]tools.Diagnostic{"main.go": {diag(3, 6, tools.SeverityWarning, "lint", "", "exported func Checkout should have a comment")}}},
			steps: [][]modeltest.ToolCall{{call("read_file", map[string]any{"path": "main.go"})},
				{call("edit_file", map[string]any{"path": "main.go", "old_string": "* 2", "new_string": "* 3"})}}},
		{name: "plan_mode", about: "plan mode: a write and a command that writes are refused unasked, a read goes through; then propose_plan where no one can approve it",
			files: map[string]string{"p/p.go": tabbed}, policy: tools.ModePlan, kinds: []RequestKind{KindQuestion},
			steps: [][]modeltest.ToolCall{{call("write_file", map[string]any{"path": "p/q.go", "content": "package p\n"}),
				call("run_cmd", map[string]any{"command": "touch p/r.go"}),
				call("read_file", map[string]any{"path": "p/p.go"})},
				{call("propose_plan", map[string]any{"plan": "1. Add q.go.\n2. Run go vet."})}}},
		{name: "ask_nobody", about: "ask_user when no one can answer (it is not offered, but a model may call it anyway)",
			kinds: []RequestKind{},
			steps: [][]modeltest.ToolCall{{call("ask_user", map[string]any{"question": "Which database?", "options": []string{"sqlite", "postgres"}})}}},
	}
}

func TestModelView(t *testing.T) {
	for _, c := range viewCases() {
		t.Run(c.name, func(t *testing.T) {
			reqs := driveView(t, c)
			last := reqs[len(reqs)-1]
			var b strings.Builder
			fmt.Fprintf(&b, "# %s\n", c.about)
			results := map[string]string{}
			for _, m := range last.Messages {
				if m.Role == RoleTool {
					results[m.ToolCallID] = m.Content
				}
			}
			for _, m := range last.Messages {
				for _, tc := range m.ToolCalls {
					fmt.Fprintf(&b, "\n== call: %s %s\n== result (what the model reads):\n%s\n", tc.Name, tc.Arguments, results[tc.ID])
				}
			}
			golden(t, c.name+".txt", normalizeView(t, b.String()))
		})
	}
}

// driveView runs a case's steps against the scripted model and returns
// the requests the model received.
func driveView(t *testing.T, c viewCase) []modeltest.Request {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for name, content := range c.files {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	var turns []modeltest.Turn
	for _, s := range c.steps {
		turns = append(turns, modeltest.Turn{Reply: modeltest.Reply{ToolCalls: s}})
	}
	turns = append(turns, modeltest.Turn{Reply: modeltest.Reply{Text: "done"}})
	srv := modeltest.StartT(t, &modeltest.Script{Turns: turns})
	var lang tools.Language
	if c.lang != nil {
		c.lang.root = root
		lang = c.lang
	}
	a, finished := viewAgent(t, root, srv, c.policy, c.kinds, lang)
	_, err = a.Run(context.Background(), RunParams{Prompt: "look at this"})
	require.NoError(t, err)
	st := await.Recv(t, "the run to finish", 60*time.Second, finished)
	require.Equal(t, StateCompleted, st.State, st.Error)
	require.Empty(t, srv.Unused())
	return srv.Requests()
}

func viewAgent(t *testing.T, root string, srv *modeltest.Server, policy tools.Mode, kinds []RequestKind, lang tools.Language) (*Agent, chan RunState) {
	t.Helper()
	finished := make(chan RunState, 4)
	a, err := New(Config{Root: root, StateDir: t.TempDir(), UserConfigDir: t.TempDir(), Policy: policy, RequestKinds: kinds,
		Language: lang, DiagnosticsTimeout: defaultDiagnosticsTimeout,
		Model:    ModelConfig{BaseURL: srv.URL, Name: "fake"},
		Listener: seqListener{onSeq: func(string, int64) {}, onEnd: func(st RunState) { finished <- st }}})
	require.NoError(t, err)
	t.Cleanup(a.Shutdown)
	return a, finished
}

// TestModelViewPrompt pins the system message and the tool list of a new
// session in a small workspace with instruction files.
func TestModelViewPrompt(t *testing.T) {
	if _, err := exec.LookPath("ctags"); err != nil {
		t.Skip("universal-ctags is not installed: the prompt has no repository map")
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for name, content := range map[string]string{
		"AGENTS.md":           "# Shop\n\nRun `go test ./...` before you finish. Money is in cents (int64), never float.\n",
		"CLAUDE.md":           "ignored: AGENTS.md wins\n",
		"cart/cart.go":        "package cart\n\n// Cart holds items.\ntype Cart struct{ Items []Item }\n\n// Item is one line.\ntype Item struct{ Cents int64 }\n\n// Total sums the cart.\nfunc (c Cart) Total() int64 {\n\tvar t int64\n\tfor _, i := range c.Items {\n\t\tt += i.Cents\n\t}\n\treturn t\n}\n",
		"cart/cart_test.go":   "package cart\n\nimport \"testing\"\n\nfunc TestTotal(t *testing.T) {}\n\nfunc helperCart() Cart { return Cart{} }\n",
		"api/handler.go":      "package api\n\nimport \"shop/cart\"\n\n// Checkout prices a cart.\nfunc Checkout(c cart.Cart) int64 { return c.Total() }\n",
		"cmd/shop/main.go":    "package main\n\nimport \"shop/api\"\n\nfunc main() { _ = api.Checkout }\n",
		"web/AGENTS.md":       "Use pnpm.\n",
		"web/src/checkout.ts": "export function checkout(): number { return 0 }\n",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	srv := modeltest.StartT(t, &modeltest.Script{Turns: []modeltest.Turn{{Reply: modeltest.Reply{Text: "ok"}}}})
	finished := make(chan RunState, 1)
	user := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(user, "AGENTS.md"), []byte("Answer in British English.\n"), 0o644))
	a, err := New(Config{Root: root, StateDir: t.TempDir(), UserConfigDir: user, Model: ModelConfig{BaseURL: srv.URL, Name: "fake"},
		Language: &fakeLanguage{root: root},
		Listener: seqListener{onSeq: func(string, int64) {}, onEnd: func(st RunState) { finished <- st }}})
	require.NoError(t, err)
	t.Cleanup(a.Shutdown)
	a.SetOpenFiles([]string{"cart/cart.go"})
	_, err = a.Run(context.Background(), RunParams{Prompt: "fix the total for empty carts"})
	require.NoError(t, err)
	st := await.Recv(t, "the run to finish", 60*time.Second, finished)
	require.Equal(t, StateCompleted, st.State, st.Error)
	req := srv.Requests()[0]
	var b strings.Builder
	fmt.Fprintf(&b, "# The first request of a session with language servers: the system message, then the user's message\n\n== system:\n%s\n\n== user:\n%s\n", req.Messages[0].Content, req.Last().Content)
	view := strings.ReplaceAll(strings.ReplaceAll(b.String(), root, "/home/ada/shop"), user, "/home/ada/.config/agentd")
	golden(t, "prompt.txt", normalizeView(t, view))

	var tl []struct {
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	require.NoError(t, json.Unmarshal(req.ToolsJSON, &tl))
	b.Reset()
	fmt.Fprintf(&b, "# The tools a session with language servers offers (%d bytes as sent), each with its description and parameters\n", len(req.ToolsJSON))
	for _, tool := range tl {
		fmt.Fprintf(&b, "\n== %s\n%s\nparameters: %s\n", tool.Function.Name, strings.TrimSpace(tool.Function.Description), tool.Function.Parameters)
	}
	golden(t, "tools.txt", b.String())
}

var durations = regexp.MustCompile(`, [0-9.]+(ms|s|µs)\]`)

// normalizeView makes a view stable across machines and runs.
func normalizeView(t *testing.T, s string) string {
	s = durations.ReplaceAllString(s, ", 0.01s]")
	s = strings.ReplaceAll(s, runtime.GOOS+"/"+runtime.GOARCH, "linux/amd64")
	return regexp.MustCompile(`Date: \d{4}-\d\d-\d\d`).ReplaceAllString(s, "Date: 2026-11-22")
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join(viewDir, name)
	if *update {
		require.NoError(t, os.MkdirAll(viewDir, 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "no golden file: go test ./agent -run ModelView -update")
	assert.Equal(t, string(want), got, "what the model reads changed; review it and run go test ./agent -run ModelView -update")
}

// cartGo and mainGo are a small Go package for the language cases.
const (
	cartGo = "package shop\n\n// Total sums the cart.\nfunc Total(items []int) int {\n\tsum := 0\n\tfor _, it := range items {\n\t\tsum += it\n\t}\n\treturn sum\n}\n"
	mainGo = "package shop\n\nfunc Checkout(items []int) int {\n\treturn Total(items) * 2\n}\n\nfunc Report(items []int) {\n\tfmt.Println(Total(items))\n\t_ = secret\n}\n"
)

// bigGoFile is a Go file of n lines.
func bigGoFile(n int) string {
	var b strings.Builder
	b.WriteString("package big\n\n")
	for i := 3; i <= n; i++ {
		switch {
		case i%4 == 3:
			fmt.Fprintf(&b, "// F%d returns the value of step %d of the computation.\n", i, i)
		case i%4 == 0:
			fmt.Fprintf(&b, "func F%d() int { return %d * 7 }\n", i, i)
		default:
			b.WriteString("\n")
		}
	}
	return b.String()
}

// longGoFile is a Go file with a function long enough that a missing brace
// is noticed far below the change.
func longGoFile() string {
	var b strings.Builder
	b.WriteString("package p\n\nfunc Clamp(n int) int {\n\tif n > 1 {\n\t\treturn n\n\t}\n")
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&b, "\tn += %d\n", i)
	}
	b.WriteString("\treturn n\n}\n\nfunc Other() int { return 2 }\n")
	return b.String()
}
