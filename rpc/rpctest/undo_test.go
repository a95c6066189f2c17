package rpctest

import (
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

// Undo over the real wire (issue 19): a command's changes, the model's and
// the user's undo, a rewind, a protected user edit, a restart.

var undoFiles = map[string]string{
	"main.go":    "package main\n\nvar v = \"old\"\n",
	"notes.txt":  "remove me\n",
	"a/name.txt": "rename me\n",
	"run.sh":     "echo hi\n",
}

func undoConfig(t *testing.T) Config {
	return Config{Script: script(t, "undo.json"), Policy: tools.ModeFullAuto, Files: undoFiles}
}

// assertTidied checks the command's changes are on disk.
func assertTidied(t *testing.T, env *Env) {
	t.Helper()
	assert.Equal(t, "package main\n\nvar v = \"new\"\n", env.WorkspaceFile("main.go"))
	assert.Equal(t, "fresh\n", env.WorkspaceFile("made.txt"))
	assert.Equal(t, "rename me\n", env.WorkspaceFile("b/name.txt"))
	assert.NoFileExists(t, filepath.Join(env.Root, "notes.txt"))
}

// assertAsBefore checks the workspace is as the scenario began.
func assertAsBefore(t *testing.T, env *Env) {
	t.Helper()
	for name, content := range undoFiles {
		assert.Equal(t, content, env.WorkspaceFile(name), name)
	}
	for _, gone := range []string{"made.txt", "b"} {
		_, err := os.Lstat(filepath.Join(env.Root, gone))
		assert.True(t, os.IsNotExist(err), "%s is gone", gone)
	}
	fi, err := os.Stat(filepath.Join(env.Root, "run.sh"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm())
}

// A command (a real shell line through run_cmd) edits, deletes, creates,
// renames and chmods; the editor sees it all as the call's checkpoint, and
// agent/undo of the run restores everything.
func TestUndoCommandChanges(t *testing.T) {
	both(t, undoConfig, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "tidy the project"})
		e.RunState(run.RunID, agent.StateCompleted)
		assertTidied(t, env)

		var update agent.Update
		for _, u := range e.Updates(run.RunID) {
			if u.Kind == agent.UpdateToolCallUpdate && u.Checkpoint != "" {
				update = u
			}
		}
		assert.Equal(t, "c1", update.Checkpoint)
		statuses := map[string]string{}
		for _, f := range update.Files {
			statuses[f.Path] = f.Status
		}
		assert.Equal(t, map[string]string{"main.go": "modified", "notes.txt": "deleted", "made.txt": "added",
			"b/name.txt": "moved", "run.sh": "modified"}, statuses)

		// The run's final diff starts from the files as they were before the
		// command, which the run could not read itself.
		final := map[string]string{}
		for _, u := range e.Updates(run.RunID) {
			if u.Kind == agent.UpdateFilesChanged {
				for _, f := range u.Files {
					final[f.Path] = f.Status
				}
			}
		}
		assert.Equal(t, "modified", final["main.go"])
		assert.Equal(t, "deleted", final["notes.txt"])
		assert.Equal(t, "added", final["made.txt"])

		var cps rpc.CheckpointsResult
		e.MustCall(wire.MethodCheckpoints, rpc.SessionRef{SessionID: run.SessionID}, &cps)
		require.Len(t, cps.Checkpoints, 1)
		assert.Equal(t, "run_cmd", cps.Checkpoints[0].Tool)
		assert.Equal(t, run.RunID, cps.Checkpoints[0].RunID)

		var preview agent.UndoResult
		e.MustCall(wire.MethodUndo, agent.UndoParams{SessionID: run.SessionID, RunID: run.RunID, DryRun: true}, &preview)
		assert.Equal(t, agent.UndoPreview, preview.Status)
		assertTidied(t, env)

		var res agent.UndoResult
		e.MustCall(wire.MethodUndo, agent.UndoParams{SessionID: run.SessionID, RunID: run.RunID}, &res)
		assert.Equal(t, agent.UndoRestored, res.Status)
		assert.Equal(t, []string{"c1"}, res.Undone)
		assert.Equal(t, "c2", res.Checkpoint)
		assertAsBefore(t, env)

		// The undo is undoable: undoing c2 redoes the command's changes.
		e.MustCall(wire.MethodUndo, agent.UndoParams{SessionID: run.SessionID, Checkpoint: "c2"}, &res)
		assert.Equal(t, agent.UndoRestored, res.Status)
		assertTidied(t, env)

		e.CallErr(wire.MethodUndo, agent.UndoParams{SessionID: run.SessionID, Checkpoint: "c9"}, wire.CodeUnknownCheckpoint)
		e.CallErr(wire.MethodUndo, agent.UndoParams{SessionID: "s_nope"}, wire.CodeUnknownSession)
		e.CallErr(wire.MethodUndo, agent.UndoParams{SessionID: run.SessionID, OnConflict: "maybe"}, wire.CodeInvalidParams)
	})
}

