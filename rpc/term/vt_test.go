package term

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentd/agentd/rpc/term/termmd"
)

// vt is the little of a VT100 the terminal front end uses, enough to read
// the screen as a person sees it: text, carriage return and newline, the
// cursor moving up and down, erasing lines and the rest of the screen, and
// wrapping at the width. Colours are kept apart (per row, the raw text) so a
// test can check them. Lines that scroll off the top are kept, so a capture
// holds the whole session.
type vt struct {
	cols, rows int
	lines      [][]rune
	styled     []*strings.Builder // each line's text with its escape sequences
	row, col   int
	pending    []byte // an escape sequence or a rune cut by a read
}

func newVT(cols, rows int) *vt {
	return &vt{cols: cols, rows: rows, lines: [][]rune{nil}, styled: []*strings.Builder{new(strings.Builder)}}
}

func (v *vt) top() int { return max(0, len(v.lines)-v.rows) }

func (v *vt) write(b []byte) {
	b = append(v.pending, b...)
	v.pending = nil
	for len(b) > 0 {
		c := b[0]
		switch {
		case c == 0x1b:
			n := escapeLength(b)
			if n == 0 {
				v.pending = append([]byte(nil), b...)
				return
			}
			v.escape(string(b[:n]))
			b = b[n:]
			continue
		case c == '\r':
			v.col = 0
		case c == '\n':
			v.newline()
		case c == '\b':
			v.col = max(0, v.col-1)
		case c == '\t':
			v.col = min(v.cols-1, (v.col/8+1)*8)
		case c < 0x20:
		default:
			if !utf8.FullRune(b) {
				v.pending = append([]byte(nil), b...)
				return
			}
			r, size := utf8.DecodeRune(b)
			v.put(r)
			b = b[size:]
			continue
		}
		b = b[1:]
	}
}

// escapeLength is the length of the escape sequence b starts with; 0 if it
// is cut short.
func escapeLength(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	if b[1] != '[' {
		return 2
	}
	for i := 2; i < len(b); i++ {
		if b[i] >= 0x40 && b[i] <= 0x7e {
			return i + 1
		}
	}
	return 0
}

func (v *vt) newline() {
	v.row++
	for v.row >= len(v.lines) {
		v.lines = append(v.lines, nil)
		v.styled = append(v.styled, new(strings.Builder))
	}
}

func (v *vt) put(r rune) {
	w := termmd.RuneWidth(r)
	if v.col+w > v.cols {
		v.col = 0
		v.newline()
	}
	line := v.lines[v.row]
	for len(line) < v.col {
		line = append(line, ' ')
	}
	if v.col < len(line) {
		line[v.col] = r
	} else {
		line = append(line, r)
	}
	for i := 1; i < w; i++ {
		if v.col+i < len(line) {
			line[v.col+i] = 0
		} else {
			line = append(line, 0)
		}
	}
	v.lines[v.row] = line
	v.styled[v.row].WriteRune(r)
	v.col += w
}

func (v *vt) escape(seq string) {
	if len(seq) < 3 || seq[1] != '[' {
		return
	}
	final := seq[len(seq)-1]
	params := seq[2 : len(seq)-1]
	n := 1
	if p, err := strconv.Atoi(params); err == nil {
		n = p
	}
	switch final {
	case 'm':
		v.styled[v.row].WriteString(seq)
	case 'A':
		v.row = max(v.top(), v.row-n)
	case 'B':
		v.row = min(len(v.lines)-1, v.row+n)
	case 'C':
		v.col = min(v.cols-1, v.col+n)
	case 'D':
		v.col = max(0, v.col-n)
	case 'G':
		v.col = max(0, n-1)
	case 'K':
		line := v.lines[v.row]
		switch params {
		case "", "0":
			if v.col < len(line) {
				v.lines[v.row] = line[:v.col]
			}
		case "1":
			for i := 0; i < v.col && i < len(line); i++ {
				line[i] = ' '
			}
		case "2":
			v.lines[v.row] = nil
		}
	case 'J':
		if params == "" || params == "0" {
			if v.col < len(v.lines[v.row]) {
				v.lines[v.row] = v.lines[v.row][:v.col]
			}
			v.lines = v.lines[:v.row+1]
			v.styled = v.styled[:v.row+1]
			if v.col == 0 {
				v.styled[v.row].Reset()
			}
		}
	}
}

// text is every line, scrolled off or not, as a person reads them.
func (v *vt) text() string {
	var b strings.Builder
	for _, l := range v.lines {
		b.WriteString(strings.TrimRight(strings.ReplaceAll(string(l), "\x00", ""), " "))
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}

// screen is what the terminal shows now: the last rows lines.
func (v *vt) screen() string {
	lines := strings.Split(v.text(), "\n")
	if len(lines) > v.rows {
		lines = lines[len(lines)-v.rows:]
	}
	return strings.Join(lines, "\n")
}
