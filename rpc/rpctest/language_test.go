package rpctest

import (
	"context"
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/internal/await"
	"github.com/agentd/agentd/rpc/wire"
	"github.com/agentd/agentd/tools"
)

// The editor's language intelligence (issue 25): the daemon asks the fake
// editor, which answers as an editor with language servers does.

var languageFiles = map[string]string{
	"cart.go": "package shop\n\n// Total sums the cart.\nfunc Total(items []int) int {\n\tsum := 0\n\tfor _, it := range items {\n\t\tsum += it\n\t}\n\treturn sum\n}\n",
	"main.go": "package shop\n\nfunc Checkout(items []int) int {\n\treturn Total(items) * 2\n}\n",
}

var allLanguage = &wire.LanguageCapabilities{Diagnostics: true, Definition: true, References: true, Hover: true,
	DocumentSymbols: true, WorkspaceSymbols: true, Context: true, Buffers: true}

func uriOf(env *Env, rel string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(env.Root, rel))}).String()
}

func langTurn(name string, match modeltest.Match, calls ...modeltest.ToolCall) modeltest.Turn {
	return modeltest.Turn{Name: name, Match: match, Reply: modeltest.Reply{ToolCalls: calls}}
}

func toolCall(id, name string, args any) modeltest.ToolCall {
	return modeltest.ToolCall{ID: id, Name: name, Arguments: modeltest.Args(args)}
}

// requestLog keeps the editor requests the daemon made, in order.
type requestLog struct {
	mu   sync.Mutex
	reqs []Message
}

func (l *requestLog) add(method string, params json.RawMessage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reqs = append(l.reqs, Message{Method: method, Params: append(json.RawMessage(nil), params...)})
}

