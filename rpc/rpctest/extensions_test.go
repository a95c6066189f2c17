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
	"github.com/agentd/agentd/internal/await"
	"github.com/agentd/agentd/rpc"
	"github.com/agentd/agentd/rpc/wire"
	"github.com/agentd/agentd/tools"
	"github.com/agentd/agentd/tools/sandbox"
)

// Custom commands and hooks (issue 14, items 3 and 4), over the wire.

// userConfigDir is where the daemon of env reads the user's
// ~/.config/agentd (XDG_CONFIG_HOME is set by binaryEnv).
func userConfigDir(env *Env) string { return filepath.Join(env.State, "config", "agentd") }

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o755))
	}
}

func TestCustomCommands(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{
			Script: &modeltest.Script{Turns: []modeltest.Turn{
				{Name: "review", Match: modeltest.Match{LastUser: "Review cart.go with care"}, Reply: modeltest.Reply{Text: "Reviewed."}},
				{Name: "deploy", Match: modeltest.Match{LastUser: "Deploy my way to staging"}, Reply: modeltest.Reply{Text: "Deployed."}},
				{Name: "plain", Match: modeltest.Match{LastUser: "/usr/lib"}, Reply: modeltest.Reply{Text: "That is a path."}},
			}},
			Files: map[string]string{
				".agentd/commands/review.md":     "---\ndescription: Review a file\nargument-hint: <file>\n---\nReview $ARGUMENTS with care.\n",
				".agentd/commands/deploy.md":     "Deploy the workspace's way.",
				".agentd/commands/git/commit.md": "Write a commit message for the staged changes.",
				".agentd/commands/broken.md":     "---\ndescription: never closed\n",
			},
		}
	}, func(t *testing.T, env *Env) {
		writeTree(t, filepath.Join(userConfigDir(env), "commands"), map[string]string{
			"deploy.md": "---\ndescription: My deploy\n---\nDeploy my way to $1.",
		})
		e := env.StartInitialized()

		var list rpc.CommandsResult
		e.MustCall(wire.MethodCommands, nil, &list)
		byName := map[string][]agent.Command{}
		for _, c := range list.Commands {
			byName[c.Name] = append(byName[c.Name], c)
		}
		assert.Equal(t, agent.Command{Name: "review", Description: "Review a file", ArgumentHint: "<file>", Source: agent.CommandsOfWorkspace,
			Path: filepath.Join(env.Root, ".agentd", "commands", "review.md")}, byName["review"][0])
		assert.Equal(t, "Write a commit message for the staged changes.", byName["git:commit"][0].Description)
		require.Len(t, byName["deploy"], 2)
		assert.Equal(t, agent.CommandsOfUser, byName["deploy"][0].Source)
		assert.True(t, byName["deploy"][1].Shadowed, "the user's command wins over the workspace's")
		assert.Contains(t, byName["broken"][0].Error, "no closing ---")
		assert.Equal(t, []agent.CommandDir{
			{Source: agent.CommandsOfUser, Path: filepath.Join(userConfigDir(env), "commands")},
			{Source: agent.CommandsOfWorkspace, Path: filepath.Join(env.Root, ".agentd", "commands")},
		}, list.Directories)

		run := e.Run(agent.RunParams{Prompt: "/review cart.go"})
		e.RunState(run.RunID, agent.StateCompleted)
		assert.Equal(t, "Reviewed.", e.Text(run.RunID))
		last := lastUserMessage(t, env)
		assert.Contains(t, last, "Review cart.go with care.", "the model reads the command's body")
		assert.NotContains(t, last, "/review", "and not what was typed")
		var sessions rpc.SessionsResult
		e.MustCall(wire.MethodSessions, nil, &sessions)
		assert.Equal(t, "/review cart.go", sessions.Sessions[0].Title, "the run keeps what the user typed")
		var hist rpc.HistoryResult
		e.MustCall(wire.MethodHistory, agent.HistoryParams{SessionID: run.SessionID}, &hist)
		require.Len(t, hist.Runs, 1)
		assert.Equal(t, "/review cart.go", hist.Runs[0].Prompt, "and so does its history")

		run = e.Run(agent.RunParams{Prompt: "/deploy staging", SessionID: run.SessionID})
		e.RunState(run.RunID, agent.StateCompleted)
		assert.Equal(t, "Deployed.", e.Text(run.RunID), "the user's deploy, with its first argument")

		msg := e.CallErr(wire.MethodRun, agent.RunParams{Prompt: "/broken now"}, wire.CodeInvalidParams)
		assert.Contains(t, msg, "/broken")
		assert.Contains(t, msg, "no closing ---")

		run = e.Run(agent.RunParams{Prompt: "/usr/lib is missing"})
		e.RunState(run.RunID, agent.StateCompleted)
		assert.Equal(t, "That is a path.", e.Text(run.RunID), "a slash that names no command is a prompt like any")
	})
}

