package termmd

import (
	"strings"
)

// The blocks of the Markdown a model writes: CommonMark's (paragraphs,
// ATX and setext headings, fenced and indented code, block quotes, lists,
// thematic breaks, HTML blocks) and GitHub's tables and task lists. What
// is not here (link reference definitions, footnotes) is shown as the
// text it is. Our own parser rather than a library's: a library with
// everything (goldmark) costs every start of agentd, editors' included,
// a millisecond of package initialisation for a terminal most starts
// never open.

type blockKind int

const (
	bParagraph blockKind = iota
	bHeading
	bCode
	bQuote
	bList
	bItem
	bRule
	bTable
	bHTML
)

type block struct {
	kind  blockKind
	level int      // heading: 1 to 6
	lang  string   // code: the fence's info string, first word
	lines []string // paragraph, heading: inline source; code, html: the lines
	kids  []*block // quote, list (its items), item

	ordered bool // list
	start   int  // list: the first number
	marker  byte // list: '-', '*', '+', '.' or ')'
	tight   bool // list: no blank line between items or their blocks
	task    int  // item: 0 none, 1 "[ ]", 2 "[x]"

	rows   [][]string // table: the cells' inline sources, the header first
	aligns []byte     // table: 'l', 'c', 'r' or 0, by column
}

// parse reads src into blocks.
func parse(src string) []*block {
	src = strings.ReplaceAll(strings.ReplaceAll(src, "\r\n", "\n"), "\r", "\n")
	return parseLines(strings.Split(strings.TrimSuffix(src, "\n"), "\n"))
}

func parseLines(lines []string) []*block {
	var out []*block
	for i := 0; i < len(lines); {
		line := lines[i]
		switch {
		case blank(line):
			i++
		case fenceOpen(line) != "":
			b, n := codeFence(lines[i:])
			out, i = append(out, b), i+n
		case headingLevel(line) > 0:
			out, i = append(out, atxHeading(line)), i+1
		case isRule(line):
			out, i = append(out, &block{kind: bRule}), i+1
		case quoteMarker(line) >= 0:
			b, n := quote(lines[i:])
			out, i = append(out, b), i+n
		case listMarker(line) != nil:
			b, n := list(lines[i:])
			out, i = append(out, b), i+n
		case indent(line) >= 4:
			b, n := indentedCode(lines[i:])
			out, i = append(out, b), i+n
		case htmlStart(line):
			b, n := htmlBlock(lines[i:])
			out, i = append(out, b), i+n
		case i+1 < len(lines) && isTableStart(line, lines[i+1]):
			b, n := table(lines[i:])
			out, i = append(out, b), i+n
		default:
			b, n := paragraph(lines[i:])
			out, i = append(out, b), i+n
		}
	}
	return out
}

func blank(s string) bool { return strings.TrimSpace(s) == "" }

// indent counts the columns of s's leading white space (a tab to the next
// multiple of 4).
func indent(s string) int {
	n := 0
	for _, c := range s {
		switch c {
		case ' ':
			n++
		case '\t':
			n += 4 - n%4
		default:
			return n
		}
	}
	return n
}

// dedent removes up to n columns of leading white space.
func dedent(s string, n int) string {
	col := 0
	for i, c := range s {
		if col >= n {
			return s[i:]
		}
		switch c {
		case ' ':
			col++
		case '\t':
			w := 4 - col%4
			if col+w > n {
				return strings.Repeat(" ", col+w-n) + s[i+1:]
			}
			col += w
		default:
			return s[i:]
		}
	}
	return ""
}

// fenceOpen is the fence a line opens ("```", "~~~~"), or "".
func fenceOpen(line string) string {
	if indent(line) > 3 {
		return ""
	}
	t := strings.TrimLeft(line, " ")
	if len(t) < 3 || t[0] != '`' && t[0] != '~' {
		return ""
	}
	n := len(t) - len(strings.TrimLeft(t, t[:1]))
	if n < 3 || t[0] == '`' && strings.Contains(t[n:], "`") {
		return ""
	}
	return t[:n]
}

