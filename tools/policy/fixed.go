package policy

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/agentd/agentd/tools"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// A word whose value the line itself fixes is judged by that value. `x=rm;
// $x -rf /`, `rm -rf ${X:-/}`, `{rm,-rf,/}`, `$(echo rm) -rf /` and
// `a=(rm -rf /); "${a[@]}"` hide `rm -rf /` from the walk, which sees a
// program or a target not known before the line runs (unchecked: it asks).
// But the line gives the values: a variable's literal assignments, an
// operator's default (taken when the variable is unset), a brace
// expansion, an echo in a substitution. fixedDenials expands the line with
// those values, as bash would, and checks the line it becomes: a denial
// there is a denial of the line, whatever the mode. It only ever adds
// denials; a value it cannot know (the environment's, a program's output)
// leaves the word as it was.

// Bounds on the extra work: expanded lines per line, how deep lines
// expanded from expanded lines go, and the size of a line worth it (a
// larger one keeps its unchecked words: it asks).
const (
	maxFixedLines = 4
	maxFixedDepth = 2
	maxFixedNodes = 400
)

// unknownValue stands for a variable that is set to something the line
// does not show: a word that expands it cannot be fixed.
const unknownValue = "\x00unknown\x00"

var errNotFixed = errors.New("not fixed by the line")

// fixedDenials checks src (parsed as f, run in flow fl) once expanded with
// the values the line fixes, and records the denials found there.
func (a *analyzer) fixedDenials(f *syntax.File, src string, fl *flow) {
	if a.fixedDepth >= maxFixedDepth || countNodes(f) > maxFixedNodes {
		return
	}
	words := fixableWords(f)
	if len(words) == 0 {
		return
	}
	seen := map[string]bool{src: true}
	for _, env := range a.candidateEnvs(f) {
		line, ok := rewriteFixed(src, words, env, a.home)
		if !ok || seen[line] {
			continue
		}
		seen[line] = true
		sub := a.child()
		sub.script(line, fl.sub(), "the line expanded")
		whys := sub.out.Denials
		for _, w := range sub.out.Writes {
			if w.Abs != "" && !tools.Within(a.root, w.Abs) {
				whys = append(whys, "writing "+w.Target+" outside the workspace is never allowed")
			}
		}
		for _, why := range whys {
			a.deny(why + " (once the line's own values are expanded: " + clip(line, 80) + ")")
		}
	}
}

// child is an analyzer for a line expanded from this one: the same
// workspace, home and trust, one level deeper, with its own findings.
func (a *analyzer) child() *analyzer {
	c := &analyzer{
		root: a.root, home: a.home, trust: a.trust, private: a.private, out: &shellAnalysis{},
		funcs: map[string]funcDef{}, calls: map[string]map[string]bool{}, inlining: map[string]bool{},
		vars: newVarTaint(), links: map[string]string{}, fixedDepth: a.fixedDepth + 1,
	}
	c.srcs = slices.Clone(a.srcs)
	return c
}

// fixableWord is a word that expands to something the line may fix, with
// how bash reads it: split into fields (an argument) or kept whole (an
// assignment's value, a redirect's target).
type fixableWord struct {
	w     *syntax.Word
	split bool
}

// fixableWords lists the words with an expansion the line may fix:
// parameters, substitutions, arithmetic, braces.
func fixableWords(f *syntax.File) []fixableWord {
	var out []fixableWord
	add := func(w *syntax.Word, split bool) {
		if w != nil && hasFixable(w) {
			out = append(out, fixableWord{w, split})
		}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			for _, w := range n.Args {
				add(w, true)
			}
		case *syntax.WordIter:
			for _, w := range n.Items {
				add(w, true)
			}
		case *syntax.Redirect:
			if n.Hdoc == nil {
				add(n.Word, false)
			}
		case *syntax.Assign:
			add(n.Value, false)
		}
		return true
	})
	return out
}

func hasFixable(w *syntax.Word) bool {
	found := false
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.ParamExp, *syntax.CmdSubst, *syntax.ArithmExp:
			found = true
		}
		return !found
	})
	if found {
		return true
	}
	c := *w
	return syntax.SplitBraces(&c)
}

// candidateEnvs are the variables' values to expand the line with: each
// takes, in turn, the literal values the line assigns it, then unset, then
// set to something unknown (so ${X:+/} is "/"). HOME is the home
// directory unless the line assigns it.
func (a *analyzer) candidateEnvs(f *syntax.File) []fixedEnv {
	names, arrays := referencedNames(f), literalArrays(f)
	cands := map[string][]expand.Variable{}
	most := 0
	for _, name := range names {
		var vs []expand.Variable
		for _, list := range arrays[name] {
			vs = append(vs, expand.Variable{Set: true, Kind: expand.Indexed, List: list})
		}
		for _, w := range a.vars.values[name] {
			if w.lit {
				vs = append(vs, expand.Variable{Set: true, Kind: expand.String, Str: w.val})
			}
		}
		if name == "HOME" && a.home != "" && len(vs) == 0 {
			vs = append(vs, expand.Variable{Set: true, Kind: expand.String, Str: a.home})
		}
		vs = append(vs, expand.Variable{}, expand.Variable{Set: true, Kind: expand.String, Str: unknownValue})
		cands[name] = vs
		most = max(most, len(vs))
	}
	var envs []fixedEnv
	for k := range max(1, min(most, maxFixedLines)) { // one, with no variable: braces, echo
		env := fixedEnv{}
		for name, vs := range cands {
			env[name] = vs[min(k, len(vs)-1)]
		}
		envs = append(envs, env)
	}
	return envs
}

