package rag

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOutline(t *testing.T) {
	goSrc := "// Package p.\npackage p\n\nimport \"fmt\"\n\nconst (\n\tA = 1\n\tB = 2\n)\n\n// T is a type.\ntype T struct {\n\tx int\n}\n\nfunc (t *T) M() { fmt.Println(t.x) }\n\nvar v, w = 1, 2\n\nfunc F() {\n}\n"
	assert.Equal(t, []Symbol{
		{Name: "A", Kind: "const", StartLine: 6, EndLine: 9}, {Name: "B", Kind: "const", StartLine: 6, EndLine: 9},
		{Name: "T", Kind: "type", StartLine: 12, EndLine: 14},
		{Name: "T.M", Kind: "method", StartLine: 16, EndLine: 16},
		{Name: "v", Kind: "var", StartLine: 18, EndLine: 18}, {Name: "w", Kind: "var", StartLine: 18, EndLine: 18},
		{Name: "F", Kind: "func", StartLine: 20, EndLine: 21},
	}, Outline("p/p.go", []byte(goSrc)))

	md := "# Title\n\nintro\n\n## One\n\ntext\n\n```sh\n# not a heading\n```\n\n## Two\nmore\n\n#notaheading\n"
	assert.Equal(t, []Symbol{
		{Name: "Title", Kind: "heading", StartLine: 1, EndLine: 16},
		{Name: "One", Kind: "heading", StartLine: 5, EndLine: 11},
		{Name: "Two", Kind: "heading", StartLine: 13, EndLine: 16},
	}, Outline("README.md", []byte(md)))

	py := "import os\n\ndef load(path):\n    return open(path).read()\n\nclass Cart:\n    pass\n"
	assert.Equal(t, []Symbol{{Name: "load", StartLine: 3, EndLine: 4}, {Name: "Cart", StartLine: 6, EndLine: 7}},
		Outline("cart.py", []byte(py)))
	assert.Empty(t, Outline("notes.txt", []byte("just words\n")))
}
