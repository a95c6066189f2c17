package policy

import (
	"os"
	"path/filepath"
	"strings"
)

// origin says where a command found inside another gets the arguments the
// line does not show: xargs appends lines of its input; find -exec
// replaces {} with the paths it finds.
type origin struct {
	xargs     bool
	findRoots []word
}

// addPart records a simple command, judges it, then what it runs inside
// it: the script of sh -c and eval, the command after a wrapper, find
// -exec's.
func (a *analyzer) addPart(ws []word, assigns []assignment, fl *flow, o origin) {
	if len(ws) == 0 {
		return
	}
	if len(a.out.Parts) >= maxParts {
		a.unchecked("the line has too many commands to check")
		return
	}
	p := &shellPart{words: ws, Words: vals(ws), assigns: assigns, Dynamic: !ws[0].lit,
		appended: o.xargs}
	if p.Dynamic {
		p.why = "the program name " + ws[0].text + " is not known before the line runs"
		p.unchecked = p.why
	}
	for _, as := range assigns {
		if !safeEnvAssign(as) {
			p.why = "it gives the command " + as.name + ", which can change what it runs"
			p.risky = "the environment variable " + as.name
			break
		}
	}
	var inner []innerCmd
	if !p.Dynamic {
		inner = a.special(p, fl, o)
	}
	a.judge(p, fl)
	for _, w := range outputsOf(p) {
		a.writeOut(w, fl)
	}
	if why := a.denial(p, fl, o); why != "" {
		a.deny(why)
	}
	a.out.Parts = append(a.out.Parts, *p)
	for _, in := range inner {
		a.addPart(in.words, in.assigns, in.flow, in.origin)
	}
}

// innerCmd is a command a part runs: a wrapper's, find -exec's.
type innerCmd struct {
	words   []word
	assigns []assignment
	flow    *flow
	origin  origin
}

// stdinNames are paths that name a command's standard input.
var stdinNames = setOf("/dev/stdin", "-", "/dev/fd/0", "/proc/self/fd/0")

// special handles the programs that change the shell, run code they are
// given, or run other commands; it returns the commands run inside p.
func (a *analyzer) special(p *shellPart, fl *flow, o origin) []innerCmd {
	if p.name() == "find" {
		return a.find(p, fl)
	}
	a.effects(p, fl)
	return a.wrapped(p, fl, o)
}

// effects follows what a command does to the shell and to what the
// analysis knows beyond its own verdict: where the line is, the code it
// runs (sh -c, eval, source, trap, alias), the files it writes or links,
// the names it evaluates.
func (a *analyzer) effects(p *shellPart, fl *flow) {
	name, args := p.name(), p.words[1:]
	switch {
	case name == "cd" || name == "pushd" || name == "popd":
		a.chdir(name, args, fl)
	case shScripts[name]:
		a.shell(p, fl)
	case name == "eval":
		a.eval(args, fl)
	case name == "source" || name == ".":
		a.source(args, fl)
	case name == "trap":
		a.trap(args, fl)
	case name == "alias":
		a.alias(args, fl)
	case name == "hash":
		for _, w := range args {
			if !w.lit || strings.HasPrefix(w.val, "-") && strings.Contains(w.val, "p") {
				a.unchecked("hash -p makes a command name run another program")
			}
		}
	case name == "tee":
		for _, w := range args {
			if !w.lit || !strings.HasPrefix(w.val, "-") {
				a.write(w, fl)
			}
		}
	case name == "ln":
		a.link(args, fl)
	case name == "cp":
		a.copyLinks(args)
	case name == "git":
		a.gitConfigScripts(args, fl)
	case nameBuiltins[name] != "" || name == "unset" || name == "getopts":
		for _, w := range nameOperands(name, args) {
			n, _, _ := strings.Cut(w.val, "=")
			a.nameOperand(word{val: n, lit: w.lit, params: w.params, subst: w.subst, arith: w.arith}, name)
		}
	case name == "printf" || name == "test" || name == "[":
		a.nameOptions(name, args)
	}
}

// alias runs its definitions as code when the alias is used.
func (a *analyzer) alias(args []word, fl *flow) {
	for _, w := range args {
		if !w.lit {
			a.unchecked("alias with a definition not known before the line runs")
		} else if _, v, ok := strings.Cut(w.val, "="); ok {
			a.script(v, fl.branch(), "an alias")
		}
	}
}

// copyLinks: cp -s and cp -l make links the analysis does not follow.
func (a *analyzer) copyLinks(args []word) {
	for _, w := range args {
		if !w.lit || w.val == "--symbolic-link" || w.val == "--link" ||
			strings.HasPrefix(w.val, "-") && !strings.HasPrefix(w.val, "--") && strings.ContainsAny(w.val, "sl") {
			a.linksLost = true
		}
	}
}