func (l *requestLog) of(method string) []Message {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Message
	for _, m := range l.reqs {
		if m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// answer installs a handler that logs the request and answers with fn's
// result.
func (l *requestLog) answer(e *Editor, method string, fn func(params json.RawMessage) any) {
	e.Handle(method, func(ctx context.Context, params json.RawMessage) (any, error) {
		l.add(method, params)
		return fn(params), nil
	})
}

func TestEditorNavigation(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{Files: languageFiles, Language: allLanguage, Script: &modeltest.Script{Turns: []modeltest.Turn{
			langTurn("def", modeltest.Match{LastUser: "where is Total"},
				toolCall("call_def", "go_to_definition", map[string]any{"symbol": "Total", "path": "main.go", "line": 4})),
			langTurn("refs", modeltest.Match{AfterTool: "go_to_definition"},
				toolCall("call_refs", "find_references", map[string]any{"symbol": "Total", "path": "cart.go", "line": 4})),
			langTurn("hover", modeltest.Match{AfterTool: "find_references"},
				toolCall("call_hover", "hover", map[string]any{"symbol": "Total"})),
			{Name: "done", Match: modeltest.Match{AfterTool: "hover"}, Reply: modeltest.Reply{Text: "Total is in cart.go."}},
		}}}
	}, func(t *testing.T, env *Env) {
		e := env.Start()
		var log requestLog
		log.answer(e, wire.MethodEditorDefinition, func(json.RawMessage) any {
			return []map[string]any{{"targetUri": uriOf(env, "cart.go"),
				"targetRange":          map[string]any{"start": map[string]int{"line": 2, "character": 0}, "end": map[string]int{"line": 9, "character": 1}},
				"targetSelectionRange": map[string]any{"start": map[string]int{"line": 3, "character": 5}, "end": map[string]int{"line": 3, "character": 10}}}}
		})
		log.answer(e, wire.MethodEditorReferences, func(json.RawMessage) any {
			return []wire.Location{{URI: uriOf(env, "main.go"), Range: wire.Range{Start: wire.Position{Line: 3, Character: 8}, End: wire.Position{Line: 3, Character: 13}}}}
		})
		log.answer(e, wire.MethodEditorWorkspaceSymbols, func(json.RawMessage) any {
			return []map[string]any{{"name": "Total", "kind": 12, "location": wire.Location{URI: uriOf(env, "cart.go"),
				Range: wire.Range{Start: wire.Position{Line: 3, Character: 0}, End: wire.Position{Line: 9, Character: 1}}}}}
		})
		log.answer(e, wire.MethodEditorHover, func(json.RawMessage) any {
			return map[string]any{"contents": map[string]string{"kind": "markdown", "value": "```go\nfunc Total(items []int) int\n```\n\nTotal sums the cart."}}
		})
		e.MustCall(wire.MethodInitialize, env.InitializeParams(nil), nil)
		e.Notify(wire.MethodInitialized, struct{}{})
		run := e.Run(agent.RunParams{Prompt: "where is Total defined?", Context: &agent.RunContext{}})
		require.Equal(t, agent.StateCompleted, e.Finished(run.RunID).State)

		defs := log.of(wire.MethodEditorDefinition)
		require.Len(t, defs, 1)
		var at wire.TextDocumentPosition
		require.NoError(t, json.Unmarshal(defs[0].Params, &at))
		assert.Equal(t, uriOf(env, "main.go"), at.TextDocument.URI)
		assert.Equal(t, wire.Position{Line: 3, Character: 8}, at.Position, "Total on line 4 of main.go, after a tab and 'return '")

		res := toolResults(env)
		assert.Equal(t, "Total (at main.go:4:9) is defined at:\ncart.go:4:6: func Total(items []int) int {", res["call_def"])
		assert.Equal(t, "1 reference to Total (at cart.go:4:6), declaration not included:\nmain.go:4:9: return Total(items) * 2", res["call_refs"])
		var refs wire.ReferencesParams
		require.NoError(t, json.Unmarshal(log.of(wire.MethodEditorReferences)[0].Params, &refs))
		assert.Equal(t, wire.Position{Line: 3, Character: 5}, refs.Position)
		assert.False(t, refs.Context.IncludeDeclaration)
		var hov wire.TextDocumentPosition
		require.NoError(t, json.Unmarshal(log.of(wire.MethodEditorHover)[0].Params, &hov))
		assert.Equal(t, wire.Position{Line: 3, Character: 5}, hov.Position, "symbol alone: the workspace symbol's name")
		assert.Equal(t, "Total at cart.go:4:6:\n```go\nfunc Total(items []int) int\n```\n\nTotal sums the cart.", res["call_hover"])

		reqs := env.Model.Requests()
		require.NotEmpty(t, reqs)
		assert.Contains(t, reqs[0].Tools, "go_to_definition", "an editor that navigates: the session offers the tools")
		assert.Contains(t, reqs[0].Tools, "find_references")
		assert.Contains(t, reqs[0].Tools, "hover")
	})
}