func codeFence(lines []string) (*block, int) {
	fence := fenceOpen(lines[0])
	ind := indent(lines[0])
	info := strings.TrimSpace(strings.TrimLeft(strings.TrimLeft(lines[0], " "), fence[:1]))
	b := &block{kind: bCode}
	if f := strings.Fields(info); len(f) > 0 {
		b.lang = f[0]
	}
	i := 1
	for ; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		if indent(lines[i]) <= 3 && strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
			return b, i + 1
		}
		b.lines = append(b.lines, dedent(lines[i], ind))
	}
	return b, i
}

func indentedCode(lines []string) (*block, int) {
	b := &block{kind: bCode}
	i := 0
	for ; i < len(lines) && (indent(lines[i]) >= 4 || blank(lines[i])); i++ {
		b.lines = append(b.lines, dedent(lines[i], 4))
	}
	for len(b.lines) > 0 && blank(b.lines[len(b.lines)-1]) {
		b.lines = b.lines[:len(b.lines)-1]
	}
	return b, i
}

func headingLevel(line string) int {
	if indent(line) > 3 {
		return 0
	}
	t := strings.TrimLeft(line, " ")
	n := len(t) - len(strings.TrimLeft(t, "#"))
	if n < 1 || n > 6 || len(t) > n && t[n] != ' ' && t[n] != '\t' {
		return 0
	}
	return n
}

func atxHeading(line string) *block {
	level := headingLevel(line)
	t := strings.TrimSpace(strings.TrimLeft(line, " ")[level:])
	// A closing run of #s, after a space, is not part of the text.
	if s := strings.TrimRight(t, "#"); s == "" || strings.HasSuffix(s, " ") {
		t = strings.TrimSpace(s)
	}
	return &block{kind: bHeading, level: level, lines: []string{t}}
}

// isRule: three or more -, * or _ alone on a line, spaces between allowed.
func isRule(line string) bool {
	if indent(line) > 3 {
		return false
	}
	t := strings.ReplaceAll(strings.ReplaceAll(strings.TrimSpace(line), " ", ""), "\t", "")
	return len(t) >= 3 && (strings.Trim(t, "-") == "" || strings.Trim(t, "*") == "" || strings.Trim(t, "_") == "")
}

// setextLevel is the level a line under a paragraph makes it: === 1,
// --- 2, else 0.
func setextLevel(line string) int {
	if indent(line) > 3 {
		return 0
	}
	t := strings.TrimSpace(line)
	switch {
	case t != "" && strings.Trim(t, "=") == "":
		return 1
	case t != "" && strings.Trim(t, "-") == "":
		return 2
	}
	return 0
}

// quoteMarker is where a line's quote's text starts, or -1.
func quoteMarker(line string) int {
	if indent(line) > 3 {
		return -1
	}
	i := strings.IndexByte(line, '>')
	if i < 0 || strings.TrimSpace(line[:i]) != "" {
		return -1
	}
	if i+1 < len(line) && line[i+1] == ' ' {
		return i + 2
	}
	return i + 1
}

func quote(lines []string) (*block, int) {
	var inner []string
	i := 0
	for ; i < len(lines); i++ {
		if at := quoteMarker(lines[i]); at >= 0 {
			inner = append(inner, lines[i][at:])
			continue
		}
		// A lazy line continues the quote's paragraph.
		if blank(lines[i]) || len(inner) == 0 || blank(inner[len(inner)-1]) || startsBlock(lines[i]) {
			break
		}
		inner = append(inner, lines[i])
	}
	return &block{kind: bQuote, kids: parseLines(inner)}, i
}

// marker is a list item's marker.
type marker struct {
	ordered bool
	num     int
	char    byte   // '-', '*', '+', or the ordered delimiter '.' or ')'
	content int    // the column its content starts at
	empty   bool   // nothing follows the marker on its line
	first   string // its content on the marker's line
}

