package termmd

import (
	"html"
	"strings"
)

// Inline Markdown: code spans, emphasis (CommonMark's delimiter rules),
// GitHub's strikethrough, links and images, autolinks, raw HTML, escapes,
// entities and line breaks.

type inlineKind int

const (
	iText inlineKind = iota
	iCode
	iEmph // level 1 italic, 2 bold
	iStrike
	iLink
	iImage
	iHTML
	iBreak // a hard line break
	iDelim // an unmatched delimiter run while parsing; text after
	iOpenBracket
)

type inline struct {
	kind  inlineKind
	text  string // text, code, html; link and image: the destination
	level int
	kids  []*inline

	// iDelim
	char              byte
	count             int
	canOpen, canClose bool
	// iOpenBracket
	image, active bool
}

// parseInline reads a paragraph's (or a heading's, a cell's) source.
func parseInline(src string) []*inline {
	p := &inlineParser{src: src}
	p.run()
	processEmphasis(&p.out, 0)
	return finish(p.out)
}

type inlineParser struct {
	src  string
	pos  int
	out  []*inline
	text strings.Builder
}

func (p *inlineParser) flush() {
	if p.text.Len() > 0 {
		p.out = append(p.out, &inline{kind: iText, text: html.UnescapeString(p.text.String())})
		p.text.Reset()
	}
}

func (p *inlineParser) add(n *inline) {
	p.flush()
	p.out = append(p.out, n)
}

func (p *inlineParser) run() {
	s := p.src
	for p.pos < len(s) {
		c := s[p.pos]
		switch {
		case c == '\\' && p.pos+1 < len(s) && s[p.pos+1] == '\n':
			p.add(&inline{kind: iBreak})
			p.pos += 2
		case c == '\\' && p.pos+1 < len(s) && isPunct(s[p.pos+1]):
			p.flush()
			p.out = append(p.out, &inline{kind: iText, text: s[p.pos+1 : p.pos+2]})
			p.pos += 2
		case c == '`':
			p.codeSpan()
		case c == '*' || c == '_' || c == '~':
			p.delimiter(c)
		case c == '[' || c == '!' && p.pos+1 < len(s) && s[p.pos+1] == '[':
			img := c == '!'
			n := 1
			if img {
				n = 2
			}
			p.add(&inline{kind: iOpenBracket, text: s[p.pos : p.pos+n], image: img, active: true})
			p.pos += n
		case c == ']':
			p.closeBracket()
		case c == '<':
			p.angle()
		case c == '\n':
			// Two spaces before a line end break the line; otherwise it is
			// a space.
			t := p.text.String()
			trimmed := strings.TrimRight(t, " ")
			p.text.Reset()
			p.text.WriteString(trimmed)
			if len(t)-len(trimmed) >= 2 {
				p.add(&inline{kind: iBreak})
			} else {
				p.text.WriteByte(' ')
			}
			p.pos++
			for p.pos < len(s) && s[p.pos] == ' ' {
				p.pos++
			}
		default:
			p.text.WriteByte(c)
			p.pos++
		}
	}
	p.flush()
}

func isPunct(c byte) bool {
	return strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", c) >= 0
}

// codeSpan reads a run of backticks and, if a run as long closes it, the
// code between them; else the run is text.
func (p *inlineParser) codeSpan() {
	s := p.src
	start := p.pos
	for p.pos < len(s) && s[p.pos] == '`' {
		p.pos++
	}
	run := s[start:p.pos]
	for i := p.pos; i < len(s); {
		j := strings.Index(s[i:], run)
		if j < 0 {
			break
		}
		j += i
		end := j + len(run)
		if end < len(s) && s[end] == '`' || j > 0 && s[j-1] == '`' {
			for end < len(s) && s[end] == '`' {
				end++
			}
			i = end
			continue
		}
		code := strings.ReplaceAll(s[p.pos:j], "\n", " ")
		if len(code) > 1 && code[0] == ' ' && code[len(code)-1] == ' ' && strings.Trim(code, " ") != "" {
			code = code[1 : len(code)-1]
		}
		p.add(&inline{kind: iCode, text: code})
		p.pos = end
		return
	}
	p.text.WriteString(run)
}

