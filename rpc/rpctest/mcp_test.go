package rpctest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/internal/await"
	"github.com/agentd/agentd/rpc"
	"github.com/agentd/agentd/rpc/wire"
	"github.com/agentd/agentd/tools"
	"github.com/agentd/agentd/tools/mcp"
	"github.com/agentd/agentd/tools/mcp/mcptest"
)

// MCP servers as real processes, through the real protocol: the small
// server the tests build (tools/mcp/testdata/mcpserver) and the published
// server-everything from npm, on stdio (in the kernel sandbox) and on
// streamable HTTP.

// serversConfig is a config.json with these servers.
func serversConfig(t *testing.T, servers map[string]any) string {
	data, err := json.Marshal(map[string]any{"mcpServers": servers})
	require.NoError(t, err)
	return string(data)
}

func stdioServer(t *testing.T, args ...string) map[string]any {
	return map[string]any{"command": mcptest.Server(t), "args": args}
}

// call is a model turn that calls one tool.
func call(name, tool, args string) modeltest.Turn {
	return modeltest.Turn{Name: name, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: tool, Arguments: json.RawMessage(args)}}}}
}

func after(tool, text string) modeltest.Turn {
	return modeltest.Turn{Name: "after " + tool, Match: modeltest.Match{AfterTool: tool}, Reply: modeltest.Reply{Text: text}}
}

func mcpStatus(t *testing.T, e *Editor) map[string]mcp.Status {
	var res rpc.MCPStatusResult
	e.MustCall(wire.MethodMCPStatus, rpc.MCPStatusParams{}, &res)
	out := map[string]mcp.Status{}
	for _, s := range res.Servers {
		out[s.Name] = s
	}
	return out
}

// toolResult is what the model read of the last call of tool.
func toolResult(t *testing.T, srv *modeltest.Server, tool string) string {
	t.Helper()
	reqs := srv.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		msgs := reqs[i].Messages
		ids := map[string]string{}
		for _, m := range msgs {
			for _, c := range m.ToolCalls {
				ids[c.ID] = c.Name
			}
		}
		for j := len(msgs) - 1; j >= 0; j-- {
			if msgs[j].Role == "tool" && ids[msgs[j].ToolCallID] == tool {
				return msgs[j].Content
			}
		}
	}
	t.Fatalf("no result of %s reached the model", tool)
	return ""
}

// TestMCPToolCalledAfterApproval: a configured stdio server's tools reach
// the model after agentd's own, with their schemas; a call asks first (a
// confirm_command naming the tool and its arguments, with the server's
// hints), and its result reaches the model; mcp/status shows the server.
func TestMCPToolCalledAfterApproval(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{UserConfig: serversConfig(t, map[string]any{"test": stdioServer(t)}),
			Script: &modeltest.Script{Turns: []modeltest.Turn{
				call("echo", "mcp__test__echo", `{"text":"hello"}`), after("mcp__test__echo", "The server said hello."),
			}}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "what does the echo server say?"})
		req := e.Requests(run.RunID, 1)[0]
		assert.Equal(t, agent.KindConfirmCommand, req.Kind)
		assert.Equal(t, "Call test: echo", req.Title)
		assert.Equal(t, `mcp__test__echo {"text":"hello"}`, req.Command)
		assert.Contains(t, req.Message, "The server describes the tool as: read-only, open world (not verified)")
		assert.Equal(t, "mode ask: calls of unknown effect ask", req.Rule)
		e.Answer(Decide(req.RequestID, tools.AllowOnce, ""))
		assert.Equal(t, agent.StateCompleted, e.Finished(run.RunID).State)

		assert.Equal(t, "echo: hello", toolResult(t, env.Model, "mcp__test__echo"))
		first := env.Model.Requests()[0]
		i := slices.Index(first.Tools, "task") // agentd's own last
		require.GreaterOrEqual(t, i, 0)
		assert.Equal(t, []string{"mcp__test__ask", "mcp__test__crash", "mcp__test__dial", "mcp__test__echo", "mcp__test__env",
			"mcp__test__fail", "mcp__test__flood", "mcp__test__grow", "mcp__test__login", "mcp__test__read", "mcp__test__sleep", "mcp__test__state", "mcp__test__write"},
			first.Tools[i+1:], "after agentd's own tools, by name")
		assert.JSONEq(t, `{"type":"object","properties":{"text":{"type":"string","description":"the text to echo"}},"required":["text"],"additionalProperties":false}`,
			string(first.Schemas["mcp__test__echo"]))
		assert.Equal(t, first.Tools, env.Model.Requests()[1].Tools, "the tool list does not change within a run")

		st := mcpStatus(t, e)["test"]
		assert.Equal(t, mcp.StateConnected, st.State)
		assert.Equal(t, mcp.OriginUser, st.Origin)
		assert.Equal(t, "read, no network", st.Sandbox)
		require.Len(t, st.Tools, 13)
		assert.Equal(t, "mcp__test__echo", st.Tools[3].Name)
		assert.True(t, st.Tools[3].Hints.ReadOnly)
	})
}

