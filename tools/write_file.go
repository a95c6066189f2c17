package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"time"
)

// WriteFileToolName creates or overwrites a file.
const WriteFileToolName = "write_file"

//go:embed write_file.md
var writeFileDescription string

// WriteFileParams are write_file's arguments.
type WriteFileParams struct {
	Path    string `json:"path" min:"1" jsonschema:"File to write, relative to the workspace root. Missing directories are created."`
	Content string `json:"content" jsonschema:"The complete new content of the file."`
}

var writeFileSchema = SchemaOf(WriteFileParams{})

type writeFileTool struct{}

func (writeFileTool) Info() Info {
	return Info{Name: WriteFileToolName, Description: writeFileDescription,
		Parameters: writeFileSchema, Kind: KindEdit, Effect: EffectEdit, Timeout: 30 * time.Second}
}

func (writeFileTool) Prepare(ctx context.Context, env *Env, args json.RawMessage) (*Call, *Result) {
	var p WriteFileParams
	if r := decodeArgs(args, &p); r != nil {
		return nil, r
	}
	abs, rel, r := confine(env, p.Path)
	if r != nil {
		return nil, r
	}
	before, mode, err := readImage(ctx, env, abs)
	if err != nil {
		return nil, Errorf("reading %s: %v (is it a directory?)", rel, err)
	}
	if before != nil {
		if r := checkFresh(env, abs, rel); r != nil {
			return nil, r
		}
		if *before == p.Content {
			return nil, Errorf("%s already has exactly this content; nothing to write", rel)
		}
		if env.Reads != nil {
			if unseen, next := env.Reads.unseen(rel); unseen != "" {
				return nil, Errorf("Not written: write_file would replace the whole of %s, but %s lines. Change only what you need with edit_file, or read the rest first (read_file with offset %d).", rel, unseen, next)
			}
		}
	}
	ch := fileChange{Rel: rel, Abs: abs, Before: before, After: strp(p.Content), Mode: mode,
		rebase: func(string) (string, *Result) { return p.Content, nil }}
	title := "write " + rel
	if before == nil {
		title = "create " + rel
	}
	return &Call{
		Title:     title,
		Locations: []Location{{Path: rel}}, Writes: diffs([]fileChange{ch}),
		Run: func(ctx context.Context) (Result, error) {
			return applyChanges(ctx, env, WriteFileToolName, []fileChange{ch})
		},
	}, nil
}
