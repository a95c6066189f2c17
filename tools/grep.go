package tools

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// GrepToolName searches file contents.
const GrepToolName = "grep"

//go:embed grep.md
var grepDescription string

// GrepParams are grep's arguments.
type GrepParams struct {
	Pattern         string `json:"pattern" min:"1" jsonschema:"Regular expression (RE2/Rust syntax) to search for."`
	Path            string `json:"path,omitempty" jsonschema:"File or directory to search, relative to the workspace root; default the root."`
	Glob            string `json:"glob,omitempty" jsonschema:"Only search files whose path matches this glob, e.g. *.go or src/**/*.ts."`
	CaseInsensitive bool   `json:"case_insensitive,omitempty" jsonschema:"Match regardless of letter case."`
	FixedStrings    bool   `json:"fixed_strings,omitempty" jsonschema:"Treat pattern as a literal string."`
}

var grepSchema = SchemaOf(GrepParams{})

const (
	maxGrepMatches = 200
	grepTimeout    = 60 * time.Second
)

type grepTool struct{}

func (grepTool) Info() Info {
	return Info{Name: GrepToolName, Description: grepDescription,
		Parameters: grepSchema, Kind: KindSearch, Effect: EffectRead, Timeout: grepTimeout}
}

func (grepTool) Prepare(ctx context.Context, env *Env, args json.RawMessage) (*Call, *Result) {
	var p GrepParams
	if r := decodeArgs(args, &p); r != nil {
		return nil, r
	}
	re, r := compileGrep(p)
	if r != nil {
		return nil, r
	}
	if err := checkGlob(p.Glob); err != nil {
		return nil, Errorf("%v", err)
	}
	abs, rel, r := confine(env, p.Path)
	if r != nil {
		return nil, r
	}
	return &Call{
		Title: "grep " + p.Pattern, Reads: []string{rel},
		Run: func(ctx context.Context) (Result, error) {
			root, err := canonicalRoot(env.Root)
			if err != nil {
				return *Errorf("%v", err), nil
			}
			if rg, err := exec.LookPath("rg"); err == nil && env.sandbox().Supports(ProfileRead) {
				return grepRipgrep(ctx, env, rg, root, abs, p), nil
			}
			return grepGo(ctx, root, abs, env.hiddenIn(root), re, p.Glob), nil
		},
	}, nil
}

func compileGrep(p GrepParams) (*regexp.Regexp, *Result) {
	pat := p.Pattern
	if p.FixedStrings {
		pat = regexp.QuoteMeta(pat)
	}
	if p.CaseInsensitive {
		pat = "(?i)" + pat
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		return nil, Errorf("invalid regular expression: %v. Escape ( ) [ ] { } . * + ? | \\ with a backslash to match them literally, or set fixed_strings to search for the text as it is.", err)
	}
	return re, nil
}

// grepRipgrep runs rg, which honours .gitignore itself, relative to root
// so the paths it prints are workspace-relative, in the read profile of
// the kernel sandbox like every process agentd starts.
func grepRipgrep(ctx context.Context, env *Env, rg, root, abs string, p GrepParams) Result {
	args := []string{"--with-filename", "--line-number", "--no-heading", "--color", "never", "--no-require-git", "--sort", "path", "--max-columns", "500", "--max-columns-preview"}
	if p.CaseInsensitive {
		args = append(args, "-i")
	}
	if p.FixedStrings {
		args = append(args, "-F")
	}
	if p.Glob != "" {
		args = append(args, "--glob", p.Glob)
	}
	hidden := env.hiddenIn(root)
	for _, h := range hidden { // agentd's own directories, anchored at root (rg's working directory)
		args = append(args, "--glob", "!/"+h)
	}
	args = append(args, "-e", p.Pattern, "--", relPath(root, abs))
	var stdout, stderr bytes.Buffer
	proc, err := env.sandbox().Command(ctx, ProcSpec{Args: append([]string{rg}, args...), Workspace: root, Dir: root,
		Confine: Confine{Profile: ProfileRead}, NoCaches: true, Stdout: &stdout, Stderr: &stderr, WaitDelay: time.Second, Started: env.Started})
	if err == nil {
		err = proc.Wait()
	}
	if err == nil && proc.ExitCode() == 1 {
		return Result{Output: "no matches"}
	}
	if err == nil && proc.ExitCode() != 0 {
		err = fmt.Errorf("exit status %d", proc.ExitCode())
	}
	out := stdout.Bytes()
	if err != nil && len(out) == 0 {
		return *Errorf("grep failed: %v %s", err, strings.TrimSpace(stderr.String()))
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		l = strings.TrimPrefix(l, "./")
		if name, _, _ := strings.Cut(l, ":"); !hiddenPath(hidden, name) { // whatever rg made of the globs
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return Result{Output: "no matches"}
	}
	return grepOutput(lines)
}

// grepGo is the fallback when rg is not installed: a walk that honours
// .gitignore, skips binary files and stops at the match cap.
func grepGo(ctx context.Context, root, abs string, hidden []string, re *regexp.Regexp, glob string) Result {
	var lines []string
	err := walkFiles(ctx, root, abs, hidden, func(p, rel string, d fs.DirEntry) error {
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		if glob != "" && !globSelects(glob, rel, d.Name()) {
			return nil
		}
		lines = append(lines, grepFile(p, rel, re, maxGrepMatches+1-len(lines))...)
		if len(lines) > maxGrepMatches {
			return fs.SkipAll
		}
		return nil
	})
	if err != nil {
		return *Errorf("grep: %v", err)
	}
	if len(lines) == 0 {
		return Result{Output: "no matches"}
	}
	return grepOutput(lines)
}

// globSelects applies grep's glob like rg does: a glob without / matches
// the file name, otherwise the workspace-relative path.
func globSelects(glob, rel, name string) bool {
	if !strings.Contains(glob, "/") {
		return matchGlob(glob, name)
	}
	return matchGlob(strings.TrimPrefix(glob, "/"), rel) || matchGlob("**/"+glob, rel)
}

func grepFile(p, rel string, re *regexp.Regexp, limit int) []string {
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	head := make([]byte, 8000)
	n, _ := f.Read(head)
	if isBinary(head[:n]) {
		return nil
	}
	if _, err := f.Seek(0, 0); err != nil {
		return nil
	}
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for ln := 1; sc.Scan() && len(out) < limit; ln++ {
		if re.Match(sc.Bytes()) {
			text := sc.Text()
			if len(text) > 500 {
				text = text[:500] + " [...]"
			}
			out = append(out, fmt.Sprintf("%s:%d:%s", rel, ln, text))
		}
	}
	return out
}

func grepOutput(lines []string) Result {
	cut := len(lines) > maxGrepMatches
	if cut {
		lines = lines[:maxGrepMatches]
	}
	s := strings.Join(lines, "\n")
	if cut {
		s += fmt.Sprintf("\n[stopped at %d matching lines; narrow the pattern, path or glob]", maxGrepMatches)
	}
	capped, c2 := capOutput(s)
	res := Result{Output: capped, Truncated: cut || c2}
	if c2 {
		res.Full = s
	}
	return res
}
