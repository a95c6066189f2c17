package tools

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const cleanGo = "package p\n\nfunc A() int {\n\treturn 1\n}\n\nfunc B() int { return 2 }\n"

// brokenGo does not parse: the operand of + is missing (5:1), and the parser
// then trips on line 7 as well.
const brokenGo = "package p\n\nfunc A() int {\n\treturn 1 +\n}\n\nfunc B() int { return 2 }\n"

func noCheckpoints(t *testing.T, env *Env) {
	t.Helper()
	entries, err := journalFor(env).entries()
	require.NoError(t, err)
	assert.Empty(t, entries, "a refused change leaves no checkpoint")
}

func TestSyntaxGateRefusesEditAddingError(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env, "p/p.go", cleanGo)
	mustOK(t, call(t, env, ReadFileToolName, ReadFileParams{Path: "p/p.go"}))

	// The diff is prepared (and would be shown for approval); Run refuses.
	c, r := prepare(t, env, EditFileToolName, EditFileParams{Path: "p/p.go", OldString: "\treturn 1\n}", NewString: "\treturn 1\n"})
	require.Nil(t, r)
	require.Len(t, c.Writes, 1)
	res, err := c.Run(t.Context())
	require.NoError(t, err)
	mustErr(t, res)

	assert.Contains(t, res.Output, "NOT applied: this edit_file call would add Go syntax errors to p/p.go")
	assert.Contains(t, res.Output, "p/p.go is unchanged on disk")
	assert.Contains(t, res.Output, "p/p.go would not parse:\np/p.go:7:6: expected '(', found B\n")
	assert.Contains(t, res.Output, "more (often follow-on errors of the first)")
	assert.Contains(t, res.Output, "Proposed p/p.go, lines 2-7 (your change is line 5; > marks where the parser stopped):\n     2\t\n     3\tfunc A() int {\n     4\t\treturn 1\n     5\t\n     6\t\n")
	assert.Contains(t, res.Output, ">    7\tfunc B() int { return 2 }\n      \t     ^\n")
	assert.Empty(t, res.Files, "nothing was written")
	assert.Equal(t, cleanGo, readBack(t, env, "p/p.go"))
	noCheckpoints(t, env)
}

func TestSyntaxGateAllowsEditingBrokenFile(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env, "p.go", brokenGo)
	mustOK(t, call(t, env, ReadFileToolName, ReadFileParams{Path: "p.go"}))

	// An edit elsewhere that keeps the existing error lands.
	r := mustOK(t, call(t, env, EditFileToolName, EditFileParams{Path: "p.go", OldString: "return 2", NewString: "return 3"}))
	assert.Contains(t, r.Output, "checkpoint c1")
	assert.Contains(t, readBack(t, env, "p.go"), "return 3")

	// One that adds a second error does not.
	r = mustErr(t, call(t, env, EditFileToolName, EditFileParams{Path: "p.go", OldString: "return 3 }", NewString: "return 3 ) }"}))
	assert.Contains(t, r.Output, "NOT applied")
	assert.Contains(t, r.Output, "p.go already had 2 syntax errors; the change adds 3:")
	assert.Contains(t, r.Output, "p.go:7:25: expected statement, found ')'")
	assert.NotContains(t, r.Output, "p.go:5:1:", "the error it already had is not blamed on the change")
	assert.Contains(t, readBack(t, env, "p.go"), "return 3 }")

	// Fixing the file lands.
	mustOK(t, call(t, env, EditFileToolName, EditFileParams{Path: "p.go", OldString: "return 1 +", NewString: "return 1"}))
	assert.Equal(t, "package p\n\nfunc A() int {\n\treturn 1\n}\n\nfunc B() int { return 3 }\n", readBack(t, env, "p.go"))
}

func TestSyntaxGateFixUncoveringAnotherError(t *testing.T) {
	// Fewer errors in all is progress, even when one of them is new.
	env := newEnv(t)
	two := "package p\n\nfunc A() int {\n\treturn 1 +\n}\n\nfunc B() int {\n\treturn 2 *\n}\n"
	writeFile(t, env, "p.go", two)
	mustOK(t, call(t, env, ReadFileToolName, ReadFileParams{Path: "p.go"}))
	fixed := "package p\n\nfunc A() int {\n\treturn 1\n}\n\nfunc B() int {\n\treturn 2 )\n}\n"
	require.NotEmpty(t, addedErrors(goSyntaxErrors("p.go", two), goSyntaxErrors("p.go", fixed)), "a new message")
	require.Less(t, len(goSyntaxErrors("p.go", fixed)), len(goSyntaxErrors("p.go", two)))
	mustOK(t, call(t, env, WriteFileToolName, WriteFileParams{Path: "p.go", Content: fixed}))
	assert.Equal(t, fixed, readBack(t, env, "p.go"))
}

