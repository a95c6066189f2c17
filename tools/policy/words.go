package policy

import (
	"strings"

	"github.com/agentd/agentd/internal/lazy"
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
var braceRe = lazy.Regexp(`\{[^{}]*(,|\.\.)[^{}]*\}`)

// decodeWord removes quotes and escapes as bash would, and records what
// expansions remain. src is the source the word was parsed from, for
// rule text.
func decodeWord(w *syntax.Word, src string) word {
	d := wordDecoder{out: word{lit: true}, src: src, first: true}
	if w == nil {
		d.out.text = "''"
		return d.out
	}
	if src != "" {
		d.out.pos, d.out.end, d.out.located = int(w.Pos().Offset()), int(w.End().Offset()), true
	}
	for _, p := range w.Parts {
		d.part(p, false)
	}
	return d.finish(w)
}

// wordDecoder builds a word from its parts, left to right.
type wordDecoder struct {
	out word
	src string
	// b is the value so far; unquoted is the same length with every
	// quoted or escaped character masked, for brace detection.
	b, unquoted strings.Builder
	first       bool // no part decoded yet (a ~ only counts first)
	leadDone    bool // out.lead is set: an expansion or glob was met
}

// stop ends the word's literal lead at the current point.
func (d *wordDecoder) stop() {
	if !d.leadDone {
		d.out.lead, d.leadDone = d.b.String(), true
	}
}

// expansion records a part that is not known before the line runs,
// rendered as shown.
func (d *wordDecoder) expansion(shown string) {
	d.stop()
	d.out.lit = false
	d.b.WriteString(shown)
	d.unquoted.WriteString("_")
}

func (d *wordDecoder) part(p syntax.WordPart, quoted bool) {
	switch p := p.(type) {
	case *syntax.Lit:
		d.literal(p.Value, quoted)
	case *syntax.SglQuoted:
		d.singleQuoted(p)
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			d.part(q, true)
		}
	case *syntax.ParamExp:
		d.param(p, quoted)
	case *syntax.CmdSubst:
		d.expansion("$(…)")
		d.out.subst = true
		d.out.split = d.out.split || !quoted
	case *syntax.ProcSubst:
		d.expansion("<(…)")
		d.out.subst = true
	case *syntax.ArithmExp:
		d.expansion("$((…))")
		d.out.arith = append(d.out.arith, p)
	case *syntax.ExtGlob:
		d.expansion(p.Op.String() + p.Pattern.Value + ")")
		d.out.glob = true
	default:
		d.expansion("$…")
		d.out.split = true
	}
	d.first = false
}

// literal is text as written: inside double quotes only \ $ ` " and
// newline escapes apply; bare, every escape does and globs and ~ count.
func (d *wordDecoder) literal(v string, quoted bool) {
	if quoted {
		d.b.WriteString(unescapeDouble(v))
		d.unquoted.WriteString(strings.Repeat("_", len(v)))
		return
	}
	if d.first && strings.HasPrefix(v, "~") {
		d.out.tilde = true
	}
	v, g, u := unescapeBare(v)
	if g >= 0 {
		d.b.WriteString(v[:g])
		d.stop()
		d.out.glob = true
	}
	d.b.WriteString(v[max(g, 0):])
	d.unquoted.WriteString(u)
}

// singleQuoted is '…' as written, or $'…' with its escapes decoded.
func (d *wordDecoder) singleQuoted(p *syntax.SglQuoted) {
	v := p.Value
	if p.Dollar {
		if s, err := expand.Literal(nil, &syntax.Word{Parts: []syntax.WordPart{p}}); err == nil {
			v = s
		} else {
			d.out.lit = false
		}
	}
	d.b.WriteString(v)
	d.unquoted.WriteString(strings.Repeat("_", len(v)))
}

// param is $X or ${X…}: the variable, and what its operator's word
// (${X:-word}) expands in turn.
func (d *wordDecoder) param(p *syntax.ParamExp, quoted bool) {
	name := "?"
	if p.Param != nil {
		name = p.Param.Value
	}
	d.expansion("$" + name)
	d.out.split = d.out.split || !quoted
	d.out.exps = append(d.out.exps, p)
	d.out.params = append(d.out.params, name)
	if p.Exp != nil && p.Exp.Word != nil {
		inner := decodeWord(p.Exp.Word, d.src)
		d.out.params = append(d.out.params, inner.params...)
		d.out.arith = append(d.out.arith, inner.arith...)
		d.out.exps = append(d.out.exps, inner.exps...)
		d.out.subst = d.out.subst || inner.subst
	}
}

// finish sets what depends on the whole word: a brace expansion, whether
// it is literal after all, its text for rules.
func (d *wordDecoder) finish(w *syntax.Word) word {
	out := &d.out
	out.val = d.b.String()
	d.stop()
	if braceRe().MatchString(d.unquoted.String()) {
		out.glob = true
		out.lead = "" // where the brace falls in the value is not tracked
	}
	if out.glob {
		out.lit = false
	}
	if out.lit {
		out.text = quoteWord(out.val)
	} else {
		out.text = sourceOf(w, d.src)
	}
	if out.text == "" {
		out.text = out.val
	}
	return *out
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
