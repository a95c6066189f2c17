package term

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/rpc/term/termmd"
)

// press applies keys typed as the terminal sends them.
func (l *lineEdit) press(s string) {
	keys, _ := parseKeys([]byte(s), time.Now())
	for _, k := range keys {
		l.apply(k)
	}
}

func TestLineEdit(t *testing.T) {
	for _, c := range []struct {
		keys, text string
		pos        int
	}{
		{"like gren\x1b[De", "like green", 9},
		{"like green\x1b[HI \x1b[F!", "I like green!", 13},
		{"abc\x01\x1b[3~", "bc", 0},                                     // Ctrl-A, Delete
		{"abc\x1b[1~x\x1b[4~y", "xabcy", 5},                             // VT220 Home and End
		{"one two three\x02\x02\x02\x02\x02\x0b", "one two ", 8},        // Ctrl-B, Ctrl-K
		{"one two three\x1b[D\x1b[D\x1b[D\x1b[D\x1b[D\x15", "three", 0}, // Ctrl-U kills before the cursor only
		{"one two  \x17", "one ", 4},                                    // Ctrl-W takes the word and the spaces after it
		{"one two\x1b[D\x1b[D\x1b[D\x17", "two", 0},                     // ...before the cursor
		{"ab\x1b[D\x1b[D\x1b[D\x7f\x1b[C\x1b[C\x1b[C\x1b[3~", "ab", 2},  // no move or delete past the ends
		{"ab\x1b[D\x7f", "b", 0},
		{"a\tb", "a b", 3},
	} {
		var l lineEdit
		l.press(c.keys)
		assert.Equal(t, c.text, string(l.text), "%q", c.keys)
		assert.Equal(t, c.pos, l.pos, "%q", c.keys)
	}
}

// The view keeps the cursor in sight: a long line scrolls under it, and the
// cursor's offset from the view's end is where the terminal puts it.
func TestLineEditView(t *testing.T) {
	l := lineEdit{text: []rune("0123456789"), pos: 10}
	shown, back := l.view(20, false)
	assert.Equal(t, "0123456789", shown)
	assert.Equal(t, 0, back)

	l.pos = 3
	shown, back = l.view(20, false)
	assert.Equal(t, "0123456789", shown)
	assert.Equal(t, 7, back)

	l.pos = 10
	shown, back = l.view(6, false)
	assert.Equal(t, "56789", shown, "the end, with a column left for the cursor")
	assert.Equal(t, 0, back)

	l.pos = 2
	shown, back = l.view(6, false)
	assert.Equal(t, "012345", shown, "the start when the cursor is there")
	assert.Equal(t, 4, back)

	l = lineEdit{text: []rune("日本語テキスト"), pos: 7}
	shown, back = l.view(7, false)
	assert.Equal(t, "キスト", shown, "wide characters count twice")
	assert.Equal(t, 0, back)

	l = lineEdit{text: []rune("secret"), pos: 3}
	shown, back = l.view(20, true)
	assert.Equal(t, "••••••", shown)
	assert.Equal(t, 3, back)
}

func TestParseEditingKeys(t *testing.T) {
	keys, _ := parseKeys([]byte("\x1b[H\x1b[F\x1bOH\x1bOF\x1b[1~\x1b[4~\x1b[7~\x1b[8~\x1b[3~\x1b[5~\x01\x05\x02\x06\x0b"), time.Now())
	var kinds []keyKind
	for _, k := range keys {
		kinds = append(kinds, k.kind)
	}
	assert.Equal(t, []keyKind{keyHome, keyEnd, keyHome, keyEnd, keyHome, keyEnd, keyHome, keyEnd, keyDelete, keyOther,
		keyHome, keyEnd, keyLeft, keyRight, keyCtrlK}, kinds)
}

// A typo early in an answer is fixed where it is: the arrows move the
// cursor (drawn there on the screen), Home and End jump, and what is sent is
// the edited line.
func TestRunQuestionLineEditing(t *testing.T) {
	srv := scripted(t,
		modeltest.Turn{Match: modeltest.Match{LastUser: "ask"}, Reply: call("q1", "ask_user", map[string]string{"question": "Which colour?"})},
		modeltest.Turn{Match: modeltest.Match{AfterTool: "ask_user", LastTool: "I like green!"}, Reply: text("Green it is.")})
	term := startTerminal(t, srv.URL, "ask me")
	term.waitForScreen("Enter: send")
	term.press("like gren")
	term.waitForScreen("> like gren")
	term.press("\x1b[D")
	term.await("the cursor one column left of the end", func() bool { return term.cursorBack() == 1 })
	term.press("e\x1b[HI \x1b[F!")
	term.waitForScreen("> I like green!")
	term.press("\r")
	term.waitFor("Green it is.")
	assert.Equal(t, ExitCompleted, term.exitCode())
}

// cursorBack is how many columns the cursor sits left of the end of the
// text on its line.
func (term *terminal) cursorBack() int {
	term.mu.Lock()
	defer term.mu.Unlock()
	v := term.vt
	line := strings.TrimRight(strings.ReplaceAll(string(v.lines[v.row]), "\x00", ""), " ")
	return len([]rune(line)) - v.col
}

func TestWrapWords(t *testing.T) {
	assert.Equal(t, []string{"runs in the", "workspace-write", "sandbox, no", "network"},
		wrapWords("runs in the workspace-write sandbox, no network", 15))
	assert.Equal(t, []string{"a", "abcdefghij", "klmno b"}, wrapWords("a abcdefghijklmno b", 10), "a long word is cut")
	assert.Equal(t, []string{"one", "", "two"}, wrapWords("one\n\ntwo", 20), "the text's own breaks stay")
	for _, l := range wrapWords("日本語のテキストはとても長いのでここで折り返します", 10) {
		assert.LessOrEqual(t, termmd.Width(l), 10, l)
	}
}
