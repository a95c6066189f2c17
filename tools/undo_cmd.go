package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentd/agentd/tools/checkpoint"
)

// commandCheckpoint brackets one command so that everything it changes in
// the workspace can be undone (docs/undo.md). run_cmd calls
// beginCommandCheckpoint just before the process starts and end just after
// it is gone (killed group included); nothing else of the spawn is touched,
// so the sandbox's spawn can change freely around the two calls.
type commandCheckpoint struct {
	env  *Env
	line string
	ws   *checkpoint.Workspace
	tok  *checkpoint.Token
	err  error
}

// beginCommandCheckpoint brings the workspace's manifest up to date, so
// every covered file's content is kept before the command runs. It never
// stops the command: a failure is reported with its result.
func beginCommandCheckpoint(ctx context.Context, env *Env, line string) *commandCheckpoint {
	c := &commandCheckpoint{env: env, line: line}
	if env.StateDir == "" {
		return c
	}
	c.ws, c.err = Checkpoints(env)
	if c.err != nil {
		return c
	}
	c.tok = c.ws.Begin(ctx)
	c.err = c.tok.Err()
	return c
}

// end records what the command changed as a checkpoint of the session and
// tells the model (one line after the outcome) and the editor (the result's
// diffs). A command that changed nothing adds nothing. It runs even when
// the call was cancelled: what the command did until then is undoable too.
func (c *commandCheckpoint) end(ctx context.Context, res Result) Result {
	if c.ws == nil && c.err == nil {
		return res
	}
	if c.err != nil {
		return c.note(res, "[changes not checkpointed: "+c.err.Error()+"]")
	}
	chs, notes, err := c.ws.End(context.WithoutCancel(ctx), c.tok)
	if err != nil {
		return c.note(res, "[changes not checkpointed: "+err.Error()+"]")
	}
	if len(chs) == 0 {
		return res
	}
	cp := &checkpoint.Checkpoint{Session: c.env.SessionID, Run: c.env.RunID, Tool: RunCmdToolName, Title: c.line,
		Changes: chs, Notes: notes}
	if err := c.ws.Record(cp); err != nil {
		return c.note(res, "[changes not checkpointed: "+err.Error()+"]")
	}
	res.Checkpoint = cp.ID
	res.Files = append(res.Files, CheckpointDiffs(c.ws, chs)...)
	// the model's way back; the editor shows the checkpoint itself, and
	// reads only the notes
	if res.Full == "" {
		res.Full = res.Output
	}
	line := fmt.Sprintf("[checkpoint %s: %s; undo_patch restores them]", cp.ID, describeChanges(chs))
	res.Output = strings.TrimRight(res.Output, "\n") + "\n" + line
	for _, n := range notes {
		res = c.note(res, "["+n+"]")
	}
	return res
}

// note appends a line to what the model and the editor read.
func (c *commandCheckpoint) note(res Result, line string) Result {
	res.Output = strings.TrimRight(res.Output, "\n") + "\n" + line
	if res.Full != "" {
		res.Full = strings.TrimRight(res.Full, "\n") + "\n" + line
	}
	return res
}

// describeChanges summarizes a checkpoint in a line: "modified a.go,
// deleted b.txt, added 2 files, renamed c → d, mode of run.sh". Long lists
// are cut with a count.
func describeChanges(chs []checkpoint.Change) string {
	renamed := map[string]bool{}
	for _, c := range chs {
		if c.From != "" {
			renamed[c.From] = true
		}
	}
	var parts []string
	for _, c := range chs {
		if isDir(c.Before) || isDir(c.After) || renamed[c.Path] && c.After == nil {
			continue
		}
		switch c.Status() {
		case "renamed":
			parts = append(parts, "renamed "+c.From+" → "+c.Path)
		case "mode":
			parts = append(parts, fmt.Sprintf("mode of %s %04o → %04o", c.Path, c.Before.Mode, c.After.Mode))
		default:
			parts = append(parts, c.Status()+" "+c.Path)
		}
	}
	if len(parts) == 0 {
		for _, c := range chs {
			parts = append(parts, c.Status()+" directory "+c.Path)
		}
	}
	const show = 12
	if len(parts) > show {
		return strings.Join(parts[:show], ", ") + fmt.Sprintf(" and %d more", len(parts)-show)
	}
	return strings.Join(parts, ", ")
}
