package policy

import (
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// word is one shell word as the policy sees it: its value after quote
// removal, and what the shell may still do to it when the line runs.
type word struct {
	// val is the value the program receives when lit; otherwise the word as
	// written, quotes removed, with its expansions shown ($X, $(…)).
	val string
	// lit: no expansion, no glob, no brace expansion: the program gets
	// exactly val, as one argument.
	lit bool
	// glob: an unquoted *, ?, [ or brace expansion: the shell replaces the
	// word with file names (workspace content, so untrusted), 0..n of them.
	glob bool
	// split: an unquoted expansion: 0..n arguments of unknown content.
	split bool
	// subst: a command or process substitution: a program's output.
	subst bool
	// tilde: starts with an unquoted ~ (home directories).
	tilde bool
	// params are the variables the word expands.
	params []string
	// arith holds the arithmetic expansions in the word, checked as
	// evaluation contexts.
	arith []*syntax.ArithmExp
	// exps are the parameter expansions, checked for ${!x}, ${x@P},
	// subscripts and slices.
	exps []*syntax.ParamExp
	// lead is the literal start of the word, up to its first expansion or
	// glob character: what is known of it before the line runs. A word
	// whose lead is empty may reach the program as any option.
	lead string
	// pos and end are the word's byte offsets in its source; located says
	// they are real (a word the parser read, not one the analysis made).
	pos, end int
	located  bool
	// text is the word for rule patterns: val quoted when needed, or the
	// source as written when it is not literal.
	text string
}

// multi reports whether the word may become several arguments (or none).
func (w word) multi() bool { return w.glob || w.split }

// braceRe finds an unquoted brace expansion: {a,b} or {1..3}.
var braceRe = regexp.MustCompile(`\{[^{}]*(,|\.\.)[^{}]*\}`)

// decodeWord removes quotes and escapes as bash would, and records what
// expansions remain. src is the source the word was parsed from, for
// rule text.
func decodeWord(w *syntax.Word, src string) word {
	out := word{lit: true}
	if w != nil && src != "" {
		out.pos, out.end, out.located = int(w.Pos().Offset()), int(w.End().Offset()), true
	}
	if w == nil {
		out.text = "''"
		return out
	}
	var b, unquoted strings.Builder
	first, leadDone := true, false
	stop := func() {
		if !leadDone {
			out.lead, leadDone = b.String(), true
		}
	}
	var part func(p syntax.WordPart, quoted bool)
	part = func(p syntax.WordPart, quoted bool) {
		switch p := p.(type) {
		case *syntax.Lit:
			if quoted {
				b.WriteString(unescapeDouble(p.Value))
				unquoted.WriteString(strings.Repeat("_", len(p.Value)))
				break
			}
			if first && strings.HasPrefix(p.Value, "~") {
				out.tilde = true
			}
			v, g, u := unescapeBare(p.Value)
			if g >= 0 {
				b.WriteString(v[:g])
				stop()
				out.glob = true
			}
			b.WriteString(v[max(g, 0):])
			unquoted.WriteString(u)
		case *syntax.SglQuoted:
			v := p.Value
			if p.Dollar {
				if s, err := expand.Literal(nil, &syntax.Word{Parts: []syntax.WordPart{p}}); err == nil {
					v = s
				} else {
					out.lit = false
				}
			}
			b.WriteString(v)
			unquoted.WriteString(strings.Repeat("_", len(v)))
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				part(q, true)
			}
		case *syntax.ParamExp:
			out.lit = false
			stop()

			out.split = out.split || !quoted
			out.exps = append(out.exps, p)
			name := "?"
			if p.Param != nil {
				name = p.Param.Value
			}
			out.params = append(out.params, name)
			b.WriteString("$" + name)
			unquoted.WriteString("_")
			if p.Exp != nil && p.Exp.Word != nil {
				inner := decodeWord(p.Exp.Word, src)
				out.params = append(out.params, inner.params...)
				out.arith = append(out.arith, inner.arith...)
				out.exps = append(out.exps, inner.exps...)
				out.subst = out.subst || inner.subst
			}
		case *syntax.CmdSubst:
			stop()
			out.lit, out.subst = false, true
			out.split = out.split || !quoted
			b.WriteString("$(…)")
			unquoted.WriteString("_")
		case *syntax.ProcSubst:
			stop()
			out.lit, out.subst = false, true
			b.WriteString("<(…)")
			unquoted.WriteString("_")
		case *syntax.ArithmExp:
			stop()
			out.lit = false
			out.arith = append(out.arith, p)
			b.WriteString("$((…))")
			unquoted.WriteString("_")
		case *syntax.ExtGlob:
			stop()
			out.lit, out.glob = false, true
			b.WriteString(p.Op.String() + p.Pattern.Value + ")")
			unquoted.WriteString("_")
		default:
			stop()
			out.lit = false
			out.split = true
			b.WriteString("$…")
			unquoted.WriteString("_")
		}
		first = false
	}
	for _, p := range w.Parts {
		part(p, false)
	}
	out.val = b.String()
	stop()
	if braceRe.MatchString(unquoted.String()) {
		out.glob = true
		out.lead = "" // where the brace falls in the value is not tracked
	}
	if out.glob {
		out.lit = false
	}
	if out.lit {
		out.text = quoteWord(out.val)
	} else {
		out.text = sourceOf(w, src)
	}
	if out.text == "" {
		out.text = out.val
	}
	return out
}

// unescapeBare removes backslash escapes from an unquoted literal and
// returns the index in v of the first unescaped glob character (-1 if
// none). u is the literal with escaped characters masked, for brace
// detection.
func unescapeBare(s string) (v string, glob int, u string) {
	glob = -1
	var b, m strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
				m.WriteByte('_')
			}
			continue
		}
		// A [ opens a bracket expression only with a ] after it: the
		// test command's [ alone is a literal name.
		bracket := c == '[' && strings.IndexByte(s[i+1:], ']') >= 0
		if (c == '*' || c == '?' || bracket) && glob < 0 {
			glob = b.Len()
		}
		b.WriteByte(c)
		m.WriteByte(c)
	}
	return b.String(), glob, m.String()
}

// unescapeDouble removes the escapes bash honours inside double quotes.
func unescapeDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// sourceOf is the word as written in src; the rendered value when the
// positions do not fit src (a word parsed from another string).
func sourceOf(n syntax.Node, src string) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(src) || start >= end {
		return ""
	}
	return src[start:end]
}

// quoteWord quotes a literal for rule text when the shell would need it.
func quoteWord(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`;&|<>()") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