// delimiter reads a run of *, _ or ~ and notes whether it may open or
// close emphasis (left- and right-flanking, CommonMark 6.2).
func (p *inlineParser) delimiter(c byte) {
	s := p.src
	start := p.pos
	for p.pos < len(s) && s[p.pos] == c {
		p.pos++
	}
	before, after := ' ', ' '
	if start > 0 {
		before = rune(s[start-1])
	}
	if p.pos < len(s) {
		after = rune(s[p.pos])
	}
	left := !isSpace(after) && (!isPunctRune(after) || isSpace(before) || isPunctRune(before))
	right := !isSpace(before) && (!isPunctRune(before) || isSpace(after) || isPunctRune(after))
	d := &inline{kind: iDelim, char: c, count: p.pos - start, text: s[start:p.pos]}
	switch c {
	case '_':
		d.canOpen = left && (!right || isPunctRune(before))
		d.canClose = right && (!left || isPunctRune(after))
	default:
		d.canOpen, d.canClose = left, right
	}
	if c == '~' && d.count > 2 {
		d.canOpen, d.canClose = false, false
	}
	p.add(d)
}

func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' }

func isPunctRune(r rune) bool { return r < 0x80 && isPunct(byte(r)) }

// closeBracket ends a link or an image when "](" destination ")" follows
// an open bracket; otherwise the bracket is text.
func (p *inlineParser) closeBracket() {
	s := p.src
	p.flush()
	open := -1
	for i := len(p.out) - 1; i >= 0; i-- {
		if p.out[i].kind == iOpenBracket {
			open = i
			break
		}
	}
	if open < 0 || !p.out[open].active {
		if open >= 0 {
			p.out[open].kind = iText
		}
		p.text.WriteByte(']')
		p.pos++
		return
	}
	dest, end, ok := linkTail(s, p.pos+1)
	if !ok {
		p.out[open].kind = iText
		p.text.WriteByte(']')
		p.pos++
		return
	}
	img := p.out[open].image
	kids := p.out[open+1:]
	processEmphasis(&kids, 0)
	n := &inline{kind: iLink, text: dest, kids: finish(kids)}
	if img {
		n.kind = iImage
	}
	p.out = append(p.out[:open], n)
	if !img {
		// No link inside a link.
		for _, q := range p.out[:open] {
			if q.kind == iOpenBracket && !q.image {
				q.active = false
			}
		}
	}
	p.pos = end
}

// linkTail reads `(destination "title")` at i: the destination and where
// it ends.
func linkTail(s string, i int) (string, int, bool) {
	if i >= len(s) || s[i] != '(' {
		return "", 0, false
	}
	i++
	for i < len(s) && s[i] == ' ' {
		i++
	}
	var dest string
	if i < len(s) && s[i] == '<' {
		j := strings.IndexAny(s[i+1:], ">\n")
		if j < 0 || s[i+1+j] != '>' {
			return "", 0, false
		}
		dest, i = s[i+1:i+1+j], i+j+2
	} else {
		depth, start := 0, i
		for ; i < len(s); i++ {
			c := s[i]
			if c == '\\' && i+1 < len(s) {
				i++
				continue
			}
			if c == '(' {
				depth++
			} else if c == ')' {
				if depth == 0 {
					break
				}
				depth--
			} else if c == ' ' || c == '\n' || c < 0x20 {
				break
			}
		}
		dest = s[start:i]
	}
	for i < len(s) && (s[i] == ' ' || s[i] == '\n') {
		i++
	}
	if i < len(s) && (s[i] == '"' || s[i] == '\'' || s[i] == '(') {
		closeQ := s[i]
		if closeQ == '(' {
			closeQ = ')'
		}
		j := strings.IndexByte(s[i+1:], closeQ)
		if j < 0 {
			return "", 0, false
		}
		i += j + 2
		for i < len(s) && (s[i] == ' ' || s[i] == '\n') {
			i++
		}
	}
	if i >= len(s) || s[i] != ')' {
		return "", 0, false
	}
	return html.UnescapeString(unescapePunct(dest)), i + 1, true
}

