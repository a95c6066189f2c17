package termmd

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokenType is what a lexer tells apart: each has its colour (colourOf).
type tokenType int

const (
	tText tokenType = iota
	tComment
	tString
	tChar // a character literal: a string's colour, a token of its own
	tNumber
	tKeyword
	tBuiltin // built-in names, types and constants
	tFunction
	tName
	tVariable
	tTag // a JSON or YAML key
	tHeading
	tSubheading
	tInserted
	tDeleted
)

// A rule matches at the current position of the code: the first of a
// lexer's rules that matches makes the next token. Rules are regexps
// anchored there (Go's: compiled on first use, as the whole lexer is),
// with what Go's regexps do not have checked around the match: where a
// token may start (the start of a line, of a word, after a space) and
// what must follow it.
type rule struct {
	re   *regexp.Regexp
	t    tokenType
	at   func(code string, pos int) bool        // where the token may start; nil: anywhere
	then func(code string, end int) bool        // what must follow it; nil: anything
	end  func(code string, pos int) (int, bool) // a match written by hand, instead of re
}

type lexer []rule

func newRule(pattern string, t tokenType) rule {
	return rule{re: regexp.MustCompile(`\A(?m:` + pattern + `)`), t: t}
}

// wordStart: the token starts a word (regexp2's \b before it, which looks
// at the code before the position).
func wordStart(code string, pos int) bool {
	if pos == 0 {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(code[:pos])
	return !isWordRune(r)
}

func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// afterSpace: the start of the code, or after a space (a shell's or
// YAML's comment starts a word).
func afterSpace(extra string) func(string, int) bool {
	return func(code string, pos int) bool {
		if pos == 0 {
			return true
		}
		r, _ := utf8.DecodeLastRuneInString(code[:pos])
		return unicode.IsSpace(r) || strings.ContainsRune(extra, r)
	}
}

func lineStart(code string, pos int) bool { return pos == 0 || code[pos-1] == '\n' }

// followedBy: after optional spaces, the code goes on with c.
func followedBy(c byte) func(string, int) bool {
	return func(code string, end int) bool {
		rest := strings.TrimLeftFunc(code[end:], unicode.IsSpace)
		return rest != "" && rest[0] == c
	}
}

// tokens splits code into typed tokens, neighbours of one type merged.
func (l lexer) tokens(code string) []token {
	code = strings.ReplaceAll(code, "\r\n", "\n")
	code = strings.ReplaceAll(code, "\r", "\n")
	var out []token
	for pos := 0; pos < len(code); {
		t, n := l.next(code, pos)
		if k := len(out) - 1; k >= 0 && out[k].t == t && len(out[k].text) < 8192 {
			out[k].text += code[pos : pos+n]
		} else {
			out = append(out, token{t, code[pos : pos+n]})
		}
		pos += n
	}
	return out
}

type token struct {
	t    tokenType
	text string
}

// next is the token at pos: its type and length (never 0).
func (l lexer) next(code string, pos int) (tokenType, int) {
	for _, r := range l {
		if r.at != nil && !r.at(code, pos) {
			continue
		}
		var end int
		if r.end != nil {
			e, ok := r.end(code, pos)
			if !ok {
				continue
			}
			end = e
		} else {
			loc := r.re.FindStringIndex(code[pos:])
			if loc == nil || loc[1] == 0 {
				continue
			}
			end = pos + loc[1]
		}
		if r.then != nil && !r.then(code, end) {
			continue
		}
		return r.t, end - pos
	}
	_, n := utf8.DecodeRuneInString(code[pos:])
	return tText, n
}
