package rpctest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/tools"
)

// A provider's prompt cache serves the longest prefix a request shares
// with an earlier one. These tests drive whole runs and check that every
// request of a session begins with the same system message and tool list,
// byte for byte, and that each request's messages extend the previous
// request's, across the steps of a run, a question, a daemon restart and
// the session's next run.

func prefixScript() *modeltest.Script {
	tc := func(name, args string) []modeltest.ToolCall {
		return []modeltest.ToolCall{{Name: name, RawArguments: args}}
	}
	return &modeltest.Script{Turns: []modeltest.Turn{
		{Name: "read", Match: modeltest.Match{LastUser: "fix the cart"}, Reply: modeltest.Reply{ToolCalls: tc("read_file", `{"path": "cart/cart.go"}`)}},
		{Name: "plan", Match: modeltest.Match{AfterTool: "read_file"}, Reply: modeltest.Reply{ToolCalls: tc("update_plan",
			`{"plan": [{"step": "Run the tests", "status": "in_progress"}, {"step": "Ask which rounding", "status": "pending"}]}`)}},
		{Name: "command", Match: modeltest.Match{AfterTool: "update_plan"}, Reply: modeltest.Reply{ToolCalls: tc("run_cmd", `{"command": "echo 'FAIL cart' 2>&1 | tail -5"}`)}},
		{Name: "question", Match: modeltest.Match{AfterTool: "run_cmd"}, Reply: modeltest.Reply{Text: "The test fails. ", ToolCalls: tc("ask_user",
			`{"question": "Round half up or half even?", "options": ["half up", "half even"]}`)}},
		{Name: "answer", Match: modeltest.Match{AfterTool: "ask_user"}, Reply: modeltest.Reply{Text: "I will round half even."}},
		{Name: "next-run", Match: modeltest.Match{LastUser: "now do it"}, Reply: modeltest.Reply{ToolCalls: tc("grep", `{"pattern": "Total"}`)}},
		{Name: "next-done", Match: modeltest.Match{AfterTool: "grep"}, Reply: modeltest.Reply{Text: "Done."}},
	}}
}

func TestPrefixStableAcrossASession(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{Script: prefixScript(), Policy: tools.ModeFullAuto, Files: map[string]string{
			"AGENTS.md":    "Money is in cents.\n",
			"cart/cart.go": "package cart\n\n// Total sums the cart.\nfunc Total(xs []int64) int64 {\n\tvar t int64\n\tfor _, x := range xs {\n\t\tt += x\n\t}\n\treturn t\n}\n",
		}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "fix the cart total"})
		q := e.Requests(run.RunID, 1)[0]
		require.Equal(t, agent.KindChoice, q.Kind)
		e.Close(true) // a restart while the question is open

		e = env.StartInitialized()
		e.Answer(ReplyOption(q.RequestID, "2"))
		st := e.Finished(run.RunID)
		require.Equal(t, agent.StateCompleted, st.State, st.Error)
		e.Close(false)

		e = env.StartInitialized() // the session goes on in a new daemon
		next := e.Run(agent.RunParams{Prompt: "now do it", SessionID: run.SessionID})
		st = e.Finished(next.RunID)
		require.Equal(t, agent.StateCompleted, st.State, st.Error)

		reqs := env.Model.Requests()
		require.Len(t, reqs, 7)
		require.Empty(t, env.Model.Unused())
		for i, r := range reqs {
			assert.Equal(t, reqs[0].Messages[0].Content, r.Messages[0].Content, "request %d: the system message changed", i+1)
			assert.Equal(t, string(reqs[0].ToolsJSON), string(r.ToolsJSON), "request %d: the tool list changed", i+1)
			assert.Contains(t, r.Tools, "ask_user")
			assert.Contains(t, r.Tools, "update_plan")
			if i > 0 {
				assertExtends(t, reqs[i-1], r, i+1)
			}
		}
		assert.Contains(t, reqs[0].Messages[0].Content, "Money is in cents.", "AGENTS.md is in the system message")
		var instr []agent.Update
		for _, u := range e.Updates(next.RunID) {
			if u.Kind == agent.UpdateInstructions {
				instr = append(instr, u)
			}
		}
		require.Len(t, instr, 1, "each run tells the editor the instruction files")
		assert.Equal(t, []agent.InstructionFile{{Path: "AGENTS.md", Scope: agent.ScopeWorkspace, Bytes: 19}}, instr[0].Instructions)
	})
}

// assertExtends checks that next's messages begin with prev's, each the
// same role, text, tool calls (arguments byte for byte) and call id.
func assertExtends(t *testing.T, prev, next modeltest.Request, n int) {
	t.Helper()
	require.Greater(t, len(next.Messages), len(prev.Messages), "request %d has no more messages than the one before", n)
	for k, m := range prev.Messages {
		if !assert.Equal(t, m, next.Messages[k], "request %d: message %d differs from the request before", n, k) {
			return
		}
	}
}

