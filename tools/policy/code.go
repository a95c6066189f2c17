package policy

import (
	"strings"
	"sync"
)

// The code a line runs as a string: a shell's -c script, file or stdin, eval,
// source and trap. Each is parsed and walked like the line itself
// (analyzer.script), with the working directory and stdin it gets.

// shScripts are the shells whose scripts the policy can read.
var shScripts = sync.OnceValue(func() map[string]bool {
	return setOf("sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "rbash")
})

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
			if !shellLongFlags()[v] {
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
		case stdinNames()[operand.val]:
			a.fromStdin(p, fl, name)
		case isFDPath(operand.val):
			p.unchecked = name + " runs a script from a file descriptor the policy cannot see (" + operand.val + ")"
		}
	default:
		a.fromStdin(p, fl, name)
	}
}

var shellLongFlags = sync.OnceValue(func() map[string]bool {
	return setOf("--norc", "--noprofile", "--login", "--posix", "--restricted", "--verbose", "--version",
		"--help", "--noediting", "--debugger", "--pretty-print", "--dump-strings", "--dump-po-strings")
})

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
	case stdinNames()[w.val]:
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
