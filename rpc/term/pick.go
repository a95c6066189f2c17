package term

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

func plainLabel(label string) string {
	if i := strings.Index(label, "\x1b["); i >= 0 {
		return label[:i]
	}
	return label
}

// pick shows items with the first highlighted and waits for a choice: the
// arrows and Enter, an item's key (any case), or its number. A key that
// picks nothing says so and waits again. Ctrl-D is errSkipped.
func (pr *prompter) pick(items []choiceItem, done <-chan struct{}, extra string) (choiceItem, error) {
	cur, warn := 0, ""
	keys := keyList(items)
	pr.kb.discard() // only keys typed from now on answer
	for {
		pr.sc.setPrompt(pr.pickerLines(items, cur, nil, warn, extra))
		k, err := pr.kb.next(done)
		if err != nil {
			return choiceItem{}, err
		}
		warn = ""
		switch k.kind {
		case keyUp:
			cur = (cur + len(items) - 1) % len(items)
		case keyDown, keyTab:
			cur = (cur + 1) % len(items)
		case keyEnter:
			return items[cur], nil
		case keyCtrlD:
			return choiceItem{}, errSkipped
		case keyCtrlC:
			return choiceItem{}, errInterrupted
		case keyRune:
			if i := itemFor(items, k.r); i >= 0 {
				return items[i], nil
			}
			warn = fmt.Sprintf("%q is not an answer here: press %s", string(k.r), keys)
		default:
			warn = "press " + keys
		}
	}
}

// pickMany is pick with several answers: Space (or an item's number)
// marks, Enter sends the marked ones.
func (pr *prompter) pickMany(items []choiceItem, done <-chan struct{}) ([]choiceItem, error) {
	cur, warn := 0, ""
	marked := make([]bool, len(items))
	pr.kb.discard()
	for {
		pr.sc.setPrompt(pr.pickerLines(items, cur, marked, warn, "Space: mark · Enter: send"))
		k, err := pr.kb.next(done)
		if err != nil {
			return nil, err
		}
		warn = ""
		switch k.kind {
		case keyUp:
			cur = (cur + len(items) - 1) % len(items)
		case keyDown, keyTab:
			cur = (cur + 1) % len(items)
		case keyEnter:
			var out []choiceItem
			for i, m := range marked {
				if m {
					out = append(out, items[i])
				}
			}
			if len(out) == 0 {
				warn = "mark at least one with Space"
				continue
			}
			return out, nil
		case keyCtrlD:
			return nil, errSkipped
		case keyCtrlC:
			return nil, errInterrupted
		case keyRune:
			if k.r == ' ' {
				marked[cur] = !marked[cur]
			} else if i := itemFor(items, k.r); i >= 0 {
				marked[i], cur = !marked[i], i
			} else {
				warn = fmt.Sprintf("%q is not an answer here", string(k.r))
			}
		}
	}
}

// itemFor finds the item a key picks: its letter in either case, or its
// number.
func itemFor(items []choiceItem, r rune) int {
	for i, it := range items {
		if it.key != 0 && unicode.ToLower(r) == it.key {
			return i
		}
	}
	if n, err := strconv.Atoi(string(r)); err == nil && n >= 1 && n <= len(items) {
		return n - 1
	}
	return -1
}

func keyList(items []choiceItem) string {
	var keys []string
	for i, it := range items {
		if it.key != 0 {
			keys = append(keys, string(it.key))
		} else {
			keys = append(keys, strconv.Itoa(i+1))
		}
	}
	if len(keys) == 1 {
		return keys[0]
	}
	return strings.Join(keys[:len(keys)-1], ", ") + " or " + keys[len(keys)-1]
}

func (pr *prompter) pickerLines(items []choiceItem, cur int, marked []bool, warn, extra string) []string {
	lines := make([]string, 0, len(items)+1)
	for i, it := range items {
		k := strconv.Itoa(i + 1)
		if it.key != 0 {
			k = string(it.key)
		}
		box := ""
		if marked != nil {
			box = "[ ] "
			if marked[i] {
				box = "[x] "
			}
		}
		line := "  " + k + "  " + box + it.label
		if i == cur {
			line = pr.sc.style("1;36", "› "+k+"  "+box+plainLabel(it.label))
			if !pr.sc.colour {
				line = "> " + k + "  " + box + it.label
			}
		}
		lines = append(lines, line)
	}
	hint := "↑↓ Enter, or a key"
	if extra != "" {
		hint += " · " + extra
	}
	hint += " · Ctrl-C: cancel the run"
	if n := pr.pending(); n > 1 {
		hint = fmt.Sprintf("%d questions wait · ", n) + hint
	}
	if warn != "" {
		return append(lines, pr.sc.style("31", "  "+warn))
	}
	return append(lines, pr.sc.style("2", "  "+hint))
}

// yesNo asks one thing more; only y (any case) says yes.
func (pr *prompter) yesNo(question string, done <-chan struct{}) (bool, error) {
	pr.kb.discard()
	pr.sc.setPrompt([]string{pr.sc.style("33", "  "+question)})
	k, err := pr.kb.next(done)
	switch {
	case err != nil:
		return false, err
	case k.kind == keyCtrlC:
		return false, errInterrupted
	}
	return k.kind == keyRune && unicode.ToLower(k.r) == 'y', nil
}

// readLine reads a line of text: Enter sends it (the default when empty),
// the line-editing keys of lineEdit edit it, Ctrl-D skips (errSkipped), and
// a hidden one shows a dot per character.
func (pr *prompter) readLine(label, def string, hidden bool, done <-chan struct{}) (string, error) {
	var line lineEdit
	hint := "Enter: send · Ctrl-D: skip · Ctrl-C: cancel the run"
	if def != "" {
		hint = "Enter: send (empty: " + def + ") · Ctrl-D: skip · Ctrl-C: cancel the run"
	}
	if label != "" {
		hint = label + " · " + hint
	}
	pr.kb.discard()
	for {
		shown, back := line.view(pr.sc.width()-3, hidden)
		pr.sc.setPromptCursor([]string{pr.sc.style("2", "  "+hint), pr.sc.style("1;36", "> ") + shown}, back)
		k, err := pr.kb.next(done)
		if err != nil {
			return "", err
		}
		if line.apply(k) {
			continue
		}
		switch k.kind {
		case keyEnter:
			if len(line.text) == 0 && def != "" {
				return def, nil
			}
			return string(line.text), nil
		case keyCtrlD:
			return "", errSkipped
		case keyCtrlC:
			return "", errInterrupted
		}
	}
}
