package rpctest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/internal/proctest"
	"github.com/agentd/agentd/rpc"
	"github.com/agentd/agentd/rpc/wire"
	"github.com/agentd/agentd/tools"
)

// serveCmd is a web server on the session's loopback, unbuffered so its
// first line comes at once; port tells one test's server from another's in
// the process table (each session has a network of its own, so ports do
// not collide).
func serveCmd(port int) string {
	return fmt.Sprintf("python3 -u -m http.server %d --bind 127.0.0.1", port)
}

// A background server started by one command is reached by the session's
// later commands (a curl, in this run and the next), listed to the editor,
// and stopped by the editor's stop button; the model hears that the user
// stopped it.
func TestBackgroundServerReachedByLaterCommands(t *testing.T) {
	both(t, func(t *testing.T) Config {
		port := 8123
		if t.Name() == "TestBackgroundServerReachedByLaterCommands/binary" {
			port = 8124
		}
		curl := fmt.Sprintf("curl -s http://127.0.0.1:%d/hello.txt", port)
		return Config{Policy: tools.ModeFullAuto, Files: map[string]string{"hello.txt": "hello from the workspace\n"},
			Script: &modeltest.Script{Turns: []modeltest.Turn{
				{Match: modeltest.Match{LastUser: "serve the workspace"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
					callOf("c1", "run_cmd", map[string]any{"command": serveCmd(port), "background": true})}}},
				{Match: modeltest.Match{LastTool: "started in the background"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
					callOf("c2", "process", map[string]any{"action": "wait", "id": "p1", "pattern": "Serving HTTP", "timeout": 60})}}},
				{Match: modeltest.Match{AfterTool: "process"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{callOf("c3", "run_cmd", cmd(curl))}}},
				{Match: modeltest.Match{LastTool: "hello from the workspace", LastUser: "serve the workspace"}, Reply: modeltest.Reply{Text: "Serving."}},
				{Match: modeltest.Match{LastUser: "still there"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{callOf("c4", "run_cmd", cmd(curl))}}},
				{Match: modeltest.Match{LastTool: "hello from the workspace", LastUser: "still there"}, Reply: modeltest.Reply{Text: "Still serving."}},
				{Match: modeltest.Match{LastUser: "was stopped by the user"}, Reply: modeltest.Reply{Text: "Noted."}},
			}}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "serve the workspace"})
		st := e.Finished(run.RunID)
		require.Equal(t, agent.StateCompleted, st.State, st.Error)
		reqs := env.Model.Requests()
		require.Len(t, reqs, 4)
		assert.Contains(t, reqs[1].Last().Content, "[p1: running for")
		// The ready line comes with the start (its first second), or, on a
		// slow machine, with the wait.
		assert.Contains(t, reqs[1].Last().Content+reqs[2].Last().Content, "Serving HTTP on 127.0.0.1")
		assert.Regexp(t, `a line (already shown )?matched "Serving HTTP"`, reqs[2].Last().Content)

		var ps rpc.ProcessesResult
		e.MustCall(wire.MethodProcesses, agent.ProcessesParams{SessionID: run.SessionID}, &ps)
		require.Len(t, ps.Processes, 1)
		p1 := ps.Processes[0]
		assert.Equal(t, "p1", p1.ID)
		assert.Equal(t, tools.ProcRunning, p1.State)
		assert.Equal(t, "c1", p1.ToolCallID)

		next := e.Run(agent.RunParams{Prompt: "is it still there?", SessionID: run.SessionID})
		st = e.Finished(next.RunID)
		require.Equal(t, agent.StateCompleted, st.State, st.Error)
		assert.Equal(t, "Still serving.", e.Text(next.RunID), "the next run's command reaches the server")

		var stopped rpc.ProcessResult
		e.MustCall(wire.MethodStopProcess, agent.StopProcessParams{SessionID: run.SessionID, ID: "p1"}, &stopped)
		assert.Equal(t, tools.ProcStopped, stopped.Process.State)
		assert.Equal(t, tools.ByUser, stopped.Process.StoppedBy)
		e.Await("agent/processChanged stopped", func(m Message) bool {
			return m.Method == wire.MethodProcessChanged && strings.Contains(string(m.Params), `"state":"stopped"`)
		})
		e.CallErr(wire.MethodStopProcess, agent.StopProcessParams{SessionID: run.SessionID, ID: "p9"}, wire.CodeInvalidParams)

		last := e.Run(agent.RunParams{Prompt: "ok", SessionID: run.SessionID})
		require.Equal(t, agent.StateCompleted, e.Finished(last.RunID).State)
		all := env.Model.Requests()
		assert.Contains(t, all[len(all)-1].Messages[len(all[len(all)-1].Messages)-1].Content,
			"background process p1 (`"+p1.Command+"`) was stopped by the user")
	})
}

// A background process dies with a daemon killed with -9 (no orphan), and
// the next daemon lists it as lost and tells the model once.
func TestBackgroundProcessDiesWithTheDaemon(t *testing.T) {
	const port = 8125
	env := NewEnv(t, Binary, Config{Policy: tools.ModeFullAuto, Script: &modeltest.Script{Turns: []modeltest.Turn{
		{Match: modeltest.Match{LastUser: "serve"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
			callOf("c1", "run_cmd", map[string]any{"command": serveCmd(port), "background": true})}}},
		{Match: modeltest.Match{AfterTool: "run_cmd"}, Reply: modeltest.Reply{Text: "Started."}},
		{Match: modeltest.Match{LastUser: "ended when agentd restarted"}, Reply: modeltest.Reply{Text: "It is gone."}},
	}}})
	e := env.StartInitialized()
	run := e.Run(agent.RunParams{Prompt: "serve"})
	require.Equal(t, agent.StateCompleted, e.Finished(run.RunID).State)
	server := fmt.Sprintf("http.server\x00%d", port) // /proc/PID/cmdline separates arguments with NUL
	require.NotEmpty(t, proctest.Running(server), "the server runs")
	e.Close(true) // kill -9
	proctest.AwaitGone(t, server, 10*time.Second, "the background server", "outlived the daemon")

	e = env.StartInitialized()
	var ps rpc.ProcessesResult
	e.MustCall(wire.MethodProcesses, agent.ProcessesParams{SessionID: run.SessionID}, &ps)
	require.Len(t, ps.Processes, 1)
	assert.Equal(t, tools.ProcLost, ps.Processes[0].State)
	next := e.Run(agent.RunParams{Prompt: "what about the server?", SessionID: run.SessionID})
	require.Equal(t, agent.StateCompleted, e.Finished(next.RunID).State)
	assert.Equal(t, "It is gone.", e.Text(next.RunID))
}
