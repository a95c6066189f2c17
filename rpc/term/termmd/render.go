package termmd

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// markdown is the parser: CommonMark with GitHub's tables, strikethrough
// and task lists (not its autolinks: a bare URL reads the same either way).
var markdown = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.TaskList))

// Styles, as SGR parameters.
const (
	sBold      = "1"
	sDim       = "2"
	sItalic    = "3"
	sUnderline = "4"
	sStrike    = "9"
	sCode      = "36" // cyan
	sLink      = "4;34"
	sHeading1  = "1;4;35"
	sHeading2  = "1;35"
	sHeading3  = "1"
)

// Render returns markdown src laid out for a terminal width columns wide,
// one "\n" after each line. With colour, it styles text with escape
// sequences (bold, italics, colours); without, it keeps the markers that
// carry meaning (heading hashes, code backticks) and emits none.
func Render(src string, width int, colour bool) string {
	source := []byte(src)
	doc := markdown.Parser().Parse(text.NewReader(source), parser.WithContext(parser.NewContext()))
	r := renderer{src: source, colour: colour}
	lines := r.children(doc, max(width, 20))
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

type renderer struct {
	src    []byte
	colour bool
}

func (r *renderer) style(code, s string) string {
	if !r.colour || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + reset
}

// children renders n's block children, a blank line between two (none
// between the items of a tight list).
func (r *renderer) children(n ast.Node, width int) []string {
	var out []string
	tight := false
	if l, ok := n.(*ast.List); ok {
		tight = l.IsTight
	}
	if _, ok := n.(*ast.ListItem); ok {
		if l, ok := n.Parent().(*ast.List); ok {
			tight = l.IsTight
		}
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		lines := r.block(c, width)
		if len(out) > 0 && !tight {
			out = append(out, "")
		}
		out = append(out, lines...)
	}
	return out
}

func (r *renderer) block(n ast.Node, width int) []string {
	switch n := n.(type) {
	case *ast.Heading:
		return r.heading(n, width)
	case *ast.Paragraph, *ast.TextBlock:
		return wrap(r.inlines(n, ""), width)
	case *ast.ThematicBreak:
		return []string{r.style(sDim, strings.Repeat("─", min(width, 40)))}
	case *ast.FencedCodeBlock:
		return r.code(n, string(n.Language(r.src)))
	case *ast.CodeBlock:
		return r.code(n, "")
	case *ast.Blockquote:
		return prefix(r.children(n, width-2), r.style(sDim, "│ "), r.style(sDim, "│ "))
	case *ast.List:
		return r.list(n, width)
	case *ast.HTMLBlock:
		return r.rawLines(n)
	case *east.Table:
		return r.table(n, width)
	}
	if n.HasChildren() {
		return r.children(n, width)
	}
	return r.rawLines(n)
}

func (r *renderer) heading(n *ast.Heading, width int) []string {
	text := r.inlines(n, "")
	if !r.colour {
		return wrap(strings.Repeat("#", n.Level)+" "+text, width)
	}
	code := sHeading3
	switch n.Level {
	case 1:
		code = sHeading1
	case 2:
		code = sHeading2
	}
	return wrap(r.style(code, text), width)
}

func (r *renderer) code(n ast.Node, lang string) []string {
	var b strings.Builder
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		b.Write(seg.Value(r.src))
	}
	code := strings.ReplaceAll(strings.TrimSuffix(b.String(), "\n"), "\t", "    ")
	var out []string
	if r.colour {
		out = highlight(code, lang)
	} else {
		out = strings.Split(code, "\n")
	}
	return prefix(out, "  ", "  ")
}

func (r *renderer) rawLines(n ast.Node) []string {
	var out []string
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		out = append(out, strings.TrimRight(string(seg.Value(r.src)), "\n"))
	}
	return out
}

// bullets mark the items of unordered lists, by depth.
var bullets = []string{"•", "◦", "▪"}

