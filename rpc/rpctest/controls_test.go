package rpctest

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/rpc"
	"github.com/agentd/agentd/rpc/wire"
	"github.com/agentd/agentd/tools"
	"github.com/agentd/agentd/tools/mcp"
)

// The user's controls of issue 31, over the wire: the rules view, MCP
// servers switched off, on and restarted, sessions searched, renamed and
// deleted, the context meter and compact now.

func rules(t *testing.T, e *Editor, sessionID string) rpc.RulesResult {
	var res rpc.RulesResult
	e.MustCall(wire.MethodRulesList, rpc.RulesParams{SessionID: sessionID}, &res)
	return res
}

func findRule(res rpc.RulesResult, scope string, pattern string) (agent.RuleInfo, bool) {
	i := slices.IndexFunc(res.Rules, func(r agent.RuleInfo) bool { return r.Scope == scope && r.Pattern == pattern })
	if i < 0 {
		return agent.RuleInfo{}, false
	}
	return res.Rules[i], true
}

// TestRulesView: an "always" answer shows in rules/list (npm run one stores
// its family, `npm run one *`: tools/policy/family.go); revoked, the same
// command asks again; edited to a wider pattern, another command runs
// unasked; a session's rule is listed with its session. Rules of files the
// user writes are listed and refused.
func TestRulesView(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{Script: &modeltest.Script{Turns: []modeltest.Turn{
			{Name: "first", Match: modeltest.Match{LastUser: "first"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "run_cmd", Arguments: json.RawMessage(`{"command":"npm run one"}`)}}}},
			{Name: "second", Match: modeltest.Match{LastUser: "second"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "run_cmd", Arguments: json.RawMessage(`{"command":"npm run one"}`)}}}},
			{Name: "third", Match: modeltest.Match{LastUser: "third"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "run_cmd", Arguments: json.RawMessage(`{"command":"npm run two"}`)}}}},
			{Name: "fourth", Match: modeltest.Match{LastUser: "fourth"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "run_cmd", Arguments: json.RawMessage(`{"command":"npm run three"}`)}}}},
			{Name: "done", Match: modeltest.Match{AfterTool: "run_cmd"}, Reply: modeltest.Reply{Text: "Ran it."}, Repeat: true},
		}}}
	}, func(t *testing.T, env *Env) {
		writeTree(t, userConfigDir(env), map[string]string{"rules.json": `{"rules":[{"tool":"run_cmd","pattern":"make *","action":"allow"}]}`})
		e := env.StartInitialized()

		run := e.Run(agent.RunParams{Prompt: "first"})
		req := e.Requests(run.RunID, 1)[0]
		e.Answer(Decide(req.RequestID, tools.AllowAlways, ""))
		e.Finished(run.RunID)
		list := rules(t, e, "")
		always, ok := findRule(list, "always", `npm run one *`)
		require.True(t, ok, "%+v", list.Rules)
		assert.Equal(t, "allow", always.Action)
		assert.Equal(t, "run_cmd", always.Tool)
		assert.True(t, always.Revocable)
		user, ok := findRule(list, "user", "make *")
		require.True(t, ok)
		assert.False(t, user.Revocable)
		assert.Equal(t, filepath.Join(userConfigDir(env), "rules.json"), list.Files.User)
		assert.Equal(t, filepath.Join(env.Root, ".agentd", "rules.json"), list.Files.Workspace)

		msg := e.CallErr(wire.MethodRulesRevoke, rpc.RuleRef{ID: user.ID}, wire.CodeInvalidParams)
		assert.Contains(t, msg, "rules.json")
		e.CallErr(wire.MethodRulesRevoke, rpc.RuleRef{ID: "rule_0000"}, wire.CodeUnknownRule)
		e.CallErr(wire.MethodRulesRevoke, rpc.RuleRef{}, wire.CodeInvalidParams)
		e.CallErr(wire.MethodRulesList, rpc.RulesParams{SessionID: "s_nope"}, wire.CodeUnknownSession)

		e.MustCall(wire.MethodRulesRevoke, rpc.RuleRef{ID: always.ID}, nil)
		_, ok = findRule(rules(t, e, ""), "always", `npm run one *`)
		assert.False(t, ok, "revoked")
		again := e.Run(agent.RunParams{Prompt: "second", SessionID: run.SessionID})
		req = e.Requests(again.RunID, 1)[0]
		assert.Equal(t, "npm run one", req.Command, "the revoked command asks again")
		e.Answer(Decide(req.RequestID, tools.AllowSession, ""))
		e.Finished(again.RunID)
		session, ok := findRule(rules(t, e, run.SessionID), "session", `npm run one *`)
		require.True(t, ok, "a session's rule is listed with its session")
		_, ok = findRule(rules(t, e, ""), "session", `npm run one *`)
		assert.False(t, ok, "and only with it")

		pattern := "npm run *"
		var edited rpc.RuleResult
		e.MustCall(wire.MethodRulesEdit, rpc.RuleEditParams{ID: session.ID, SessionID: run.SessionID, Pattern: &pattern}, &edited)
		assert.Equal(t, "npm run *", edited.Rule.Pattern)
		assert.Equal(t, "session", edited.Rule.Scope)
		third := e.Run(agent.RunParams{Prompt: "third", SessionID: run.SessionID})
		assert.Equal(t, agent.StateCompleted, e.Finished(third.RunID).State)
		assert.Empty(t, e.inputRequests(third.RunID), "the widened rule covers npm run two")
		e.CallErr(wire.MethodRulesEdit, rpc.RuleEditParams{ID: edited.Rule.ID, SessionID: run.SessionID, Action: "perhaps"}, wire.CodeInvalidParams)
		e.MustCall(wire.MethodRulesEdit, rpc.RuleEditParams{ID: edited.Rule.ID, SessionID: run.SessionID, Action: "deny"}, &edited)
		fourth := e.Run(agent.RunParams{Prompt: "fourth", SessionID: run.SessionID})
		e.Finished(fourth.RunID)
		assert.Empty(t, e.inputRequests(fourth.RunID), "denied now: refused unasked")
		assert.Contains(t, toolResult(t, env.Model, "run_cmd"), "npm run *")
	})
}

