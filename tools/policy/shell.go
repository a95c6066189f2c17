package policy

import (
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// The walk of a parsed line: statements, pipes and lists, compound
// commands, functions, words and their substitutions, assignments and
// redirects, each in the flow it runs in. Each simple command goes to
// addPart (parts.go).

func (a *analyzer) stmts(ss []*syntax.Stmt, fl *flow) {
	for _, s := range ss {
		a.stmt(s, fl)
	}
}

func (a *analyzer) stmt(s *syntax.Stmt, fl *flow) {
	if s == nil {
		return
	}
	if s.Background || s.Coprocess || s.Disown {
		fl = fl.sub() // runs in a subshell: its cd stays there
	}
	in := fl.stdin
	for _, r := range s.Redirs {
		a.redirect(r, fl)
		if src, ok := a.inputOf(r); ok {
			in = src
		}
	}
	if len(s.Redirs) > 0 && downloads(s.Cmd) {
		a.downloadedTo(s.Redirs, fl) // curl … > install.sh
	}
	inner := fl
	if in != fl.stdin {
		inner = fl.withStdin(in)
	}
	if c, ok := s.Cmd.(*syntax.CallExpr); ok && len(c.Args) == 1 && len(c.Assigns) == 0 && len(s.Redirs) > 0 {
		if w := decodeWord(c.Args[0], a.src()); w.lit && w.val == "exec" {
			fl.stdin = in // exec <file: the rest of the line reads it
			return
		}
	}
	a.command(s.Cmd, inner)
	if inner != fl {
		fl.adopt(inner)
	}
}

func (a *analyzer) command(c syntax.Command, fl *flow) {
	switch c := c.(type) {
	case nil:
	case *syntax.CallExpr:
		a.call(c, fl)
	case *syntax.BinaryCmd:
		a.binary(c, fl)
	case *syntax.Block:
		a.stmts(c.Stmts, fl)
	case *syntax.Subshell:
		a.stmts(c.Stmts, fl.sub())
	case *syntax.IfClause:
		a.ifClause(c, fl)
	case *syntax.WhileClause:
		a.loop(fl, c, func(body *flow) {
			a.stmts(c.Cond, body)
			a.stmts(c.Do, body)
		})
	case *syntax.ForClause:
		a.forClause(c, fl)
	case *syntax.CaseClause:
		a.words([]*syntax.Word{c.Word}, fl)
		var outs []*flow
		for _, it := range c.Items {
			a.words(it.Patterns, fl)
			b := fl.branch()
			a.stmts(it.Stmts, b)
			outs = append(outs, b)
		}
		fl.join(append(outs, fl.branch())...)
	case *syntax.FuncDecl:
		a.funcDecl(c, fl)
	case *syntax.ArithmCmd:
		a.arith(c.X, fl, "an arithmetic command")
	case *syntax.LetClause:
		for _, x := range c.Exprs {
			a.arith(x, fl, "let")
		}
	case *syntax.TestClause:
		a.test(c.X, fl)
	case *syntax.DeclClause:
		a.decl(c, fl)
	case *syntax.TimeClause:
		a.stmt(c.Stmt, fl)
	case *syntax.CoprocClause:
		a.stmt(c.Stmt, fl.sub().withStdin(stdinSrc{kind: stdinUnknown})) // the line writes to its stdin
	default:
		a.unchecked(fmt.Sprintf("a shell construct the policy does not know (%T)", c))
	}
}

func (a *analyzer) binary(c *syntax.BinaryCmd, fl *flow) {
	switch c.Op {
	case syntax.Pipe, syntax.PipeAll:
		// Every stage runs in a subshell; the right one reads the left's output.
		a.stmt(c.X, fl.sub())
		right := fl.sub()
		right.stdin = a.pipeSource(c.X, fl.stdin)
		if downloads(c.X) {
			if what := runsInput(c.Y, a.src()); what != "" {
				a.deny("piping a download into " + what)
			}
		}
		a.stmt(c.Y, right)
	default: // && and ||: the right side may not run
		a.stmt(c.X, fl)
		skip := fl.branch()
		a.stmt(c.Y, fl)
		fl.join(fl.branch(), skip)
	}
}

func (a *analyzer) ifClause(c *syntax.IfClause, fl *flow) {
	a.stmts(c.Cond, fl)
	then := fl.branch()
	a.stmts(c.Then, then)
	other := fl.branch()
	if c.Else != nil {
		if len(c.Else.Cond) == 0 && c.Else.ThenPos == (syntax.Pos{}) {
			a.stmts(c.Else.Then, other)
		} else {
			a.ifClause(c.Else, other)
		}
	}
	fl.join(then, other)
}

// loop analyses a loop body once, from a state where any cd of the body
// may already have happened: the working directory is unknown if the body
// may change it.
func (a *analyzer) loop(fl *flow, node syntax.Node, body func(*flow)) {
	b := fl.branch()
	if a.movesDir(node) {
		b.lose()
	}
	body(b)
	fl.join(fl.branch(), b)
}

func (a *analyzer) forClause(c *syntax.ForClause, fl *flow) {
	switch l := c.Loop.(type) {
	case *syntax.WordIter:
		a.words(l.Items, fl)
	case *syntax.CStyleLoop:
		a.arith(l.Init, fl, "a for loop")
		a.arith(l.Cond, fl, "a for loop")
		a.arith(l.Post, fl, "a for loop")
	}
	a.loop(fl, c, func(b *flow) { a.stmts(c.Do, b) })
}

func (a *analyzer) funcDecl(c *syntax.FuncDecl, fl *flow) {
	if c.Name == nil {
		return
	}
	name := c.Name.Value
	a.funcs[name] = funcDef{body: c.Body, src: a.src()}
	if a.calls[name] == nil {
		a.calls[name] = map[string]bool{}
	}
	// The body runs wherever the function is called; check it once here (its
	// denials hold whether or not it is called) without moving the caller.
	a.curFunc = append(a.curFunc, name)
	a.stmt(c.Body, fl.branch())
	a.curFunc = a.curFunc[:len(a.curFunc)-1]
}

// forkBombs denies a line whose functions call each other in a cycle:
// `:(){ :|:& };:`, or two functions that call each other.
func (a *analyzer) forkBombs() {
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(f string, path []string) []string
	visit = func(f string, path []string) []string {
		switch state[f] {
		case 1:
			return append(path, f)
		case 2:
			return nil
		}
		state[f] = 1
		for g := range a.calls[f] {
			if _, defined := a.funcs[g]; !defined {
				continue
			}
			if cyc := visit(g, append(path, f)); cyc != nil {
				return cyc
			}
		}
		state[f] = 2
		return nil
	}
	for f := range a.funcs {
		if cyc := visit(f, nil); cyc != nil {
			if len(cyc) == 2 {
				a.deny(fmt.Sprintf("function %q calls itself (a fork bomb)", cyc[0]))
			} else {
				a.deny(fmt.Sprintf("functions %s call each other in a cycle (a fork bomb)", strings.Join(cyc, " → ")))
			}
			return
		}
	}
}

// words analyses what runs inside words: substitutions, arithmetic and
// parameter expansions that evaluate code.
func (a *analyzer) words(ws []*syntax.Word, fl *flow) []word {
	out := make([]word, 0, len(ws))
	for _, w := range ws {
		if w == nil {
			continue
		}
		out = append(out, a.word(w, fl))
	}
	return out
}

func (a *analyzer) word(w *syntax.Word, fl *flow) word {
	d := decodeWord(w, a.src())
	a.substitutions(w, fl)
	for _, x := range d.arith {
		a.arith(x.X, fl, "an arithmetic expansion")
	}
	for _, pe := range d.exps {
		a.paramExp(pe, fl)
	}
	return d
}

// substitutions analyses the commands of $(…), `…` and <(…) in a node:
// each runs in a subshell.
func (a *analyzer) substitutions(n syntax.Node, fl *flow) {
	syntax.Walk(n, func(m syntax.Node) bool {
		switch m := m.(type) {
		case *syntax.CmdSubst:
			if m.Backquotes {
				if a.backquotes > 0 {
					// Escapes inside nested backquotes are read one level short
					// by the parser; what runs there cannot be trusted to be
					// what the analysis sees.
					a.unchecked("backquotes nested in backquotes")
				}
				a.backquotes++
				defer func() { a.backquotes-- }()
			}
			a.stmts(m.Stmts, fl.sub().withStdin(fl.stdin))
			return false
		case *syntax.ProcSubst:
			in := stdinNone
			if m.Op == syntax.CmdOut {
				in = stdinSrc{kind: stdinUnknown} // >(cmd) reads what the line writes to it
			}
			a.stmts(m.Stmts, fl.sub().withStdin(in))
			return false
		}
		return true
	})
}

func (a *analyzer) call(c *syntax.CallExpr, fl *flow) {
	assigns := a.assigns(c.Assigns, fl, len(c.Args) == 0)
	if len(c.Args) == 0 {
		return
	}
	ws := a.words(c.Args, fl)
	a.recordCall(ws[0])
	switch {
	case downloads(c.Args[0]):
		a.deny("running a program a download names")
	case runsCode(ws):
		for _, w := range c.Args[1:] {
			if downloads(w) {
				a.deny("running a download with " + ws[0].text)
				break
			}
		}
	}
	if _, defined := a.funcs[ws[0].val]; ws[0].lit && defined && len(assigns) == 0 {
		a.inline(ws[0].val, fl)
	}
	a.addPart(ws, assigns, fl, origin{})
}

// recordCall adds an edge of the call graph from the function being
// defined (if any) to the command called.
func (a *analyzer) recordCall(w word) {
	if len(a.curFunc) == 0 || !w.lit {
		return
	}
	a.calls[a.curFunc[len(a.curFunc)-1]][w.val] = true
}

// inline analyses a function's body where it is called: it runs in the
// caller's shell, so its cd moves the caller.
func (a *analyzer) inline(name string, fl *flow) {
	if a.inlining[name] {
		return // recursion: a fork bomb, denied on its own
	}
	if a.inlined >= maxInline {
		a.unchecked("the line calls its functions too many times to check")
		return
	}
	a.inlined++
	a.inlining[name] = true
	def := a.funcs[name]
	if def.src == a.src() {
		a.stmt(def.body, fl)
	} else {
		a.within(def.src, func() { a.stmt(def.body, fl) })
	}
	delete(a.inlining, name)
}

// assigns checks NAME=value words: values are analysed as words; a
// subscript is an evaluation context; special shell variables change
// what the rest of the line does. bare says the assignments stand alone
// (they set shell variables rather than a command's environment).
func (a *analyzer) assigns(as []*syntax.Assign, fl *flow, bare bool) []assignment {
	var out []assignment
	for _, as := range as {
		if as.Name == nil {
			continue
		}
		name := as.Name.Value
		if as.Index != nil {
			a.arith(as.Index, fl, "an array subscript")
			a.notRO("it assigns an array element")
		}
		if as.Array != nil {
			for _, e := range as.Array.Elems {
				if e.Index != nil {
					a.arith(e.Index, fl, "an array subscript")
				}
				a.word(e.Value, fl)
			}
			a.notRO("it assigns an array")
			continue
		}
		v := word{lit: true, text: "''"}
		if as.Value != nil {
			v = a.word(as.Value, fl)
		}
		a.shellVar(name, v, bare)
		out = append(out, assignment{name: name, value: v})
	}
	return out
}

// shellVar notes what setting a variable does to the rest of the line.
func (a *analyzer) shellVar(name string, v word, bare bool) {
	switch name {
	case "HOME":
		a.home = ""
	case "CDPATH":
		a.cdpath = true
	case "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND":
		if codeLike(v.val) || !v.lit {
			a.unchecked("$" + name + " holds code the shell may run")
		}
	}
	if bare && !safeShellVar(name) {
		a.notRO("it sets the shell variable " + name)
	}
}

// safeShellVar reports whether a bare assignment only sets a plain shell
// variable: bash's special variables are upper-case, so lower-case names
// are the script's own.
func safeShellVar(name string) bool {
	for _, c := range name {
		if c >= 'A' && c <= 'Z' {
			return false
		}
	}
	return true
}

// codeLike reports whether a string holds what the shell would run if it
// evaluated it.
func codeLike(s string) bool {
	return strings.Contains(s, "$(") || strings.Contains(s, "`") || strings.Contains(s, "${")
}

func (a *analyzer) decl(c *syntax.DeclClause, fl *flow) {
	variant := ""
	if c.Variant != nil {
		variant = c.Variant.Value
	}
	nameref := false
	var as []assignment
	for _, arg := range c.Args {
		if arg.Name == nil {
			if arg.Value != nil {
				w := a.word(arg.Value, fl)
				switch {
				case !w.lit:
					a.unchecked(variant + " with an argument not known before the line runs")
				case strings.HasPrefix(w.val, "-") && strings.Contains(w.val, "n"):
					nameref = true
				case !strings.HasPrefix(w.val, "-") && !strings.HasPrefix(w.val, "+"):
					a.nameOperand(w, variant)
				}
			}
			continue
		}
		if arg.Index != nil {
			a.arith(arg.Index, fl, "an array subscript")
		}
		v := word{lit: true, text: "''"}
		if arg.Value != nil {
			v = a.word(arg.Value, fl)
		}
		if arg.Array != nil {
			for _, e := range arg.Array.Elems {
				if e.Index != nil {
					a.arith(e.Index, fl, "an array subscript")
				}
				a.word(e.Value, fl)
			}
		}
		if nameref && (!v.lit || tainting(v.val)) {
			a.unchecked("a name reference to an expression the shell evaluates")
		}
		a.shellVar(arg.Name.Value, v, false)
		as = append(as, assignment{name: arg.Name.Value, value: v})
	}
	if variant == "export" && !nameref && len(as) > 0 {
		for _, x := range as {
			if !safeEnvAssign(x) {
				a.notRO("it exports " + x.name)
				return
			}
		}
		return
	}
	a.notRO("it declares variables (" + variant + ")")
}

// nameOperand checks a word a builtin takes as a variable name (read,
// printf -v, test -v, unset, declare): bash evaluates a subscript in it,
// so a name that is not a plain identifier can run code.
func (a *analyzer) nameOperand(w word, what string) {
	if w.lit && !tainting(w.val) {
		return
	}
	if !w.lit && len(w.params) > 0 && a.vars.clean(w.params) && !w.subst && len(w.arith) == 0 {
		return
	}
	a.unchecked(what + " evaluates a variable name that may hold code (" + w.val + ")")
}

// redirect records a file a redirect writes; a here-document or
// here-string's expansions are analysed.
func (a *analyzer) redirect(r *syntax.Redirect, fl *flow) {
	if r.Hdoc != nil {
		a.substitutions(r.Hdoc, fl)
	}
	w := a.word(r.Word, fl)
	if w.lit && isTerminal(w.val) {
		a.notRO(usesTerminal(w.val))
	}
	if strings.HasPrefix(w.val, "/dev/tcp/") || strings.HasPrefix(w.val, "/dev/udp/") {
		a.out.Network = true
		a.notRO("it opens a network connection (" + w.val + ")")
	}
	if r.Word != nil && len(r.Word.Parts) == 1 {
		if _, ok := r.Word.Parts[0].(*syntax.ProcSubst); ok {
			return // > >(cmd) writes to cmd, checked on its own
		}
	}
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.RdrClob, syntax.RdrInOut:
	case syntax.DplOut:
		if isFD(w.val) && w.lit {
			return
		}
	default:
		return
	}
	a.write(w, fl)
}