// TestEditorDiagnosticsOncePerReply: a reply with three edits of two files
// gets the editor's diagnostics once, after its last edit, with the problem
// the edits brought first; the intermediate states are never asked about.
func TestEditorDiagnosticsOncePerReply(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{Files: languageFiles, Language: allLanguage, Policy: tools.ModeAutoEdit, Script: &modeltest.Script{Turns: []modeltest.Turn{
			langTurn("read", modeltest.Match{LastUser: "rename"},
				toolCall("call_r1", "read_file", map[string]any{"path": "cart.go"}), toolCall("call_r2", "read_file", map[string]any{"path": "main.go"})),
			langTurn("edit", modeltest.Match{AfterTool: "read_file"},
				toolCall("call_e1", "edit_file", map[string]any{"path": "cart.go", "old_string": "func Total(", "new_string": "func Sum("}),
				toolCall("call_e2", "edit_file", map[string]any{"path": "cart.go", "old_string": "// Total sums", "new_string": "// Sum sums"}),
				toolCall("call_e3", "edit_file", map[string]any{"path": "main.go", "old_string": "return Total(items)", "new_string": "return Totl(items)"})),
			{Name: "done", Match: modeltest.Match{AfterTool: "edit_file"}, Reply: modeltest.Reply{Text: "Renamed."}},
		}}}
	}, func(t *testing.T, env *Env) {
		e := env.Start()
		var log requestLog
		warning := wire.Diagnostic{Range: wire.Range{Start: wire.Position{Line: 2, Character: 5}}, Severity: 2, Source: "lint", Message: "exported func Checkout should have a comment"}
		log.answer(e, wire.MethodEditorDiagnostics, func(raw json.RawMessage) any {
			var p wire.DiagnosticsParams
			_ = json.Unmarshal(raw, &p)
			var res wire.DiagnosticsResult
			for _, u := range p.URIs {
				item := wire.FileDiagnostics{URI: u, Diagnostics: []wire.Diagnostic{}}
				if strings.HasSuffix(u, "/main.go") {
					item.Diagnostics = append(item.Diagnostics, warning)
					if p.Fresh {
						item.Diagnostics = append(item.Diagnostics, wire.Diagnostic{Range: wire.Range{Start: wire.Position{Line: 3, Character: 8}},
							Severity: 1, Source: "compiler", Code: "UndeclaredName", Message: "undefined: Totl"})
					}
				}
				res.Items = append(res.Items, item)
			}
			return res
		})
		e.MustCall(wire.MethodInitialize, env.InitializeParams(nil), nil)
		e.Notify(wire.MethodInitialized, struct{}{})
		run := e.Run(agent.RunParams{Prompt: "rename Total to Sum", Context: &agent.RunContext{}})
		require.Equal(t, agent.StateCompleted, e.Finished(run.RunID).State)

		var fresh []wire.DiagnosticsParams
		for _, m := range log.of(wire.MethodEditorDiagnostics) {
			var p wire.DiagnosticsParams
			require.NoError(t, json.Unmarshal(m.Params, &p))
			if p.Fresh {
				fresh = append(fresh, p)
			}
		}
		require.Len(t, fresh, 1, "one check for the reply, after its last edit")
		assert.ElementsMatch(t, []string{uriOf(env, "cart.go"), uriOf(env, "main.go")}, fresh[0].URIs)
		assert.Positive(t, fresh[0].TimeoutMs)

		res := toolResults(env)
		assert.NotContains(t, res["call_e1"], "Diagnostics", "not after an intermediate edit")
		assert.NotContains(t, res["call_e2"], "Diagnostics")
		assert.Contains(t, res["call_e3"], "\n\nDiagnostics after your edits (the editor): 2 problems in the files you changed, 1 of them new.\n"+
			"main.go:4:9: error: undefined: Totl [compiler UndeclaredName] (new)\n"+
			"main.go:3:6: warning: exported func Checkout should have a comment [lint]")

		var rep *tools.DiagnosticsReport
		for _, u := range e.Updates(run.RunID) {
			if u.Diagnostics != nil {
				require.Nil(t, rep, "one diagnostics update per reply")
				assert.Equal(t, "call_e3", u.ToolCallID, "under the reply's last edit")
				rep = u.Diagnostics
			}
		}
		require.NotNil(t, rep)
		assert.Equal(t, 1, rep.New)
		assert.Contains(t, res["call_e3"], rep.Text, "the editor shows what the model read")
	})
}

