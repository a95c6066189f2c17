package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"github.com/agentd/agentd/tools/images"
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
	Path   string `json:"path" min:"1" jsonschema:"File relative to the workspace root."`
	Offset int    `json:"offset,omitempty" min:"1" jsonschema:"First line to read (1-based); default 1."`
	Limit  int    `json:"limit,omitempty" min:"1" jsonschema:"Number of lines to read; default: as many as fit in one result (about 16 KB)."`
}

var readFileSchema = SchemaOf(ReadFileParams{})

const (
	maxReadLines = 2000
	maxFileBytes = 20 << 20 // files bigger than this are refused
	// readFooterRoom is kept free of lines for the footer that says
	// which lines were shown and how to read on.
	readFooterRoom = 256
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
	abs, rel, r := confine(env, p.Path)
	if r != nil {
		return nil, r
	}
	return &Call{
		Title:     "read " + rel,
		Locations: []Location{{Path: rel, Line: max(p.Offset, 1)}}, Reads: []string{rel},
		Run: func(ctx context.Context) (Result, error) {
			if env.Language != nil {
				env.Language.Warm([]string{abs}) // a file read is often a file about to change
			}
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
	if images.Sniff(b) != "" {
		return readPicture(ctx, env, rel, b)
	}
	if isBinary(b) {
		return *Errorf("%s looks like a binary file (%d bytes); not shown", rel, len(b))
	}
	text := strings.ReplaceAll(string(b), "\r\n", "\n")
	if text == "" {
		if env.Reads != nil {
			env.Reads.Mark(rel, fi.ModTime())
		}
		return Result{Output: fmt.Sprintf("(%s is empty)", rel)}
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	res, first, last := sliceLines(rel, lines, p.Offset, p.Limit, env.outputLimit()-readFooterRoom)
	if env.Reads != nil && !res.IsError {
		env.Reads.MarkLines(rel, fi.ModTime(), first, last, len(lines))
	}
	return res
}

// sliceLines numbers the lines from offset: limit of them, or as many whole
// lines as fit in budget bytes, whichever is fewer. When lines are left
// out, the footer says which lines were shown and which offset reads on, so
// nothing is silently missing. It returns the lines shown (1-based).
func sliceLines(rel string, lines []string, offset, limit, budget int) (Result, int, int) {
	first := max(offset, 1)
	if first > len(lines) {
		return *Errorf("%s has %d lines; offset %d is past the end", rel, len(lines), offset), 0, 0
	}
	asked := limit > 0
	if limit <= 0 || limit > maxReadLines {
		limit = maxReadLines
	}
	last := min(first-1+limit, len(lines))
	var b strings.Builder
	end := first - 1
	for i := first - 1; i < last; i++ {
		l := fmt.Sprintf("%6d\t%s\n", i+1, truncateLine(lines[i]))
		if b.Len()+len(l) > budget && end >= first {
			break
		}
		b.WriteString(l)
		end = i + 1
	}
	out := strings.TrimRight(b.String(), "\n")
	if footer := readFooter(first, end, len(lines), asked && end == last); footer != "" {
		out += "\n" + footer
	}
	return Result{Output: out, Truncated: end < len(lines)}, first, end
}

// readFooter says which lines were shown when not all were, and how to read
// on: by offset, or with grep for a big file. byLimit says the model's own
// limit, not the size of a result, ended the window.
func readFooter(first, end, total int, byLimit bool) string {
	switch {
	case first == 1 && end == total:
		return ""
	case end == total:
		return fmt.Sprintf("[lines %d-%d of %d; this is the end of the file]", first, end, total)
	case byLimit:
		return fmt.Sprintf("[lines %d-%d of %d; to read on, call read_file with offset %d]", first, end, total, end+1)
	}
	return fmt.Sprintf("[lines %d-%d of %d: one result holds no more. Lines %d-%d are not shown; to read on, call read_file with offset %d, or grep for what you need and read around it]",
		first, end, total, end+1, total, end+1)
}
