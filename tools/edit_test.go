package tools

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReplaceTextLevels(t *testing.T) {
	content := "func a() {\n\tx := 1   \n\treturn x\n}\n\nfunc b() {\n\ty := “hi”\n}\n"
	cases := []struct {
		name, old, new, level, want string
	}{
		{"exact", "\treturn x\n", "\treturn x + 1\n", levelExact,
			"func a() {\n\tx := 1   \n\treturn x + 1\n}\n\nfunc b() {\n\ty := “hi”\n}\n"},
		{"trailing whitespace", "\tx := 1\n\treturn x", "\tx := 2\n\treturn x", levelTrailing,
			"func a() {\n\tx := 2\n\treturn x\n}\n\nfunc b() {\n\ty := “hi”\n}\n"},
		{"indentation, re-indented", "    x := 1\n    return x\n", "    x := 3\n    if x > 0 {\n        return x\n    }\n", levelIndent,
			"func a() {\n\tx := 3\n\tif x > 0 {\n\t\treturn x\n\t}\n}\n\nfunc b() {\n\ty := “hi”\n}\n"},
		{"unicode", "\ty := \"hi\"", "\ty := \"bye\"", levelUnicode,
			"func a() {\n\tx := 1   \n\treturn x\n}\n\nfunc b() {\n\ty := \"bye\"\n}\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, msg := replaceText(content, c.old, c.new, false)
			require.Empty(t, msg)
			assert.Equal(t, c.level, res.Level)
			assert.Equal(t, c.want, res.Content)
		})
	}
}

func TestReplaceTextAmbiguousAndMissing(t *testing.T) {
	content := "a := 1\nb := 2\na := 1\nc := 3\n"
	_, msg := replaceText(content, "a := 1", "a := 9", false)
	assert.Contains(t, msg, "matches 2 places (exact), starting at lines 1, 3")

	res, msg := replaceText(content, "a := 1", "a := 9", true)
	require.Empty(t, msg)
	assert.Equal(t, 2, res.Count)
	assert.Equal(t, "a := 9\nb := 2\na := 9\nc := 3\n", res.Content)

	_, msg = replaceText(content, "b := 22\na := 1", "x", false)
	assert.Contains(t, msg, "not found")
	assert.Contains(t, msg, "most similar lines are 2-3")
	assert.Contains(t, msg, "     2\tb := 2")

	_, msg = replaceText(content, "completely unrelated text here", "x", false)
	assert.Contains(t, msg, "no similar lines")
}

func TestEditFile(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env, "f.txt", "one\ntwo\nthree\n")
	edit := EditFileParams{Path: "f.txt", OldString: "two", NewString: "TWO"}

	r := mustErr(t, call(t, env, EditFileToolName, edit))
	assert.Contains(t, r.Output, "read f.txt with read_file before changing it")

	mustOK(t, call(t, env, ReadFileToolName, ReadFileParams{Path: "f.txt"}))
	c, res := prepare(t, env, EditFileToolName, edit)
	require.Nil(t, res)
	require.Len(t, c.Writes, 1)
	assert.Equal(t, "modified", c.Writes[0].Status)
	assert.Contains(t, c.Writes[0].Diff, "-two\n+TWO\n")
	assert.Equal(t, "one\ntwo\nthree\n", readBack(t, env, "f.txt"), "prepare must not write")

	out, err := c.Run(t.Context())
	require.NoError(t, err)
	mustOK(t, out)
	assert.Contains(t, out.Output, "checkpoint c1 (undo_patch restores")
	// the editor shows the checkpoint itself: its output has no line meant
	// for the model alone
	assert.Equal(t, "c1", out.Checkpoint)
	assert.Contains(t, out.Full, "modified f.txt")
	assert.NotContains(t, out.Full, "undo_patch")
	assert.Equal(t, "one\nTWO\nthree\n", readBack(t, env, "f.txt"))

	// A second edit needs no re-read: the tool knows what it wrote.
	mustOK(t, call(t, env, EditFileToolName, EditFileParams{Path: "f.txt", OldString: "one", NewString: "ONE"}))

	// Changed on disk since: refused until read again.
	p := filepath.Join(env.Root, "f.txt")
	require.NoError(t, os.WriteFile(p, []byte("ONE\nTWO\nthree\nfour\n"), 0o644))
	later := time.Now().Add(2 * time.Second)
	require.NoError(t, os.Chtimes(p, later, later))
	r = mustErr(t, call(t, env, EditFileToolName, EditFileParams{Path: "f.txt", OldString: "four", NewString: "4"}))
	assert.Contains(t, r.Output, "changed on disk since you read it")
}