// TestMCPCrashAndRestart: a server that dies during a call is an error the
// model reads, in the server's words; the next call starts it again.
func TestMCPCrashAndRestart(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{Policy: tools.ModeFullAuto, UserConfig: serversConfig(t, map[string]any{"test": stdioServer(t)}),
			Script: &modeltest.Script{Turns: []modeltest.Turn{
				call("crash", "mcp__test__crash", `{}`),
				{Name: "again", Match: modeltest.Match{AfterTool: "mcp__test__crash"}, Reply: modeltest.Reply{
					ToolCalls: []modeltest.ToolCall{{Name: "mcp__test__echo", Arguments: json.RawMessage(`{"text":"back"}`)}}}},
				after("mcp__test__echo", "It is back."),
			}}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "crash the server and try again"})
		assert.Equal(t, agent.StateCompleted, e.Finished(run.RunID).State)
		crash := toolResult(t, env.Model, "mcp__test__crash")
		assert.Contains(t, crash, "MCP server test stopped during the call (the server exited with status 3: crashing on purpose)")
		assert.Equal(t, "echo: back", toolResult(t, env.Model, "mcp__test__echo"))
		st := mcpStatus(t, e)["test"]
		assert.Equal(t, mcp.StateConnected, st.State)
		assert.Equal(t, 2, st.Starts)
	})
}

// TestMCPQuestionSurvivesRestart: a server's question (elicitation) is a
// durable input request: the daemon dies while it is open, the next
// daemon lists it in agent/pending, makes the call again, finds the same
// question, and the answers reach the server and its result the model.
func TestMCPQuestionSurvivesRestart(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{Policy: tools.ModeFullAuto, UserConfig: serversConfig(t, map[string]any{"test": stdioServer(t)}),
			Script: &modeltest.Script{Turns: []modeltest.Turn{
				call("ask", "mcp__test__ask", `{}`), after("mcp__test__ask", "Thanks."),
			}}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "ask who I am"})
		name := e.Requests(run.RunID, 1)[0]
		assert.Equal(t, agent.KindQuestion, name.Kind)
		assert.Equal(t, "test asks", name.Title)
		assert.Contains(t, name.Message, "Who is asking?\n\nName: your name")
		assert.NotEmpty(t, name.ToolCallID)
		e.RunState(run.RunID, agent.StateRequiresAction)
		e.Close(true) // the daemon dies with the server's question open

		e2 := env.StartInitialized()
		var pending rpc.PendingResult
		e2.MustCall(wire.MethodPending, rpc.PendingParams{}, &pending)
		require.Len(t, pending.Requests, 1)
		assert.Equal(t, name.RequestID, pending.Requests[0].RequestID)
		e2.Answer(ReplyText(name.RequestID, "Ada"))
		color := e2.Requests(run.RunID, 1)[0]
		assert.Equal(t, agent.KindChoice, color.Kind)
		assert.False(t, color.AllowOther)
		assert.Equal(t, []tools.Option{{OptionID: "red", Label: "red"}, {OptionID: "blue", Label: "blue"},
			{OptionID: "decline", Label: "Decline (answer nothing)"}}, color.Options)
		e2.Answer(ReplyOption(color.RequestID, "blue"))
		assert.Equal(t, agent.StateCompleted, e2.Finished(run.RunID).State)
		assert.Equal(t, "name=Ada color=blue age=30", toolResult(t, env.Model, "mcp__test__ask"))
	})
}

