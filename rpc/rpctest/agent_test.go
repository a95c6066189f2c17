package rpctest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/rpc"
	"github.com/agentd/agentd/rpc/wire"
	"github.com/agentd/agentd/tools"
)

// The loop's behaviour over the real wire (issue 3).

func TestPlanPublishedAndRevised(t *testing.T) {
	both(t, withScript("plan.json"), func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "refactor the parser"})
		e.RunState(run.RunID, agent.StateCompleted)
		var plans []agent.Update
		for _, u := range e.Updates(run.RunID) {
			if u.Kind == agent.UpdatePlan {
				plans = append(plans, u)
			}
		}
		require.Len(t, plans, 2)
		assert.Equal(t, []agent.PlanEntry{{Content: "Read the code", Status: "in_progress"}, {Content: "Change it", Status: "pending"}}, plans[0].Entries)
		assert.Equal(t, "The first approach failed", plans[1].Explanation)
		assert.Equal(t, agent.StatusFailed, plans[1].Entries[1].Status)
		assert.Equal(t, "Done with the refactor.", e.Text(run.RunID))
	})
}

// TestTwoQuestionsAcrossRestart kills the daemon while two questions are
// open, starts it again, answers both in reverse order, and checks the run
// completes with both answers reaching the model as tool results.
func TestTwoQuestionsAcrossRestart(t *testing.T) {
	both(t, withScript("two_questions.json"), func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "set up the service"})
		reqs := e.Requests(run.RunID, 2)
		e.Close(true)

		e2 := env.StartInitialized()
		var pending rpc.PendingResult
		e2.MustCall(wire.MethodPending, rpc.PendingParams{}, &pending)
		for i := range reqs {
			reqs[i].PendingCount = len(reqs) // how many are open now
		}
		assert.Equal(t, reqs, pending.Requests, "pending gives the requests exactly as they were sent, seq included")
		e2.Answer(ReplyOption(reqs[1].RequestID, "2"))
		e2.Answer(ReplyText(reqs[0].RequestID, "8080"))
		st := e2.Finished(run.RunID)
		assert.Equal(t, agent.StateCompleted, st.State)
		assert.Equal(t, "Port 8080 with sqlite it is.", e2.Text(run.RunID))
		assertToolResults(t, env, map[string]string{"call_port": "8080", "call_db": "sqlite"})
		e2.CallErr(wire.MethodReply, agent.ReplyParams{RequestID: reqs[0].RequestID, Text: ptr("9090")}, wire.CodeAlreadyResolved)
	})
}

func TestCancelDuringModelStream(t *testing.T) {
	both(t, withScript("cancel_stream.json"), func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "stream forever"})
		e.Await("a streamed chunk", func(m Message) bool {
			return m.Method == wire.MethodUpdate && strings.Contains(string(m.Params), "message_chunk")
		})
		e.MustCall(wire.MethodCancel, rpc.RunRef{RunID: run.RunID}, nil)
		st := e.RunState(run.RunID, agent.StateCancelled)
		assert.Equal(t, agent.StopCancelled, st.StopReason)
		assert.Empty(t, st.Error, "a cancel is not a failure")
	})
}

func TestCancelDuringRunningTool(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{Script: script(t, "cancel_tool.json"), Policy: tools.ModeFullAuto}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "sleep a while"})
		e.ToolRunning()
		e.MustCall(wire.MethodCancel, rpc.RunRef{RunID: run.RunID}, nil)
		st := e.RunState(run.RunID, agent.StateCancelled)
		assert.Equal(t, agent.StopCancelled, st.StopReason)
	})
}

func TestModelFailsTwiceThenSucceeds(t *testing.T) {
	both(t, withScript("retry.json"), func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "a flaky model"})
		e.RunState(run.RunID, agent.StateCompleted)
		assert.Equal(t, "Third time lucky.", e.Text(run.RunID))
		assert.Len(t, env.Model.Requests(), 3)
	})
}

func TestModelReturnsGarbage(t *testing.T) {
	both(t, withScript("garbage.json"), func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "anything"})
		st := e.RunState(run.RunID, agent.StateFailed)
		assert.Equal(t, agent.StopError, st.StopReason)
		assert.Contains(t, st.Error, "model: 3 attempts failed")
		assert.NotContains(t, st.Error, "retryable", "no internal markers in what the user reads")
		assert.Len(t, env.Model.Requests(), 3, "retried, then failed")
		// The daemon keeps serving.
		var sessions rpc.SessionsResult
		e.MustCall(wire.MethodSessions, nil, &sessions)
		assert.Equal(t, agent.StateFailed, sessions.Sessions[0].State)
	})
}

