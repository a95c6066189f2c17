package tools

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestListDir(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env, "a.go", "package a\n")
	writeFile(t, env, "sub/b.go", "package b\n")
	writeFile(t, env, "sub/deep/c.go", "package c\n")
	writeFile(t, env, "ignored/x.txt", "x")
	writeFile(t, env, ".gitignore", "ignored/\n")
	writeFile(t, env, ".git/HEAD", "ref")

	r := mustOK(t, call(t, env, ListDirToolName, ListDirParams{}))
	assert.Contains(t, r.Output, "a.go (10 bytes)")
	assert.Contains(t, r.Output, "sub/")
	assert.NotContains(t, r.Output, "b.go")
	assert.NotContains(t, r.Output, "ignored")
	assert.NotContains(t, r.Output, ".git/")

	r = mustOK(t, call(t, env, ListDirToolName, ListDirParams{Path: "sub", Depth: 2}))
	assert.Contains(t, r.Output, "b.go")
	assert.Contains(t, r.Output, "  c.go")

	mustErr(t, call(t, env, ListDirToolName, ListDirParams{Path: "a.go"}))
}

func TestReadFile(t *testing.T) {
	env := newEnv(t)
	var b strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	writeFile(t, env, "big.txt", b.String())
	writeFile(t, env, "bin.dat", "abc\x00def")
	writeFile(t, env, "empty.txt", "")

	r := mustOK(t, call(t, env, ReadFileToolName, ReadFileParams{Path: "big.txt"}))
	assert.True(t, r.Truncated)
	assert.Contains(t, r.Output, "     1\tline 1\n")
	assert.LessOrEqual(t, len(r.Output), defaultOutputLimit, "a window fits in one result")
	last := strings.Count(r.Output, "\n") // the footer is the last line
	assert.Contains(t, r.Output, fmt.Sprintf("\n[lines 1-%d of 2500: one result holds no more. Lines %d-2500 are not shown; to read on, call read_file with offset %d", last, last+1, last+1))
	assert.NotContains(t, r.Output, fmt.Sprintf("line %d\n", last+1))
	_, seen := env.Reads.Seen("big.txt")
	assert.True(t, seen)
	unseen, next := env.Reads.unseen("big.txt")
	assert.Equal(t, fmt.Sprintf("you have seen only lines 1-%d of its 2500", last), unseen, "the tracker knows which lines were shown")
	assert.Equal(t, last+1, next)

	r = mustOK(t, call(t, env, ReadFileToolName, ReadFileParams{Path: "big.txt", Offset: 2490, Limit: 5}))
	assert.Contains(t, r.Output, "  2490\tline 2490")
	assert.Contains(t, r.Output, "  2494\tline 2494")
	assert.NotContains(t, r.Output, "line 2495")
	assert.Contains(t, r.Output, "[lines 2490-2494 of 2500; to read on, call read_file with offset 2495]")

	r = mustOK(t, call(t, env, ReadFileToolName, ReadFileParams{Path: "big.txt", Offset: 2499}))
	assert.False(t, r.Truncated)
	assert.Contains(t, r.Output, "[lines 2499-2500 of 2500; this is the end of the file]")

	r = mustErr(t, call(t, env, ReadFileToolName, ReadFileParams{Path: "bin.dat"}))
	assert.Contains(t, r.Output, "binary")
	mustErr(t, call(t, env, ReadFileToolName, ReadFileParams{Path: "missing.txt"}))
	mustErr(t, call(t, env, ReadFileToolName, ReadFileParams{Path: "big.txt", Offset: 9999}))
	r = mustOK(t, call(t, env, ReadFileToolName, ReadFileParams{Path: "empty.txt"}))
	assert.Contains(t, r.Output, "empty")
}

