package rag

import "strings"

// A Go declaration splitter that does not build syntax trees: a small lexer
// that knows just enough Go (comments, string, rune and raw string literals,
// bracket depth, automatic semicolons) to find where each top-level
// declaration starts and ends and what it declares. go/parser did the same
// job by building a whole AST, which was a sixth of the index build.

// goDecl is one top-level declaration: lines first–last (1-based) of its
// own tokens, without the doc comment above it.
type goDecl struct {
	first, last int
	symbols     []string
	isFunc      bool
}

// goLexer walks a Go source file token by token.
type goLexer struct {
	src  string
	pos  int
	line int
	bad  bool // an unterminated literal or comment: not Go, or not finished
}

type goTok struct {
	kind byte // 'i' identifier or keyword, 'l' literal, or the punctuation byte itself; 0 at the end
	text string
	line int  // where the token starts
	end  int  // where it ends (raw strings span lines)
	nl   bool // a newline (or comment spanning one) came before this token
}

func (lx *goLexer) next() goTok {
	nl := false
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		switch {
		case c == '\n':
			nl = true
			lx.line++
			lx.pos++
		case c == ' ' || c == '\t' || c == '\r':
			lx.pos++
		case c == '/' && lx.pos+1 < len(lx.src) && lx.src[lx.pos+1] == '/':
			if i := strings.IndexByte(lx.src[lx.pos:], '\n'); i >= 0 {
				lx.pos += i
			} else {
				lx.pos = len(lx.src)
			}
		case c == '/' && lx.pos+1 < len(lx.src) && lx.src[lx.pos+1] == '*':
			end := indexFrom(lx.src, "*/", lx.pos+2)
			if end < 0 {
				lx.bad = true
				lx.pos = len(lx.src)
				return goTok{line: lx.line}
			}
			if k := strings.Count(lx.src[lx.pos:end], "\n"); k > 0 {
				lx.line += k
				nl = true
			}
			lx.pos = end + 2
		default:
			t := lx.token(nl)
			t.end = lx.line
			return t
		}
	}
	return goTok{line: lx.line, end: lx.line, nl: nl}
}

func (lx *goLexer) token(nl bool) goTok {
	start, line := lx.pos, lx.line
	c := lx.src[lx.pos]
	switch {
	case isIdentByte(c) && !(c >= '0' && c <= '9'):
		for lx.pos < len(lx.src) && isIdentByte(lx.src[lx.pos]) {
			lx.pos++
		}
		return goTok{kind: 'i', text: lx.src[start:lx.pos], line: line, nl: nl}
	case c >= '0' && c <= '9' || c == '.' && lx.pos+1 < len(lx.src) && lx.src[lx.pos+1] >= '0' && lx.src[lx.pos+1] <= '9':
		// Numbers, loosely: digits, letters, dots, and signed exponents.
		lx.pos++
		for lx.pos < len(lx.src) {
			d := lx.src[lx.pos]
			if isIdentByte(d) || d == '.' {
				lx.pos++
			} else if (d == '+' || d == '-') && isExponent(lx.src[lx.pos-1]) {
				lx.pos++
			} else {
				break
			}
		}
		return goTok{kind: 'l', line: line, nl: nl}
	case c == '"' || c == '\'':
		lx.pos++
		for lx.pos < len(lx.src) && lx.src[lx.pos] != c {
			if lx.src[lx.pos] == '\\' {
				lx.pos++
			}
			if lx.pos < len(lx.src) && lx.src[lx.pos] == '\n' {
				lx.bad = true // interpreted literals do not span lines
				return goTok{line: line}
			}
			lx.pos++
		}
		if lx.pos >= len(lx.src) {
			lx.bad = true
			return goTok{line: line}
		}
		lx.pos++
		return goTok{kind: 'l', line: line, nl: nl}
	case c == '`':
		end := indexFrom(lx.src, "`", lx.pos+1)
		if end < 0 {
			lx.bad = true
			lx.pos = len(lx.src)
			return goTok{line: line}
		}
		lx.line += strings.Count(lx.src[lx.pos:end], "\n")
		lx.pos = end + 1
		return goTok{kind: 'l', line: line, nl: nl}
	}
	lx.pos++
	// Two-character operators matter only for semicolon insertion (++, --).
	if (c == '+' || c == '-') && lx.pos < len(lx.src) && lx.src[lx.pos] == c {
		lx.pos++
		return goTok{kind: 'l', line: line, nl: nl} // ends a statement like a literal
	}
	return goTok{kind: c, line: line, nl: nl}
}

func isExponent(c byte) bool { return c == 'e' || c == 'E' || c == 'p' || c == 'P' }

func indexFrom(s, sub string, from int) int {
	if from > len(s) {
		return -1
	}
	if i := strings.Index(s[from:], sub); i >= 0 {
		return from + i
	}
	return -1
}

