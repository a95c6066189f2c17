package term

import (
	"strings"
	"unicode"

	"github.com/agentd/agentd/rpc/term/termmd"
)

// lineEdit is the text of a question's answer and the cursor in it, edited
// with the keys a shell's line editor uses: the arrows, Home/End (Ctrl-A,
// Ctrl-E), Delete, Ctrl-U and Ctrl-K (to the start, to the end), Ctrl-W (the
// word before the cursor). A typo early in a long answer is fixed where it
// is, not by erasing everything after it.
type lineEdit struct {
	text []rune
	pos  int // the cursor: text[:pos] is before it
}

// apply edits the line with k; it says whether k was an editing key.
func (l *lineEdit) apply(k key) bool {
	switch k.kind {
	case keyRune:
		l.insert(k.r)
	case keyTab:
		l.insert(' ')
	case keyBackspace:
		if l.pos > 0 {
			l.text = append(l.text[:l.pos-1], l.text[l.pos:]...)
			l.pos--
		}
	case keyDelete:
		if l.pos < len(l.text) {
			l.text = append(l.text[:l.pos], l.text[l.pos+1:]...)
		}
	case keyLeft:
		l.pos = max(0, l.pos-1)
	case keyRight:
		l.pos = min(len(l.text), l.pos+1)
	case keyHome:
		l.pos = 0
	case keyEnd:
		l.pos = len(l.text)
	case keyCtrlU:
		l.text, l.pos = l.text[l.pos:], 0
	case keyCtrlK:
		l.text = l.text[:l.pos]
	case keyCtrlW:
		l.killWord()
	default:
		return false
	}
	return true
}

func (l *lineEdit) insert(r rune) {
	l.text = append(l.text[:l.pos], append([]rune{r}, l.text[l.pos:]...)...)
	l.pos++
}

// killWord deletes the word before the cursor and the spaces after it.
func (l *lineEdit) killWord() {
	i := l.pos
	for i > 0 && unicode.IsSpace(l.text[i-1]) {
		i--
	}
	for i > 0 && !unicode.IsSpace(l.text[i-1]) {
		i--
	}
	l.text = append(l.text[:i], l.text[l.pos:]...)
	l.pos = i
}

// view is what fits in width columns with the cursor in sight, and how many
// columns the cursor sits left of the view's end. A hidden line shows a dot
// per character.
func (l *lineEdit) view(width int, hidden bool) (string, int) {
	cells := make([]string, len(l.text))
	for i, r := range l.text {
		cells[i] = string(r)
		if hidden {
			cells[i] = "•"
		}
	}
	width = max(width, 1)
	// The window ends at the cursor or later, and starts as late as it must.
	start, end := 0, len(cells)
	for start < l.pos && termmd.Width(strings.Join(cells[start:l.pos], "")) > width-1 {
		start++
	}
	for end > l.pos && termmd.Width(strings.Join(cells[start:end], "")) > width {
		end--
	}
	return strings.Join(cells[start:end], ""), termmd.Width(strings.Join(cells[l.pos:end], ""))
}