// TestEditorThatHangsOrDeclines: an editor that never answers costs a
// reply at most the configured wait; one that declines (null) costs
// nothing and adds nothing.
func TestEditorThatHangsOrDeclines(t *testing.T) {
	for _, hang := range []bool{true, false} {
		name := map[bool]string{true: "hangs", false: "declines"}[hang]
		t.Run(name, func(t *testing.T) {
			both(t, func(t *testing.T) Config {
				return Config{Files: languageFiles, Language: &wire.LanguageCapabilities{Diagnostics: true}, Policy: tools.ModeAutoEdit,
					Env: map[string]string{"AGENTD_DIAGNOSTICS_TIMEOUT": "700ms"},
					Script: &modeltest.Script{Turns: []modeltest.Turn{
						langTurn("read", modeltest.Match{LastUser: "fix"}, toolCall("call_r", "read_file", map[string]any{"path": "main.go"})),
						langTurn("edit", modeltest.Match{AfterTool: "read_file"},
							toolCall("call_e", "edit_file", map[string]any{"path": "main.go", "old_string": "* 2", "new_string": "* 3"})),
						{Name: "done", Match: modeltest.Match{AfterTool: "edit_file"}, Reply: modeltest.Reply{Text: "Fixed."}},
					}}}
			}, func(t *testing.T, env *Env) {
				e := env.Start()
				var started time.Time
				var mu sync.Mutex
				e.Handle(wire.MethodEditorDiagnostics, func(ctx context.Context, raw json.RawMessage) (any, error) {
					var p wire.DiagnosticsParams
					_ = json.Unmarshal(raw, &p)
					if !hang {
						return nil, nil
					}
					if p.Fresh {
						mu.Lock()
						started = time.Now()
						mu.Unlock()
					}
					<-ctx.Done() // never answers while the connection lives
					return nil, ctx.Err()
				})
				e.MustCall(wire.MethodInitialize, env.InitializeParams(nil), nil)
				e.Notify(wire.MethodInitialized, struct{}{})
				run := e.Run(agent.RunParams{Prompt: "fix the factor", Context: &agent.RunContext{}})
				require.Equal(t, agent.StateCompleted, e.Finished(run.RunID).State)
				res := toolResults(env)["call_e"]
				if !hang {
					assert.NotContains(t, res, "Diagnostics", "an editor without a server for the file adds nothing")
					return
				}
				assert.Contains(t, res, "(no diagnostics for main.go: the editor did not answer editor/diagnostics in time")
				reqs := env.Model.Requests()
				mu.Lock()
				waited := reqs[len(reqs)-1].Time.Sub(started)
				mu.Unlock()
				// The limit, and slack for a loaded machine: without the limit
				// the reply would wait as long as the connection lives.
				assert.Less(t, waited, 700*time.Millisecond+await.Timeout(2*time.Second), "the reply waited past the configured limit")
			})
		})
	}
}

// TestEditorContextAndBuffers: a run without context gets the editor's
// selection, and read_file reads the editor's unsaved buffer.
func TestEditorContextAndBuffers(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{Files: languageFiles, Language: &wire.LanguageCapabilities{Context: true, Buffers: true}, Script: &modeltest.Script{Turns: []modeltest.Turn{
			langTurn("read", modeltest.Match{LastUser: "Selected in main.go, lines 3-4"}, toolCall("call_r", "read_file", map[string]any{"path": "main.go"})),
			{Name: "done", Match: modeltest.Match{AfterTool: "read_file"}, Reply: modeltest.Reply{Text: "Seen."}},
		}}}
	}, func(t *testing.T, env *Env) {
		e := env.Start()
		var log requestLog
		log.answer(e, wire.MethodEditorContext, func(json.RawMessage) any {
			return wire.EditorContext{OpenFiles: []string{uriOf(env, "main.go"), uriOf(env, "cart.go")}, ActiveFile: uriOf(env, "main.go"),
				Selection: &wire.Selection{URI: uriOf(env, "main.go"), Range: wire.Range{Start: wire.Position{Line: 2}, End: wire.Position{Line: 4}},
					Text: "func Checkout(items []int) int {\n\treturn Total(items) * 2\n"}}
		})
		log.answer(e, wire.MethodEditorReadFile, func(raw json.RawMessage) any {
			var p wire.ReadFileParams
			_ = json.Unmarshal(raw, &p)
			if p.URI != uriOf(env, "main.go") {
				return nil
			}
			return wire.ReadFileResult{Text: "package shop\n\n// unsaved in the editor\n", Version: 7, Dirty: true}
		})
		e.MustCall(wire.MethodInitialize, env.InitializeParams(nil), nil)
		e.Notify(wire.MethodInitialized, struct{}{})
		run := e.Run(agent.RunParams{Prompt: "what does this do?"})
		require.Equal(t, agent.StateCompleted, e.Finished(run.RunID).State)
		require.Len(t, log.of(wire.MethodEditorContext), 1)
		first := env.Model.Requests()[0]
		user := first.Messages[len(first.Messages)-1].Content
		assert.Contains(t, user, "Selected in main.go, lines 3-4:\n```\nfunc Checkout(items []int) int {")
		assert.Contains(t, user, "Files open in the editor: cart.go, main.go.")
		assert.Contains(t, toolResults(env)["call_r"], "// unsaved in the editor", "the model reads the editor's buffer")
		assert.Equal(t, languageFiles["main.go"], env.WorkspaceFile("main.go"), "reading changes nothing on disk")
	})
}