func unescapePunct(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && isPunct(s[i+1]) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// angle reads an autolink (<https://…>, <a@b.c>) or raw HTML (<br>,
// </span>, <!-- … -->); else "<" is text.
func (p *inlineParser) angle() {
	s := p.src
	j := strings.IndexByte(s[p.pos:], '>')
	if j < 0 {
		p.text.WriteByte('<')
		p.pos++
		return
	}
	inner := s[p.pos+1 : p.pos+j]
	switch {
	case inner != "" && !strings.ContainsAny(inner, " <\n") && (strings.Contains(inner, "://") || strings.Contains(inner, "@") && !strings.HasPrefix(inner, "@")):
		p.add(&inline{kind: iLink, text: inner, kids: []*inline{{kind: iText, text: inner}}})
	case inner != "" && (isLetter(inner[0]) || inner[0] == '/' && len(inner) > 1 && isLetter(inner[1]) || strings.HasPrefix(inner, "!--")):
		p.add(&inline{kind: iHTML, text: s[p.pos : p.pos+j+1]})
	default:
		p.text.WriteByte('<')
		p.pos++
		return
	}
	p.pos += j + 1
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// processEmphasis matches the delimiter runs of nodes (from index bottom)
// into emphasis and strikethrough, CommonMark's algorithm: each closer,
// left to right, takes the nearest opener of its character before it.
func processEmphasis(nodes *[]*inline, bottom int) {
	ci := bottom
	for ci < len(*nodes) {
		closer := (*nodes)[ci]
		if closer.kind != iDelim || !closer.canClose || closer.count == 0 {
			ci++
			continue
		}
		matched := false
		for oi := ci - 1; oi >= bottom; oi-- {
			opener := (*nodes)[oi]
			if !opens(opener, closer) {
				continue
			}
			use, kind, level := 1, iEmph, 1
			switch {
			case closer.char == '~':
				use, kind = closer.count, iStrike
			case opener.count >= 2 && closer.count >= 2:
				use, level = 2, 2
			}
			n := &inline{kind: kind, level: level, kids: finish(append([]*inline(nil), (*nodes)[oi+1:ci]...))}
			opener.count -= use
			closer.count -= use
			opener.text, closer.text = opener.text[:opener.count], closer.text[:closer.count]
			rest := append([]*inline{n}, (*nodes)[ci:]...)
			*nodes = append((*nodes)[:oi+1], rest...)
			ci = oi + 2 // where the closer is now
			matched = true
			break
		}
		if !matched || closer.count == 0 {
			ci++
		}
	}
}

// opens says whether opener may be closed by closer.
func opens(opener, closer *inline) bool {
	switch {
	case opener.kind != iDelim || opener.char != closer.char || !opener.canOpen || opener.count == 0:
		return false
	case closer.char == '~':
		return opener.count == closer.count
	}
	// The rule of 3 (CommonMark 6.2, rules 9 and 10).
	return !((opener.canClose || closer.canOpen) && (opener.count+closer.count)%3 == 0 && (opener.count%3 != 0 || closer.count%3 != 0))
}

// finish turns what is left of delimiters and brackets into text, merging
// neighbouring texts.
func finish(nodes []*inline) []*inline {
	var out []*inline
	for _, n := range nodes {
		if n.kind == iDelim || n.kind == iOpenBracket {
			if n.text == "" {
				continue
			}
			n = &inline{kind: iText, text: n.text}
		}
		if n.kind == iText && len(out) > 0 && out[len(out)-1].kind == iText {
			out[len(out)-1] = &inline{kind: iText, text: out[len(out)-1].text + n.text}
			continue
		}
		out = append(out, n)
	}
	return out
}