func TestGlobFileSearch(t *testing.T) {
	env := newEnv(t)
	for _, f := range []string{"main.go", "cmd/x/main.go", "web/app.ts", "web/app.tsx", "web/app.css", "vendor/v.go", "README.md"} {
		writeFile(t, env, f, "x")
	}
	writeFile(t, env, ".gitignore", "vendor/\n")
	cases := map[string]string{
		"*.go":           "cmd/x/main.go\nmain.go",
		"**/*.go":        "cmd/x/main.go\nmain.go",
		"cmd/**/main.go": "cmd/x/main.go",
		"web/*.{ts,tsx}": "web/app.ts\nweb/app.tsx",
		"README.md":      "README.md",
		"nothing.*":      "no files match **/nothing.*",
	}
	for pat, want := range cases {
		r := mustOK(t, call(t, env, GlobFileSearchToolName, GlobFileSearchParams{Pattern: pat}))
		assert.Equal(t, want, r.Output, pat)
	}
	r := mustOK(t, call(t, env, GlobFileSearchToolName, GlobFileSearchParams{Pattern: "*.ts*", Path: "web"}))
	assert.Equal(t, "web/app.ts\nweb/app.tsx", r.Output)

	// An absolute pattern inside the workspace is taken relative to it; one
	// outside says why it cannot match instead of "no files match".
	r = mustOK(t, call(t, env, GlobFileSearchToolName, GlobFileSearchParams{Pattern: filepath.Join(env.Root, "web", "*.css")}))
	assert.Equal(t, "web/app.css", r.Output)
	r = mustErr(t, call(t, env, GlobFileSearchToolName, GlobFileSearchParams{Pattern: "/tmp/**/*.go"}))
	assert.Contains(t, r.Output, `the pattern "/tmp/**/*.go" is an absolute path outside the directory searched`)
}

func grepFixture(t *testing.T) *Env {
	env := newEnv(t)
	writeFile(t, env, "a.go", "package a\n\nfunc Hello() {}\n")
	writeFile(t, env, "sub/b.go", "package b\n// hello world\n")
	writeFile(t, env, "sub/c.txt", "Hello text\n")
	writeFile(t, env, "gen/z.go", "func Hello() {}\n")
	writeFile(t, env, "bin.dat", "Hello\x00binary")
	writeFile(t, env, ".gitignore", "gen/\n")
	return env
}

// TestGrepGoFallback exercises the built-in search whether or not rg is
// installed.
func TestGrepGoFallback(t *testing.T) {
	env := grepFixture(t)
	root, err := canonicalRoot(env.Root)
	require.NoError(t, err)
	r := grepGo(t.Context(), root, root, nil, regexp.MustCompile(`Hello`), "")
	assert.Equal(t, "a.go:3:func Hello() {}\nsub/c.txt:1:Hello text", r.Output)

	r = grepGo(t.Context(), root, root, nil, regexp.MustCompile(`(?i)hello`), "*.go")
	assert.Equal(t, "a.go:3:func Hello() {}\nsub/b.go:2:// hello world", r.Output)

	r = grepGo(t.Context(), root, root+"/sub", nil, regexp.MustCompile(`hello`), "")
	assert.Equal(t, "sub/b.go:2:// hello world", r.Output)

	r = grepGo(t.Context(), root, root, nil, regexp.MustCompile(`nomatch`), "")
	assert.Equal(t, "no matches", r.Output)
}

func TestGrepCapsMatches(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env, "many.txt", strings.Repeat("match\n", 500))
	root, _ := canonicalRoot(env.Root)
	r := grepGo(t.Context(), root, root, nil, regexp.MustCompile("match"), "")
	assert.True(t, r.Truncated)
	assert.Contains(t, r.Output, "stopped at 200 matching lines")
}

// TestGrepTool runs through the tool: ripgrep when installed, else Go.
func TestGrepTool(t *testing.T) {
	env := grepFixture(t)
	r := mustOK(t, call(t, env, GrepToolName, GrepParams{Pattern: "Hello", Glob: "*.go"}))
	assert.Equal(t, "a.go:3:func Hello() {}", r.Output)
	r = mustOK(t, call(t, env, GrepToolName, GrepParams{Pattern: "hello(", FixedStrings: true, CaseInsensitive: true}))
	assert.Equal(t, "a.go:3:func Hello() {}", r.Output)
	// A search of one file still names it: rg leaves the path out then
	// unless told, and the description promises path:line:text.
	r = mustOK(t, call(t, env, GrepToolName, GrepParams{Pattern: "hello", Path: "sub/b.go"}))
	assert.Equal(t, "sub/b.go:2:// hello world", r.Output)
	r = mustErr(t, call(t, env, GrepToolName, GrepParams{Pattern: "("}))
	assert.Contains(t, r.Output, "invalid regular expression")
	assert.Contains(t, r.Output, "set fixed_strings")
	if _, err := exec.LookPath("rg"); err == nil {
		t.Log("ripgrep path exercised")
	}
}
