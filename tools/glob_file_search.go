package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// GlobFileSearchToolName finds files by name pattern.
const GlobFileSearchToolName = "glob_file_search"

//go:embed glob_file_search.md
var globFileSearchDescription string

// GlobFileSearchParams are glob_file_search's arguments.
type GlobFileSearchParams struct {
	Pattern string `json:"pattern" min:"1" jsonschema:"Glob such as **/*.go, src/**/test_*.py or *.{ts,tsx}. A pattern without / matches file names at any depth."`
	Path    string `json:"path,omitempty" jsonschema:"Directory to search, relative to the workspace root; default the root."`
}

var globFileSearchSchema = SchemaOf(GlobFileSearchParams{})

const maxGlobResults = 200

type globFileSearchTool struct{}

func (globFileSearchTool) Info() Info {
	return Info{Name: GlobFileSearchToolName, Description: globFileSearchDescription,
		Parameters: globFileSearchSchema, Kind: KindSearch, Effect: EffectRead, Timeout: 30 * time.Second}
}

func (globFileSearchTool) Prepare(ctx context.Context, env *Env, args json.RawMessage) (*Call, *Result) {
	var p GlobFileSearchParams
	if r := decodeArgs(args, &p); r != nil {
		return nil, r
	}
	abs, rel, r := confine(env, p.Path)
	if r != nil {
		return nil, r
	}
	if err := checkGlob(p.Pattern); err != nil {
		return nil, Errorf("%v", err)
	}
	pattern := strings.TrimPrefix(p.Pattern, "./")
	if filepath.IsAbs(pattern) {
		// Patterns match relative paths; an absolute one would match
		// nothing and say only "no files match".
		inside, ok := relInside(abs, pattern)
		if !ok { // the root as the model was told it, before symlinks
			inside, ok = relInside(filepath.Join(env.Root, rel), pattern)
		}
		if !ok {
			return nil, Errorf("the pattern %q is an absolute path outside the directory searched (%s): patterns match paths relative to it, e.g. **/*.go", p.Pattern, abs)
		}
		pattern = inside
	}
	if !strings.Contains(pattern, "/") {
		pattern = "**/" + pattern
	}
	return &Call{
		Title: "glob " + p.Pattern, Reads: []string{rel},
		Run: func(ctx context.Context) (Result, error) {
			return globSearch(ctx, env, abs, rel, pattern), nil
		},
	}, nil
}

func globSearch(ctx context.Context, env *Env, abs, rel, pattern string) Result {
	root, err := canonicalRoot(env.Root)
	if err != nil {
		return *Errorf("%v", err)
	}
	var found []string
	err = walkNames(ctx, root, abs, env.hiddenIn(root), func(p, r string, d fs.DirEntry) error {
		if d.IsDir() {
			return nil
		}
		if matchGlob(pattern, relPath(abs, p)) {
			found = append(found, r)
		}
		return nil
	})
	if err != nil {
		return *Errorf("searching %s: %v", rel, err)
	}
	if len(found) == 0 {
		return Result{Output: "no files match " + pattern}
	}
	sort.Strings(found)
	out, cut := found, false
	if len(found) > maxGlobResults {
		out, cut = found[:maxGlobResults], true
	}
	s := strings.Join(out, "\n")
	if cut {
		s += fmt.Sprintf("\n[%d of %d files shown; narrow the pattern or the path]", maxGlobResults, len(found))
	}
	return Result{Output: s, Truncated: cut}
}

// relInside returns p relative to dir, if it is inside it.
func relInside(dir, p string) (string, bool) {
	r, err := filepath.Rel(dir, p)
	if err != nil || r == ".." || strings.HasPrefix(r, "../") {
		return "", false
	}
	return r, true
}
