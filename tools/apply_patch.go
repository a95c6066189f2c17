package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"strings"
	"time"
)

// ApplyPatchToolName applies a multi-file patch.
const ApplyPatchToolName = "apply_patch"

//go:embed apply_patch.md
var applyPatchDescription string

// ApplyPatchParams are apply_patch's arguments.
type ApplyPatchParams struct {
	Patch string `json:"patch" jsonschema:"The patch, from *** Begin Patch to *** End Patch."`
}

var applyPatchSchema = SchemaOf(ApplyPatchParams{})

type applyPatchTool struct{}

func (applyPatchTool) Info() Info {
	return Info{Name: ApplyPatchToolName, Description: applyPatchDescription,
		Parameters: applyPatchSchema, Kind: KindEdit, Effect: EffectEdit, Timeout: 60 * time.Second}
}

func (applyPatchTool) Prepare(ctx context.Context, env *Env, args json.RawMessage) (*Call, *Result) {
	var p ApplyPatchParams
	if r := decodeArgs(args, &p); r != nil {
		return nil, r
	}
	ops, err := parsePatch(p.Patch)
	if err != nil {
		return nil, Errorf("invalid patch, nothing was applied: %v", err)
	}
	var chs []fileChange
	seen := map[string]bool{}
	for _, op := range ops {
		ch, r := prepareOp(ctx, env, op)
		if r != nil {
			r.Output = "patch not applied (nothing was changed): " + r.Output
			return nil, r
		}
		for _, path := range []string{ch.Rel, ch.OldRel} {
			if path != "" && seen[path] {
				return nil, Errorf("patch not applied: %s appears in more than one operation", path)
			}
			seen[path] = true
		}
		chs = append(chs, ch)
	}
	names := make([]string, len(chs))
	for i, c := range chs {
		names[i] = c.Rel
	}
	return &Call{
		Title:     "patch " + strings.Join(names, ", "),
		Locations: locationsOf(chs), Writes: diffs(chs),
		Run: func(ctx context.Context) (Result, error) {
			return applyChanges(ctx, env, ApplyPatchToolName, chs)
		},
	}, nil
}

// prepareOp turns one patch operation into a file change, checking it
// against the disk: add needs a new path, update and delete an existing one.
func prepareOp(ctx context.Context, env *Env, op patchOp) (fileChange, *Result) {
	abs, rel, r := confine(env, op.Path)
	if r != nil {
		return fileChange{}, r
	}
	before, mode, err := readImage(ctx, env, abs)
	if err != nil {
		return fileChange{}, Errorf("reading %s: %v", rel, err)
	}
	switch op.Kind {
	case "add":
		if before != nil {
			return fileChange{}, Errorf("cannot add %s: it exists (use *** Update File)", rel)
		}
		content := strings.Join(op.Lines, "\n")
		if len(op.Lines) > 0 {
			content += "\n"
		}
		return fileChange{Rel: rel, Abs: abs, After: &content}, nil
	case "delete":
		if before == nil {
			return fileChange{}, Errorf("cannot delete %s: it does not exist", rel)
		}
		return fileChange{Rel: rel, Abs: abs, Before: before, Mode: mode,
			rebase: func(string) (string, *Result) { return "", nil }}, nil
	}
	if before == nil {
		return fileChange{}, Errorf("cannot update %s: it does not exist (use *** Add File)", rel)
	}
	after, err := applyChunks(*before, op.Chunks)
	if err != nil {
		return fileChange{}, Errorf("in %s: %v", rel, err)
	}
	ch := fileChange{Rel: rel, Abs: abs, Before: before, After: &after, Mode: mode,
		rebase: func(cur string) (string, *Result) {
			out, err := applyChunks(cur, op.Chunks)
			if err != nil {
				return "", Errorf("in %s: %v", rel, err)
			}
			return out, nil
		}}
	if op.MoveTo == "" {
		return ch, nil
	}
	dst, drel, r := confine(env, op.MoveTo)
	if r != nil {
		return fileChange{}, r
	}
	if cur, _, _ := readImage(ctx, env, dst); cur != nil {
		return fileChange{}, Errorf("cannot move %s to %s: the destination exists", rel, drel)
	}
	return fileChange{Rel: drel, Abs: dst, OldRel: rel, OldAbs: abs, Before: before, After: &after, Mode: mode}, nil
}