func TestStepLimit(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{Script: script(t, "steps.json"), MaxSteps: 2, Files: map[string]string{"README.md": "# hi\n"}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "explore forever"})
		st := e.RunState(run.RunID, agent.StateCompleted)
		assert.Equal(t, agent.StopMaxSteps, st.StopReason)
		assert.Equal(t, "I ran out of steps; the workspace has a README.", e.Text(run.RunID))
		reqs := env.Model.Requests()
		last := reqs[len(reqs)-1]
		assert.Equal(t, "none", last.ToolChoice, "the tools are withdrawn at the limit")
		assert.Equal(t, string(reqs[0].ToolsJSON), string(last.ToolsJSON), "by tool_choice, not by changing the prompt's prefix")
	})
}

func TestTextToolCallFallback(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{Script: script(t, "textmode.json"), ToolMode: "text", Files: map[string]string{"README.md": "# hi\n"}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "what files are there?"})
		e.RunState(run.RunID, agent.StateCompleted)
		var calls []string
		for _, u := range e.Updates(run.RunID) {
			if u.Kind == agent.UpdateToolCall {
				calls = append(calls, u.Title)
			}
		}
		require.Len(t, calls, 1)
		assert.Contains(t, e.Text(run.RunID), "There is a README.md.")
		assert.NotContains(t, e.Text(run.RunID), `"tool"`, "the JSON call is not shown as text")
		for _, r := range env.Model.Requests() {
			assert.Empty(t, r.Tools, "text mode offers no native tools")
		}
	})
}

// Tools and the permission policy over the wire (issue 4).

func TestWriteRejectedThenAllowedThenUndone(t *testing.T) {
	both(t, withScript("write_undo.json"), func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "make a greeting file"})
		first := e.Requests(run.RunID, 1)[0]
		assert.Equal(t, agent.KindConfirmWrite, first.Kind)
		assert.Contains(t, first.Diff[0].Diff, "+Hello, World")
		e.Answer(Decide(first.RequestID, tools.RejectOnce, "lowercase please"))

		second := e.Requests(run.RunID, 2)[1]
		assert.Contains(t, second.Diff[0].Diff, "+hello, world")
		e.Answer(Decide(second.RequestID, tools.AllowOnce, ""))

		undo := e.Requests(run.RunID, 3)[2]
		assert.Equal(t, "hello, world\n", env.WorkspaceFile("hello.txt"), "the allowed write is on disk")
		assert.Equal(t, "deleted", undo.Diff[0].Status)
		e.Answer(Decide(undo.RequestID, tools.AllowOnce, ""))

		e.RunState(run.RunID, agent.StateCompleted)
		assert.NoFileExists(t, filepath.Join(env.Root, "hello.txt"), "undo restored the workspace")
		assertToolResults(t, env, map[string]string{"call_w1": "lowercase please"})
		audit, err := os.ReadFile(filepath.Join(env.State, "state", "audit.jsonl"))
		if env.Mode == Binary {
			audit, err = os.ReadFile(filepath.Join(env.State, stateKey(t, env), "audit.jsonl"))
		}
		require.NoError(t, err)
		assert.Contains(t, string(audit), `"decision":"reject_once"`)
		assert.Contains(t, string(audit), `"decision":"allow_once"`)
	})
}

// stateKey finds the per-workspace folder the binary made under the state base.
func stateKey(t *testing.T, env *Env) string {
	entries, err := os.ReadDir(env.State)
	require.NoError(t, err)
	for _, e := range entries {
		if e.IsDir() && len(e.Name()) == 16 {
			return e.Name()
		}
	}
	t.Fatalf("no workspace state folder under %s", env.State)
	return ""
}