func listMarker(line string) *marker {
	ind := indent(line)
	if ind > 3 {
		return nil
	}
	t := strings.TrimLeft(line, " \t")
	m := &marker{}
	n := 0
	switch {
	case t != "" && strings.ContainsRune("-*+", rune(t[0])):
		m.char, n = t[0], 1
	default:
		for n < len(t) && n < 9 && t[n] >= '0' && t[n] <= '9' {
			m.num = m.num*10 + int(t[n]-'0')
			n++
		}
		if n == 0 || n >= len(t) || t[n] != '.' && t[n] != ')' {
			return nil
		}
		m.ordered, m.char = true, t[n]
		n++
	}
	rest := t[n:]
	switch {
	case rest == "" || blank(rest):
		m.empty, m.content = true, ind+n+1
	case rest[0] != ' ' && rest[0] != '\t':
		return nil
	default:
		sp := indent(rest)
		if sp > 4 { // indented code after the marker: the content starts one space in
			sp = 1
		}
		m.content = ind + n + sp
		m.first = dedent(rest, sp)
	}
	return m
}

// startsBlock says whether a line starts a block that interrupts a
// paragraph.
func startsBlock(line string) bool {
	if m := listMarker(line); m != nil && !m.empty && (!m.ordered || m.num == 1) {
		return true
	}
	return fenceOpen(line) != "" || headingLevel(line) > 0 || isRule(line) || quoteMarker(line) >= 0 || htmlStart(line)
}

func list(lines []string) (*block, int) {
	first := listMarker(lines[0])
	l := &block{kind: bList, ordered: first.ordered, start: first.num, marker: first.char, tight: true}
	i := 0
	for i < len(lines) {
		m := listMarker(lines[i])
		if m == nil || m.ordered != l.ordered || m.char != l.marker {
			break
		}
		item, n, blankEnd, loose := listItem(lines[i:], m)
		l.kids = append(l.kids, item)
		l.tight = l.tight && !loose
		i += n
		if blankEnd && i < len(lines) {
			if next := listMarker(lines[i]); next != nil && next.ordered == l.ordered && next.char == l.marker {
				l.tight = false // a blank line between items
			}
		}
	}
	return l, i
}

// listItem reads one item: its first line after the marker, then the lines
// indented to its content, blank lines, and lazy continuations of its
// paragraph. blankEnd says the item ended on blank lines; loose that a
// blank line separates two of its blocks (the list is then loose).
func listItem(lines []string, m *marker) (item *block, n int, blankEnd, loose bool) {
	var inner []string
	if !m.empty {
		inner = append(inner, m.first)
	}
	i := 1
	for ; i < len(lines); i++ {
		line := lines[i]
		switch {
		case blank(line):
			if m.empty && len(inner) == 0 {
				i++
				goto done // an item that starts blank holds nothing more
			}
			inner = append(inner, "")
			continue
		case indent(line) >= m.content:
			inner = append(inner, dedent(line, m.content))
			continue
		case len(inner) > 0 && !blank(inner[len(inner)-1]) && !startsBlock(line) && listMarker(line) == nil:
			inner = append(inner, line) // a lazy continuation line
			continue
		}
		break
	}
done:
	for len(inner) > 0 && blank(inner[len(inner)-1]) {
		inner, blankEnd = inner[:len(inner)-1], true
	}
	item = &block{kind: bItem}
	if len(inner) > 0 {
		t := inner[0]
		switch {
		case strings.HasPrefix(t, "[ ] ") || t == "[ ]":
			item.task, inner[0] = 1, strings.TrimPrefix(strings.TrimPrefix(t, "[ ]"), " ")
		case strings.HasPrefix(t, "[x] ") || strings.HasPrefix(t, "[X] ") || t == "[x]" || t == "[X]":
			item.task, inner[0] = 2, strings.TrimPrefix(t[3:], " ")
		}
	}
	item.kids = parseLines(inner)
	for j := 1; j+1 < len(inner); j++ {
		if blank(inner[j]) && !blank(inner[j+1]) && !insideCode(inner[:j]) {
			loose = true
			break
		}
	}
	return item, i, blankEnd, loose
}

// insideCode says whether lines end inside an open code fence.
func insideCode(lines []string) bool {
	fence := ""
	for _, l := range lines {
		switch f := fenceOpen(l); {
		case fence == "" && f != "":
			fence = f
		case fence != "" && strings.HasPrefix(strings.TrimSpace(l), fence) && strings.Trim(strings.TrimSpace(l), fence[:1]) == "":
			fence = ""
		}
	}
	return fence != ""
}