// nameOptions checks printf -v NAME and test -v/-R NAME, which bash
// evaluates as names (a subscript in them runs).
func (a *analyzer) nameOptions(name string, args []word) {
	for i, w := range args {
		if w.lit && w.val == "-v" && i+1 < len(args) {
			a.nameOperand(args[i+1], name+" -v")
		}
		if w.lit && name != "printf" && w.val == "-R" && i+1 < len(args) {
			a.nameOperand(args[i+1], name+" -R")
		}
	}
}

// wrapped is the command a wrapper runs (timeout, env, xargs …), with the
// environment, directory and input it gets; a script it runs instead is
// analysed here.
func (a *analyzer) wrapped(p *shellPart, fl *flow, o origin) []innerCmd {
	name := p.name()
	u := unwrap(p.words)
	switch {
	case u.bad != "":
		p.why = u.bad
		p.unchecked = u.bad
		return nil
	case u.script != nil && !u.script.lit:
		p.unchecked = name + " runs a script not known before the line runs"
		return nil
	case u.script != nil:
		a.script(u.script.val, fl.sub(), name)
		return nil
	case u.words == nil:
		return nil
	}
	in := innerCmd{words: u.words, assigns: append(append([]assignment(nil), p.assigns...), u.assigns...), flow: fl.sub(), origin: o}
	if u.cwd != nil {
		in.flow.cwd = a.cdTarget(*u.cwd, fl, false)
	}
	if name == "xargs" {
		in.origin = origin{xargs: true}
		in.flow.stdin = fl.stdin // xargs reads the line's stdin for arguments
	}
	if len(in.words) > 0 && !in.words[0].lit && !p.Dynamic {
		// exec "$X", env "$CMD": the wrapper's command is not known.
		p.unchecked = name + " runs a program not known before the line runs"
	}
	return []innerCmd{in}
}

// nameBuiltins take variable names as operands (bash evaluates a
// subscript in them), with the options that take a value: a prompt or a
// delimiter is not a name.
var nameBuiltins = map[string]string{
	"read": "adinNptu", "mapfile": "dnOsuCc", "readarray": "dnOsuCc", "declare": "-", "typeset": "-",
	"local": "-", "export": "-", "readonly": "-", "wait": "-",
}

// nameOperands are the words a builtin reads as variable names.
func nameOperands(name string, args []word) []word {
	valued := nameBuiltins[name]
	var out []word
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.lit || !strings.HasPrefix(w.val, "-") || w.val == "-" {
			out = append(out, w)
			continue
		}
		for j := 1; j < len(w.val); j++ {
			c := w.val[j]
			if name == "wait" && c == 'p' && j == len(w.val)-1 && i+1 < len(args) {
				out = append(out, args[i+1]) // wait -p VAR
				i++
				break
			}
			if strings.IndexByte(valued, c) >= 0 {
				if j == len(w.val)-1 {
					i++ // the value is the next word
				}
				break
			}
		}
	}
	if name == "getopts" && len(out) > 0 {
		out = out[1:] // the option string
	}
	return out
}