func TestSyntaxGatePatchIsAllOrNothing(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env, "a.go", cleanGo)
	writeFile(t, env, "b.go", "package p\n\nvar X = 1\n")
	patch := "*** Begin Patch\n" +
		"*** Update File: a.go\n@@\n-\treturn 1\n+\treturn 10\n" +
		"*** Update File: b.go\n@@\n-var X = 1\n+var X = = 1\n" +
		"*** Add File: c.go\n+package p\n" +
		"*** End Patch"
	r := mustErr(t, call(t, env, ApplyPatchToolName, ApplyPatchParams{Patch: patch}))
	assert.Contains(t, r.Output, "NOT applied: this apply_patch call would add Go syntax errors to b.go, so nothing was written; none of its 3 files changed.")
	assert.Contains(t, r.Output, "b.go:3:9: expected operand, found '='")
	assert.Contains(t, r.Output, ">    3\tvar X = = 1\n")
	assert.Equal(t, cleanGo, readBack(t, env, "a.go"))
	assert.Equal(t, "package p\n\nvar X = 1\n", readBack(t, env, "b.go"))
	assert.NoFileExists(t, filepath.Join(env.Root, "c.go"))
	noCheckpoints(t, env)

	// A move whose target would not parse is refused too.
	move := "*** Begin Patch\n*** Update File: b.go\n*** Move to: d.go\n@@\n-var X = 1\n+var X = \n*** End Patch"
	r = mustErr(t, call(t, env, ApplyPatchToolName, ApplyPatchParams{Patch: move}))
	assert.Contains(t, r.Output, "NOT applied")
	assert.FileExists(t, filepath.Join(env.Root, "b.go"))
	assert.NoFileExists(t, filepath.Join(env.Root, "d.go"))

	// Renaming a non-Go file to .go: its old content excuses no error.
	writeFile(t, env, "notes.txt", "not go at all {\n")
	rename := "*** Begin Patch\n*** Update File: notes.txt\n*** Move to: notes.go\n@@\n-not go at all {\n+not go at all {{\n*** End Patch"
	r = mustErr(t, call(t, env, ApplyPatchToolName, ApplyPatchParams{Patch: rename}))
	assert.Contains(t, r.Output, "notes.go would not parse:")
	assert.FileExists(t, filepath.Join(env.Root, "notes.txt"))
}

func TestSyntaxGateRefusesNewBrokenFile(t *testing.T) {
	env := newEnv(t)
	r := mustErr(t, call(t, env, WriteFileToolName, WriteFileParams{Path: "cmd/main.go",
		Content: "package main\n\nfunc main() {\n\tprintln(\"hi\"\n}\n"}))
	assert.Contains(t, r.Output, "NOT applied")
	assert.Contains(t, r.Output, "cmd/main.go was not created")
	assert.Contains(t, r.Output, "cmd/main.go:4:14: missing ',' before newline in argument list")
	assert.NoFileExists(t, filepath.Join(env.Root, "cmd", "main.go"))
	noCheckpoints(t, env)

	// The same content, valid, lands.
	mustOK(t, call(t, env, WriteFileToolName, WriteFileParams{Path: "cmd/main.go",
		Content: "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"}))
}

func TestSyntaxGateIgnoresOtherFiles(t *testing.T) {
	env := newEnv(t)
	broken := "package p\nfunc {\n"
	for _, path := range []string{"notes.txt", "main.go.orig", "script.py", "p/testdata/bad.go"} {
		r := mustOK(t, call(t, env, WriteFileToolName, WriteFileParams{Path: path, Content: broken}))
		assert.NotContains(t, r.Output, "NOT applied", path)
		assert.Equal(t, broken, readBack(t, env, path))
	}
	writeFile(t, env, "f.txt", "ok\n")
	mustOK(t, call(t, env, ReadFileToolName, ReadFileParams{Path: "f.txt"}))
	mustOK(t, call(t, env, EditFileToolName, EditFileParams{Path: "f.txt", OldString: "ok", NewString: "func {"}))
	assert.Equal(t, "func {\n", readBack(t, env, "f.txt"))
}

func TestAddedErrorsCountsMessages(t *testing.T) {
	before := goSyntaxErrors("x.go", "package p\nvar a = = 1\nvar b = = 2\n")
	require.NotEmpty(t, before)
	// Same messages at other positions: nothing added.
	after := goSyntaxErrors("x.go", "package p\n\n\nvar a = = 1\nvar b = = 2\n")
	assert.Empty(t, addedErrors(before, after))
	// A third instance of the same message is added.
	after = goSyntaxErrors("x.go", "package p\nvar a = = 1\nvar b = = 2\nvar c = = 3\n")
	added := addedErrors(before, after)
	require.Len(t, added, len(before)/2)
	for _, e := range added {
		assert.Equal(t, 4, e.Pos.Line)
	}
}

func TestErrorWindow(t *testing.T) {
	content := "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\n"
	assert.Equal(t, "     2\tl2\n     3\tl3\n     4\tl4\n>    5\tl5\n      \t ^\n     6\tl6\n     7\tl7\n     8\tl8\n",
		errorWindow(content, 2, 8, 5, 2))
	// An error at EOF, after the final newline.
	assert.Equal(t, "     7\tl7\n     8\tl8\n     9\tl9\n>   10\t\n      \t^\n", errorWindow(content, 7, 13, 10, 1))
	// Tabs are kept so the caret lines up.
	assert.Equal(t, ">    1\t\tx := é)\n      \t\t      ^\n", errorWindow("\tx := é)\n", -2, 4, 1, 9))
}