func TestCommandsAllowedDeniedTimedOut(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{Script: script(t, "commands.json"), Files: map[string]string{
			".agentd/rules.json": `{"rules": [{"tool": "run_cmd", "pattern": "git push *", "action": "deny"}]}`}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "run commands"})
		touch := e.Requests(run.RunID, 1)[0]
		assert.Equal(t, agent.KindConfirmCommand, touch.Kind)
		assert.Equal(t, "touch made.txt", touch.Command)
		assert.Equal(t, ".", touch.Cwd)
		e.Answer(Decide(touch.RequestID, tools.AllowOnce, ""))

		e.RunState(run.RunID, agent.StateCompleted)
		// git push and sudo were denied without asking anyone; sleep is
		// read-only and ran without asking.
		assert.Len(t, e.inputRequestsAll(run.RunID), 1)

		assert.FileExists(t, filepath.Join(env.Root, "made.txt"))
		results := toolResults(env)
		assert.Contains(t, results["call_c2"], "git push")
		assert.Contains(t, results["call_c2"], "the policy denies it")
		assert.Contains(t, results["call_c3"], "the policy denies it")
		assert.Contains(t, strings.ToLower(results["call_c4"]), "timed out")
	})
}

func toolResults(env *Env) map[string]string {
	got := map[string]string{}
	for _, r := range env.Model.Requests() {
		for _, m := range r.Messages {
			if m.Role == "tool" {
				got[m.ToolCallID] = m.Content
			}
		}
	}
	return got
}

func TestLeavingTheWorkspaceIsRefused(t *testing.T) {
	both(t, withScript("escape.json"), func(t *testing.T, env *Env) {
		outside := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(env.Root), "outside.txt"), []byte("secret"), 0o644))
		require.NoError(t, os.Symlink(outside, filepath.Join(env.Root, "link")))
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "read the secrets"})
		e.RunState(run.RunID, agent.StateCompleted)
		assert.Empty(t, e.inputRequestsAll(run.RunID), "nobody is asked: the calls are refused")
		results := toolResults(env)
		for _, id := range []string{"call_e1", "call_e2", "call_e3"} {
			assert.Contains(t, strings.ToLower(results[id]), "outside the workspace", id)
		}
		assert.NoFileExists(t, filepath.Join(outside, "planted.txt"))
		assert.NotContains(t, results["call_e1"], "secret")
	})
}

func (e *Editor) inputRequestsAll(runID string) []agent.InputRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.inputRequests(runID)
}

func TestInteractivePromptGoesToTheUser(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{Script: script(t, "interactive.json"), Policy: tools.ModeFullAuto}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "deploy it"})
		q := e.Requests(run.RunID, 1)[0]
		assert.Equal(t, agent.KindChoice, q.Kind)
		assert.Contains(t, q.Message, "Deploy to prod?")
		e.Answer(ReplyOption(q.RequestID, "yes"))
		e.RunState(run.RunID, agent.StateCompleted)
		assert.Equal(t, "Deployed.", e.Text(run.RunID))
	})
}

// TestPausedByRestartThenResumed stops the daemon while a command runs: the
// run comes back paused, and agent/resume finishes the step without running
// the command again: the model reads that it was interrupted.
func TestPausedByRestartThenResumed(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{Script: script(t, "resume.json"), Policy: tools.ModeFullAuto}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "build it"})
		e.ToolRunning()
		e.Close(true)

		e2 := env.StartInitialized()
		var evs rpc.EventsResult
		e2.MustCall(wire.MethodEvents, rpc.EventsParams{RunID: run.RunID}, &evs)
		assert.Equal(t, agent.StatePaused, evs.State)
		e2.MustCall(wire.MethodResume, rpc.RunRef{RunID: run.RunID}, nil)
		e2.RunState(run.RunID, agent.StateCompleted)
		assert.NoFileExists(t, filepath.Join(env.Root, "out.txt"), "the command was cut off and not run again")
		assertToolResults(t, env, map[string]string{"call_b": "not run again"})
		e2.CallErr(wire.MethodResume, rpc.RunRef{RunID: run.RunID}, wire.CodeRunNotPaused)
	})
}