// endsStatement reports whether a newline after t ends a statement (Go's
// automatic semicolon rule).
func endsStatement(t goTok) bool {
	switch t.kind {
	case 'l', ')', ']', '}':
		return true
	case 'i':
		switch t.text {
		case "break", "continue", "fallthrough", "return":
			return true
		}
		return !goKeywords[t.text]
	}
	return false
}

var goKeywords = map[string]bool{"break": true, "case": true, "chan": true, "const": true, "continue": true,
	"default": true, "defer": true, "else": true, "fallthrough": true, "for": true, "func": true, "go": true,
	"goto": true, "if": true, "import": true, "interface": true, "map": true, "package": true, "range": true,
	"return": true, "select": true, "struct": true, "switch": true, "type": true, "var": true}

// goDecls lists the top-level declarations of src, with the package
// clause's line. ok is false when the lexer met something that is not Go
// (the caller falls back to blank-line blocks).
func goDecls(src string) (pkgLine int, pkg string, decls []goDecl, ok bool) {
	lx := &goLexer{src: src, line: 1}
	depth := 0
	var prev goTok
	var d *declReader
	for {
		t := lx.next()
		if lx.bad {
			return 0, "", nil, false
		}
		stmtEnd := t.kind == ';' && depth == 0 || t.kind == 0 || t.nl && depth == 0 && prev.kind != 0 && endsStatement(prev)
		if stmtEnd && d != nil {
			d.decl.last = prev.end
			decls = append(decls, d.decl)
			d = nil
		}
		if t.kind == 0 {
			break
		}
		switch t.kind {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth--; depth < 0 {
				return 0, "", nil, false
			}
		}
		if depth == 0 && t.kind == 'i' && d == nil {
			switch t.text {
			case "package":
				nt := lx.next()
				if nt.kind != 'i' {
					return 0, "", nil, false
				}
				pkgLine, pkg = t.line, nt.text
				prev = nt
				continue
			case "func", "type", "var", "const", "import":
				d = &declReader{kw: t.text, decl: goDecl{first: t.line, isFunc: t.text == "func"}, state: wantName}
				if t.text == "import" {
					d.decl.symbols = []string{"import"}
					d.state = namesDone
				}
				prev = t
				continue
			}
		}
		if d != nil {
			d.token(t, prev, depth)
		}
		prev = t
	}
	if depth != 0 {
		return 0, "", nil, false
	}
	return pkgLine, pkg, decls, true
}

// declReader picks the declared names out of one declaration's tokens.
type declReader struct {
	kw      string
	decl    goDecl
	state   int
	grouped bool   // a ( … ) group of specs
	inRecv  bool   // inside a method's receiver
	square  int    // [ depth inside the receiver
	recv    string // the receiver's type name
}

const (
	wantName  = iota // at the start of a spec, or after a comma in a name list
	afterName        // just read a name
	namesDone        // the rest of the spec: types, values, bodies
)

func (d *declReader) token(t, prev goTok, depth int) {
	if d.kw == "func" {
		d.funcToken(t, depth)
		return
	}
	if !d.grouped && d.state == wantName && len(d.decl.symbols) == 0 && t.kind == '(' && depth == 1 {
		d.grouped = true
		return
	}
	specDepth := boolInt(d.grouped)
	if d.grouped && depth == 1 && (t.kind == ';' || t.nl && endsStatement(prev)) {
		d.state = wantName // the next spec of the group
		if t.kind == ';' {
			return
		}
	}
	if depth != specDepth {
		// Brackets within a spec (type parameters, array types, calls), or
		// the group's closing parenthesis.
		if d.state == afterName {
			d.state = namesDone
		}
		return
	}
	switch d.state {
	case wantName:
		d.state = namesDone
		if t.kind == 'i' {
			if t.text != "_" {
				d.decl.symbols = append(d.decl.symbols, t.text)
			}
			d.state = afterName
		}
	case afterName:
		d.state = namesDone
		if t.kind == ',' && d.kw != "type" {
			d.state = wantName // var a, b int
		}
	}
}

func (d *declReader) funcToken(t goTok, depth int) {
	switch {
	case d.state == wantName && t.kind == '(' && depth == 1 && !d.inRecv && d.recv == "":
		d.inRecv = true
	case d.inRecv && t.kind == ')' && depth == 0:
		d.inRecv = false
	case d.inRecv && t.kind == '[':
		d.square++
	case d.inRecv && t.kind == ']':
		d.square--
	case d.inRecv && t.kind == 'i' && d.square == 0:
		d.recv = t.text // the last identifier outside type arguments names the type
	case d.state == wantName && !d.inRecv && t.kind == 'i' && depth == 0:
		name := t.text
		if d.recv != "" {
			name = d.recv + "." + name
		}
		d.decl.symbols = append(d.decl.symbols, name)
		d.state = namesDone
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
