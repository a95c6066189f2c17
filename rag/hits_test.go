package rag

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gzipTree is issue 30's example: the answer (readHeader) is gunzip.go's
// second matching chunk, which used to come eighth on its own.
var gzipTree = map[string]string{
	"gzip/gunzip.go": `package gzip

// Reader decompresses a gzip stream.
type Reader struct{ multistream bool }

// NewReader creates a Reader reading the gzip header of r.
func NewReader(r any) (*Reader, error) {
	z := new(Reader)
` + filler("open") + `	return z, z.readHeader()
}

// readHeader reads the gzip header: the magic bytes, the flags, the
// modification time, the extra field, the name and the comment.
func (z *Reader) readHeader() error {
	// Check the magic bytes of the header before anything else.
` + filler("parse") + `	return nil
}

// Close closes the Reader.
func (z *Reader) Close() error {
` + filler("close") + `	return nil
}
`,
	"gzip/gzip.go": `package gzip

// Writer compresses to a gzip stream.
type Writer struct{ wroteHeader bool }

// writeHeader writes the gzip header.
func (z *Writer) writeHeader() error { return nil }
`,
	"gzip/gunzip_test.go": `package gzip

import "testing"

func TestReadHeader(t *testing.T) { _ = "gzip header flags" }
`,
}

func TestAnswersAreFilesWithTheirChunks(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, gzipTree)
	ix := openBuilt(t, root, t.TempDir())
	query := "read the gzip header"
	q := parseQuery(query, &defaultRank)
	hits, _, err := ix.Search(context.Background(), query, 10)
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	var paths []string
	for _, h := range hits {
		assert.NotContains(t, paths, h.Path, "a file comes once")
		paths = append(paths, h.Path)
	}
	first := hits[0]
	assert.Equal(t, "gzip/gunzip.go", first.Path)
	assert.Equal(t, 1.0, first.Score)
	assert.Equal(t, MatchStrong, first.Match)
	require.NotEmpty(t, first.Chunks)
	assert.Contains(t, first.Chunks[0].Symbol, "readHeader", "the best chunk first")
	require.GreaterOrEqual(t, len(first.Chunks), 2, "NewReader's chunk matches too: under its file")
	assert.NotContains(t, first.Chunks[1].Symbol, "readHeader")
	// Order and words agree: scores fall, labels never rise.
	for i := 1; i < len(hits); i++ {
		assert.LessOrEqual(t, hits[i].Score, hits[i-1].Score)
		assert.LessOrEqual(t, labelRank(hits[i].Match), labelRank(hits[i-1].Match))
	}
	// The test file says so and ranks below the code.
	for i, h := range hits {
		if h.Path == "gzip/gunzip_test.go" {
			assert.Equal(t, "test", h.Kind)
			assert.Greater(t, i, 0)
		}
	}
	// The snippet is the lines that matched, not the chunk's first lines,
	// with the query's words marked.
	c := first.Chunks[0]
	require.NotEmpty(t, c.Lines)
	assert.LessOrEqual(t, len(c.Lines), snippetLines)
	var shown []string
	for _, l := range c.Lines {
		shown = append(shown, l.Text)
		assert.Equal(t, strings.Split(c.Text, "\n")[l.Line-c.StartLine], l.Text, "line %d is the file's", l.Line)
		for _, m := range l.Marks {
			w := l.Text[m.Start:m.End]
			var tk tokenizer
			found := false
			tk.word(w, func(b []byte) { found = found || slices.Contains(q.terms, string(b)) })
			assert.True(t, found, "marked %q", w)
		}
	}
	assert.Contains(t, shown, "// readHeader reads the gzip header: the magic bytes, the flags, the")
	assert.Contains(t, shown, "\t// Check the magic bytes of the header before anything else.")
	assert.NotContains(t, shown, "// modification time, the extra field, the name and the comment.", "it matches nothing")
}

func TestSnippetLines(t *testing.T) {
	q := parseQuery("gzip header", &defaultRank)
	m := newMarker(q)
	text := "// Package comment.\nfunc f() {\n\tx := 1\n\treadHeader() // the gzip header\n}"
	lines := m.snippet(text, 10)
	require.Len(t, lines, 1)
	assert.Equal(t, 13, lines[0].Line)
	assert.Equal(t, "\treadHeader() // the gzip header", lines[0].Text)
	var marked []string
	for _, s := range lines[0].Marks {
		marked = append(marked, lines[0].Text[s.Start:s.End])
	}
	assert.Equal(t, []string{"readHeader", "gzip", "header"}, marked)

	// A long line is cut around its first mark; the marks follow.
	long := strings.Repeat("x ", 200) + "gzip header" + strings.Repeat(" y", 200)
	l := m.snippet(long, 1)[0]
	assert.LessOrEqual(t, len(l.Text), snippetWidth+2*len("…"))
	require.NotEmpty(t, l.Marks)
	assert.Equal(t, "gzip", l.Text[l.Marks[0].Start:l.Marks[0].End])

	// Nothing matches inside (the path did): the first lines.
	lines = m.snippet("\npackage p\n\nvar x = 1\n", 1)
	require.Len(t, lines, 2)
	assert.Equal(t, SnippetLine{Line: 2, Text: "package p"}, lines[0])
}

func TestWriteHits(t *testing.T) {
	hits := []SearchHit{
		{Path: "gzip/gunzip.go", Score: 1, Match: MatchStrong, Chunks: []ChunkHit{
			{StartLine: 13, EndLine: 17, Symbol: "Reader.readHeader", Cover: 0.9,
				Lines: []SnippetLine{{Line: 15, Text: "\t// Check the magic bytes", Marks: []Span{{Start: 14, End: 19}}}},
				Text:  "// readHeader reads.\nfunc (z *Reader) readHeader() error {\n\t// Check the magic bytes\n\treturn nil\n}"}}},
		{Repo: "example.com/other", Path: "x_test.go", Kind: "test", Score: 0.31, Match: MatchWeak, Chunks: []ChunkHit{
			{StartLine: 3, EndLine: 3, Cover: 0.4, Lines: []SnippetLine{{Line: 3, Text: "magic"}}, Text: "magic"}}},
	}
	var b bytes.Buffer
	WriteHits(&b, hits, TerminalMarks)
	assert.Equal(t, "gzip/gunzip.go  (strong 1.00)\n  13-17 Reader.readHeader\n    15│ \t// Check the \x1b[1;31mmagic\x1b[0m bytes\n\n"+
		"example.com/other: x_test.go  (weak 0.31, test)\n  3-3\n    3│ magic\n", b.String())

	// For the model: the best file's best chunk whole, with where to read on.
	b.Reset()
	o := ModelMarks
	o.BodyLines = 4
	WriteHits(&b, hits[:1], o)
	assert.Equal(t, "gzip/gunzip.go  (strong 1.00)\n  13-17 Reader.readHeader\n    13│ // readHeader reads.\n"+
		"    14│ func (z *Reader) readHeader() error {\n    15│ \t// Check the «magic» bytes\n    16│ \treturn nil\n"+
		"    [… 1 more lines: read_file path=\"gzip/gunzip.go\" offset=17 limit=1]\n", b.String())
}

// filler is a function body's worth of lines that match no query.
func filler(name string) string {
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, "\t%sStep%d := %d * 7 // %s step %d\n\t_ = %sStep%d\n", name, i, i, name, i, name, i)
	}
	return b.String()
}