// TestSecretReachesOnlyTheCommand gives a secret through ask_user: the
// command that names it asks first, even in full-auto, and its confirmation
// names the secret; the command gets it, and neither the model, the
// editor's notifications nor any file under the state directory ever holds
// it.
func TestSecretReachesOnlyTheCommand(t *testing.T) {
	const secret = "s3cr3t-Value-42"
	both(t, func(t *testing.T) Config {
		return Config{Script: script(t, "secret.json"), Policy: tools.ModeFullAuto}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "publish the package"})
		q := e.Requests(run.RunID, 1)[0]
		assert.Equal(t, agent.KindSecret, q.Kind)
		e.Answer(ReplyText(q.RequestID, secret))
		c := e.Requests(run.RunID, 2)[1]
		assert.Equal(t, agent.KindConfirmCommand, c.Kind, "a command that uses a secret never runs unasked")
		assert.Equal(t, []string{"REGISTRY_TOKEN"}, c.Secrets)
		assert.Contains(t, c.Message, "$REGISTRY_TOKEN")
		e.Answer(Decide(c.RequestID, tools.AllowOnce, ""))
		e.RunState(run.RunID, agent.StateCompleted)

		results := toolResults(env)
		assert.Contains(t, results["call_e"], "token=[secret $REGISTRY_TOKEN]", "the command saw the value; the model sees its name")
		for _, r := range env.Model.Requests() {
			for _, m := range r.Messages {
				assert.NotContains(t, m.Content, secret)
			}
		}
		for _, m := range e.Messages() {
			assert.NotContains(t, string(m.Params), secret)
		}
		_ = filepath.Walk(env.State, func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() {
				data, _ := os.ReadFile(p)
				assert.NotContains(t, string(data), secret, p)
			}
			return nil
		})
	})
}

// TestFilesChangedAtTheEnd: a run that changed files ends with every file
// it changed and its diff, before the result.
func TestFilesChangedAtTheEnd(t *testing.T) {
	both(t, withScript("reject_write.json"), func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "save my notes"})
		req := e.Requests(run.RunID, 1)[0]
		e.Answer(Decide(req.RequestID, tools.AllowOnce, ""))
		e.RunState(run.RunID, agent.StateCompleted)
		assert.Equal(t, "remember the milk\n", env.WorkspaceFile("notes.txt"))
		var kinds []agent.UpdateKind
		var files []tools.FileDiff
		for _, u := range e.Updates(run.RunID) {
			kinds = append(kinds, u.Kind)
			if u.Kind == agent.UpdateFilesChanged {
				files = u.Files
			}
		}
		require.Len(t, files, 1)
		assert.Equal(t, "notes.txt", files[0].Path)
		assert.Equal(t, "added", files[0].Status)
		assert.Contains(t, files[0].Diff, "+remember the milk")
		assert.Equal(t, []agent.UpdateKind{agent.UpdateFilesChanged, agent.UpdateResult}, kinds[len(kinds)-2:])
	})
}

// TestCommandOutputStreams: a running command's output reaches the editor
// while it runs, in order, before the call's final update.
func TestCommandOutputStreams(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{Script: script(t, "stream_output.json"), Policy: tools.ModeFullAuto}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "build it"})
		e.RunState(run.RunID, agent.StateCompleted)
		streamed, final := "", -1
		for i, u := range e.Updates(run.RunID) {
			if u.Kind != agent.UpdateToolCallUpdate || u.ToolCallID != "call_b" {
				continue
			}
			if u.OutputDelta != "" {
				require.Equal(t, -1, final, "no piece after the final update")
				streamed += u.OutputDelta
			}
			if u.Status == agent.StatusCompleted {
				final = i
			}
		}
		assert.Contains(t, streamed, "compiling")
		assert.Contains(t, streamed, "done")
		assert.Less(t, strings.Index(streamed, "compiling"), strings.Index(streamed, "done"))
		assert.GreaterOrEqual(t, final, 0)
	})
}

// TestSyntaxGateRefusesBrokenGoEdit: an edit that would leave a Go file
// unparsable is not applied, even with nobody asked (full-auto), and the
// model is told why.
func TestSyntaxGateRefusesBrokenGoEdit(t *testing.T) {
	const mainGo = "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"
	both(t, func(t *testing.T) Config {
		return Config{Script: script(t, "syntax_gate.json"), Policy: tools.ModeFullAuto,
			Files: map[string]string{"main.go": mainGo}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "break main.go"})
		e.RunState(run.RunID, agent.StateCompleted)
		assert.Empty(t, e.inputRequestsAll(run.RunID), "full-auto: nobody is asked")
		assert.Equal(t, mainGo, env.WorkspaceFile("main.go"), "the edit was not applied")
		result := toolResults(env)["call_e"]
		assert.Contains(t, result, "NOT applied")
		assert.Contains(t, result, "main.go:4:")
		assert.Empty(t, env.Model.Unused(), "the model answered after the refusal")
	})
}