// TestMCPControls: disable stops a server and is remembered across a
// restart of the daemon; enable and restart start it again; each change
// is announced with mcp/changed.
func TestMCPControls(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{UserConfig: serversConfig(t, map[string]any{"test": stdioServer(t)}),
			Script: &modeltest.Script{Turns: []modeltest.Turn{{Name: "answer", Reply: modeltest.Reply{Text: "Fine."}, Repeat: true}}}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		is := func(m Message, state mcp.State) bool {
			var p rpc.MCPChangedParams
			return m.Method == wire.MethodMCPChanged && json.Unmarshal(m.Params, &p) == nil && p.Name == "test" && p.State == state
		}
		count := func(state mcp.State) int {
			n := 0
			for _, m := range e.Messages() {
				if is(m, state) {
					n++
				}
			}
			return n
		}
		// changed waits for the nth mcp/changed to state (the first by default).
		changed := func(state mcp.State, nth ...int) {
			want := append(nth, 1)[0]
			seen := 0
			e.Await("mcp/changed "+string(state), func(m Message) bool {
				if is(m, state) {
					seen++
				}
				return seen >= want
			})
		}
		changed(mcp.StateConnected)
		var res rpc.MCPServerResult
		e.MustCall(wire.MethodMCPDisable, rpc.MCPServerRef{Name: "test"}, &res)
		assert.Equal(t, mcp.StateDisabled, res.Server.State)
		assert.Equal(t, "test", res.Server.Name)
		changed(mcp.StateDisabled)
		run := e.Run(agent.RunParams{Prompt: "anything"})
		e.Finished(run.RunID)
		for _, name := range env.Model.Requests()[0].Tools {
			assert.False(t, strings.HasPrefix(name, "mcp__"), "a disabled server offers no tools: %s", name)
		}
		msg := e.CallErr(wire.MethodMCPRestart, rpc.MCPServerRef{Name: "test"}, wire.CodeInvalidParams)
		assert.Contains(t, msg, "disabled")
		e.CallErr(wire.MethodMCPEnable, rpc.MCPServerRef{Name: "nope"}, wire.CodeInvalidParams)
		e.CallErr(wire.MethodMCPEnable, rpc.MCPServerRef{}, wire.CodeInvalidParams)
		e.Close(false)

		e = env.StartInitialized()
		assert.Equal(t, mcp.StateDisabled, mcpStatus(t, e)["test"].State, "remembered across a restart")
		e.MustCall(wire.MethodMCPEnable, rpc.MCPServerRef{Name: "test"}, &res)
		assert.Equal(t, mcp.StateStarting, res.Server.State)
		changed(mcp.StateConnected)
		assert.Equal(t, mcp.StateConnected, mcpStatus(t, e)["test"].State)
		starts, connects := mcpStatus(t, e)["test"].Starts, count(mcp.StateConnected)
		e.MustCall(wire.MethodMCPRestart, rpc.MCPServerRef{Name: "test"}, &res)
		assert.Equal(t, mcp.StateStarting, res.Server.State)
		changed(mcp.StateConnected, connects+1)
		assert.Equal(t, starts+1, mcpStatus(t, e)["test"].Starts, "a new process")
		fresh := e.Run(agent.RunParams{Prompt: "a new session"})
		e.Finished(fresh.RunID)
		reqs := env.Model.Requests()
		assert.Contains(t, reqs[len(reqs)-1].Tools, "mcp__test__echo", "enabled: a new session offers its tools")
	})
}

