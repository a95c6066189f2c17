package termmd

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// reset ends every style.
const reset = "\x1b[0m"

// RuneWidth is how many columns r takes on a terminal: two for East Asian
// wide characters, none for combining marks and controls.
func RuneWidth(r rune) int {
	switch {
	case r < 0x20 || r == 0x7f:
		return 0
	case r < 0x300:
		return 1
	case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || r == 0x200b:
		return 0
	case eastAsianWide(r):
		return 2
	}
	return 1
}

// Width is how many columns s takes, escape sequences excluded.
func Width(s string) int {
	w := 0
	for i := 0; i < len(s); {
		if n := escapeLen(s[i:]); n > 0 {
			i += n
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		w += RuneWidth(r)
		i += size
	}
	return w
}

// Plain is s without escape sequences and other control characters (tabs
// kept), as a command's output must be before it goes in a layout: what a
// terminal shows of a line rewritten with "\r" is what follows the last one.
func Plain(s string) string {
	if i := strings.LastIndexByte(strings.TrimRight(s, "\r"), '\r'); i >= 0 {
		s = s[i+1:]
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if n := escapeLen(s[i:]); n > 0 {
			i += n
			continue
		}
		if c := s[i]; c < 0x20 && c != '\t' || c == 0x7f {
			i++
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// Truncate cuts s to at most width columns, ending it with "…" when cut
// and closing any style left open.
func Truncate(s string, width int) string {
	if Width(s) <= width {
		return s
	}
	if width <= 0 {
		return ""
	}
	var b strings.Builder
	w, styled := 0, false
	for i := 0; i < len(s); {
		if n := escapeLen(s[i:]); n > 0 {
			b.WriteString(s[i : i+n])
			styled = true
			i += n
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		rw := RuneWidth(r)
		if w+rw > width-1 {
			break
		}
		b.WriteRune(r)
		w += rw
		i += size
	}
	b.WriteString("…")
	if styled {
		b.WriteString(reset)
	}
	return b.String()
}

// escapeLen is the length of the escape sequence s starts with (CSI or
// OSC), or 0.
func escapeLen(s string) int {
	if len(s) < 2 || s[0] != 0x1b {
		return 0
	}
	switch s[1] {
	case '[':
		for i := 2; i < len(s); i++ {
			if s[i] >= 0x40 && s[i] <= 0x7e {
				return i + 1
			}
		}
	case ']':
		for i := 2; i < len(s); i++ {
			if s[i] == 0x07 {
				return i + 1
			}
			if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
		}
	}
	return len(s)
}

// wrap lays text out in lines of at most width columns, breaking at spaces
// (a word longer than a line is cut), and at "\n". A style open at a break
// is closed at the end of the line and opened again on the next, so a
// prefix put before a line never takes it.
func wrap(text string, width int) []string {
	width = max(width, 8)
	w := wrapper{width: width}
	for _, para := range strings.Split(text, "\n") {
		w.paragraph(para)
	}
	return w.lines
}

type wrapper struct {
	width  int
	lines  []string
	line   strings.Builder
	col    int
	active string // the escape sequences in force since the last reset
	space  string // spaces seen after the last word, not yet written
	escs   string // escape sequences seen after them, not yet written
}

func (w *wrapper) paragraph(s string) {
	w.line.WriteString(w.active)
	for i := 0; i < len(s); {
		if n := escapeLen(s[i:]); n > 0 {
			seq := s[i : i+n]
			if w.space == "" {
				w.line.WriteString(seq) // it closes or opens at the last word
			} else {
				w.escs += seq // it opens at the next word
			}
			if seq == reset {
				w.active = ""
			} else if strings.HasSuffix(seq, "m") {
				w.active += seq
			}
			i += n
			continue
		}
		if s[i] == ' ' {
			w.space += " "
			i++
			continue
		}
		end := i
		for end < len(s) && s[end] != ' ' && escapeLen(s[end:]) == 0 {
			_, size := utf8.DecodeRuneInString(s[end:])
			end += size
		}
		w.word(s[i:end])
		i = end
	}
	w.breakLine()
}

func (w *wrapper) word(word string) {
	ww := Width(word)
	if w.col > 0 && w.col+len(w.space)+ww > w.width {
		w.escs = ""
		w.breakLine()
		w.line.WriteString(w.active)
	} else {
		w.line.WriteString(w.space + w.escs)
		w.col += len(w.space)
	}
	w.space, w.escs = "", ""
	for w.col+ww > w.width {
		// A word longer than a line (w.col is 0 here): cut it where the
		// line ends.
		cut, cw := 0, 0
		for cut < len(word) {
			r, size := utf8.DecodeRuneInString(word[cut:])
			if cut > 0 && cw+RuneWidth(r) > w.width {
				break
			}
			cw += RuneWidth(r)
			cut += size
		}
		w.line.WriteString(word[:cut])
		word = word[cut:]
		ww = Width(word)
		w.breakLine()
		w.line.WriteString(w.active)
	}
	w.line.WriteString(word)
	w.col += ww
}

// breakLine ends the line, closing the style it ends in.
func (w *wrapper) breakLine() {
	w.line.WriteString(w.escs)
	line := w.line.String()
	if styleOpen(line) {
		line += reset
	}
	w.lines = append(w.lines, line)
	w.line.Reset()
	w.col, w.space, w.escs = 0, "", ""
}

// styleOpen reports whether s ends with a style in force: its last SGR
// sequence is not a reset.
func styleOpen(s string) bool {
	open := false
	for i := 0; i < len(s); i++ {
		if n := escapeLen(s[i:]); n > 0 {
			if seq := s[i : i+n]; strings.HasSuffix(seq, "m") {
				open = seq != reset && seq != "\x1b[m"
			}
			i += n - 1
		}
	}
	return open
}

// eastAsianWide: the scripts whose characters take two columns.
func eastAsianWide(r rune) bool {
	return r >= 0x1100 && unicode.In(r, unicode.Hiragana, unicode.Katakana, unicode.Han, unicode.Lm, unicode.Hangul)
}
