package tools

import "strings"

// When old text matched only ignoring indentation, the model wrote its
// replacement in its own indentation (often spaces where the file has
// tabs). The replacement is re-indented to the file's: an indentation the
// model used in its old block becomes the one the file has on that line,
// and any other is converted level by level, so no line ends up with mixed
// indentation that gofmt or Python would reject.

// reindentBlock re-indents repl, written against old, to the indentation of
// matched, the file's lines old matched; fileLines are the whole file's,
// for its indentation unit.
func reindentBlock(repl, old, matched, fileLines []string) []string {
	byLead := map[string]string{}
	same := true
	base := -1
	for i, l := range old {
		if strings.TrimSpace(l) == "" || i >= len(matched) {
			continue
		}
		m, f := leadOf(l), leadOf(matched[i])
		if _, ok := byLead[m]; !ok {
			byLead[m] = f
		}
		if base < 0 {
			base = i
		}
		same = same && m == f
	}
	if same || base < 0 {
		return repl
	}
	modelUnit := unitOf(append(append([]string{}, old...), repl...))
	fileUnit := unitOf(fileLines)
	baseModel, baseFile := levelOf(leadOf(old[base]), modelUnit), levelOf(leadOf(matched[base]), fileUnit)
	out := make([]string, len(repl))
	for i, l := range repl {
		lead := leadOf(l)
		switch f, ok := byLead[lead]; {
		case strings.TrimSpace(l) == "":
			out[i] = l
		case ok:
			out[i] = f + l[len(lead):]
		default:
			lv := max(0, baseFile+levelOf(lead, modelUnit)-baseModel)
			out[i] = strings.Repeat(fileUnit, lv) + alignOf(lead, modelUnit) + l[len(lead):]
		}
	}
	return out
}

// leadOf is a line's leading spaces and tabs.
func leadOf(l string) string { return l[:len(l)-len(strings.TrimLeft(l, " \t"))] }

// unitOf guesses one level of indentation in lines: a tab if any line is
// indented with tabs, else the greatest common divisor of the space
// indentations used (4 for a lone 8, and when there is none).
func unitOf(lines []string) string {
	g := 0
	for _, l := range lines {
		lead := leadOf(l)
		if strings.TrimSpace(l) == "" || lead == "" {
			continue
		}
		if strings.HasPrefix(lead, "\t") {
			return "\t"
		}
		g = gcd(g, len(lead))
	}
	if g == 0 || g > 4 && g%4 == 0 || g > 8 {
		g = 4
	}
	return strings.Repeat(" ", g)
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// levelOf counts the whole levels of unit in lead: tabs are a level each;
// spaces count by the unit's width (a tab unit counts 4 spaces a level).
func levelOf(lead, unit string) int {
	w := len(unit)
	if unit == "\t" {
		w = 4
	}
	tabs := strings.Count(lead, "\t")
	spaces := len(lead) - tabs
	return tabs + spaces/w
}

// alignOf is what is left of lead after its whole levels: spaces that align
// a continuation line, kept as they are.
func alignOf(lead, unit string) string {
	w := len(unit)
	if unit == "\t" {
		w = 4
	}
	spaces := len(lead) - strings.Count(lead, "\t")
	return strings.Repeat(" ", spaces%w)
}