func lastUserMessage(t *testing.T, env *Env) string {
	t.Helper()
	reqs := env.Model.Requests()
	require.NotEmpty(t, reqs)
	msgs := reqs[len(reqs)-1].Messages
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return msgs[i].Content
		}
	}
	t.Fatal("no user message")
	return ""
}

func needSandbox(t *testing.T) {
	t.Helper()
	if !sandbox.Check().Supports(sandbox.Read) {
		t.Skip("the kernel sandbox cannot confine hooks here: " + strings.Join(sandbox.Check().Problems, "; "))
	}
}

// hookScripts are the hooks of these tests, in a directory outside the
// workspace and HOME (which the sandbox hides: a hook named by its path is
// made readable).
var hookScripts = map[string]string{
	// guard denies rm -rf by its exit status, and write_file by its JSON
	// answer.
	"guard.sh": `#!/bin/sh
input=$(cat)
case "$input" in *'rm -rf'*) echo "rm -rf is not allowed here; delete files one by one" >&2; exit 2;; esac
case "$input" in *'"tool":"write_file"'*) echo '{"decision": "deny", "reason": "no new files today"}';; esac
exit 0
`,
	// record writes the event it reads where the sandbox lets it write.
	"record.sh": `#!/bin/sh
cat > "$OUT/$AGENTD_HOOK_EVENT.json"
`,
}

func hookConfig(t *testing.T, hooks map[string][]map[string]any) string {
	t.Helper()
	data, err := json.Marshal(map[string]any{"hooks": hooks})
	require.NoError(t, err)
	return string(data)
}

func readEvent(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, v), string(data))
}

