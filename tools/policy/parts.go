package policy

import (
	"strings"
	"sync"
)

// origin says where a command found inside another gets the arguments the
// line does not show: xargs appends lines of its input; find -exec
// replaces {} with the paths it finds.
type origin struct {
	xargs     bool
	findRoots []word
}

// addPart records a simple command and judges it, in this order:
//
//  1. the program name and the environment the line gives it (a name not
//     known before the line runs hides it from the denials: unchecked);
//  2. what it does to the shell and the code it runs (special: cd, sh -c,
//     eval, source, ln …; code.go, links.go), and the commands it runs
//     inside it (a wrapper's, find -exec's: wrappers.go);
//  3. its verdict (judge): read-only or why not (programs.go, scripts.go,
//     git.go), the network (network.go), the options that keep a
//     wildcard rule from covering it (risk.go);
//  4. the files its arguments write (outputs.go), confined like
//     redirects;
//  5. the built-in denials (denials.go);
//
// then the commands found in step 2, each the same way.
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
	if why := a.runsDownloaded(p, fl); why != "" { // before special: source may lose track of the directory
		a.deny(why)
	}
	var inner []innerCmd
	if !p.Dynamic {
		inner = a.special(p, fl, o)
	}
	a.judge(p, fl)
	for _, w := range p.words[1:] {
		if w.lit && isTerminal(w.val) && p.why == "" { // cat /dev/tty, stty -F /dev/tty, tee /dev/tty
			p.why = usesTerminal(w.val)
		}
	}
	for _, w := range outputsOf(p) {
		a.writeOut(w, fl)
		if downloaders()[p.name()] { // curl -o install.sh, wget -O x.py
			a.markDownloaded(w, fl)
		}
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
var stdinNames = sync.OnceValue(func() map[string]bool {
	return setOf("/dev/stdin", "-", "/dev/fd/0", "/proc/self/fd/0")
})

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
	case shScripts()[name]:
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
	case nameBuiltins()[name] != "" || name == "unset" || name == "getopts":
		for _, w := range nameOperands(name, args) {
			n, _, _ := strings.Cut(w.val, "=")
			a.nameOperand(word{val: n, lit: w.lit, params: w.params, subst: w.subst, arith: w.arith}, name)
		}
	case name == "printf" || name == "test" || name == "[":
		a.nameOptions(name, args)
	case sedNames[name]:
		for _, script := range sedScripts(args) { // w FILE, s///w FILE: writes like a redirect's
			files, _ := sedWrites(script)
			for _, f := range files {
				a.write(word{val: f, lit: true, lead: f, text: quoteWord(f)}, fl)
			}
		}
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
var nameBuiltins = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"read": "adinNptu", "mapfile": "dnOsuCc", "readarray": "dnOsuCc", "declare": "-", "typeset": "-",
		"local": "-", "export": "-", "readonly": "-", "wait": "-",
	}
})

// nameOperands are the words a builtin reads as variable names.
func nameOperands(name string, args []word) []word {
	valued := nameBuiltins()[name]
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

// isFDPath reports paths that name an open file descriptor or a pipe
// rather than a file in the workspace.
func isFDPath(p string) bool {
	return strings.HasPrefix(p, "/dev/fd/") || strings.HasPrefix(p, "/proc/self/fd/") ||
		strings.HasPrefix(p, "/proc/thread-self/fd/") || p == "/dev/stdin" || strings.HasPrefix(p, "/dev/tcp/") ||
		strings.HasPrefix(p, "/dev/udp/")
}

// judge fills in a part's verdict: read-only or why not, whether it needs
// the network, and what keeps a wildcard rule from covering it.
func (a *analyzer) judge(p *shellPart, fl *flow) {
	if p.Dynamic {
		return
	}
	p.network = needsNetwork(p)
	if r := riskyOption(p); r != "" && p.risky == "" {
		p.risky = r
	}
	if p.why != "" {
		return
	}
	if why := a.readOnlyWhy(p, fl); why != "" {
		p.why = why
	} else if p.network {
		p.why = p.name() + " needs the network"
	}
}
