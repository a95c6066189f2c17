package rpctest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/rpc"
	"github.com/agentd/agentd/rpc/wire"
	"github.com/agentd/agentd/tools"
)

// Plan mode (issue 26): the model reads, a write is refused without asking
// anyone, and the run ends in a confirm_plan the user answers: keep
// planning with feedback (the model revises), then approve into a mode the
// work goes on in, in the same run.

const greetingPlan = "1. Write greeting.txt with one line.\n2. Read it back."

func planScript(t *testing.T) Config {
	write := callOf("call_w", "write_file", map[string]any{"path": "greeting.txt", "content": "hello\n"})
	return Config{Policy: tools.ModePlan, Script: &modeltest.Script{Turns: []modeltest.Turn{
		{Name: "write first", Match: modeltest.Match{LastUser: "add a greeting"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{write}}},
		{Name: "read", Match: modeltest.Match{LastTool: "plan mode"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
			callOf("call_r", "list_dir", map[string]any{"path": "."})}}},
		{Name: "propose", Match: modeltest.Match{AfterTool: "list_dir"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
			callOf("call_p1", "propose_plan", map[string]any{"plan": greetingPlan})}}},
		{Name: "revise", Match: modeltest.Match{LastTool: "keep planning"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
			callOf("call_p2", "propose_plan", map[string]any{"plan": greetingPlan + "\n3. Say hello in French too."})}}},
		{Name: "carry out", Match: modeltest.Match{LastTool: "approved the plan"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
			callOf("call_w2", "write_file", map[string]any{"path": "greeting.txt", "content": "hello\nbonjour\n"})}}},
		{Name: "done", Match: modeltest.Match{AfterTool: "write_file", LastTool: "greeting.txt"}, Reply: modeltest.Reply{Text: "Wrote greeting.txt."}},
	}}}
}

func TestPlanModeRefusesWritesAndEndsInConfirmPlan(t *testing.T) {
	both(t, planScript, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "add a greeting"})
		first := e.Requests(run.RunID, 1)[0]
		require.Equal(t, agent.KindConfirmPlan, first.Kind, "the write was refused without asking: the first request is the plan")
		assert.Equal(t, "call_p1", first.ToolCallID)
		assert.Equal(t, greetingPlan, first.Message)
		assert.Equal(t, agent.AnswerReply, first.AnswerWith)
		var opts []string
		for _, o := range first.Options {
			opts = append(opts, o.OptionID)
		}
		assert.Equal(t, []string{"auto-edit", "ask", "full-auto", "keep_planning"}, opts)
		require.NotNil(t, first.Input)
		assert.Contains(t, toolResults(env)["call_w"], "call propose_plan", "the model read why the write was refused, and what to do")
		var shown string
		for _, u := range e.Updates(run.RunID) {
			if u.Kind == agent.UpdateToolCallUpdate && u.ToolCallID == "call_w" {
				shown = u.Output
			}
		}
		assert.Equal(t, "Not run: plan mode changes nothing until you approve a plan.", shown, "the editors show words for people, not the model's")
		assert.NoFileExists(t, filepath.Join(env.Root, "greeting.txt"))

		e.CallErr(wire.MethodReply, agent.ReplyParams{RequestID: first.RequestID, OptionID: "read-only"}, wire.CodeWrongKind)
		e.CallErr(wire.MethodConfirm, agent.ConfirmParams{RequestID: first.RequestID, Decision: tools.AllowOnce}, wire.CodeWrongKind)
		e.Answer(wire.MethodReply, agent.ReplyParams{RequestID: first.RequestID, OptionID: "keep_planning", Text: ptr("also in French")})
		second := e.Requests(run.RunID, 2)[1]
		require.Equal(t, agent.KindConfirmPlan, second.Kind)
		assert.Contains(t, toolResults(env)["call_p1"], "also in French", "the model read the feedback")
		assert.NoFileExists(t, filepath.Join(env.Root, "greeting.txt"))

		e.Answer(wire.MethodReply, agent.ReplyParams{RequestID: second.RequestID, OptionID: "auto-edit"})
		st := e.Finished(run.RunID)
		require.Equal(t, agent.StateCompleted, st.State, st.Error)
		assert.Equal(t, "hello\nbonjour\n", env.WorkspaceFile("greeting.txt"), "approved into auto-edit, the write ran unasked")
		assert.Len(t, e.inputRequestsAll(run.RunID), 2, "only the two plans were asked")
		var settings *agent.SessionSettings
		for _, u := range e.Updates(run.RunID) {
			if u.Kind == agent.UpdateSettings {
				settings = u.Settings
			}
		}
		require.NotNil(t, settings, "a settings update says the mode changed")
		assert.Equal(t, tools.ModeAutoEdit, settings.ApprovalPolicy)
		var sessions rpc.SessionsResult
		e.MustCall(wire.MethodSessions, nil, &sessions)
		assert.Equal(t, tools.ModeAutoEdit, sessions.Sessions[0].Settings.ApprovalPolicy, "the session goes on in the chosen mode")
	})
}

// TestConfirmPlanAcrossRestart: a plan waiting for approval survives a
// kill of the daemon; approved after the restart, the run goes on in the
// chosen mode.
func TestConfirmPlanAcrossRestart(t *testing.T) {
	both(t, planScript, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "add a greeting"})
		plan := e.Requests(run.RunID, 1)[0]
		require.Equal(t, agent.KindConfirmPlan, plan.Kind)
		e.Close(true)

		e2 := env.StartInitialized()
		var pending rpc.PendingResult
		e2.MustCall(wire.MethodPending, rpc.PendingParams{}, &pending)
		require.Len(t, pending.Requests, 1)
		plan.PendingCount = 1
		assert.Equal(t, plan, pending.Requests[0], "the plan comes back exactly as it was sent")
		e2.Answer(wire.MethodReply, agent.ReplyParams{RequestID: plan.RequestID, OptionID: "full-auto"})
		st := e2.Finished(run.RunID)
		require.Equal(t, agent.StateCompleted, st.State, st.Error)
		_, err := os.Stat(filepath.Join(env.Root, "greeting.txt"))
		assert.NoError(t, err)
	})
}