func isFD(s string) bool {
	if s == "-" {
		return true
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// write records a file the command line writes, resolved in every
// directory the command may run in. Harmless device files are not writes;
// block devices are a built-in denial.
func (a *analyzer) write(w word, fl *flow) {
	t := w.val
	switch {
	case w.lit && (t == "/dev/null" || t == "/dev/stdout" || t == "/dev/stderr" || strings.HasPrefix(t, "/dev/fd/")):
		return
	case w.lit && isTerminal(t):
		return // the redirect said it (redirect: usesTerminal)
	case w.lit && strings.HasPrefix(t, "/dev/"):
		a.deny("writing to the device " + t)
		return
	}
	abs, ok := a.paths(w, fl.cwd)
	if !ok {
		a.out.Writes = append(a.out.Writes, shellWrite{Target: t})
		return
	}
	for _, p := range abs {
		a.out.Writes = append(a.out.Writes, shellWrite{Target: t, Abs: p})
	}
}

// writeOut records a file a program writes through an option or operand
// (sort -o, cp's destination): checked when it resolves, left to the
// sandbox when it does not (the command is not read-only anyway).
// isTerminal reports paths that name the user's terminal. The terminal
// is the user's, not the command's output or input: what is written there
// can set the clipboard (OSC 52) or the title, or be read back as typed
// input by some terminals; what is read there is the user's typing; stty
// on it changes the user's terminal. A command that uses it is not
// read-only, so it asks; the sandbox gives commands no controlling
// terminal.
func isTerminal(p string) bool {
	p = path.Clean(p)
	return p == "/dev/tty" || p == "/dev/console"
}

func usesTerminal(p string) string { return "it uses the terminal (" + p + "), which is the user's" }

func (a *analyzer) writeOut(w word, fl *flow) {
	if _, ok := a.paths(w, fl.cwd); ok || w.lit && strings.HasPrefix(w.val, "/dev/") {
		a.write(w, fl)
	}
}
