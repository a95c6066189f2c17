package policy

import (
	"strings"
	"sync"

	"github.com/agentd/agentd/internal/lazy"
	"mvdan.cc/sh/v3/syntax"
)

// Bash evaluates some words as code a second time: arithmetic
// ($((x)), ((x)), let, [[ x -eq y ]], ${a[x]}, ${s:x}) evaluates the value
// of a variable as an expression, and an array subscript in that value
// (x='a[$(cmd)]') runs a command substitution; ${!x}, ${x@P}, test -v,
// printf -v, read and declare evaluate a name the same way. Such a
// context is safe when every variable it reaches holds a value that cannot
// carry code: a literal without $, ` or [, a number. The analysis tracks
// which variables the line may fill with anything else ("tainted"); an
// evaluation context that reaches one hides what the line runs.

// tainting reports whether a literal value may run code when bash
// evaluates it as an expression or a name.
func tainting(s string) bool { return strings.ContainsAny(s, "[$`") }

// varTaint knows which variables a line may fill with code.
type varTaint struct {
	values  map[string][]word // every value the line assigns to each name
	dirty   map[string]bool   // names filled from input (read, for over files …)
	tainted map[string]bool   // computed from values and dirty
	fresh   bool
}

func newVarTaint() *varTaint {
	return &varTaint{values: map[string][]word{}, dirty: map[string]bool{}}
}

// inputBuiltins fill the variables they name from input or arbitrary
// text.
var inputBuiltins = sync.OnceValue(func() map[string]bool {
	return setOf("read", "mapfile", "readarray", "getopts", "printf")
})

// collect records the assignments of a parsed file (the line, or a string
// it runs as code).
func (v *varTaint) collect(f *syntax.File) {
	v.fresh = false
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Assign:
			if n.Name == nil {
				return true
			}
			switch {
			case n.Array != nil:
				for _, e := range n.Array.Elems {
					v.add(n.Name.Value, e.Value)
				}
			case n.Value != nil:
				v.add(n.Name.Value, n.Value)
			}
		case *syntax.WordIter:
			if n.Name != nil {
				for _, w := range n.Items {
					v.add(n.Name.Value, w)
				}
			}
		case *syntax.CallExpr:
			if len(n.Args) > 0 {
				if w := decodeWord(n.Args[0], ""); w.lit && inputBuiltins()[w.val] {
					for _, arg := range n.Args[1:] {
						if d := decodeWord(arg, ""); d.lit && syntax.ValidName(d.val) {
							v.dirty[d.val] = true
						}
					}
					v.dirty["REPLY"], v.dirty["MAPFILE"], v.dirty["OPTARG"] = true, true, true
				}
			}
		}
		return true
	})
}

func (v *varTaint) add(name string, w *syntax.Word) {
	if w != nil {
		v.values[name] = append(v.values[name], decodeWord(w, ""))
	}
}

// clean reports whether none of names may hold code.
func (v *varTaint) clean(names []string) bool {
	v.compute()
	for _, n := range names {
		if v.tainted[n] {
			return false
		}
	}
	return true
}

// compute marks tainted names until nothing changes: a value is tainted
// when it holds $, ` or [, a substitution or a glob (file names), or
// expands a tainted variable.
func (v *varTaint) compute() {
	if v.fresh {
		return
	}
	v.tainted = map[string]bool{}
	for n := range v.dirty {
		v.tainted[n] = true
	}
	for _, p := range []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "@", "*"} {
		v.tainted[p] = true // a nested script's arguments come from anywhere
	}
	for changed := true; changed; {
		changed = false
		for name, ws := range v.values {
			if v.tainted[name] {
				continue
			}
			for _, w := range ws {
				if v.taints(w) {
					v.tainted[name], changed = true, true
					break
				}
			}
		}
	}
	v.fresh = true
}

func (v *varTaint) taints(w word) bool {
	switch {
	case w.lit:
		return tainting(w.val)
	case w.subst || w.glob:
		return true
	}
	for _, p := range w.params {
		if v.tainted[p] {
			return true
		}
	}
	// Left: parameter and arithmetic expansions of clean values. Their
	// literal parts must be clean too.
	return tainting(strings.NewReplacer("$((…))", "", "$", "").Replace(stripParams(w)))
}