// TestMCPWorkspaceServerApproval: a server of the workspace's .mcp.json
// starts only once the user approved it (a confirm_command held by the
// run); "always" is remembered for its exact configuration.
func TestMCPWorkspaceServerApproval(t *testing.T) {
	both(t, func(t *testing.T) Config {
		cfg := serversConfig(t, map[string]any{"ws": stdioServer(t)})
		return Config{Policy: tools.ModeFullAuto, Files: map[string]string{".mcp.json": cfg},
			Script: &modeltest.Script{Turns: []modeltest.Turn{
				call("echo", "mcp__ws__echo", `{"text":"from the workspace"}`), after("mcp__ws__echo", "Done."),
				{Name: "second", Match: modeltest.Match{LastUser: "again"}, Reply: modeltest.Reply{Text: "Still here."}},
			}}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		assert.Equal(t, mcp.StateNeedsApproval, mcpStatus(t, e)["ws"].State)
		run := e.Run(agent.RunParams{Prompt: "use the workspace server"})
		req := e.Requests(run.RunID, 1)[0]
		assert.Equal(t, agent.KindConfirmCommand, req.Kind)
		assert.Equal(t, "Start MCP server ws", req.Title)
		assert.Equal(t, mcptest.Server(t), req.Command)
		assert.Empty(t, req.ToolCallID)
		assert.Contains(t, req.Message, "The workspace's .mcp.json asks agentd to start the MCP server ws")
		assert.Equal(t, "workspace MCP server: ask", req.Rule)
		e.Answer(Decide(req.RequestID, tools.AllowAlways, ""))
		assert.Equal(t, agent.StateCompleted, e.Finished(run.RunID).State)
		assert.Equal(t, "echo: from the workspace", toolResult(t, env.Model, "mcp__ws__echo"))
		assert.Equal(t, mcp.OriginWorkspace, mcpStatus(t, e)["ws"].Origin)

		again := e.Run(agent.RunParams{Prompt: "again", SessionID: run.SessionID})
		assert.Equal(t, agent.StateCompleted, e.Finished(again.RunID).State)
		assert.Empty(t, e.inputRequests(again.RunID), "remembered: not asked again")
		reqs := env.Model.Requests()
		assert.Contains(t, reqs[len(reqs)-1].Tools, "mcp__ws__echo")
	})
}

// TestMCPWorkspaceServerRejected: rejected, the server's tools are not
// offered and the run goes on.
func TestMCPWorkspaceServerRejected(t *testing.T) {
	both(t, func(t *testing.T) Config {
		cfg := serversConfig(t, map[string]any{"ws": stdioServer(t)})
		return Config{Files: map[string]string{".mcp.json": cfg},
			Script: &modeltest.Script{Turns: []modeltest.Turn{{Name: "answer", Reply: modeltest.Reply{Text: "No server then."}, Repeat: true}}}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "use the workspace server"})
		req := e.Requests(run.RunID, 1)[0]
		e.Answer(Decide(req.RequestID, tools.RejectOnce, "not today"))
		assert.Equal(t, agent.StateCompleted, e.Finished(run.RunID).State)
		for _, name := range env.Model.Requests()[0].Tools {
			assert.False(t, strings.HasPrefix(name, "mcp__"), name)
		}
		assert.Equal(t, mcp.StateNeedsApproval, mcpStatus(t, e)["ws"].State)

		again := e.Run(agent.RunParams{Prompt: "and now?", SessionID: run.SessionID})
		e.Finished(again.RunID)
		assert.Empty(t, e.inputRequests(again.RunID), "the session's tool list is fixed: not asked again in it")
		fresh := e.Run(agent.RunParams{Prompt: "a new session"})
		asked := e.Requests(fresh.RunID, 1)[0]
		assert.Equal(t, "Start MCP server ws", asked.Title, "a new session asks again")
		e.Answer(Decide(asked.RequestID, tools.RejectOnce, ""))
		e.Finished(fresh.RunID)
	})
}