// The model undoes its own command with undo_patch.
func TestModelUndoesItsCommand(t *testing.T) {
	both(t, undoConfig, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "tidy, then think better of it"})
		e.RunState(run.RunID, agent.StateCompleted)
		assert.Equal(t, "Undone.", e.Text(run.RunID))
		assertAsBefore(t, env)
		results := toolResults(env)
		assert.Contains(t, results["call_r1"], "[checkpoint c1: ")
		assert.Contains(t, results["call_u1"], "undid c1")
	})
}

// Three runs; a rewind two runs back restores the files the last two
// changed and cuts them from the conversation: the next prompt continues
// from the first. The cut runs stay in the history.
func TestRewindTwoRunsBack(t *testing.T) {
	both(t, undoConfig, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		r1 := e.Run(agent.RunParams{Prompt: "step one"})
		e.RunState(r1.RunID, agent.StateCompleted)
		r2 := e.Run(agent.RunParams{Prompt: "step two", SessionID: r1.SessionID})
		e.RunState(r2.RunID, agent.StateCompleted)
		r3 := e.Run(agent.RunParams{Prompt: "step three", SessionID: r1.SessionID})
		e.RunState(r3.RunID, agent.StateCompleted)
		assert.Equal(t, "one\ntwo\nthree\n", env.WorkspaceFile("f.txt"))

		// The second run alone cannot be undone cleanly: the third changed
		// f.txt again.
		var res agent.UndoResult
		e.MustCall(wire.MethodUndo, agent.UndoParams{SessionID: r1.SessionID, RunID: r2.RunID, Only: true, DryRun: true}, &res)
		assert.Equal(t, []string{"c2"}, res.Undone)
		require.Len(t, res.Conflicts, 1)
		assert.Equal(t, "f.txt", res.Conflicts[0].Path)

		e.MustCall(wire.MethodRewind, agent.RewindParams{SessionID: r1.SessionID, RunID: r2.RunID, DryRun: true}, &res)
		assert.Equal(t, agent.UndoPreview, res.Status)
		assert.Equal(t, "one\ntwo\nthree\n", env.WorkspaceFile("f.txt"), "a dry run writes nothing")

		e.MustCall(wire.MethodRewind, agent.RewindParams{SessionID: r1.SessionID, RunID: r2.RunID}, &res)
		assert.Equal(t, agent.UndoRestored, res.Status)
		assert.Equal(t, []string{r2.RunID, r3.RunID}, res.Rewound)
		assert.Equal(t, []string{"c2", "c3"}, res.Undone)
		require.NotNil(t, res.Messages)
		assert.Equal(t, "one\n", env.WorkspaceFile("f.txt"))
		assert.NoFileExists(t, filepath.Join(env.Root, "g.txt"))

		r4 := e.Run(agent.RunParams{Prompt: "step four", SessionID: r1.SessionID})
		e.RunState(r4.RunID, agent.StateCompleted)
		reqs := env.Model.Requests()
		last := reqs[len(reqs)-1]
		var users []string
		for _, m := range last.Messages {
			if m.Role == "user" {
				users = append(users, m.Content)
			}
		}
		require.Len(t, users, 2, "the conversation is step one, then step four: %q", users)
		assert.Contains(t, users[0], "step one")
		assert.Contains(t, users[1], "step four")

		// The cut runs are still there to read.
		var evs rpc.EventsResult
		e.MustCall(wire.MethodEvents, rpc.EventsParams{RunID: r3.RunID}, &evs)
		assert.Equal(t, agent.StateCompleted, evs.State)
		e.CallErr(wire.MethodRewind, agent.RewindParams{SessionID: r1.SessionID, RunID: r3.RunID}, wire.CodeInvalidParams)
	})
}

