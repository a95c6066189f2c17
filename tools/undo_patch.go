package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentd/agentd/tools/checkpoint"
)

// UndoPatchToolName restores the files of earlier changes.
const UndoPatchToolName = "undo_patch"

//go:embed undo_patch.md
var undoPatchDescription string

// UndoPatchParams are undo_patch's arguments.
type UndoPatchParams struct {
	// Checkpoint, e.g. "c3": undo that change and every later one. Empty:
	// undo the last change.
	Checkpoint string `json:"checkpoint,omitempty" jsonschema:"Checkpoint id reported by a change (e.g. \"c3\"): undo it and every later change. Omit to undo only the last change."`
	// Paths limits the undo to these files.
	Paths []string `json:"paths,omitempty" jsonschema:"Only these workspace-relative paths; the other files of the checkpoints stay as they are."`
}

var undoPatchSchema = SchemaOf(UndoPatchParams{})

type undoPatchTool struct{}

func (undoPatchTool) Info() Info {
	return Info{Name: UndoPatchToolName, Description: undoPatchDescription,
		Parameters: undoPatchSchema, Kind: KindEdit, Effect: EffectEdit, Timeout: 30 * time.Second}
}

func (undoPatchTool) Prepare(ctx context.Context, env *Env, args json.RawMessage) (*Call, *Result) {
	var p UndoPatchParams
	if r := decodeArgs(args, &p); r != nil {
		return nil, r
	}
	ws, err := Checkpoints(env)
	if err != nil {
		return nil, Errorf("%v", err)
	}
	sel := checkpoint.Select{Session: env.SessionID, From: p.Checkpoint}
	for _, q := range p.Paths {
		_, rel, r := confine(env, q)
		if r != nil {
			return nil, r
		}
		sel.Paths = append(sel.Paths, rel)
	}
	sel.Files = editorFiles(ctx, env)
	plan, err := ws.Preview(sel)
	if err != nil {
		return nil, undoError(err)
	}
	if plan.Count(checkpoint.ActionConflict)+plan.Count(checkpoint.ActionMissing) > 0 {
		return nil, undoRefusal(ws, plan)
	}
	var steps []checkpoint.Step
	for _, s := range plan.Steps {
		if s.Action == checkpoint.ActionRestore {
			steps = append(steps, s)
		}
	}
	title := "undo " + strings.Join(plan.Undoes, ", ")
	var locs []Location
	for _, s := range steps {
		locs = append(locs, Location{Path: s.Path})
	}
	writes := RestoreDiffs(ws, steps)
	return &Call{
		Title: title, Locations: locs, Writes: writes,
		Run: func(ctx context.Context) (Result, error) {
			meta := checkpoint.Checkpoint{Run: env.RunID, Tool: checkpoint.ToolUndo, Title: title}
			sel := sel
			sel.Files = editorFiles(ctx, env)
			res, err := ws.Restore(sel, checkpoint.Stop, meta, plan)
			if errors.Is(err, checkpoint.ErrChanged) {
				return *Errorf("Not undone: the files changed after this undo was prepared. Call undo_patch again to see what it would do now."), nil
			}
			if err != nil {
				return *Errorf("Undo failed: %v", err), nil
			}
			if res.Stopped {
				return *undoRefusal(ws, res.Plan), nil
			}
			markRestored(env, steps)
			out := fmt.Sprintf("undid %s: %s", strings.Join(plan.Undoes, ", "), describeRestore(steps))
			out += fmt.Sprintf("\nthis undo is checkpoint %s: undo_patch with checkpoint %s brings the files back as they were before it", res.Checkpoint.ID, res.Checkpoint.ID)
			for _, n := range res.Notes {
				out += "\n" + n
			}
			return Result{Output: out, Files: writes, Checkpoint: res.Checkpoint.ID}, nil
		},
	}, nil
}

// undoError is the result the model reads when there is nothing (or no
// such thing) to undo.
func undoError(err error) *Result {
	switch {
	case errors.Is(err, checkpoint.ErrUnknownCheckpoint), errors.Is(err, checkpoint.ErrExpired):
		return Errorf("%v", err)
	}
	return Errorf("reading the undo history: %v", err)
}