// TestMCPHTTPServer: a server reached over streamable HTTP, with a header
// from the configuration.
func TestMCPHTTPServer(t *testing.T) {
	both(t, func(t *testing.T) Config {
		u := mcptest.StartHTTP(t, "TEST_TOKEN=sesame")
		return Config{Policy: tools.ModeFullAuto,
			UserConfig: serversConfig(t, map[string]any{"web": map[string]any{"type": "http", "url": u, "headers": map[string]string{"X-Test-Token": "sesame"}}}),
			Script: &modeltest.Script{Turns: []modeltest.Turn{
				call("echo", "mcp__web__echo", `{"text":"over http"}`), after("mcp__web__echo", "Done."),
			}}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "echo over http"})
		assert.Equal(t, agent.StateCompleted, e.Finished(run.RunID).State)
		assert.Equal(t, "echo: over http", toolResult(t, env.Model, "mcp__web__echo"))
		st := mcpStatus(t, e)["web"]
		assert.Equal(t, "http", st.Transport)
		assert.Empty(t, st.Sandbox)
	})
}

// TestMCPToolsChangeAtTheNextSession: a tool a server adds is not offered
// in the session that saw it come (its tool list is part of the session's
// prefix, the same in every request); a new session offers it.
func TestMCPToolsChangeAtTheNextSession(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{Policy: tools.ModeFullAuto, UserConfig: serversConfig(t, map[string]any{"test": stdioServer(t)}),
			Script: &modeltest.Script{Turns: []modeltest.Turn{
				call("grow", "mcp__test__grow", `{}`), after("mcp__test__grow", "Grown."),
				{Name: "next", Match: modeltest.Match{LastUser: "next"}, Reply: modeltest.Reply{Text: "ok"}, Repeat: true},
			}}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "grow the server"})
		e.Finished(run.RunID)
		await.Until(t, "the server's tools to change", DefaultTimeout, func() bool { return mcpStatus(t, e)["test"].ToolsChanged })
		same := e.Run(agent.RunParams{Prompt: "next", SessionID: run.SessionID})
		e.Finished(same.RunID)
		fresh := e.Run(agent.RunParams{Prompt: "next"})
		e.Finished(fresh.RunID)
		reqs := env.Model.Requests()
		require.Len(t, reqs, 4)
		assert.Equal(t, reqs[0].ToolsJSON, reqs[2].ToolsJSON, "the session's tools are the same bytes in every request")
		assert.NotContains(t, reqs[2].Tools, "mcp__test__late", "not within the session that saw the change")
		assert.Contains(t, reqs[3].Tools, "mcp__test__late", "a new session has it")
	})
}

