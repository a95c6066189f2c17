package rpctest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/internal/await"
	"github.com/agentd/agentd/tools"
	"github.com/agentd/agentd/tools/lsp/lsptest"
)

// agentd's own language servers, when the editor answers none of the
// language requests: the real gopls, typescript-language-server and
// pyright, in the sandbox.

var polyglot = map[string]string{
	"go.mod":  "module shop\n\ngo 1.22\n",
	"cart.go": "package shop\n\n// Total sums the cart.\nfunc Total(items []int) int {\n\tsum := 0\n\tfor _, it := range items {\n\t\tsum += it\n\t}\n\treturn sum\n}\n",
	// No import: gopls type-checks and analyses what a file imports from
	// source, with a cold cache in every scenario (fmt alone: 2.4 s of
	// CPU); a vet finding needs none (assign's self-assignment).
	"main.go":       "package shop\n\n// Checkout doubles the total.\n\nfunc Checkout(items []int) int {\n\titems = append(items[:0:0], items...)\n\treturn Total(items) * 2\n}\n",
	"tsconfig.json": `{"compilerOptions": {"strict": true, "target": "es2020", "module": "commonjs"}}`,
	"web/cart.ts":   "export function total(items: number[]): number {\n  return items.reduce((a, b) => a + b, 0);\n}\n",
	"web/main.ts":   "import { total } from \"./cart\";\n\nexport const due: number = total([1, 2]) * 2;\n",
	"py/cart.py":    "def total(items: list[int]) -> int:\n    return sum(items)\n",
	"py/main.py":    "from cart import total\n\ndue: int = total([1, 2]) * 2\n",
}

// ownServers is the languageServers setting naming the installed servers.
func ownServers(t *testing.T) string {
	s := lsptest.Install(t)
	return fmt.Sprintf(`{"go":{"command":[%q]},"typescript":{"command":[%q,"--stdio"]},"python":{"command":[%q,"--stdio"]}}`,
		s.GoplsPath(), s.TSServerPath(), s.PyrightPath())
}

// TestOwnServersDiagnoseAndNavigate: one reply breaks a TypeScript, a
// Python and a Go file (a vet finding); the servers' errors reach the model
// in that reply's result. Definitions and references of a Go and a
// TypeScript symbol come back at the right places. The real binary only:
// three real servers cost more than the rest of a scenario many times over.
func TestOwnServersDiagnoseAndNavigate(t *testing.T) {
	binary(t, func(t *testing.T) Config {
		return Config{Files: polyglot, Policy: tools.ModeAutoEdit,
			Env: map[string]string{"AGENTD_LANGUAGE_SERVERS": ownServers(t), "AGENTD_DIAGNOSTICS_TIMEOUT": "60s", "AGENTD_LANGUAGE_TIMEOUT": "60s"},
			Script: &modeltest.Script{Turns: []modeltest.Turn{
				langTurn("read", modeltest.Match{LastUser: "break"},
					toolCall("call_r1", "read_file", map[string]any{"path": "web/main.ts"}),
					toolCall("call_r2", "read_file", map[string]any{"path": "py/main.py"}),
					toolCall("call_r3", "read_file", map[string]any{"path": "main.go"})),
				langTurn("nav", modeltest.Match{AfterTool: "read_file"},
					toolCall("call_godef", "go_to_definition", map[string]any{"symbol": "Total", "path": "main.go", "line": 7}),
					toolCall("call_gorefs", "find_references", map[string]any{"symbol": "Total", "path": "cart.go"}),
					toolCall("call_tsdef", "go_to_definition", map[string]any{"symbol": "total", "path": "web/main.ts", "line": 3}),
					toolCall("call_tsrefs", "find_references", map[string]any{"symbol": "total", "path": "web/cart.ts", "line": 1})),
				langTurn("edit", modeltest.Match{AfterTool: "find_references"},
					toolCall("call_ts", "edit_file", map[string]any{"path": "web/main.ts", "old_string": "export const due: number", "new_string": "export const due: string"}),
					toolCall("call_py", "edit_file", map[string]any{"path": "py/main.py", "old_string": "due: int", "new_string": "due: str"}),
					toolCall("call_go", "edit_file", map[string]any{"path": "main.go", "old_string": "items = append(items[:0:0], items...)", "new_string": "items = items"})),
				{Name: "done", Match: modeltest.Match{AfterTool: "edit_file"}, Reply: modeltest.Reply{Text: "Broken on purpose."}},
			}}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "break the code", Context: &agent.RunContext{}})
		st := e.Finished(run.RunID)
		require.Equal(t, agent.StateCompleted, st.State, st.Error)
		res := toolResults(env)

		assert.Equal(t, "Total (at main.go:7:9) is defined at:\ncart.go:4:6: func Total(items []int) int {", res["call_godef"])
		assert.Equal(t, "1 reference to Total (at cart.go:4:6), declaration not included:\nmain.go:7:9: return Total(items) * 2", res["call_gorefs"])
		assert.Equal(t, "total (at web/main.ts:3:28) is defined at:\nweb/cart.ts:1:17: export function total(items: number[]): number {", res["call_tsdef"])
		assert.Equal(t, "2 references to total (at web/cart.ts:1:17), declaration not included:\n"+
			"web/main.ts:1:10: import { total } from \"./cart\";\nweb/main.ts:3:28: export const due: number = total([1, 2]) * 2;", res["call_tsrefs"])

		last := res["call_go"]
		for _, id := range []string{"call_ts", "call_py"} {
			assert.NotContains(t, res[id], "Diagnostics", "only the reply's last edit carries them")
		}
		require.Contains(t, last, "Diagnostics after your edits (")
		assert.Contains(t, last, "web/main.ts:3:14: error: Type 'number' is not assignable to type 'string'. [typescript 2322] (new)")
		assert.Contains(t, last, `py/main.py:3:12: error: Type "int" is not assignable to declared type "str"`)
		assert.Contains(t, last, "main.go:6:2: warning: self-assignment of items [assign", "go vet's finding, from gopls")
		assert.NotContains(t, last, "did not finish", "the servers answered within the limit")
		for _, server := range []string{"gopls", "typescript-language-server", "pyright-langserver"} {
			assert.Contains(t, strings.SplitN(last[strings.Index(last, "Diagnostics after"):], "\n", 2)[0], server)
		}
		var rep *tools.DiagnosticsReport
		for _, u := range e.Updates(run.RunID) {
			if u.Diagnostics != nil {
				rep = u.Diagnostics
			}
		}
		require.NotNil(t, rep, "the editor is told what the model read")
		assert.GreaterOrEqual(t, rep.New, 2, "new: the TypeScript and Python errors at least (the Go file's baseline may not have been known in time)")
		raw, _ := json.Marshal(rep)
		assert.NotContains(t, string(raw), "pending")
	})
}