// htmlStart: a comment or a block-level tag starts an HTML block
// (CommonMark's kinds 2 and 6); an autolink or inline HTML does not.
func htmlStart(line string) bool {
	t := strings.TrimLeft(line, " ")
	if indent(line) > 3 || !strings.HasPrefix(t, "<") {
		return false
	}
	if strings.HasPrefix(t, "<!--") {
		return true
	}
	name := strings.TrimPrefix(t[1:], "/")
	end := strings.IndexFunc(name, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') })
	if end < 0 {
		end = len(name)
	}
	rest := name[end:]
	tag := strings.ToLower(name[:end])
	return tag != "" && strings.Contains(blockTags, " "+tag+" ") && (rest == "" || rest[0] == ' ' || rest[0] == '>' || strings.HasPrefix(rest, "/>"))
}

// blockTags are the block-level tags, space-separated (a string, not a map:
// nothing to build at start).
const blockTags = " address article aside blockquote body details dialog div dl dt dd fieldset figcaption figure " +
	"footer form h1 h2 h3 h4 h5 h6 head header hr html li main nav ol p pre section summary table tbody td tfoot th " +
	"thead tr ul script style "

func htmlBlock(lines []string) (*block, int) {
	b := &block{kind: bHTML}
	i := 0
	for ; i < len(lines) && !blank(lines[i]); i++ {
		b.lines = append(b.lines, lines[i])
	}
	return b, i
}

func paragraph(lines []string) (*block, int) {
	b := &block{kind: bParagraph, lines: []string{strings.TrimLeft(lines[0], " \t")}}
	i := 1
	for ; i < len(lines); i++ {
		line := lines[i]
		if lvl := setextLevel(line); lvl > 0 {
			return &block{kind: bHeading, level: lvl, lines: []string{strings.Join(b.lines, "\n")}}, i + 1
		}
		if blank(line) || startsBlock(line) || i+1 < len(lines) && isTableStart(line, lines[i+1]) {
			break
		}
		b.lines = append(b.lines, strings.TrimLeft(line, " \t"))
	}
	return b, i
}

// isTableStart: a row of cells over a delimiter row with as many.
func isTableStart(line, next string) bool {
	if !strings.Contains(line, "|") || indent(line) > 3 {
		return false
	}
	aligns := delimiterRow(next)
	return aligns != nil && len(cells(line)) == len(aligns)
}

// delimiterRow reads a table's delimiter row (|:--|--:|), or nil.
func delimiterRow(line string) []byte {
	if !strings.ContainsAny(line, "-") || indent(line) > 3 {
		return nil
	}
	var out []byte
	for _, c := range cells(line) {
		c = strings.TrimSpace(c)
		left, right := strings.HasPrefix(c, ":"), strings.HasSuffix(c, ":")
		if strings.Trim(c, ":") == "" || strings.Trim(strings.Trim(c, ":"), "-") != "" {
			return nil
		}
		var a byte
		switch {
		case left && right:
			a = 'c'
		case right:
			a = 'r'
		case left:
			a = 'l'
		}
		out = append(out, a)
	}
	return out
}

// cells splits a table row at its unescaped pipes, outside code spans.
func cells(line string) []string {
	t := strings.TrimSpace(line)
	t = strings.TrimPrefix(t, "|")
	if strings.HasSuffix(t, "|") && !strings.HasSuffix(t, `\|`) {
		t = t[:len(t)-1]
	}
	var out []string
	var cur strings.Builder
	ticks := 0
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c == '\\' && i+1 < len(t) && t[i+1] == '|':
			cur.WriteByte('|')
			i++
		case c == '`':
			ticks ^= 1
			cur.WriteByte(c)
		case c == '|' && ticks == 0:
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return append(out, strings.TrimSpace(cur.String()))
}

func table(lines []string) (*block, int) {
	b := &block{kind: bTable, aligns: delimiterRow(lines[1]), rows: [][]string{cells(lines[0])}}
	i := 2
	for ; i < len(lines) && !blank(lines[i]) && !startsBlock(lines[i]); i++ {
		row := cells(lines[i])
		for len(row) < len(b.aligns) {
			row = append(row, "")
		}
		b.rows = append(b.rows, row[:len(b.aligns)])
	}
	return b, i
}