// stripParams removes the rendered parameter names from a word's value,
// leaving its literal parts.
func stripParams(w word) string {
	s := w.val
	for _, p := range w.params {
		s = strings.Replace(s, "$"+p, "", 1)
	}
	return s
}

var identRe = lazy.Regexp(`[A-Za-z_][A-Za-z0-9_]*`)

// arith checks an arithmetic expression: every variable it reaches must be
// clean, and no command's output may be evaluated.
func (a *analyzer) arith(x syntax.ArithmExpr, fl *flow, what string) {
	if x == nil {
		return
	}
	switch x := x.(type) {
	case *syntax.Word:
		a.arithWord(x, fl, what)
	case *syntax.BinaryArithm:
		a.arith(x.X, fl, what)
		a.arith(x.Y, fl, what)
	case *syntax.UnaryArithm:
		a.arith(x.X, fl, what)
	case *syntax.ParenArithm:
		a.arith(x.X, fl, what)
	case *syntax.FlagsArithm:
		a.arith(x.X, fl, what)
	default:
		a.unchecked(what + " the policy cannot read")
	}
}

// arithWord checks one operand of an arithmetic context.
func (a *analyzer) arithWord(x *syntax.Word, fl *flow, what string) {
	w := a.word(x, fl)
	if w.subst {
		a.unchecked(what + " evaluates a command's output as code")
		return
	}
	if tainting(stripParams(w)) && !strings.Contains(w.val, "$((") {
		a.unchecked(what + " evaluates " + w.val + ", which may hold code")
		return
	}
	names := slicesConcat(w.params, identRe().FindAllString(stripParams(w), -1))
	if !a.vars.clean(names) {
		a.unchecked(what + " evaluates a variable that may hold code (" + w.val + ")")
	}
}

func slicesConcat(a, b []string) []string { return append(append([]string(nil), a...), b...) }

// test checks [[ … ]]: -v and -R evaluate a name; -eq and kin evaluate
// both sides as arithmetic.
func (a *analyzer) test(x syntax.TestExpr, fl *flow) {
	switch x := x.(type) {
	case *syntax.Word:
		a.word(x, fl)
	case *syntax.UnaryTest:
		if x.Op == syntax.TsVarSet || x.Op == syntax.TsRefVar {
			if w, ok := x.X.(*syntax.Word); ok {
				a.nameOperand(a.word(w, fl), "[[ "+x.Op.String()+" ]]")
				return
			}
		}
		a.test(x.X, fl)
	case *syntax.BinaryTest:
		switch x.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			for _, side := range []syntax.TestExpr{x.X, x.Y} {
				if w, ok := side.(*syntax.Word); ok {
					a.arithWord(w, fl, "[[ "+x.Op.String()+" ]]")
				} else {
					a.test(side, fl)
				}
			}
			return
		}
		a.test(x.X, fl)
		a.test(x.Y, fl)
	case *syntax.ParenTest:
		a.test(x.X, fl)
	}
}

// paramExp checks the parts of ${…} bash evaluates: ${!x} and ${x@P}
// expand x's value again; a subscript and a slice are arithmetic.
func (a *analyzer) paramExp(pe *syntax.ParamExp, fl *flow) {
	name := ""
	if pe.Param != nil {
		name = pe.Param.Value
	}
	if pe.Excl && pe.Names == 0 && !a.vars.clean([]string{name}) {
		a.unchecked("${!" + name + "} expands a variable named by a value that may hold code")
	}
	if pe.Exp != nil && pe.Exp.Op == syntax.OtherParamOps && pe.Exp.Word != nil {
		if op := decodeWord(pe.Exp.Word, ""); op.val == "P" && !a.vars.clean([]string{name}) {
			a.unchecked("${" + name + "@P} expands a prompt that may hold code")
		}
	}
	if pe.Index != nil {
		if w, ok := pe.Index.(*syntax.Word); !ok || !isAllIndex(w) {
			a.arith(pe.Index, fl, "an array subscript")
		}
	}
	if pe.Slice != nil {
		a.arith(pe.Slice.Offset, fl, "a substring offset")
		a.arith(pe.Slice.Length, fl, "a substring length")
	}
}

// isAllIndex reports ${a[@]} and ${a[*]}.
func isAllIndex(w *syntax.Word) bool {
	d := decodeWord(w, "")
	return d.lit && (d.val == "@" || d.val == "*")
}
