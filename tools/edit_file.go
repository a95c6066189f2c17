package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// EditFileToolName replaces text in one file.
const EditFileToolName = "edit_file"

//go:embed edit_file.md
var editFileDescription string

// EditFileParams are edit_file's arguments.
type EditFileParams struct {
	Path       string `json:"path" min:"1" jsonschema:"File to edit, relative to the workspace root."`
	OldString  string `json:"old_string" jsonschema:"Exact text to replace, including enough surrounding lines to be unique."`
	NewString  string `json:"new_string" jsonschema:"Replacement text."`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"Replace every occurrence instead of requiring a unique match."`
}

var editFileSchema = SchemaOf(EditFileParams{})

type editFileTool struct{}

func (editFileTool) Info() Info {
	return Info{Name: EditFileToolName, Description: editFileDescription,
		Parameters: editFileSchema, Kind: KindEdit, Effect: EffectEdit, Timeout: 30 * time.Second}
}

func (editFileTool) Prepare(ctx context.Context, env *Env, args json.RawMessage) (*Call, *Result) {
	var p EditFileParams
	if r := decodeArgs(args, &p); r != nil {
		return nil, r
	}
	if p.OldString == "" {
		return nil, Errorf("old_string is empty; use write_file to create or overwrite a whole file")
	}
	if p.OldString == p.NewString {
		return nil, Errorf("old_string and new_string are identical; nothing to change")
	}
	abs, rel, r := confine(env, p.Path)
	if r != nil {
		return nil, r
	}
	before, mode, err := readImage(ctx, env, abs)
	if err != nil {
		return nil, Errorf("reading %s: %v", rel, err)
	}
	if before == nil {
		return nil, Errorf("%s does not exist; use write_file to create it", rel)
	}
	if r := checkFresh(env, abs, rel); r != nil {
		return nil, r
	}
	after, er, r := applyEdit(*before, p)
	if r != nil {
		return nil, r
	}
	ch := fileChange{Rel: rel, Abs: abs, Before: before, After: &after, Mode: mode,
		rebase: func(cur string) (string, *Result) {
			out, _, r := applyEdit(cur, p)
			return out, r
		}}
	locs := make([]Location, 0, len(er.Lines))
	for _, l := range er.Lines {
		locs = append(locs, Location{Path: rel, Line: l})
	}
	return &Call{
		Title:     "edit " + rel,
		Locations: locs, Writes: diffs([]fileChange{ch}),
		Run: func(ctx context.Context) (Result, error) {
			res, err := applyChanges(ctx, env, EditFileToolName, []fileChange{ch})
			if err == nil && !res.IsError && er.Level != levelExact {
				note := "check the lines below"
				if er.Level != levelTrailing {
					note = "new_string was re-indented to match the file; check the lines below"
				}
				res.Output = fmt.Sprintf("note: old_string matched only %s; %s.\n%s", er.Level, note, res.Output)
			}
			return res, err
		},
	}, nil
}

// applyEdit does the replacement on LF text and puts CRLF back when the
// file used it, so the model never has to type carriage returns.
func applyEdit(content string, p EditFileParams) (string, editResult, *Result) {
	crlf := strings.Contains(content, "\r\n")
	if crlf {
		content = strings.ReplaceAll(content, "\r\n", "\n")
		p.OldString = strings.ReplaceAll(p.OldString, "\r\n", "\n")
		p.NewString = strings.ReplaceAll(p.NewString, "\r\n", "\n")
	}
	er, msg := replaceText(content, p.OldString, p.NewString, p.ReplaceAll)
	if msg != "" {
		return "", er, Errorf("%s", msg)
	}
	out := er.Content
	if crlf {
		out = strings.ReplaceAll(out, "\n", "\r\n")
	}
	return out, er, nil
}
