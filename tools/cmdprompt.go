package tools

// A command run with interactive set may stop at a prompt: a y/n
// confirmation, a password, a menu, a free-text field. This file detects
// such prompts in the command's output (cmdPrompt) and turns the human's
// answer into the keys to type.

import (
	"strconv"
	"strings"

	"github.com/agentd/agentd/internal/lazy"
)

// Kinds of prompts found in an interactive command's output.
const (
	promptConfirm = "confirm"
	promptSecret  = "secret"
	promptMenu    = "menu"
	promptText    = "text"
)

// cmdPrompt is what a stalled interactive command seems to be asking.
type cmdPrompt struct {
	Kind    string
	Text    string // the question as shown, a few lines at most
	Options []Option
	keys    map[string]string // option id → bytes to type
	// auto is what to type without asking anyone; empty unless the prompt
	// is one of the safe default confirmations (see autoAnswer).
	auto string
}

var (
	ansiRe     = lazy.Regexp(`\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[()][A-Za-z0-9]|\x1b[=>78]`)
	secretRe   = lazy.Regexp(`(?i)(password|passphrase|passcode|\bpin\b|secret|token|api key)[^\n]*[:?]\s*$`)
	yesNoRe    = lazy.Regexp(`[\[(]\s*(y|Y|yes|Yes|YES)\s*/\s*(n|N|no|No|NO)\s*[\])]`)
	proceedRe  = lazy.Regexp(`(?i)ok to proceed\?\s*\(y\)\s*$`)
	menuHeadRe = lazy.Regexp(`^\s*[?✔✖]\s+.*(›|»|\(Use arrow keys\)|Use arrow-keys)`)
	markerRe   = lazy.Regexp(`^\s*(❯|>|›|→|◉|◯|○|●|\(\*\)|\( \)|-)?\s*`)
)

// cleanTerminal strips escape sequences and resolves carriage returns the
// way a terminal shows them, so prompts can be matched as text.
func cleanTerminal(s string) string {
	s = ansiRe().ReplaceAllString(s, "")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if j := strings.LastIndex(l, "\r"); j >= 0 {
			l = l[j+1:]
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}

// detectPrompt looks at the output since the last answer (cleaned) and
// says whether the command is waiting at a prompt.
func detectPrompt(out string) (cmdPrompt, bool) {
	trimmed := strings.TrimRight(out, " \t")
	if strings.TrimSpace(trimmed) == "" {
		return cmdPrompt{}, false
	}
	lines := strings.Split(strings.TrimRight(trimmed, "\n"), "\n")
	last := lines[len(lines)-1]
	if p, ok := menuPrompt(lines); ok {
		return p, true
	}
	if strings.HasSuffix(trimmed, "\n") {
		return cmdPrompt{}, false // the line is finished: not waiting for input on it
	}
	text := strings.TrimSpace(last)
	switch {
	case secretRe().MatchString(last):
		return cmdPrompt{Kind: promptSecret, Text: text}, true
	case proceedRe().MatchString(last):
		p := confirmPrompt(text)
		p.auto = "y\r"
		return p, true
	case yesNoRe().MatchString(last):
		return yesNoPrompt(text), true
	case strings.HasSuffix(text, ":") || strings.HasSuffix(text, "?") || strings.HasSuffix(text, ">"):
		return cmdPrompt{Kind: promptText, Text: context3(lines)}, true
	}
	return cmdPrompt{}, false
}

func confirmPrompt(text string) cmdPrompt {
	return cmdPrompt{
		Kind: promptConfirm, Text: text,
		Options: []Option{{OptionID: "yes", Label: "Yes"}, {OptionID: "no", Label: "No"}},
		keys:    map[string]string{"yes": "y\r", "no": "n\r"},
	}
}

// yesNoPrompt handles [y/N], [Y/n], (y/n): a capital letter marks the
// default. A default of yes is answered automatically (see autoAnswer).
func yesNoPrompt(text string) cmdPrompt {
	m := yesNoRe().FindStringSubmatch(text)
	p := confirmPrompt(text)
	yes, no := m[1], m[2]
	if yes[0] == 'Y' && no[0] == 'n' {
		p.auto = "y\r"
		p.Options[0].Description = "default"
	} else if no[0] == 'N' && yes[0] == 'y' {
		p.Options[1].Description = "default"
	}
	return p
}

// menuPrompt recognises inquirer/prompts-style selection lists: a "? …"
// question line followed by choices, one marked as current.
func menuPrompt(lines []string) (cmdPrompt, bool) {
	from := max(0, len(lines)-20)
	for i := len(lines) - 1; i >= from; i-- {
		if !menuHeadRe().MatchString(lines[i]) {
			continue
		}
		var choices []string
		cur := 0
		for _, l := range lines[i+1:] {
			if strings.TrimSpace(l) == "" {
				continue
			}
			m := markerRe().FindString(l)
			if strings.Contains(m, "❯") || strings.Contains(m, ">") || strings.Contains(m, "●") || strings.Contains(m, "◉") {
				cur = len(choices)
			}
			choices = append(choices, strings.TrimSpace(l[len(m):]))
		}
		if len(choices) < 2 {
			return cmdPrompt{}, false // a text field with a default, handled as text
		}
		p := cmdPrompt{Kind: promptMenu, Text: strings.TrimSpace(lines[i]), keys: map[string]string{}}
		for k, c := range choices {
			id := strconv.Itoa(k)
			p.Options = append(p.Options, Option{OptionID: id, Label: c})
			p.keys[id] = arrows(k-cur) + "\r"
		}
		return p, true
	}
	return cmdPrompt{}, false
}

func arrows(n int) string {
	if n >= 0 {
		return strings.Repeat("\x1b[B", n)
	}
	return strings.Repeat("\x1b[A", -n)
}

// context3 is the last three non-empty lines: a text prompt often has its
// explanation just above it.
func context3(lines []string) string {
	var out []string
	for i := len(lines) - 1; i >= 0 && len(out) < 3; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			out = append([]string{strings.TrimSpace(lines[i])}, out...)
		}
	}
	return strings.Join(out, "\n")
}

// keysFor turns the human's answer into what to type at the prompt.
func (p cmdPrompt) keysFor(a Answer) string {
	if k, ok := p.keys[a.OptionID]; ok && a.OptionID != "" {
		return k
	}
	if p.Kind == promptConfirm {
		switch strings.ToLower(strings.TrimSpace(a.Text)) {
		case "y", "yes":
			return p.keys["yes"]
		case "n", "no":
			return p.keys["no"]
		}
	}
	if p.Kind == promptMenu {
		for _, o := range p.Options {
			if strings.EqualFold(o.Label, strings.TrimSpace(a.Text)) {
				return p.keys[o.OptionID]
			}
		}
	}
	return a.Text + "\r"
}
