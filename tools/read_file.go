package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// ReadFileToolName reads a text file.
const ReadFileToolName = "read_file"

//go:embed read_file.md
var readFileDescription string

// ReadFileParams are read_file's arguments. Offset is the 1-based first
// line; Limit the number of lines.
type ReadFileParams struct {
	Path   string `json:"path" jsonschema:"File relative to the workspace root."`
	Offset int    `json:"offset,omitempty" min:"1" jsonschema:"First line to read (1-based); default 1."`
	Limit  int    `json:"limit,omitempty" min:"1" jsonschema:"Number of lines to read; default and maximum 2000."`
}

var readFileSchema = SchemaOf(ReadFileParams{})

const (
	maxReadLines = 2000
	maxReadBytes = 256 << 10 // of output, per call
	maxFileBytes = 20 << 20  // files bigger than this are refused
)

type readFileTool struct{}

func (readFileTool) Info() Info {
	return Info{Name: ReadFileToolName, Description: readFileDescription,
		Parameters: readFileSchema, Kind: KindRead, Effect: EffectRead, Timeout: 30 * time.Second}
}

func (readFileTool) Prepare(ctx context.Context, env *Env, args json.RawMessage) (*Call, *Result) {
	var p ReadFileParams
	if r := decodeArgs(args, &p); r != nil {
		return nil, r
	}
	if p.Path == "" {
		return nil, Errorf("path is required")
	}
	abs, rel, r := confine(env, p.Path)
	if r != nil {
		return nil, r
	}
	return &Call{
		Title:     "read " + rel,
		Locations: []Location{{Path: rel, Line: max(p.Offset, 1)}}, Reads: []string{rel},
		Run: func(ctx context.Context) (Result, error) {
			return readFile(ctx, env, abs, rel, p), nil
		},
	}, nil
}

// readFile shows a file's lines. The disk says whether it exists, how big it
// is and when it changed; the lines come through env.Files when there is
// one, so the model sees the editor's unsaved buffer.
func readFile(ctx context.Context, env *Env, abs, rel string, p ReadFileParams) Result {
	fi, err := os.Stat(abs)
	switch {
	case os.IsNotExist(err):
		return *Errorf("%s does not exist", rel)
	case err != nil:
		return *Errorf("reading %s: %v", rel, err)
	case fi.IsDir():
		return *Errorf("%s is a directory; use list_dir", rel)
	case fi.Size() > maxFileBytes:
		return *Errorf("%s is %d bytes, too big to read; use grep to find the part you need", rel, fi.Size())
	}
	b, err := readContent(ctx, env, abs)
	if err != nil {
		return *Errorf("reading %s: %v", rel, err)
	}
	if isBinary(b) {
		return *Errorf("%s looks like a binary file (%d bytes); not shown", rel, len(b))
	}
	if env.Reads != nil {
		env.Reads.Mark(rel, fi.ModTime())
	}
	text := strings.ReplaceAll(string(b), "\r\n", "\n")
	if text == "" {
		return Result{Output: fmt.Sprintf("(%s is empty)", rel)}
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	return sliceLines(rel, lines, p.Offset, p.Limit)
}

// sliceLines numbers the requested range and says what was left out, so
// the model knows to page on.
func sliceLines(rel string, lines []string, offset, limit int) Result {
	first := max(offset, 1)
	if first > len(lines) {
		return *Errorf("%s has %d lines; offset %d is past the end", rel, len(lines), offset)
	}
	if limit <= 0 || limit > maxReadLines {
		limit = maxReadLines
	}
	last := min(first-1+limit, len(lines))
	var b strings.Builder
	end := first - 1
	for i := first - 1; i < last; i++ {
		l := fmt.Sprintf("%6d\t%s\n", i+1, truncateLine(lines[i]))
		if b.Len()+len(l) > maxReadBytes {
			break
		}
		b.WriteString(l)
		end = i + 1
	}
	out := b.String()
	cut := end < len(lines) || first > 1
	if cut {
		out += fmt.Sprintf("[showing lines %d-%d of %d; use offset %d to read on]", first, end, len(lines), end+1)
		if end == len(lines) {
			out = strings.TrimSuffix(out, fmt.Sprintf("; use offset %d to read on]", end+1)) + "]"
		}
	}
	return Result{Output: strings.TrimRight(out, "\n"), Truncated: end < len(lines)}
}
