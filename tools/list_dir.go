package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
	"time"
)

// ListDirToolName lists a directory.
const ListDirToolName = "list_dir"

//go:embed list_dir.md
var listDirDescription string

// ListDirParams are list_dir's arguments.
type ListDirParams struct {
	Path  string `json:"path,omitempty" jsonschema:"Directory relative to the workspace root; default the root."`
	Depth int    `json:"depth,omitempty" min:"1" max:"5" jsonschema:"How many levels to list; default 1."`
}

var listDirSchema = SchemaOf(ListDirParams{})

const maxListEntries = 500

type listDirTool struct{}

func (listDirTool) Info() Info {
	return Info{Name: ListDirToolName, Description: listDirDescription,
		Parameters: listDirSchema, Kind: KindRead, Effect: EffectRead, Timeout: 30 * time.Second}
}

func (listDirTool) Prepare(ctx context.Context, env *Env, args json.RawMessage) (*Call, *Result) {
	var p ListDirParams
	if r := decodeArgs(args, &p); r != nil {
		return nil, r
	}
	abs, rel, r := confine(env, p.Path)
	if r != nil {
		return nil, r
	}
	depth := p.Depth // 1 to 5: the schema's bounds
	if depth == 0 {
		depth = 1
	}
	return &Call{
		Title:     "list " + rel,
		Locations: []Location{{Path: rel}}, Reads: []string{rel},
		Run: func(ctx context.Context) (Result, error) {
			return listDir(ctx, env, abs, rel, depth), nil
		},
	}, nil
}

func listDir(ctx context.Context, env *Env, abs, rel string, depth int) Result {
	root, err := canonicalRoot(env.Root)
	if err != nil {
		return *Errorf("%v", err)
	}
	var b strings.Builder
	n, more := 0, false
	err = walkNames(ctx, root, abs, env.hiddenIn(root), func(p, r string, d fs.DirEntry) error {
		if p == abs {
			if !d.IsDir() {
				return fmt.Errorf("%s is not a directory", rel)
			}
			return nil
		}
		level := strings.Count(relPath(abs, p), "/")
		if level >= depth {
			return skip(d)
		}
		if n >= maxListEntries {
			more = true
			return fs.SkipAll
		}
		n++
		b.WriteString(strings.Repeat("  ", level) + entryLine(d) + "\n")
		return nil
	})
	if err != nil {
		return *Errorf("listing %s: %v", rel, err)
	}
	out := b.String()
	if out == "" {
		out = "(empty directory)\n"
	}
	if more {
		out += fmt.Sprintf("[listing stopped at %d entries; list a subdirectory or use glob_file_search]\n", maxListEntries)
	}
	return Result{Output: strings.TrimRight(out, "\n"), Truncated: more}
}

func entryLine(d fs.DirEntry) string {
	if d.IsDir() {
		return d.Name() + "/"
	}
	if d.Type()&fs.ModeSymlink != 0 {
		return d.Name() + "@"
	}
	if fi, err := d.Info(); err == nil {
		return fmt.Sprintf("%s (%d bytes)", d.Name(), fi.Size())
	}
	return d.Name()
}