// TestSessionsSearchRenameDelete: a session is found by a word of one of
// its prompts (which the answer quotes) or of its title; renamed, it keeps
// its new title after a restart; deleted, it is gone from the list, its
// history and its files; a session with a run going is not deleted.
func TestSessionsSearchRenameDelete(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{Script: &modeltest.Script{Turns: []modeltest.Turn{
			{Name: "ask", Match: modeltest.Match{LastUser: "wait"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "ask_user", Arguments: json.RawMessage(`{"question":"Which?"}`)}}}},
			{Name: "answer", Reply: modeltest.Reply{Text: "Done."}, Repeat: true},
		}}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		cart := e.Run(agent.RunParams{Prompt: "Rename Total in cart.go"})
		e.Finished(cart.RunID)
		more := e.Run(agent.RunParams{Prompt: "Now explain the Checkout flow\nin detail", SessionID: cart.SessionID})
		e.Finished(more.RunID)
		other := e.Run(agent.RunParams{Prompt: "Fix the flaky login test"})
		e.Finished(other.RunID)

		search := func(q string) []agent.SessionInfo {
			var res rpc.SessionsResult
			e.MustCall(wire.MethodSessions, agent.SessionsParams{Query: q}, &res)
			return res.Sessions
		}
		found := search("checkout FLOW")
		require.Len(t, found, 1)
		assert.Equal(t, cart.SessionID, found[0].SessionID)
		assert.Equal(t, "Now explain the Checkout flow", found[0].Match, "the prompt that matched, its line")
		found = search("login")
		require.Len(t, found, 1)
		assert.Equal(t, other.SessionID, found[0].SessionID)
		assert.Empty(t, found[0].Match, "found by its title")
		assert.Empty(t, search("checkout login"), "every word must match")
		assert.Len(t, search(""), 2)

		var renamed rpc.SessionResult
		e.MustCall(wire.MethodRenameSession, agent.RenameParams{SessionID: cart.SessionID, Title: "  Cart   work "}, &renamed)
		assert.Equal(t, "Cart work", renamed.Session.Title)
		e.CallErr(wire.MethodRenameSession, agent.RenameParams{SessionID: cart.SessionID, Title: " "}, wire.CodeInvalidParams)
		e.CallErr(wire.MethodRenameSession, agent.RenameParams{SessionID: "s_nope", Title: "x"}, wire.CodeUnknownSession)

		busy := e.Run(agent.RunParams{Prompt: "wait for me"})
		e.Requests(busy.RunID, 1)
		msg := e.CallErr(wire.MethodDeleteSession, rpc.SessionRef{SessionID: busy.SessionID}, wire.CodeSessionBusy)
		assert.Contains(t, msg, "cancel it")
		e.MustCall(wire.MethodCancel, rpc.RunRef{RunID: busy.RunID}, nil)
		e.Finished(busy.RunID)
		e.Close(false)

		e = env.StartInitialized()
		require.Len(t, search("cart work"), 1, "the new title survives a restart")
		e.MustCall(wire.MethodDeleteSession, rpc.SessionRef{SessionID: cart.SessionID}, nil)
		assert.Empty(t, search("cart"), "deleted")
		assert.Len(t, search(""), 2)
		e.CallErr(wire.MethodHistory, agent.HistoryParams{SessionID: cart.SessionID}, wire.CodeUnknownSession)
		e.CallErr(wire.MethodEvents, rpc.EventsParams{RunID: more.RunID}, wire.CodeUnknownRun)
		e.CallErr(wire.MethodDeleteSession, rpc.SessionRef{SessionID: cart.SessionID}, wire.CodeUnknownSession)
		for _, id := range []string{cart.RunID, more.RunID} {
			matches, _ := filepath.Glob(filepath.Join(env.State, "*", "runs", id+"*"))
			assert.Empty(t, matches, "the run's files are gone")
		}
		e.Close(false)
		e = env.StartInitialized()
		assert.Len(t, search(""), 2, "and stay gone after a restart")
	})
}

