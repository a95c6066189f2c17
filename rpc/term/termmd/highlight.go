package termmd

import (
	"strings"

	"github.com/alecthomas/chroma/v2"
)

// highlight colours code in language lang (a fence's info string: "go",
// "bash", "py" …) and returns its lines. A language it does not know is
// returned as it is.
func highlight(code, lang string) []string {
	lexer := lexerFor(lang)
	if lexer == nil {
		return strings.Split(code, "\n")
	}
	it, err := lexer.Tokenise(nil, code)
	if err != nil {
		return strings.Split(code, "\n")
	}
	var lines []string
	var line strings.Builder
	for t := it(); t != chroma.EOF; t = it() {
		sgr := colourOf(t.Type)
		for i, part := range strings.Split(t.Value, "\n") {
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
	// Lexers may add a final newline.
	for len(lines) > 1 && lines[len(lines)-1] == "" && !strings.HasSuffix(code, "\n") {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// colourOf maps a token to the terminal's basic colours, which follow the
// user's theme.
func colourOf(t chroma.TokenType) string {
	switch {
	case t == chroma.GenericInserted:
		return "32"
	case t == chroma.GenericDeleted:
		return "31"
	case t == chroma.GenericHeading:
		return "1"
	case t == chroma.GenericSubheading:
		return "36"
	case t == chroma.NameTag:
		return "34"
	case t == chroma.NameVariable:
		return "36"
	case t == chroma.NameFunction:
		return "34"
	case t == chroma.NameBuiltin, t == chroma.KeywordType, t == chroma.KeywordConstant:
		return "36"
	case t.InCategory(chroma.Keyword):
		return "35"
	case t.InCategory(chroma.Comment):
		return "2"
	case t.InSubCategory(chroma.LiteralString):
		return "32"
	case t.InSubCategory(chroma.LiteralNumber):
		return "33"
	}
	return ""
}