// TestGoldenLanguage pins the editor/* requests and their answers on the
// wire, with the diagnostics update an editor shows under the edit.
func TestGoldenLanguage(t *testing.T) {
	t.Parallel()
	for _, mode := range Modes {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t, mode, Config{Files: languageFiles, Language: allLanguage, Policy: tools.ModeAutoEdit,
				Script: &modeltest.Script{Turns: []modeltest.Turn{
					langTurn("def", modeltest.Match{LastUser: "rename"},
						toolCall("call_def", "go_to_definition", map[string]any{"symbol": "Total", "path": "main.go", "line": 4}),
						toolCall("call_refs", "find_references", map[string]any{"symbol": "Total", "path": "cart.go"}),
						toolCall("call_hover", "hover", map[string]any{"symbol": "Total"})),
					langTurn("edit", modeltest.Match{AfterTool: "hover"},
						toolCall("call_read", "read_file", map[string]any{"path": "main.go"})),
					langTurn("edit", modeltest.Match{AfterTool: "read_file"},
						toolCall("call_edit", "edit_file", map[string]any{"path": "main.go", "old_string": "return Total(items)", "new_string": "return Totl(items)"})),
					{Name: "done", Match: modeltest.Match{AfterTool: "edit_file"}, Reply: modeltest.Reply{Text: "Done."}},
				}}})
			e := env.Start()
			g := newGolden(t, env, e)
			type exchange struct {
				method         string
				params, answer any
			}
			var mu sync.Mutex
			var log []exchange
			answer := func(method string, fn func(p json.RawMessage) any) {
				e.Handle(method, func(ctx context.Context, params json.RawMessage) (any, error) {
					res := fn(params)
					mu.Lock()
					log = append(log, exchange{method, params, res})
					mu.Unlock()
					return res, nil
				})
			}
			rng := func(l1, c1, l2, c2 int) wire.Range {
				return wire.Range{Start: wire.Position{Line: l1, Character: c1}, End: wire.Position{Line: l2, Character: c2}}
			}
			answer(wire.MethodEditorContext, func(json.RawMessage) any {
				return wire.EditorContext{OpenFiles: []string{uriOf(env, "main.go")}, ActiveFile: uriOf(env, "main.go")}
			})
			answer(wire.MethodEditorDefinition, func(json.RawMessage) any {
				return []wire.Location{{URI: uriOf(env, "cart.go"), Range: rng(3, 5, 3, 10)}}
			})
			answer(wire.MethodEditorDocumentSymbols, func(json.RawMessage) any {
				return []wire.Symbol{{Name: "Total", Kind: 12, Detail: "func(items []int) int", Range: &wire.Range{End: wire.Position{Line: 9, Character: 1}},
					SelectionRange: ptrRange(rng(3, 5, 3, 10))}}
			})
			answer(wire.MethodEditorReferences, func(json.RawMessage) any {
				return []wire.Location{{URI: uriOf(env, "main.go"), Range: rng(3, 8, 3, 13)}}
			})
			answer(wire.MethodEditorWorkspaceSymbols, func(json.RawMessage) any {
				return []wire.Symbol{{Name: "Total", Kind: 12, Location: &wire.Location{URI: uriOf(env, "cart.go"), Range: rng(3, 0, 9, 1)}}}
			})
			answer(wire.MethodEditorHover, func(json.RawMessage) any {
				return map[string]any{"contents": map[string]string{"kind": "markdown", "value": "```go\nfunc Total(items []int) int\n```\n\nTotal sums the cart."}}
			})
			answer(wire.MethodEditorReadFile, func(json.RawMessage) any { return nil })
			answer(wire.MethodEditorDiagnostics, func(raw json.RawMessage) any {
				var p wire.DiagnosticsParams
				_ = json.Unmarshal(raw, &p)
				res := wire.DiagnosticsResult{Items: []wire.FileDiagnostics{{URI: uriOf(env, "main.go"), Diagnostics: []wire.Diagnostic{}}}}
				if p.Fresh {
					res.Items[0].Diagnostics = append(res.Items[0].Diagnostics, wire.Diagnostic{Range: rng(3, 8, 3, 12), Severity: 1,
						Source: "compiler", Code: "UndeclaredName", Message: "undefined: Totl"})
				}
				return res
			})
			init := env.InitializeParams(nil)
			g.record("-> "+wire.MethodInitialize, init)
			e.MustCall(wire.MethodInitialize, init, nil)
			g.sections = append(g.sections, "-- <- result --\n(as in lifecycle.txtar)\n")
			g.notify(wire.MethodInitialized, map[string]any{})
			run, _ := g.run("rename Total")
			g.until(run, "the run to complete", isState("completed"))
			mu.Lock()
			for _, x := range log {
				if m := x.method; m == wire.MethodEditorDiagnostics {
					var p wire.DiagnosticsParams
					_ = json.Unmarshal(x.params.(json.RawMessage), &p)
					p.TimeoutMs = 2900 // what is left of the wait varies
					x.params = p
				}
				g.record("<- request "+x.method, x.params)
				g.record("-> answer", x.answer)
			}
			mu.Unlock()
			g.exit()
			g.check("language", `
The daemon asks the editor (which declared every language request in
initialize): editor/context at the run's start, then for the model's
go_to_definition, find_references and hover, the definition, document and
workspace symbols and hover; editor/readFile for read_file (null: not open,
the disk is read); editor/diagnostics before the reply's edit (fresh: false)
and once after it (fresh: true). The run's notifications come first, then
every editor request with its answer in the order they came; the
tool_call_update carrying "diagnostics" is what an editor shows under the
edit.`)
		})
	}
}