func TestEditFileRefusesIfChangedAfterPrepare(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env, "f.txt", "a\nb\n")
	mustOK(t, call(t, env, ReadFileToolName, ReadFileParams{Path: "f.txt"}))
	c, r := prepare(t, env, EditFileToolName, EditFileParams{Path: "f.txt", OldString: "a", NewString: "A"})
	require.Nil(t, r)
	writeFile(t, env, "f.txt", "a\nb\nc\n") // the user edits while the confirmation is open
	out, err := c.Run(t.Context())
	require.NoError(t, err)
	mustErr(t, out)
	assert.Equal(t, "a\nb\nc\n", readBack(t, env, "f.txt"))
}

func TestEditFileKeepsCRLFAndReportsLevel(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env, "w.txt", "alpha  \r\nbeta\r\n")
	mustOK(t, call(t, env, ReadFileToolName, ReadFileParams{Path: "w.txt"}))
	r := mustOK(t, call(t, env, EditFileToolName, EditFileParams{Path: "w.txt", OldString: "alpha\nbeta", NewString: "gamma\nbeta"}))
	assert.Contains(t, r.Output, "matched only ignoring trailing whitespace")
	assert.Equal(t, "gamma\r\nbeta\r\n", readBack(t, env, "w.txt"))
}

func TestEditFileErrors(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env, "f.txt", "x\nx\n")
	mustOK(t, call(t, env, ReadFileToolName, ReadFileParams{Path: "f.txt"}))
	r := mustErr(t, call(t, env, EditFileToolName, EditFileParams{Path: "f.txt", OldString: "x", NewString: "y"}))
	assert.Contains(t, r.Output, "matches 2 places")
	mustErr(t, call(t, env, EditFileToolName, EditFileParams{Path: "f.txt", OldString: "", NewString: "y"}))
	mustErr(t, call(t, env, EditFileToolName, EditFileParams{Path: "f.txt", OldString: "x", NewString: "x"}))
	r = mustErr(t, call(t, env, EditFileToolName, EditFileParams{Path: "nope.txt", OldString: "x", NewString: "y"}))
	assert.Contains(t, r.Output, "does not exist")
	// The model reads what is wrong with its arguments in its schema's
	// words, not in Go's.
	raw := func(name, args string) string {
		_, r := Prepare(t.Context(), toolByName(t, name), env, json.RawMessage(args))
		require.NotNil(t, r, args)
		return r.Output
	}
	assert.Contains(t, raw(EditFileToolName, `{"path": "f.txt"`), "invalid arguments: they are not valid JSON")
	assert.Equal(t, "invalid arguments: old_string must be a string, not a JSON number", raw(EditFileToolName, `{"path": "f.txt", "old_string": 1, "new_string": "y"}`))
	assert.Contains(t, raw(EditFileToolName, `["f.txt"]`), "must be one JSON object")
	assert.Equal(t, "invalid arguments: offset must be an integer, not a JSON string", raw(ReadFileToolName, `{"path": "f.txt", "offset": "10"}`))
}

func TestWriteFile(t *testing.T) {
	env := newEnv(t)
	r := mustOK(t, call(t, env, WriteFileToolName, WriteFileParams{Path: "new/dir/f.txt", Content: "hello\n"}))
	assert.Contains(t, r.Output, "added new/dir/f.txt")
	assert.Equal(t, "hello\n", readBack(t, env, "new/dir/f.txt"))
	require.Len(t, r.Files, 1)
	assert.Equal(t, "added", r.Files[0].Status)

	writeFile(t, env, "old.txt", "old\n")
	r = mustErr(t, call(t, env, WriteFileToolName, WriteFileParams{Path: "old.txt", Content: "new\n"}))
	assert.Contains(t, r.Output, "read old.txt")
	mustOK(t, call(t, env, ReadFileToolName, ReadFileParams{Path: "old.txt"}))
	mustOK(t, call(t, env, WriteFileToolName, WriteFileParams{Path: "old.txt", Content: "new\n"}))
	assert.Equal(t, "new\n", readBack(t, env, "old.txt"))
}

// TestNoCheckAfterEachEdit: an edit's result is the change alone; the
// language servers' diagnostics come once per reply, after its last edit
// (agent/language.go), instead of gofmt and go vet after each.
func TestNoCheckAfterEachEdit(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env, "go.mod", "module example.com/m\n\ngo 1.22\n")
	r := mustOK(t, call(t, env, WriteFileToolName, WriteFileParams{Path: "p/p.go",
		Content: "package p\n\nimport \"fmt\"\n\nfunc F() { fmt.Printf(\"%d\\n\", \"x\") }\n"}))
	assert.Equal(t, "added p/p.go\ncheckpoint c1 (undo_patch restores the files as they were before it)", r.Output)
}