func TestHooksDenyAndReceiveEvents(t *testing.T) {
	needSandbox(t)
	both(t, func(t *testing.T) Config {
		scripts, out := t.TempDir(), t.TempDir()
		writeTree(t, scripts, hookScripts)
		record := map[string]any{"command": filepath.Join(scripts, "record.sh"), "write": []string{out}, "env": map[string]string{"OUT": out}}
		return Config{
			Policy: tools.ModeFullAuto,
			Files:  map[string]string{"build/app": "binary"},
			UserConfig: hookConfig(t, map[string][]map[string]any{
				"before_tool":  {{"command": filepath.Join(scripts, "guard.sh"), "match": "run_cmd|write_file"}},
				"after_tool":   {record},
				"run_finished": {record},
			}),
			Script: &modeltest.Script{Turns: []modeltest.Turn{
				{Name: "act", Match: modeltest.Match{LastUser: "clean up"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
					{ID: "call_rm", Name: "run_cmd", Arguments: modeltest.Args(map[string]string{"command": "rm -rf build"})},
					{ID: "call_w", Name: "write_file", Arguments: modeltest.Args(map[string]string{"path": "new.md", "content": "new\n"})},
					{ID: "call_echo", Name: "run_cmd", Arguments: modeltest.Args(map[string]string{"command": "echo hello"})},
				}}},
				{Name: "done", Match: modeltest.Match{MinToolResults: 3}, Reply: modeltest.Reply{Text: "Done."}},
			}},
		}
	}, func(t *testing.T, env *Env) {
		var cfg struct {
			Hooks map[string][]struct {
				Env map[string]string `json:"env"`
			} `json:"hooks"`
		}
		require.NoError(t, json.Unmarshal([]byte(env.cfg.UserConfig), &cfg))
		out := cfg.Hooks["after_tool"][0].Env["OUT"]

		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "clean up"})
		e.RunState(run.RunID, agent.StateCompleted)

		got := toolResults(env)
		assert.Contains(t, got["call_rm"], "Not run: the user's before_tool hook denies it: rm -rf is not allowed here; delete files one by one")
		assert.Contains(t, got["call_w"], "Not run: the user's before_tool hook denies it: no new files today")
		assert.Contains(t, got["call_echo"], "hello")
		assert.Equal(t, "binary", env.WorkspaceFile("build/app"), "the denied command did not run")
		assert.NoFileExists(t, filepath.Join(env.Root, "new.md"), "the denied write did not happen")
		for _, u := range e.Updates(run.RunID) {
			assert.Nil(t, u.Hook, "no hook failed")
		}

		var after struct {
			Event, Workspace, SessionID, RunID, Tool, ToolCallID, Command, Cwd, Status, Output string
			Effect                                                                             tools.Effect
			Input                                                                              map[string]string
			IsError                                                                            bool
			ExitCode                                                                           *int
		}
		readEvent(t, filepath.Join(out, "after_tool.json"), &after)
		assert.Equal(t, "after_tool", after.Event)
		assert.Equal(t, env.Root, after.Workspace)
		assert.Equal(t, run.RunID, after.RunID)
		assert.Equal(t, run.SessionID, after.SessionID)
		assert.Equal(t, "run_cmd", after.Tool)
		assert.Equal(t, "call_echo", after.ToolCallID, "only the call that ran")
		assert.Equal(t, "echo hello", after.Command)
		assert.Equal(t, map[string]string{"command": "echo hello"}, after.Input)
		assert.Equal(t, tools.EffectExecute, after.Effect)
		assert.Equal(t, "completed", after.Status)
		assert.False(t, after.IsError)
		require.NotNil(t, after.ExitCode)
		assert.Equal(t, 0, *after.ExitCode)
		assert.Contains(t, after.Output, "hello")

		var finished struct {
			Event, RunID, State, StopReason, Prompt, Text string
			Usage                                         agent.Usage
		}
		readEvent(t, filepath.Join(out, "run_finished.json"), &finished)
		assert.Equal(t, "run_finished", finished.Event)
		assert.Equal(t, run.RunID, finished.RunID)
		assert.Equal(t, "completed", finished.State)
		assert.Equal(t, "end_turn", finished.StopReason)
		assert.Equal(t, "clean up", finished.Prompt)
		assert.Equal(t, "Done.", finished.Text)
		assert.Positive(t, finished.Usage.TotalTokens)
	})
}

// awaitFile waits, with a deadline, for a hook to have written path.
func awaitFile(t *testing.T, path string) {
	t.Helper()
	await.Until(t, "a hook to write "+path, DefaultTimeout, func() bool {
		fi, err := os.Stat(path)
		return err == nil && fi.Size() > 0
	})
}