// promptBytes is a request as a prompt cache sees it: the tools, then
// each message, as sent (Anthropic's order); with systemFirst, the system
// message, the tools, then the others (the order of chat templates such as
// Qwen's, which put the tools in the system turn).
func promptBytes(t testing.TB, r modeltest.Request, systemFirst bool) []byte {
	var body struct {
		Messages []json.RawMessage `json:"messages"`
		Tools    json.RawMessage   `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(r.Body, &body))
	var out []byte
	msgs := body.Messages
	if systemFirst {
		out, msgs = append(out, msgs[0]...), msgs[1:]
	}
	out = append(out, body.Tools...)
	for _, m := range msgs {
		out = append(out, m...)
	}
	return out
}

func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// TestPrefixCacheFigures drives a 10-step run of the usual kind (reads,
// searches, a plan, a command, edits) and reports the bytes of the first
// request, the growth per step, and the share of all bytes sent that a
// prefix cache would serve (each request's common prefix with the one
// before). go test ./rpc/rpctest -run PrefixCacheFigures -v prints them.
func TestPrefixCacheFigures(t *testing.T) {
	t.Parallel()
	var files = map[string]string{"AGENTS.md": "Run go test ./... before you finish.\n"}
	for i := 0; i < 6; i++ {
		var b strings.Builder
		fmt.Fprintf(&b, "package shop\n\n")
		for k := 0; k < 40; k++ {
			fmt.Fprintf(&b, "// Price%d_%d returns the price of item %d in cents.\nfunc Price%d_%d(qty int64) int64 {\n\treturn qty * %d\n}\n\n", i, k, k, i, k, k+1)
		}
		files[fmt.Sprintf("shop/f%d.go", i)] = b.String()
	}
	tc := func(name, args string) modeltest.Turn {
		return modeltest.Turn{Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: name, RawArguments: args}}}}
	}
	script := &modeltest.Script{Turns: []modeltest.Turn{
		tc("list_dir", `{"path": "shop"}`),
		tc("update_plan", `{"plan": [{"step": "Read the prices", "status": "in_progress"}, {"step": "Fix Price0_3", "status": "pending"}]}`),
		tc("grep", `{"pattern": "func Price0_"}`),
		tc("read_file", `{"path": "shop/f0.go"}`),
		tc("read_file", `{"path": "shop/f1.go", "offset": 1, "limit": 40}`),
		tc("edit_file", `{"path": "shop/f0.go", "old_string": "\treturn qty * 4\n", "new_string": "\treturn qty * 5\n"}`),
		tc("run_cmd", `{"command": "gofmt -l shop"}`),
		tc("read_file", `{"path": "shop/f2.go", "offset": 20, "limit": 30}`),
		tc("update_plan", `{"plan": [{"step": "Read the prices", "status": "completed"}, {"step": "Fix Price0_3", "status": "completed"}]}`),
		{Reply: modeltest.Reply{Text: "Price0_3 now charges 5 cents a unit."}},
	}}
	env := NewEnv(t, InProcess, Config{Script: script, Policy: tools.ModeFullAuto, Files: files})
	e := env.StartInitialized()
	run := e.Run(agent.RunParams{Prompt: "fix the price of item 3"})
	st := e.Finished(run.RunID)
	require.Equal(t, agent.StateCompleted, st.State, st.Error)
	reqs := env.Model.Requests()
	require.Len(t, reqs, 10)

	for _, systemFirst := range []bool{false, true} {
		total, cached, breaks, lost := 0, 0, 0, 0
		var prev []byte
		for i, r := range reqs {
			p := promptBytes(t, r, systemFirst)
			total += len(p)
			if i > 0 {
				c := commonPrefix(prev, p)
				cached += c
				if c < len(prev) {
					breaks++
					lost += len(prev) - c
				}
			}
			prev = p
		}
		order := "tools, system, messages"
		if systemFirst {
			order = "system, tools, messages"
		}
		t.Logf("in the order %s, a prefix cache serves %d of the %d bytes sent in the %d requests (%.1f%%); %d requests do not extend the one before, %d bytes of earlier requests are computed again",
			order, cached, total, len(reqs), 100*float64(cached)/float64(total), breaks, lost)
		assert.Zero(t, breaks, "every request extends the one before")
		assert.Greater(t, float64(cached)/float64(total), 0.8)
	}
	first, last := len(promptBytes(t, reqs[0], false)), len(promptBytes(t, reqs[len(reqs)-1], false))
	t.Logf("first request: %d bytes of prompt (%d bytes of body: the system message %d, the tools %d)",
		first, len(reqs[0].Body), len(reqs[0].Messages[0].Content), len(reqs[0].ToolsJSON))
	t.Logf("growth per step: %d bytes on average (%d to %d over %d requests)", (last-first)/(len(reqs)-1), first, last, len(reqs))
}