func ptrRange(r wire.Range) *wire.Range { return &r }

// TestLanguageToolsStableAcrossASession: which tools a session offers is
// decided when it starts. A session begun with an editor that navigates
// keeps the navigation tools, byte for byte, after the daemon restarts
// with an editor that does not; a call then says no server answers. A
// session begun without offers none.
func TestLanguageToolsStableAcrossASession(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{Files: languageFiles, Language: &wire.LanguageCapabilities{Definition: true}, Script: &modeltest.Script{Turns: []modeltest.Turn{
			{Name: "first", Match: modeltest.Match{LastUser: "first"}, Reply: modeltest.Reply{Text: "ok"}},
			langTurn("def", modeltest.Match{LastUser: "second"},
				toolCall("call_def", "go_to_definition", map[string]any{"symbol": "Total", "path": "main.go", "line": 4})),
			{Name: "after", Match: modeltest.Match{AfterTool: "go_to_definition"}, Reply: modeltest.Reply{Text: "no server"}},
			{Name: "fresh", Match: modeltest.Match{LastUser: "third"}, Reply: modeltest.Reply{Text: "ok"}},
		}}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		first := e.Run(agent.RunParams{Prompt: "first", Context: &agent.RunContext{}})
		require.Equal(t, agent.StateCompleted, e.Finished(first.RunID).State)
		e.Close(false)

		env.cfg.Language = nil // the next editor answers no language request
		e = env.StartInitialized()
		second := e.Run(agent.RunParams{Prompt: "second", SessionID: first.SessionID, Context: &agent.RunContext{}})
		require.Equal(t, agent.StateCompleted, e.Finished(second.RunID).State)
		third := e.Run(agent.RunParams{Prompt: "third", Context: &agent.RunContext{}})
		require.Equal(t, agent.StateCompleted, e.Finished(third.RunID).State)

		reqs := env.Model.Requests()
		require.Len(t, reqs, 4)
		for i := 1; i < 3; i++ {
			assert.Equal(t, string(reqs[0].ToolsJSON), string(reqs[i].ToolsJSON), "request %d: the session's tool list changed", i+1)
			assert.Equal(t, reqs[0].Messages[0].Content, reqs[i].Messages[0].Content, "request %d: the system message changed", i+1)
		}
		assert.Contains(t, reqs[0].Tools, "go_to_definition")
		assert.Contains(t, toolResults(env)["call_def"], "No language server answers")
		assert.NotContains(t, reqs[3].Tools, "go_to_definition", "a new session without servers")
		assert.NotContains(t, reqs[3].Messages[0].Content, "Language servers answer here")
	})
}