// TestMCPPolicy: read-only refuses MCP calls; "always allow" is a rule
// for that tool alone; a rule naming the server with * allows all its
// tools.
func TestMCPPolicy(t *testing.T) {
	t.Parallel()
	t.Run("read-only", func(t *testing.T) {
		t.Parallel()
		env := NewEnv(t, InProcess, Config{Policy: tools.ModeReadOnly, UserConfig: serversConfig(t, map[string]any{"test": stdioServer(t)}),
			Script: &modeltest.Script{Turns: []modeltest.Turn{call("echo", "mcp__test__echo", `{"text":"x"}`), after("mcp__test__echo", "Refused.")}}})
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "echo"})
		e.Finished(run.RunID)
		assert.Contains(t, toolResult(t, env.Model, "mcp__test__echo"), "the policy denies it (mode read-only: calls of unknown effect deny")
	})
	t.Run("grants", func(t *testing.T) {
		t.Parallel()
		env := NewEnv(t, InProcess, Config{UserConfig: serversConfig(t, map[string]any{"test": stdioServer(t)}),
			Script: &modeltest.Script{Turns: []modeltest.Turn{
				call("echo", "mcp__test__echo", `{"text":"one"}`),
				{Name: "echo2", Match: modeltest.Match{AfterTool: "mcp__test__echo", LastTool: "one"}, Reply: modeltest.Reply{
					ToolCalls: []modeltest.ToolCall{{Name: "mcp__test__echo", Arguments: json.RawMessage(`{"text":"two"}`)}}}},
				{Name: "env", Match: modeltest.Match{LastTool: "two"}, Reply: modeltest.Reply{
					ToolCalls: []modeltest.ToolCall{{Name: "mcp__test__env", Arguments: json.RawMessage(`{"name":"HOME"}`)}}}},
				after("mcp__test__env", "Done."),
			}}})
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "echo twice"})
		req := e.Requests(run.RunID, 1)[0]
		e.Answer(Decide(req.RequestID, tools.AllowAlways, ""))
		second := e.Requests(run.RunID, 2)[1]
		assert.Equal(t, "Call test: env", second.Title, "the second echo was not asked; another tool is")
		e.Answer(Decide(second.RequestID, tools.RejectOnce, "no"))
		e.Finished(run.RunID)
		data, err := os.ReadFile(filepath.Join(env.State, "state", "rules.json"))
		require.NoError(t, err)
		assert.Contains(t, string(data), `"tool": "mcp__test__echo"`)
	})
	t.Run("server rule", func(t *testing.T) {
		t.Parallel()
		env := NewEnv(t, InProcess, Config{UserConfig: serversConfig(t, map[string]any{"test": stdioServer(t)}),
			Script: &modeltest.Script{Turns: []modeltest.Turn{call("env", "mcp__test__env", `{"name":"X"}`), after("mcp__test__env", "Done.")}}})
		// The user's rules.json (a workspace's may restrict, never allow).
		require.NoError(t, os.WriteFile(filepath.Join(env.State, "config", "agentd", "rules.json"),
			[]byte(`{"rules": [{"tool": "mcp__test__*", "action": "allow"}]}`), 0o600))
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "read X"})
		assert.Equal(t, agent.StateCompleted, e.Finished(run.RunID).State)
		assert.Empty(t, e.inputRequests(run.RunID))
		assert.Equal(t, "X=", toolResult(t, env.Model, "mcp__test__env"))
	})
}

// TestMCPStatusWithoutServers: the status is an empty list, not null.
func TestMCPStatusWithoutServers(t *testing.T) {
	t.Parallel()
	env := NewEnv(t, InProcess, Config{})
	e := env.StartInitialized()
	var raw json.RawMessage
	e.MustCall(wire.MethodMCPStatus, nil, &raw)
	assert.JSONEq(t, `{"servers":[]}`, string(raw))
}

// TestMCPEverything: the published server-everything, on stdio in the
// sandbox and on streamable HTTP: its tools are listed, a call runs after
// approval and its result reaches the model, and its question (a form of
// many fields, one required) is asked and answered.
func TestMCPEverything(t *testing.T) {
	script := mcptest.EverythingScript(t)
	npm := mcptest.NPM(t)
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			srv := map[string]any{"command": "node", "args": []string{script, "stdio"}, "read": []string{npm}}
			if transport == "http" {
				srv = map[string]any{"url": mcptest.StartEverythingHTTP(t)}
			}
			env := NewEnv(t, InProcess, Config{UserConfig: serversConfig(t, map[string]any{"everything": srv}),
				Script: &modeltest.Script{Turns: []modeltest.Turn{
					call("echo", "mcp__everything__echo", `{"message":"hi there"}`),
					{Name: "elicit", Match: modeltest.Match{AfterTool: "mcp__everything__echo"}, Reply: modeltest.Reply{
						ToolCalls: []modeltest.ToolCall{{Name: "mcp__everything__trigger-elicitation-request", Arguments: json.RawMessage(`{}`)}}}},
					after("mcp__everything__trigger-elicitation-request", "Done."),
				}}})
			e := env.StartInitialized()
			run := e.Run(agent.RunParams{Prompt: "echo and ask"})
			req := e.Requests(run.RunID, 1)[0]
			assert.Equal(t, `mcp__everything__echo {"message":"hi there"}`, req.Command)
			e.Answer(Decide(req.RequestID, tools.AllowOnce, ""))
			second := e.Requests(run.RunID, 2)[1]
			assert.Equal(t, "Call everything: Trigger Elicitation Request Tool", second.Title)
			e.Answer(Decide(second.RequestID, tools.AllowOnce, ""))
			q := e.Requests(run.RunID, 3)[2]
			assert.Equal(t, agent.KindQuestion, q.Kind)
			assert.Contains(t, q.Message, "Please provide inputs for the following fields:")
			assert.Contains(t, q.Message, "String: Your full, legal name")
			e.Answer(ReplyText(q.RequestID, "Ada Lovelace"))
			assert.Equal(t, agent.StateCompleted, e.Finished(run.RunID).State)
			assert.Equal(t, "Echo: hi there", toolResult(t, env.Model, "mcp__everything__echo"))
			got := toolResult(t, env.Model, "mcp__everything__trigger-elicitation-request")
			assert.Contains(t, got, "- Name: Ada Lovelace")
			assert.Contains(t, got, fmt.Sprintf("- Favorite Integer: %d", 42), "optional fields take their defaults")
			st := mcpStatus(t, e)["everything"]
			assert.Equal(t, mcp.StateConnected, st.State)
		})
	}
}