// shScripts are the shells whose scripts the policy can read.
var shScripts = setOf("sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "rbash")

// shell analyses what a shell runs: the -c string, a script file, or its
// standard input.
func (a *analyzer) shell(p *shellPart, fl *flow) {
	name, args := p.name(), p.words[1:]
	cmode, smode := false, false
	var operand *word
	i := 0
options:
	for ; i < len(args); i++ {
		w := args[i]
		if !w.lit {
			if cmode || strings.HasPrefix(w.lead, "-") || w.lead == "" {
				p.unchecked = name + " has an argument not known before the line runs"
				return
			}
			break
		}
		switch v := w.val; {
		case v == "--" || v == "-":
			i++
			break options
		case v == "--rcfile" || v == "--init-file":
			i++
		case strings.HasPrefix(v, "--"):
			if !shellLongFlags[v] {
				p.unchecked = name + " has an option the policy does not know (" + v + ")"
				return
			}
		case (strings.HasPrefix(v, "-") || strings.HasPrefix(v, "+")) && len(v) > 1:
			for _, c := range v[1:] {
				switch c {
				case 'c':
					cmode = cmode || v[0] == '-'
				case 's':
					smode = true
				case 'o', 'O':
					i++ // the option's name
				}
			}
		default:
			break options
		}
	}
	if i < len(args) {
		operand = &args[i]
	}
	switch {
	case cmode && operand == nil:
		return // bash: -c: option requires an argument
	case cmode:
		if !operand.lit {
			p.unchecked = name + " -c runs a script not known before the line runs"
			return
		}
		a.script(operand.val, fl.sub(), name+" -c")
	case operand != nil && !smode:
		switch {
		case !operand.lit:
			p.unchecked = name + " runs a script not known before the line runs (" + operand.text + ")"
		case stdinNames[operand.val]:
			a.fromStdin(p, fl, name)
		case isFDPath(operand.val):
			p.unchecked = name + " runs a script from a file descriptor the policy cannot see (" + operand.val + ")"
		}
	default:
		a.fromStdin(p, fl, name)
	}
}

var shellLongFlags = setOf("--norc", "--noprofile", "--login", "--posix", "--restricted", "--verbose", "--version",
	"--help", "--noediting", "--debugger", "--pretty-print", "--dump-strings", "--dump-po-strings")

// fromStdin analyses a shell (or source) reading its script from stdin.
func (a *analyzer) fromStdin(p *shellPart, fl *flow, what string) {
	switch fl.stdin.kind {
	case stdinNull:
	case stdinText:
		a.script(fl.stdin.text, fl.sub().withStdin(stdinNone), what+" fed on stdin")
	default:
		p.unchecked = what + " reads its script from stdin, which the policy cannot see"
	}
}

func (a *analyzer) eval(args []word, fl *flow) {
	if len(args) == 0 {
		return
	}
	for _, w := range args {
		if !w.lit {
			a.unchecked("eval runs a string not known before the line runs")
			return
		}
	}
	a.script(strings.Join(vals(args), " "), fl, "eval")
}

func (a *analyzer) source(args []word, fl *flow) {
	if len(args) == 0 {
		return
	}
	w := args[0]
	switch {
	case !w.lit:
		a.unchecked("source runs a file not known before the line runs")
	case stdinNames[w.val]:
		p := &shellPart{}
		a.fromStdin(p, fl, "source")
		if p.unchecked != "" {
			a.unchecked(p.unchecked)
		}
	case isFDPath(w.val):
		a.unchecked("source runs a file descriptor the policy cannot see (" + w.val + ")")
	default:
		fl.lose() // the sourced file may cd anywhere
	}
}

func (a *analyzer) trap(args []word, fl *flow) {
	for len(args) > 0 && args[0].lit && strings.HasPrefix(args[0].val, "-") && args[0].val != "-" {
		if args[0].val == "--" {
			args = args[1:]
			break
		}
		args = args[1:]
	}
	if len(args) < 2 {
		return // trap -p, trap -l, trap SIG: prints or resets
	}
	switch w := args[0]; {
	case !w.lit:
		a.unchecked("trap runs a string not known before the line runs")
	case w.val != "-":
		a.script(w.val, fl.branch(), "trap")
	}
}

// find records what find runs (-exec and kin) and treats -delete's roots
// as removed; -fprint and -fls targets are writes.
func (a *analyzer) find(p *shellPart, fl *flow) []innerCmd {
	roots, expr, _ := findRoots(p.words[1:])
	var out []innerCmd
	for i := 0; i < len(expr); i++ {
		w := expr[i]
		switch w.val {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(expr) && !(expr[j].lit && (expr[j].val == ";" || expr[j].val == "+")) {
				j++
			}
			if j > i+1 {
				in := innerCmd{words: expr[i+1 : j], flow: fl.sub(), origin: origin{findRoots: roots}}
				if strings.HasSuffix(w.val, "dir") {
					in.flow.cwd = a.rootDirs(roots, fl)
				}
				out = append(out, in)
			}
			i = j
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if i+1 < len(expr) {
				a.write(expr[i+1], fl)
			}
		}
	}
	return out
}

// rootDirs is where -execdir runs: somewhere under find's roots.
func (a *analyzer) rootDirs(roots []word, fl *flow) dirSet {
	var out dirSet
	for _, r := range roots {
		ps, ok := a.paths(r, fl.cwd)
		if !ok {
			return unknownDirs()
		}
		out = out.union(known(ps...))
	}
	return out
}

// findRoots splits find's arguments into its starting points and its
// expression. ok is false when a starting point is not known before the
// line runs.
func findRoots(args []word) (roots, expr []word, ok bool) {
	i := 0
	for i < len(args) && args[i].lit {
		v := args[i].val
		if v == "-H" || v == "-L" || v == "-P" || strings.HasPrefix(v, "-O") {
			i++
			continue
		}
		if v == "-D" {
			i += 2
			continue
		}
		break
	}
	ok = true
	for ; i < len(args); i++ {
		w := args[i]
		if w.lit && (strings.HasPrefix(w.val, "-") || w.val == "(" || w.val == "!" || w.val == ")" || w.val == ",") {
			break
		}
		if !w.lit && (w.lead == "" || strings.HasPrefix(w.lead, "-")) {
			ok = false
		}
		roots = append(roots, w)
	}
	if i < len(args) {
		expr = args[i:]
	}
	if len(roots) == 0 {
		roots = []word{{val: ".", lit: true, lead: ".", text: "."}}
	}
	return roots, expr, ok
}

// link records the links `ln` makes, so a later write through one is
// resolved where it really goes; a link it cannot follow makes every later
// path unknown.
func (a *analyzer) link(args []word, fl *flow) {
	ln, ok := parseLn(args)
	if !ok {
		a.linksLost = true
		return
	}
	for _, pr := range a.linkPairs(ln, fl) {
		a.write(pr[1], fl)
		if !a.recordLink(pr[0], pr[1], ln.symbolic, fl) {
			a.linksLost = true
			return
		}
	}
}

// lnArgs are ln's arguments as it reads them.
type lnArgs struct {
	symbolic bool
	dir      *word  // -t DIR
	ops      []word // targets, then the link name unless -t
}

// parseLn reads ln's options; ok is false when an option is not known
// before the line runs.
func parseLn(args []word) (ln lnArgs, ok bool) {
	for i := 0; i < len(args); i++ {
		w := args[i]
		switch {
		case !w.lit && (strings.HasPrefix(w.lead, "-") || w.lead == ""):
			return ln, false
		case !w.lit:
			ln.ops = append(ln.ops, w)
		case w.val == "--":
			ln.ops = append(ln.ops, args[i+1:]...)
			i = len(args)
		case w.val == "-t" || w.val == "-S" || w.val == "--suffix":
			if i+1 < len(args) {
				if w.val == "-t" {
					ln.dir = &args[i+1]
				}
				i++
			}
		case strings.HasPrefix(w.val, "--target-directory="):
			d := w
			d.val = strings.TrimPrefix(w.val, "--target-directory=")
			ln.dir = &d
		case w.val == "--symbolic" || strings.HasPrefix(w.val, "-") && !strings.HasPrefix(w.val, "--") && strings.Contains(w.val, "s"):
			ln.symbolic = true
		case strings.HasPrefix(w.val, "-"):
		default:
			ln.ops = append(ln.ops, w)
		}
	}
	return ln, true
}

// linkPairs are the (target, link) pairs ln makes: into -t's directory,
// into the last operand when it is a directory, the last operand itself,
// or the target's name in the working directory.
func (a *analyzer) linkPairs(ln lnArgs, fl *flow) [][2]word {
	ops := ln.ops
	var pairs [][2]word
	switch {
	case len(ops) == 0:
	case ln.dir != nil:
		for _, t := range ops {
			pairs = append(pairs, [2]word{t, joinWord(*ln.dir, filepath.Base(t.val))})
		}
	case len(ops) == 1:
		pairs = append(pairs, [2]word{ops[0], {val: filepath.Base(ops[0].val), lit: ops[0].lit}})
	case len(ops) == 2 && !a.isDir(ops[1], fl):
		pairs = append(pairs, [2]word{ops[0], ops[1]})
	default:
		last := ops[len(ops)-1]
		for _, t := range ops[:len(ops)-1] {
			pairs = append(pairs, [2]word{t, joinWord(last, filepath.Base(t.val))})
		}
	}
	return pairs
}

// isDir reports whether w names one existing directory.
func (a *analyzer) isDir(w word, fl *flow) bool {
	ps, ok := a.paths(w, fl.cwd)
	if !ok || len(ps) != 1 {
		return false
	}
	fi, err := os.Stat(ps[0])
	return err == nil && fi.IsDir()
}

// recordLink remembers what a link points to: a symbolic link's text, a
// hard link's file. false when it cannot be known.
func (a *analyzer) recordLink(target, link word, symbolic bool, fl *flow) bool {
	ls, ok := a.paths(link, fl.cwd)
	if !ok || !target.lit {
		return false
	}
	for _, l := range ls {
		content := target.val
		if !symbolic {
			ts, ok := a.paths(target, fl.cwd)
			if !ok || len(ts) != 1 {
				return false
			}
			content = ts[0]
		}
		a.links[l] = content
	}
	return true
}

func joinWord(dir word, base string) word {
	d := dir
	d.val = strings.TrimSuffix(dir.val, "/") + "/" + base
	return d
}

// isFDPath reports paths that name an open file descriptor or a pipe
// rather than a file in the workspace.
func isFDPath(p string) bool {
	return strings.HasPrefix(p, "/dev/fd/") || strings.HasPrefix(p, "/proc/self/fd/") ||
		strings.HasPrefix(p, "/proc/thread-self/fd/") || p == "/dev/stdin" || strings.HasPrefix(p, "/dev/tcp/") ||
		strings.HasPrefix(p, "/dev/udp/")
}