// TestOwnServerThatHangsOrCrashes: a server that never answers costs a
// reply at most diagnosticsTimeout and a navigation call languageTimeout;
// one that crashes is reported in the model's words; one that is missing
// adds nothing.
func TestOwnServerThatHangsOrCrashes(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"hangs", "exec sleep 600", "server.sh did not finish checking main.go in time: no diagnostics yet"},
		{"crashes", "echo 'fatal: no workspace' >&2; exit 3", "server.sh exited with status 3: fatal: no workspace"},
		{"missing", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			both(t, func(t *testing.T) Config {
				server := "/nonexistent/gopls"
				if c.body != "" {
					server = filepath.Join(t.TempDir(), "server.sh")
					require.NoError(t, os.WriteFile(server, []byte("#!/bin/sh\n"+c.body+"\n"), 0o755))
				}
				return Config{Files: languageFiles, Policy: tools.ModeAutoEdit,
					Env: map[string]string{"AGENTD_LANGUAGE_SERVERS": fmt.Sprintf(`{"go":{"command":[%q]}}`, server),
						"AGENTD_DIAGNOSTICS_TIMEOUT": "700ms", "AGENTD_LANGUAGE_TIMEOUT": "700ms"},
					Script: &modeltest.Script{Turns: []modeltest.Turn{
						langTurn("read", modeltest.Match{LastUser: "fix"}, toolCall("call_r", "read_file", map[string]any{"path": "main.go"})),
						langTurn("edit", modeltest.Match{AfterTool: "read_file"},
							toolCall("call_e", "edit_file", map[string]any{"path": "main.go", "old_string": "* 2", "new_string": "* 3"}),
							toolCall("call_d", "go_to_definition", map[string]any{"symbol": "Total", "path": "main.go", "line": 4})),
						{Name: "done", Match: modeltest.Match{AfterTool: "go_to_definition"}, Reply: modeltest.Reply{Text: "Fixed."}},
					}}}
			}, func(t *testing.T, env *Env) {
				e := env.StartInitialized()
				run := e.Run(agent.RunParams{Prompt: "fix the factor", Context: &agent.RunContext{}})
				st := e.Finished(run.RunID)
				require.Equal(t, agent.StateCompleted, st.State, st.Error)
				reqs := env.Model.Requests()
				require.Len(t, reqs, 3)
				step := reqs[2].Time.Sub(reqs[1].Time)
				// The reply's wait (the baseline's half second, the 700 ms of
				// the diagnostics and of the definition) and slack for a
				// loaded machine; a hung server would hold the step for ever.
				assert.Less(t, step, 2*time.Second+await.Timeout(3*time.Second), "the step waited past its limits")
				res := toolResults(env)
				if c.want == "" {
					assert.NotContains(t, res["call_e"], "Diagnostics", "no server: nothing to say")
					assert.Contains(t, res["call_d"], "No language server answers")
					return
				}
				assert.Contains(t, res["call_e"], c.want)
				assert.NotEmpty(t, res["call_d"])
			})
		})
	}
}