func (r *renderer) list(n *ast.List, width int) []string {
	depth := 0
	for p := n.Parent(); p != nil; p = p.Parent() {
		if _, ok := p.(*ast.List); ok {
			depth++
		}
	}
	num := n.Start
	if num == 0 {
		num = 1
	}
	var out []string
	for item := n.FirstChild(); item != nil; item = item.NextSibling() {
		marker := bullets[depth%len(bullets)]
		if n.IsOrdered() {
			marker = strconv.Itoa(num) + string(n.Marker)
			num++
		}
		marker += " "
		if !n.IsTight && len(out) > 0 {
			out = append(out, "")
		}
		indent := strings.Repeat(" ", Width(marker))
		body := r.children(item, width-len(indent))
		if len(body) == 0 {
			body = []string{""}
		}
		out = append(out, prefix(body, r.style(sDim, marker), indent)...)
	}
	return out
}

// prefix puts first before the first line and rest before the others.
func prefix(lines []string, first, rest string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		p := rest
		if i == 0 {
			p = first
		}
		if l == "" {
			out[i] = strings.TrimRight(p, " ")
			continue
		}
		out[i] = p + l
	}
	return out
}

// inlines renders n's inline children as one string of styled text, "\n"
// at hard line breaks.
func (r *renderer) inlines(n ast.Node, outer string) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		r.inline(&b, c, outer)
	}
	return b.String()
}

// inline writes one inline node; outer is the style it sits in, so that a
// nested style ends by going back to it.
func (r *renderer) inline(b *strings.Builder, n ast.Node, outer string) {
	with := func(code string) string {
		if outer == "" {
			return code
		}
		return outer + ";" + code
	}
	span := func(code, s string) {
		if !r.colour {
			b.WriteString(s)
			return
		}
		b.WriteString("\x1b[" + code + "m" + s + reset)
		if outer != "" {
			b.WriteString("\x1b[" + outer + "m")
		}
	}
	switch n := n.(type) {
	case *ast.Text:
		b.WriteString(unescape(n.Segment.Value(r.src)))
		switch {
		case n.HardLineBreak():
			b.WriteString("\n")
		case n.SoftLineBreak():
			b.WriteString(" ")
		}
	case *ast.String:
		b.WriteString(string(n.Value))
	case *ast.CodeSpan:
		var code strings.Builder
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			if t, ok := c.(*ast.Text); ok {
				code.Write(t.Segment.Value(r.src))
			} else if s, ok := c.(*ast.String); ok {
				code.Write(s.Value)
			}
		}
		if r.colour {
			span(with(sCode), code.String())
		} else {
			b.WriteString("`" + code.String() + "`")
		}
	case *ast.Emphasis:
		code := sItalic
		if n.Level >= 2 {
			code = sBold
		}
		span(with(code), r.inlines(n, with(code)))
	case *east.Strikethrough:
		span(with(sStrike), r.inlines(n, with(sStrike)))
	case *ast.Link:
		label := r.inlines(n, with(sLink))
		span(with(sLink), label)
		if dest := string(n.Destination); dest != "" && dest != Plain(label) {
			b.WriteString(" (" + dest + ")")
		}
	case *ast.AutoLink:
		span(with(sLink), string(n.URL(r.src)))
	case *ast.Image:
		fmt.Fprintf(b, "[image: %s]", r.inlines(n, outer))
	case *ast.RawHTML:
		segs := n.Segments
		for i := 0; i < segs.Len(); i++ {
			seg := segs.At(i)
			b.Write(seg.Value(r.src))
		}
	case *east.TaskCheckBox:
		if n.IsChecked {
			b.WriteString("[x] ")
		} else {
			b.WriteString("[ ] ")
		}
	default:
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			r.inline(b, c, outer)
		}
	}
}

// unescape resolves backslash escapes and character references.
func unescape(b []byte) string {
	return string(util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(b))))
}