// referencedNames are the variables the line's expansions read.
func referencedNames(f *syntax.File) []string {
	var names []string
	syntax.Walk(f, func(n syntax.Node) bool {
		if pe, ok := n.(*syntax.ParamExp); ok && pe.Param != nil && !slices.Contains(names, pe.Param.Value) {
			names = append(names, pe.Param.Value)
		}
		return true
	})
	return names
}

// literalArrays are the arrays the line assigns with literal elements.
func literalArrays(f *syntax.File) map[string][][]string {
	out := map[string][][]string{}
	syntax.Walk(f, func(n syntax.Node) bool {
		as, ok := n.(*syntax.Assign)
		if !ok || as.Name == nil || as.Array == nil {
			return true
		}
		var list []string
		for _, e := range as.Array.Elems {
			w := decodeWord(e.Value, "")
			if e.Index != nil || !w.lit {
				return true
			}
			list = append(list, w.val)
		}
		out[as.Name.Value] = append(out[as.Name.Value], list)
		return true
	})
	return out
}

// fixedEnv is one choice of the variables' values (unset when absent).
type fixedEnv map[string]expand.Variable

func (e fixedEnv) Get(name string) expand.Variable { return e[name] }

// Set takes ${X:=value}'s assignment.
func (e fixedEnv) Set(name string, vr expand.Variable) error {
	e[name] = vr
	return nil
}

func (e fixedEnv) Each(fn func(string, expand.Variable) bool) {
	for k, v := range e {
		if !fn(k, v) {
			return
		}
	}
}

// rewriteFixed is src with every fixable word replaced by what it expands
// to in env, quoted so that the new line's words are literal; false when
// nothing changed.
func rewriteFixed(src string, words []fixableWord, env fixedEnv, home string) (string, bool) {
	if _, ok := env["HOME"]; !ok && home != "" {
		env["HOME"] = expand.Variable{Set: true, Kind: expand.String, Str: home} // for ~
	}
	cfg := &expand.Config{Env: env, NoUnset: true, CmdSubst: echoSubst,
		ProcSubst: func(*syntax.ProcSubst) (string, error) { return "", errNotFixed }}
	type edit struct {
		from, to int
		text     string
	}
	var edits []edit
	for _, fw := range words {
		from, to := int(fw.w.Pos().Offset()), int(fw.w.End().Offset())
		if from < 0 || to > len(src) || from >= to {
			continue
		}
		text, ok := expandFixed(cfg, fw)
		if ok && text != src[from:to] {
			edits = append(edits, edit{from, to, text})
		}
	}
	if len(edits) == 0 {
		return "", false
	}
	slices.SortFunc(edits, func(x, y edit) int { return x.from - y.from })
	var b strings.Builder
	at := 0
	for _, e := range edits {
		if e.from < at {
			continue // inside a word already replaced (a word within a substitution)
		}
		b.WriteString(src[at:e.from])
		b.WriteString(e.text)
		at = e.to
	}
	b.WriteString(src[at:])
	return b.String(), true
}

// expandFixed expands one word; ok is false when its value is not fixed
// by the line (an unset variable used plainly, one set to an unknown
// value, a substitution of anything but echo).
func expandFixed(cfg *expand.Config, fw fixableWord) (text string, ok bool) {
	defer func() {
		if recover() != nil { // the expander on a word it does not handle: not fixed
			text, ok = "", false
		}
	}()
	var fields []string
	if fw.split {
		fs, err := expand.Fields(cfg, fw.w)
		if err != nil {
			return "", false
		}
		fields = fs
	} else {
		s, err := expand.Literal(cfg, fw.w)
		if err != nil {
			return "", false
		}
		fields = []string{s}
	}
	quoted := make([]string, len(fields))
	for i, f := range fields {
		if strings.Contains(f, "\x00") { // an unknown value, or part of one
			return "", false
		}
		quoted[i] = "'" + strings.ReplaceAll(f, "'", `'\''`) + "'"
	}
	if len(quoted) == 0 {
		return "''", !fw.split
	}
	return strings.Join(quoted, " "), true
}

// echoSubst runs the one kind of command substitution whose output the
// line fixes: echo or printf of literal words, nothing else.
func echoSubst(w io.Writer, cs *syntax.CmdSubst) error {
	if len(cs.Stmts) != 1 || len(cs.Stmts[0].Redirs) > 0 {
		return errNotFixed
	}
	call, ok := cs.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || len(call.Args) == 0 {
		return errNotFixed
	}
	var args []string
	for _, a := range call.Args {
		d := decodeWord(a, "")
		if !d.lit {
			return errNotFixed
		}
		args = append(args, d.val)
	}
	switch {
	case args[0] == "echo" && (len(args) == 1 || !strings.HasPrefix(args[1], "-")):
		_, err := fmt.Fprintln(w, strings.Join(args[1:], " "))
		return err
	case args[0] == "printf" && len(args) == 2 && !strings.ContainsAny(args[1], `%\`):
		_, err := io.WriteString(w, args[1])
		return err
	}
	return errNotFixed
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
