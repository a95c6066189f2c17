package termmd

import "strings"

// highlight colours code in language lang (a fence's info string: "go",
// "bash", "py" …) and returns its lines. A language it does not know is
// returned as it is.
func highlight(code, lang string) []string {
	lexer := lexerFor(lang)
	if lexer == nil {
		return strings.Split(code, "\n")
	}
	var lines []string
	var line strings.Builder
	for _, t := range lexer.tokens(code) {
		sgr := colourOf(t.t)
		for i, part := range strings.Split(t.text, "\n") {
			if i > 0 {
				lines = append(lines, line.String())
				line.Reset()
			}
			if part == "" {
				continue
			}
			if sgr == "" {
				line.WriteString(part)
			} else {
				line.WriteString("\x1b[" + sgr + "m" + part + reset)
			}
		}
	}
	lines = append(lines, line.String())
	// A final newline makes no line of its own.
	for len(lines) > 1 && lines[len(lines)-1] == "" && !strings.HasSuffix(code, "\n") {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// colourOf maps a token to the terminal's basic colours, which follow the
// user's theme.
func colourOf(t tokenType) string {
	switch t {
	case tInserted, tString, tChar:
		return "32"
	case tDeleted:
		return "31"
	case tHeading:
		return "1"
	case tSubheading, tVariable, tBuiltin:
		return "36"
	case tTag, tFunction:
		return "34"
	case tKeyword:
		return "35"
	case tComment:
		return "2"
	case tNumber:
		return "33"
	}
	return ""
}
