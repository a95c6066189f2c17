package termmd

import (
	"fmt"
	"strconv"
	"strings"
)

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
	r := renderer{colour: colour}
	lines := r.blocks(parse(src), max(width, 20), false, 0)
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

type renderer struct {
	colour bool
}

func (r *renderer) style(code, s string) string {
	if !r.colour || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + reset
}

// blocks renders blocks one under the other, a blank line between two
// (none in a tight list's item); depth is how many lists they sit in.
func (r *renderer) blocks(bs []*block, width int, tight bool, depth int) []string {
	var out []string
	for _, b := range bs {
		lines := r.block(b, width, depth)
		if len(out) > 0 && !tight {
			out = append(out, "")
		}
		out = append(out, lines...)
	}
	return out
}

func (r *renderer) block(b *block, width, depth int) []string {
	switch b.kind {
	case bHeading:
		return r.heading(b, width)
	case bParagraph:
		return wrap(r.inlines(parseInline(strings.Join(b.lines, "\n")), ""), width)
	case bRule:
		return []string{r.style(sDim, strings.Repeat("─", min(width, 40)))}
	case bCode:
		return r.code(b)
	case bQuote:
		return prefix(r.blocks(b.kids, width-2, false, depth), r.style(sDim, "│ "), r.style(sDim, "│ "))
	case bList:
		return r.list(b, width, depth)
	case bTable:
		return r.table(b, width)
	}
	return b.lines // HTML, as it is
}

func (r *renderer) heading(b *block, width int) []string {
	text := r.inlines(parseInline(b.lines[0]), "")
	if !r.colour {
		return wrap(strings.Repeat("#", b.level)+" "+text, width)
	}
	code := sHeading3
	switch b.level {
	case 1:
		code = sHeading1
	case 2:
		code = sHeading2
	}
	return wrap(r.style(code, text), width)
}

func (r *renderer) code(b *block) []string {
	code := strings.ReplaceAll(strings.Join(b.lines, "\n"), "\t", "    ")
	var out []string
	if r.colour {
		out = highlight(code, b.lang)
	} else {
		out = strings.Split(code, "\n")
	}
	return prefix(out, "  ", "  ")
}

// bullets mark the items of unordered lists, by depth.
var bullets = []string{"•", "◦", "▪"}

func (r *renderer) list(l *block, width, depth int) []string {
	num := l.start
	if num == 0 {
		num = 1
	}
	var out []string
	for _, item := range l.kids {
		marker := bullets[depth%len(bullets)]
		if l.ordered {
			marker = strconv.Itoa(num) + string(l.marker)
			num++
		}
		marker += " "
		if !l.tight && len(out) > 0 {
			out = append(out, "")
		}
		indent := strings.Repeat(" ", Width(marker))
		body := r.item(item, width-len(indent), l.tight, depth+1)
		if len(body) == 0 {
			body = []string{""}
		}
		out = append(out, prefix(body, r.style(sDim, marker), indent)...)
	}
	return out
}

// item renders a list item's blocks, a task's box before its first line.
func (r *renderer) item(item *block, width int, tight bool, depth int) []string {
	box := ""
	switch item.task {
	case 1:
		box = "[ ] "
	case 2:
		box = "[x] "
	}
	if box == "" {
		return r.blocks(item.kids, width, tight, depth)
	}
	if len(item.kids) == 0 || item.kids[0].kind != bParagraph {
		return append([]string{strings.TrimSpace(box)}, r.blocks(item.kids, width, tight, depth)...)
	}
	first := wrap(box+r.inlines(parseInline(strings.Join(item.kids[0].lines, "\n")), ""), width)
	rest := r.blocks(item.kids[1:], width, tight, depth)
	if len(rest) > 0 && !tight {
		first = append(first, "")
	}
	return append(first, rest...)
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

// inlines renders inline nodes as one string of styled text, "\n" at hard
// line breaks; outer is the style they sit in, so that a nested style ends
// by going back to it.
func (r *renderer) inlines(nodes []*inline, outer string) string {
	var b strings.Builder
	for _, n := range nodes {
		r.inline(&b, n, outer)
	}
	return b.String()
}

func (r *renderer) inline(b *strings.Builder, n *inline, outer string) {
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
	switch n.kind {
	case iText, iHTML:
		b.WriteString(n.text)
	case iBreak:
		b.WriteString("\n")
	case iCode:
		if r.colour {
			span(with(sCode), n.text)
		} else {
			b.WriteString("`" + n.text + "`")
		}
	case iEmph:
		code := sItalic
		if n.level >= 2 {
			code = sBold
		}
		span(with(code), r.inlines(n.kids, with(code)))
	case iStrike:
		span(with(sStrike), r.inlines(n.kids, with(sStrike)))
	case iLink:
		label := r.inlines(n.kids, with(sLink))
		span(with(sLink), label)
		if n.text != "" && n.text != Plain(label) && "mailto:"+Plain(label) != n.text {
			b.WriteString(" (" + n.text + ")")
		}
	case iImage:
		fmt.Fprintf(b, "[image: %s]", r.inlines(n.kids, outer))
	}
}