// TestContextMeterAndCompact: each model call reports how full the window
// is; agent/context says the same between runs; agent/compact keeps the
// last turn and summarizes the rest, which the model reads next.
func TestContextMeterAndCompact(t *testing.T) {
	long := strings.Repeat("All work and no play makes Jack a dull boy. ", 200)
	both(t, func(t *testing.T) Config {
		return Config{Script: &modeltest.Script{Turns: []modeltest.Turn{
			{Name: "long", Match: modeltest.Match{LastUser: "tell"}, Reply: modeltest.Reply{Text: long}},
			{Name: "answer", Reply: modeltest.Reply{Text: "Short."}, Repeat: true},
		}}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		first := e.Run(agent.RunParams{Prompt: "tell me a long story"})
		e.Finished(first.RunID)
		var meter *agent.ContextUse
		for _, u := range e.Updates(first.RunID) {
			if u.Kind == agent.UpdateContext {
				meter = u.Context
			}
		}
		require.NotNil(t, meter, "a context update after the model call")
		assert.Equal(t, 128000, meter.Window)
		assert.Greater(t, meter.Used, len(long)/4, "the answer counts")
		assert.Equal(t, 2, meter.Messages)
		assert.Equal(t, 128000*3/4-1000, meter.CompactAt)
		second := e.Run(agent.RunParams{Prompt: "and a short one", SessionID: first.SessionID})
		e.Finished(second.RunID)

		var now agent.ContextUse
		e.MustCall(wire.MethodContext, rpc.SessionRef{SessionID: first.SessionID}, &now)
		assert.Equal(t, 4, now.Messages)
		assert.Greater(t, now.Used, meter.Used)
		assert.False(t, now.Compacted)

		var res agent.CompactResult
		e.MustCall(wire.MethodCompact, rpc.SessionRef{SessionID: first.SessionID}, &res)
		assert.Equal(t, now.Used, res.Before)
		assert.Less(t, res.After, res.Before-len(long)/8, "the long answer is summarized")
		assert.Equal(t, 2, res.Dropped)
		assert.Contains(t, res.Summary, "The user asked: tell me a long story")
		e.MustCall(wire.MethodContext, rpc.SessionRef{SessionID: first.SessionID}, &now)
		assert.Equal(t, res.After, now.Used)
		assert.True(t, now.Compacted)
		assert.Equal(t, 2, now.Messages)

		third := e.Run(agent.RunParams{Prompt: "what now?", SessionID: first.SessionID})
		e.Finished(third.RunID)
		reqs := env.Model.Requests()
		msgs := reqs[len(reqs)-1].Messages
		require.GreaterOrEqual(t, len(msgs), 4)
		assert.Contains(t, msgs[1].Content, "compacted at the user's request")
		assert.Contains(t, msgs[1].Content, "and a short one", "the last turn is kept")
		for _, m := range msgs {
			assert.Less(t, len(m.Content), len(long)/4, "the long answer is gone, summarized in a line")
		}

		e.CallErr(wire.MethodCompact, rpc.SessionRef{SessionID: "s_nope"}, wire.CodeUnknownSession)
		e.CallErr(wire.MethodContext, rpc.SessionRef{}, wire.CodeInvalidParams)
		lone := e.Run(agent.RunParams{Prompt: "one turn"})
		e.Finished(lone.RunID)
		e.MustCall(wire.MethodCompact, rpc.SessionRef{SessionID: lone.SessionID}, &res)
		assert.Zero(t, res.Dropped, "one turn of one step: nothing to compact")
		assert.Equal(t, res.Before, res.After)
		short := e.Run(agent.RunParams{Prompt: "hi", SessionID: lone.SessionID})
		e.Finished(short.RunID)
		e.MustCall(wire.MethodContext, rpc.SessionRef{SessionID: lone.SessionID}, &now)
		e.MustCall(wire.MethodCompact, rpc.SessionRef{SessionID: lone.SessionID}, &res)
		assert.Zero(t, res.Dropped, "two short turns: their summary would be bigger, so nothing is dropped")
		assert.Equal(t, now.Used, res.After)
	})
}
