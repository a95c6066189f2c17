package rpctest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/rpc"
	"github.com/agentd/agentd/rpc/wire"
	"github.com/agentd/agentd/tools"
)

// stateFile reads a file of the workspace's state directory (in process:
// the one the test gave; the binary: the per-workspace folder it made).
func stateFile(t *testing.T, env *Env, name string) string {
	t.Helper()
	dir := filepath.Join(env.State, "state")
	if env.Mode == Binary {
		dir = filepath.Join(env.State, stateKey(t, env))
	}
	b, err := os.ReadFile(filepath.Join(dir, name))
	require.NoError(t, err)
	return string(b)
}

// auditLines are the audit log's lines about the command line.
func auditLines(t *testing.T, env *Env, line string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(stateFile(t, env, "audit.jsonl")), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		if m["command"] == line {
			out = append(out, m)
		}
	}
	return out
}

func hasAudit(lines []map[string]any, decision, by string) bool {
	for _, l := range lines {
		if l["decision"] == decision && l["by"] == by {
			return true
		}
	}
	return false
}

// TestAlwaysAllowAfterRestart: two identical commands wait on their
// confirmations when the daemon is killed. After the restart (nothing is
// prepared again yet), allow_always on the first stores its rule and
// audits the decision; the rule approves the second at once (by the
// policy), both run, and the same command in a later run is not asked.
func TestAlwaysAllowAfterRestart(t *testing.T) {
	const line = "touch made.txt"
	touch := func(id string) modeltest.ToolCall {
		return modeltest.ToolCall{ID: id, Name: tools.RunCmdToolName, RawArguments: `{"command":"` + line + `"}`}
	}
	both(t, func(t *testing.T) Config {
		return Config{Policy: tools.ModeAsk, Script: &modeltest.Script{Turns: []modeltest.Turn{
			{Name: "twice", Match: modeltest.Match{LastUser: "make it twice"},
				Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{touch("call_a"), touch("call_b")}}},
			{Name: "made", Match: modeltest.Match{LastUser: "make it twice", MinToolResults: 2}, Reply: modeltest.Reply{Text: "Made it."}},
			{Name: "again", Match: modeltest.Match{LastUser: "make it again"},
				Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{touch("call_c")}}},
			{Name: "made-again", Match: modeltest.Match{LastUser: "make it again", MinToolResults: 1}, Reply: modeltest.Reply{Text: "Made it again."}},
		}}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "make it twice"})
		reqs := e.Requests(run.RunID, 2)
		for _, r := range reqs {
			require.Equal(t, agent.KindConfirmCommand, r.Kind)
			require.Equal(t, line, r.Command)
		}
		e.Close(true)

		e2 := env.StartInitialized()
		var pending rpc.PendingResult
		e2.MustCall(wire.MethodPending, rpc.PendingParams{}, &pending)
		require.Len(t, pending.Requests, 2)
		e2.Answer(Decide(reqs[0].RequestID, tools.AllowAlways, ""))
		second := e2.Resolved(reqs[1].RequestID)
		assert.Equal(t, agent.ByPolicy, second.By, "the stored rule approves the identical open confirmation")
		st := e2.Finished(run.RunID)
		require.Equal(t, agent.StateCompleted, st.State, st.Error)
		assert.FileExists(t, filepath.Join(env.Root, "made.txt"))

		assert.Contains(t, stateFile(t, env, "rules.json"), line, "allow_always stored the command's rule")
		audit := auditLines(t, env, line)
		assert.True(t, hasAudit(audit, string(tools.AllowAlways), string(agent.ByUser)), "the decision is audited: %v", audit)
		assert.True(t, hasAudit(audit, string(tools.AllowOnce), string(agent.ByPolicy)), "the policy's approval is audited: %v", audit)

		again := e2.Run(agent.RunParams{Prompt: "make it again", SessionID: run.SessionID})
		st = e2.Finished(again.RunID)
		require.Equal(t, agent.StateCompleted, st.State, st.Error)
		assert.Equal(t, "Made it again.", e2.Text(again.RunID))
		assert.Empty(t, e2.inputRequestsAll(again.RunID), "the stored rule allows the same command unasked")
		assert.NotContains(t, toolResults(env)["call_c"], "Not run")
	})
}

// TestAlwaysAllowWriteAfterRestart: an edit waits on its confirmation when
// the daemon is killed; after the restart the edit cannot be prepared again
// as it was (the new daemon has not seen the file read), so allow_always
// stores the rule for the file the request showed, and audits it; a later
// edit of that file is not asked.
func TestAlwaysAllowWriteAfterRestart(t *testing.T) {
	read := modeltest.ToolCall{Name: "read_file", RawArguments: `{"path":"notes.txt"}`}
	edit := modeltest.ToolCall{Name: "edit_file", RawArguments: `{"path":"notes.txt","old_string":"milk","new_string":"eggs"}`}
	edit2 := modeltest.ToolCall{Name: "edit_file", RawArguments: `{"path":"notes.txt","old_string":"bread","new_string":"jam"}`}
	both(t, func(t *testing.T) Config {
		return Config{Policy: tools.ModeAsk, Files: map[string]string{"notes.txt": "milk\nbread\n"},
			Script: &modeltest.Script{Turns: []modeltest.Turn{
				{Name: "read", Match: modeltest.Match{LastUser: "edit notes"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{read}}},
				{Name: "edit", Match: modeltest.Match{LastUser: "edit notes", AfterTool: "read_file"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{edit}}},
				{Name: "edited", Match: modeltest.Match{LastUser: "edit notes", AfterTool: "edit_file"}, Reply: modeltest.Reply{Text: "Edited."}},
				{Name: "read2", Match: modeltest.Match{LastUser: "edit again"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{read}}},
				{Name: "edit2", Match: modeltest.Match{LastUser: "edit again", AfterTool: "read_file"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{edit2}}},
				{Name: "edited2", Match: modeltest.Match{LastUser: "edit again", AfterTool: "edit_file"}, Reply: modeltest.Reply{Text: "Edited again."}},
			}}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "edit notes"})
		req := e.Requests(run.RunID, 1)[0]
		require.Equal(t, agent.KindConfirmWrite, req.Kind)
		e.Close(true)

		e2 := env.StartInitialized()
		e2.Answer(Decide(req.RequestID, tools.AllowAlways, ""))
		st := e2.Finished(run.RunID)
		require.Equal(t, agent.StateCompleted, st.State, st.Error)
		assert.Contains(t, stateFile(t, env, "rules.json"), "notes.txt", "allow_always stored the file's rule")
		found := false
		for _, l := range strings.Split(strings.TrimSpace(stateFile(t, env, "audit.jsonl")), "\n") {
			var m struct {
				Decision, By string
				Paths        []string
			}
			require.NoError(t, json.Unmarshal([]byte(l), &m))
			found = found || m.Decision == string(tools.AllowAlways) && m.By == string(agent.ByUser) && len(m.Paths) == 1 && m.Paths[0] == "notes.txt"
		}
		assert.True(t, found, "the decision is audited with the file")

		again := e2.Run(agent.RunParams{Prompt: "edit again", SessionID: run.SessionID})
		st = e2.Finished(again.RunID)
		require.Equal(t, agent.StateCompleted, st.State, st.Error)
		assert.Empty(t, e2.inputRequestsAll(again.RunID), "the stored rule allows the file's edit unasked")
		assert.Contains(t, env.WorkspaceFile("notes.txt"), "jam")
	})
}