// undoRefusal explains why nothing was undone: files changed since the
// checkpoints, or earlier contents that were not kept. undo_patch never
// overwrites the user's work; the user can, from the editor.
func undoRefusal(ws *checkpoint.Workspace, plan *checkpoint.Plan) *Result {
	var b strings.Builder
	fmt.Fprintf(&b, "NOT undone (%s): nothing was changed.\n", strings.Join(plan.Undoes, ", "))
	var ok, blocked []checkpoint.Step
	for _, s := range plan.Steps {
		switch s.Action {
		case checkpoint.ActionConflict, checkpoint.ActionMissing:
			blocked = append(blocked, s)
		case checkpoint.ActionRestore:
			ok = append(ok, s)
		}
	}
	diffs := RestoreDiffs(ws, blocked)
	for _, s := range blocked {
		fmt.Fprintf(&b, "\n%s: %s", s.Path, s.Reason)
		for _, d := range diffs {
			if d.Path == s.Path && s.Action == checkpoint.ActionConflict {
				b.WriteString("; undoing would change it like this:\n" + clipLines(d.Diff, 40))
			}
		}
		b.WriteString("\n")
	}
	if len(ok) > 0 {
		var paths []string
		for _, s := range ok {
			paths = append(paths, fmt.Sprintf("%q", s.Path))
		}
		fmt.Fprintf(&b, "\nTo undo the other files only, call undo_patch again with paths: [%s].", strings.Join(paths, ", "))
	}
	b.WriteString("\nundo_patch does not overwrite changes made after a checkpoint. If they should go, tell the user: they can undo from the editor, which shows these conflicts and lets them overwrite.")
	return Errorf("%s", b.String())
}

func clipLines(s string, n int) string {
	lines := strings.SplitAfter(strings.TrimRight(s, "\n"), "\n")
	if len(lines) <= n {
		return strings.Join(lines, "") + "\n"
	}
	return strings.Join(lines[:n], "") + fmt.Sprintf("\n… %d more lines\n", len(lines)-n)
}

// describeRestore says what a restore does, path by path.
func describeRestore(steps []checkpoint.Step) string {
	if len(steps) == 0 {
		return "the files were already as they were before"
	}
	var parts []string
	for _, s := range steps {
		if isDir(s.Current) || isDir(s.Target) {
			continue
		}
		switch {
		case s.Target == nil:
			parts = append(parts, "removed "+s.Path)
		case s.Current == nil:
			parts = append(parts, "recreated "+s.Path)
		default:
			parts = append(parts, "restored "+s.Path)
		}
	}
	if len(parts) == 0 {
		return "directories only"
	}
	const show = 12
	if len(parts) > show {
		return strings.Join(parts[:show], ", ") + fmt.Sprintf(" and %d more", len(parts)-show)
	}
	return strings.Join(parts, ", ")
}

// markRestored records the restored files' mtimes: the model knows what
// they hold now, so an edit needs no fresh read.
func markRestored(env *Env, steps []checkpoint.Step) {
	if env.Reads == nil {
		return
	}
	for _, s := range steps {
		if s.Target == nil || s.Target.Kind != checkpoint.KindFile {
			continue
		}
		if fi, err := os.Stat(filepath.Join(env.Root, filepath.FromSlash(s.Path))); err == nil {
			env.Reads.Mark(s.Path, fi.ModTime())
		}
	}
}

func locationsOf(chs []fileChange) []Location {
	out := make([]Location, 0, len(chs))
	for _, c := range chs {
		out = append(out, Location{Path: c.Rel})
	}
	return out
}

// editorFiles lets a restore read and write file contents through the
// editor when it serves them (unsaved buffers), as the file tools do.
func editorFiles(ctx context.Context, env *Env) checkpoint.Files {
	if env.Files == nil {
		return nil
	}
	return envFiles{ctx: ctx, env: env}
}

type envFiles struct {
	ctx context.Context
	env *Env
}

func (f envFiles) ReadFile(rel string) ([]byte, error) {
	return readContent(f.ctx, f.env, filepath.Join(f.env.Root, filepath.FromSlash(rel)))
}

func (f envFiles) WriteFile(rel string, data []byte, mode fs.FileMode) error {
	return writeContent(f.ctx, f.env, filepath.Join(f.env.Root, filepath.FromSlash(rel)), data, mode)
}
