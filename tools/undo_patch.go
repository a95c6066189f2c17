package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// UndoPatchToolName restores the files of earlier changes.
const UndoPatchToolName = "undo_patch"

//go:embed undo_patch.md
var undoPatchDescription string

// UndoPatchParams are undo_patch's arguments.
type UndoPatchParams struct {
	// Checkpoint, e.g. "c3": undo that change and every later one. Empty:
	// undo the last change.
	Checkpoint string `json:"checkpoint,omitempty" jsonschema:"Checkpoint id reported by a write (e.g. \"c3\"): undo it and every later change. Omit to undo only the last change."`
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
	j := journalFor(env)
	if j.dir == "" {
		return nil, Errorf("undo is not available: no state directory")
	}
	entries, err := j.entries()
	if err != nil {
		return nil, Errorf("reading the undo history: %v", err)
	}
	sel, r := selectEntries(entries, p.Checkpoint)
	if r != nil {
		return nil, r
	}
	chs, r := undoChanges(ctx, env, j, sel)
	if r != nil {
		return nil, r
	}
	ids := make([]string, len(sel))
	for i, e := range sel {
		ids[i] = e.ID
	}
	title := "undo " + strings.Join(ids, ", ")
	return &Call{
		Title:     title,
		Locations: locationsOf(chs), Writes: diffs(chs),
		Run: func(ctx context.Context) (Result, error) {
			return runUndo(ctx, env, j, sel, chs)
		},
	}, nil
}

// selectEntries picks the last entry, or every entry from checkpoint on.
func selectEntries(entries []journalEntry, checkpoint string) ([]journalEntry, *Result) {
	if len(entries) == 0 {
		return nil, Errorf("nothing to undo in this session")
	}
	if checkpoint == "" {
		return entries[len(entries)-1:], nil
	}
	n, ok := checkpointNumber(checkpoint)
	if !ok {
		return nil, Errorf("checkpoint %q is not a checkpoint id such as c3", checkpoint)
	}
	for i, e := range entries {
		if e.n == n {
			return entries[i:], nil
		}
	}
	return nil, Errorf("no checkpoint %s in this session (it may have been undone already)", checkpoint)
}

// undoChanges computes, per touched path, the content before the earliest
// selected change, and the change that puts it back. Only touched paths are
// considered: a file the change did not create is never deleted.
func undoChanges(ctx context.Context, env *Env, j *journal, sel []journalEntry) ([]fileChange, *Result) {
	target := map[string]*string{}
	modes := map[string]journalFile{}
	var order []string
	for _, e := range sel {
		for _, f := range e.Files {
			if _, done := modes[f.Path]; done {
				continue
			}
			img, err := j.preimage(e, f)
			if err != nil {
				return nil, Errorf("%v", err)
			}
			target[f.Path], modes[f.Path] = img, f
			order = append(order, f.Path)
		}
	}
	var chs []fileChange
	for _, rel := range order {
		abs, rel2, r := confine(env, rel)
		if r != nil {
			return nil, r
		}
		cur, mode, err := readImage(ctx, env, abs)
		if err != nil {
			return nil, Errorf("reading %s: %v", rel, err)
		}
		if sameImage(cur, target[rel]) {
			continue
		}
		if m := modes[rel].Mode; m != 0 {
			mode = m
		}
		chs = append(chs, fileChange{Rel: rel2, Abs: abs, Before: cur, After: target[rel], Mode: mode})
	}
	return chs, nil
}

func runUndo(ctx context.Context, env *Env, j *journal, sel []journalEntry, chs []fileChange) (Result, error) {
	if r := checkUnchanged(ctx, env, chs); r != nil {
		return *r, nil
	}
	for i, c := range chs {
		if err := writeChange(ctx, env, c); err != nil {
			rollback(ctx, env, chs[:i+1])
			return *Errorf("restoring %s: %v (nothing was changed)", c.Rel, err), nil
		}
	}
	defer j.lock()()
	for _, e := range sel {
		if err := j.drop(e.ID); err != nil {
			return Result{}, fmt.Errorf("dropping undone checkpoint: %w", err)
		}
	}
	markWritten(env, chs)
	ids := make([]string, len(sel))
	for i, e := range sel {
		ids[i] = e.ID
	}
	out := fmt.Sprintf("undid %s", strings.Join(ids, ", "))
	if len(chs) == 0 {
		out += ": the files were already as they were before"
	} else {
		out += ": " + summarize(chs)
	}
	out += verify(ctx, env, chs)
	return Result{Output: out, Files: diffs(chs)}, nil
}

func locationsOf(chs []fileChange) []Location {
	out := make([]Location, 0, len(chs))
	for _, c := range chs {
		out = append(out, Location{Path: c.Rel})
	}
	return out
}