// TestMCPAnswerNotSavedStaysOpen: a server's question whose answer cannot
// be saved stays open (the reply is refused with NotSaved); once the state
// directory can be written, the same answer goes through to the server.
func TestMCPAnswerNotSavedStaysOpen(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{Policy: tools.ModeFullAuto, UserConfig: serversConfig(t, map[string]any{"test": stdioServer(t)}),
			Script: &modeltest.Script{Turns: []modeltest.Turn{
				call("ask", "mcp__test__ask", `{}`), after("mcp__test__ask", "Thanks."),
			}}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "ask who I am"})
		name := e.Requests(run.RunID, 1)[0]
		thaw := FreezeTree(t, env.State)
		msg := e.CallErr(wire.MethodReply, agent.ReplyParams{RequestID: name.RequestID, Text: ptr("Ada")}, wire.CodeNotSaved)
		assert.Contains(t, msg, "state not saved")
		var pending rpc.PendingResult
		e.MustCall(wire.MethodPending, rpc.PendingParams{}, &pending)
		require.Len(t, pending.Requests, 1, "the question is still open")
		thaw()
		e.Answer(ReplyText(name.RequestID, "Ada"))
		color := e.Requests(run.RunID, 2)[1]
		e.Answer(ReplyOption(color.RequestID, "red"))
		assert.Equal(t, agent.StateCompleted, e.Finished(run.RunID).State)
		assert.Equal(t, "name=Ada color=red age=30", toolResult(t, env.Model, "mcp__test__ask"))
	})
}

// TestMCPFailureIsANotice: a configured server that cannot start is told
// to the user once per session, in the server's words, as a notice (the
// terminal and the editors show it); the model simply lacks its tools.
func TestMCPFailureIsANotice(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{UserConfig: serversConfig(t, map[string]any{"notes": stdioServer(t, "-fail", "no database at notes.sqlite")}),
			Script: &modeltest.Script{Turns: []modeltest.Turn{{Repeat: true, Reply: modeltest.Reply{Text: "Done."}}}}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		notices := func(runID string) []string {
			var out []string
			for _, u := range e.Updates(runID) {
				if u.Kind == agent.UpdateNotice {
					out = append(out, u.Text)
				}
			}
			return out
		}
		first := e.Run(agent.RunParams{Prompt: "hello"})
		assert.Equal(t, agent.StateCompleted, e.Finished(first.RunID).State)
		got := notices(first.RunID)
		require.Len(t, got, 1)
		assert.Contains(t, got[0], "The MCP server notes could not start")
		assert.Contains(t, got[0], "no database at notes.sqlite")
		assert.NotContains(t, env.Model.Requests()[0].Tools, "mcp__notes__echo")

		second := e.Run(agent.RunParams{Prompt: "again", SessionID: first.SessionID})
		assert.Equal(t, agent.StateCompleted, e.Finished(second.RunID).State)
		assert.Empty(t, notices(second.RunID), "told once per session")
	})
}