// A file the user edits after the agent's command is not overwritten: the
// undo reports the conflict with its diff and writes nothing; skip restores
// the rest; overwrite keeps the user's version in the undo's checkpoint, so
// undoing that undo brings it back.
func TestUndoProtectsUserEdits(t *testing.T) {
	both(t, undoConfig, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "tidy the project"})
		e.RunState(run.RunID, agent.StateCompleted)
		require.NoError(t, os.WriteFile(filepath.Join(env.Root, "main.go"), []byte("package main // the user's\n"), 0o644))

		var res agent.UndoResult
		e.MustCall(wire.MethodUndo, agent.UndoParams{SessionID: run.SessionID, RunID: run.RunID}, &res)
		assert.Equal(t, agent.UndoConflicts, res.Status)
		require.Len(t, res.Conflicts, 1)
		c := res.Conflicts[0]
		assert.Equal(t, "main.go", c.Path)
		assert.Equal(t, "changed", c.Kind)
		require.NotNil(t, c.Diff)
		assert.Contains(t, c.Diff.Diff, "-package main // the user's")
		assert.Contains(t, c.Diff.Diff, "+var v = \"old\"")
		assert.Empty(t, res.Files)
		assert.Equal(t, "package main // the user's\n", env.WorkspaceFile("main.go"))
		assert.Equal(t, "fresh\n", env.WorkspaceFile("made.txt"), "nothing was written")

		e.MustCall(wire.MethodUndo, agent.UndoParams{SessionID: run.SessionID, RunID: run.RunID, OnConflict: "skip"}, &res)
		assert.Equal(t, agent.UndoRestored, res.Status)
		assert.Equal(t, "package main // the user's\n", env.WorkspaceFile("main.go"))
		assert.NoFileExists(t, filepath.Join(env.Root, "made.txt"))
		assert.Equal(t, "remove me\n", env.WorkspaceFile("notes.txt"))
		require.NotEmpty(t, res.Notes)
		assert.Contains(t, res.Notes[0], "main.go")

		// The run's checkpoint is only partly undone: undo it again, this
		// time overwriting, then undo that undo.
		e.MustCall(wire.MethodUndo, agent.UndoParams{SessionID: run.SessionID, Checkpoint: "c1", OnConflict: "overwrite"}, &res)
		assert.Equal(t, agent.UndoRestored, res.Status)
		assert.Equal(t, undoFiles["main.go"], env.WorkspaceFile("main.go"))
		overwrite := res.Checkpoint
		e.MustCall(wire.MethodUndo, agent.UndoParams{SessionID: run.SessionID, Checkpoint: overwrite}, &res)
		assert.Equal(t, agent.UndoRestored, res.Status)
		assert.Equal(t, "package main // the user's\n", env.WorkspaceFile("main.go"), "the user's version came back")
	})
}

// The daemon is killed between the command and the undo; the undo after
// the restart restores everything.
func TestUndoAfterRestart(t *testing.T) {
	both(t, undoConfig, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "tidy the project"})
		e.RunState(run.RunID, agent.StateCompleted)
		e.Close(true)
		assertTidied(t, env)

		e2 := env.StartInitialized()
		var cps rpc.CheckpointsResult
		e2.MustCall(wire.MethodCheckpoints, rpc.SessionRef{SessionID: run.SessionID}, &cps)
		require.Len(t, cps.Checkpoints, 1)
		var res agent.UndoResult
		e2.MustCall(wire.MethodUndo, agent.UndoParams{SessionID: run.SessionID}, &res)
		assert.Equal(t, agent.UndoRestored, res.Status, "%+v", res)
		assertAsBefore(t, env)
	})
}

// Undo waits for the session's run to finish.
func TestUndoRefusedWhileRunning(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{Script: script(t, "cancel_tool.json"), Policy: tools.ModeFullAuto}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "sleep a while"})
		e.ToolRunning()
		msg := e.CallErr(wire.MethodUndo, agent.UndoParams{SessionID: run.SessionID}, wire.CodeSessionBusy)
		assert.True(t, strings.Contains(msg, "cancel it or wait"), msg)
		e.MustCall(wire.MethodCancel, rpc.RunRef{RunID: run.RunID}, nil)
		e.RunState(run.RunID, agent.StateCancelled)
	})
}

// TestCommandBaselineSurvivesRestart: the run's final diff of a file a
// command changed starts from the file as it was before the command (read
// from the command's checkpoint), also when the daemon restarted between
// the command and the run's end.
func TestCommandBaselineSurvivesRestart(t *testing.T) {
	both(t, func(t *testing.T) Config {
		return Config{Policy: tools.ModeFullAuto, Files: map[string]string{"main.go": "package main\n\nvar v = \"old\"\n"},
			Script: &modeltest.Script{Turns: []modeltest.Turn{
				turn("edit", callOf("call_s", "run_cmd", cmd(`sed -i s/old/new/ main.go`))),
				{Name: "ask", Match: modeltest.Match{AfterTool: "run_cmd"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
					callOf("call_q", "ask_user", map[string]any{"question": "Anything else?"})}}},
				{Name: "done", Match: modeltest.Match{AfterTool: "ask_user"}, Reply: modeltest.Reply{Text: "Done."}},
			}}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "«edit»"})
		req := e.Requests(run.RunID, 1)[0]
		e.Close(true)
		require.Equal(t, "package main\n\nvar v = \"new\"\n", env.WorkspaceFile("main.go"))

		e2 := env.StartInitialized()
		var pending rpc.PendingResult
		e2.MustCall(wire.MethodPending, rpc.PendingParams{}, &pending)
		require.Len(t, pending.Requests, 1)
		e2.Answer(ReplyText(req.RequestID, "no"))
		e2.RunState(run.RunID, agent.StateCompleted)
		var diff string
		for _, u := range e2.Updates(run.RunID) {
			for _, f := range u.Files {
				if u.Kind == agent.UpdateFilesChanged && f.Path == "main.go" {
					diff = f.Diff
				}
			}
		}
		assert.Contains(t, diff, "-var v = \"old\"")
		assert.Contains(t, diff, "+var v = \"new\"")
	})
}