// TestEditsOfOneFileInABatch: the model's three edits of one file in one
// reply are all prepared before any runs; each runs on top of the ones
// before it, instead of failing as "changed on disk".
func TestEditsOfOneFileInABatch(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env, "f.go", "package f\n\nfunc A() int { return 1 }\n\nfunc B() int { return 2 }\n\nfunc C() int { return 3 }\n")
	mustOK(t, call(t, env, ReadFileToolName, ReadFileParams{Path: "f.go"}))
	var calls []*Call
	for _, e := range [][2]string{{"return 1", "return 10"}, {"return 2", "return 20"}, {"return 3", "return 30"}} {
		c, r := prepare(t, env, EditFileToolName, EditFileParams{Path: "f.go", OldString: e[0], NewString: e[1]})
		require.Nil(t, r)
		calls = append(calls, c)
	}
	for i, c := range calls {
		res, err := c.Run(t.Context())
		require.NoError(t, err)
		require.False(t, res.IsError, "edit %d: %s", i+1, res.Output)
	}
	assert.Equal(t, "package f\n\nfunc A() int { return 10 }\n\nfunc B() int { return 20 }\n\nfunc C() int { return 30 }\n", readBack(t, env, "f.go"))

	// Someone else's change is still refused.
	c, r := prepare(t, env, EditFileToolName, EditFileParams{Path: "f.go", OldString: "return 10", NewString: "return 11"})
	require.Nil(t, r)
	writeFile(t, env, "f.go", "package f\n\nfunc A() int { return 10 }\n// edited in the editor\n")
	res, err := c.Run(t.Context())
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Output, "changed on disk after this change was prepared")

	// An earlier edit of the batch that removes what a later one needs:
	// the later one says why.
	writeFile(t, env, "g.txt", "one\ntwo\n")
	mustOK(t, call(t, env, ReadFileToolName, ReadFileParams{Path: "g.txt"}))
	c1, r := prepare(t, env, EditFileToolName, EditFileParams{Path: "g.txt", OldString: "two", NewString: "deux"})
	require.Nil(t, r)
	c2, r := prepare(t, env, EditFileToolName, EditFileParams{Path: "g.txt", OldString: "two\n", NewString: "three\n"})
	require.Nil(t, r)
	_, err = c1.Run(t.Context())
	require.NoError(t, err)
	res, err = c2.Run(t.Context())
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Output, "NOT applied: an earlier call of yours in the same reply changed g.txt first")
}

func TestEditShowsTheChangedLines(t *testing.T) {
	env := newEnv(t)
	var b strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	writeFile(t, env, "f.txt", b.String())
	mustOK(t, call(t, env, ReadFileToolName, ReadFileParams{Path: "f.txt", Limit: 5}))
	r := mustOK(t, call(t, env, EditFileToolName, EditFileParams{Path: "f.txt", OldString: "line 20\n", NewString: "line 20\nline 20b\n"}))
	assert.Contains(t, r.Output, "Lines 19-23 of f.txt now read:\n    19\tline 19\n    20\tline 20\n    21\tline 20b\n    22\tline 21\n    23\tline 22")
	unseen, next := env.Reads.unseen("f.txt")
	assert.Equal(t, "you have seen only lines 1-5, 19-23 of its 31", unseen)
	assert.Equal(t, 6, next)

	r = mustErr(t, call(t, env, WriteFileToolName, WriteFileParams{Path: "f.txt", Content: "all new\n"}))
	assert.Contains(t, r.Output, "Not written: write_file would replace the whole of f.txt, but you have seen only lines 1-5, 19-23 of its 31 lines. Change only what you need with edit_file, or read the rest first (read_file with offset 6).")
}

func TestReindentToTheFile(t *testing.T) {
	file := []string{"func f() {", "\tif x {", "\t\treturn 1", "\t}", "}"}
	got := reindentBlock(
		[]string{"    if y {", "        for {", "            return 2", "        }", "    }", "    // after"},
		[]string{"    if x {", "        return 1", "    }"}, file[1:4], file)
	assert.Equal(t, []string{"\tif y {", "\t\tfor {", "\t\t\treturn 2", "\t\t}", "\t}", "\t// after"}, got)

	py := []string{"def f():", "    if x:", "        return 1"}
	got = reindentBlock([]string{"  if y:", "    return 2", "  return 3"}, []string{"  if x:", "    return 1"}, py[1:3], py)
	assert.Equal(t, []string{"    if y:", "        return 2", "    return 3"}, got)
}