func TestHookFailuresAreReportedAndQuestionsNotMissed(t *testing.T) {
	needSandbox(t)
	both(t, func(t *testing.T) Config {
		scripts, out := t.TempDir(), t.TempDir()
		writeTree(t, scripts, hookScripts)
		return Config{
			Policy: tools.ModeFullAuto,
			UserConfig: hookConfig(t, map[string][]map[string]any{
				"after_tool": {
					{"command": "echo 'jq: command not found' >&2; exit 127"},
					{"command": "sleep 60", "timeout": "1s"},
				},
				"before_tool":     {{"command": "exit 1", "match": "run_cmd"}},
				"input_requested": {{"command": filepath.Join(scripts, "record.sh"), "write": []string{out}, "env": map[string]string{"OUT": out}}},
			}),
			Script: &modeltest.Script{Turns: []modeltest.Turn{
				{Name: "echo", Match: modeltest.Match{LastUser: "say hi"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
					{ID: "call_echo", Name: "run_cmd", Arguments: modeltest.Args(map[string]string{"command": "echo hi"})}}}},
				{Name: "ask", Match: modeltest.Match{AfterTool: "run_cmd"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
					{ID: "call_q", Name: "ask_user", Arguments: modeltest.Args(map[string]string{"question": "Which greeting?"})}}}},
				{Name: "done", Match: modeltest.Match{AfterTool: "ask_user"}, Reply: modeltest.Reply{Text: "Said hi."}},
			}},
		}
	}, func(t *testing.T, env *Env) {
		var cfg struct {
			Hooks map[string][]struct {
				Env map[string]string `json:"env"`
			} `json:"hooks"`
		}
		require.NoError(t, json.Unmarshal([]byte(env.cfg.UserConfig), &cfg))
		out := cfg.Hooks["input_requested"][0].Env["OUT"]

		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "say hi"})
		req := e.Requests(run.RunID, 1)[0]

		// The question is not missed: its hook ran with the request.
		path := filepath.Join(out, "input_requested.json")
		awaitFile(t, path)
		var asked struct {
			Event, RunID string
			Request      agent.InputRequest
		}
		readEvent(t, path, &asked)
		assert.Equal(t, "input_requested", asked.Event)
		assert.Equal(t, run.RunID, asked.RunID)
		assert.Equal(t, req.RequestID, asked.Request.RequestID)
		assert.Equal(t, agent.KindQuestion, asked.Request.Kind)
		assert.Equal(t, "Which greeting?", asked.Request.Message)

		e.Answer(ReplyText(req.RequestID, "hello"))
		e.RunState(run.RunID, agent.StateCompleted)
		assert.Equal(t, "Said hi.", e.Text(run.RunID), "failing hooks never break the run")
		assert.Contains(t, toolResults(env)["call_echo"], "hi", "a failing before_tool hook denies nothing")

		var reports []agent.Update
		for _, u := range e.Updates(run.RunID) {
			if u.Hook != nil {
				assert.Equal(t, agent.UpdateNotice, u.Kind)
				assert.Equal(t, u.Hook.Message(), u.Text)
				reports = append(reports, u)
			}
		}
		require.Len(t, reports, 3, "each failure is reported")
		byEvent := map[agent.HookEvent][]agent.HookReport{}
		for _, u := range reports {
			assert.Equal(t, "call_echo", u.ToolCallID)
			byEvent[u.Hook.Event] = append(byEvent[u.Hook.Event], *u.Hook)
		}
		assert.Equal(t, []agent.HookReport{{Event: agent.HookBeforeTool, Command: "exit 1", Outcome: agent.HookFailed, Error: "exit status 1"}}, byEvent[agent.HookBeforeTool])
		require.Len(t, byEvent[agent.HookAfterTool], 2)
		assert.Equal(t, agent.HookReport{Event: agent.HookAfterTool, Command: "echo 'jq: command not found' >&2; exit 127",
			Outcome: agent.HookFailed, Error: "exit status 127: jq: command not found"}, byEvent[agent.HookAfterTool][0])
		assert.Equal(t, agent.HookTimedOut, byEvent[agent.HookAfterTool][1].Outcome)
		assert.Equal(t, "sleep 60", byEvent[agent.HookAfterTool][1].Command)
		assert.Contains(t, byEvent[agent.HookAfterTool][1].Error, "killed after 1")
		assert.Contains(t, e.daemon.stderr(), "hook failed", "and logged")
	})
}
