package policy

import (
	"path/filepath"
	"strings"
	"sync"
)

// wrapSpec describes a program that runs another command given in its
// arguments: which options take an argument, how many words come between
// its options and the command, and the options that make it run nothing,
// or run a shell script instead.
type wrapSpec struct {
	short    string // short options without an argument
	shortArg string // short options taking one
	long     string // long options without an argument, space separated
	longArg  string // long options taking one
	skip     int    // words after the options before the command (timeout's duration)
	noRun    string // short options after which no command runs
	script   string // short option whose argument is a shell script
	// shellArgs: without its script option the rest is joined and run by
	// sh -c (watch).
	shellArgs bool
	// assigns: NAME=value words before the command are its environment
	// (env).
	assigns bool
	// chdir is the option that sets the command's working directory.
	chdir string
	// stops: the first operand is the command, options after it are its
	// own (most wrappers use getopt's "+" mode).
}

var wrappers = sync.OnceValue(func() map[string]wrapSpec {
	return map[string]wrapSpec{
		"nohup":      {long: "--help --version"},
		"time":       {short: "apqv", shortArg: "fo", long: "--append --portability --verbose --quiet", longArg: "--format --output"},
		"command":    {short: "p", noRun: "vV"},
		"builtin":    {},
		"exec":       {short: "cl", shortArg: "a"},
		"nice":       {shortArg: "n", longArg: "--adjustment"},
		"ionice":     {short: "t", shortArg: "cn", longArg: "--class --classdata", noRun: "p"},
		"timeout":    {short: "v", shortArg: "sk", long: "--foreground --preserve-status --verbose", longArg: "--signal --kill-after", skip: 1},
		"stdbuf":     {shortArg: "ioe", longArg: "--input --output --error"},
		"setsid":     {short: "cfw", long: "--ctty --fork --wait"},
		"env":        {short: "i0v", shortArg: "uCS", long: "--ignore-environment --null --debug --list-signal-handling", longArg: "--unset --chdir --split-string --block-signal --default-signal --ignore-signal", assigns: true, chdir: "C", script: "S"},
		"xargs":      {short: "0rtpx", shortArg: "EIdLnPsa", long: "--null --no-run-if-empty --verbose --interactive --exit --open-tty --show-limits", longArg: "--eof --replace --max-lines --max-args --max-procs --max-chars --delimiter --arg-file --process-slot-var"},
		"watch":      {short: "dtbegcxpwqr", shortArg: "n", long: "--differences --no-title --beep --errexit --chgexit --color --no-color --exec --precise --no-wrap --no-rerun", longArg: "--interval", shellArgs: true},
		"flock":      {short: "sxunoFE", shortArg: "wE", long: "--shared --exclusive --unlock --nonblock --close --no-fork --verbose", longArg: "--timeout --conflict-exit-code", skip: 1, script: "c"},
		"busybox":    {},
		"toybox":     {},
		"chroot":     {long: "--skip-chdir", longArg: "--userspec --groups", skip: 1},
		"caffeinate": {short: "dimsu", shortArg: "tw"},
		"unbuffer":   {short: "p"},
		"chronic":    {short: "ev"},
		"script":     {short: "aefqE", shortArg: "ctTIOBm", long: "--append --return --flush --force --quiet", longArg: "--command --timing --log-in --log-out --log-io --logging-format --echo", script: "c"},
		"sudo":       {short: "AbEHnPSikKlv", shortArg: "ughpCDrtUT"},
		"doas":       {short: "Lns", shortArg: "uC"},
	}
})

// unwrapped is what a wrapper runs.
type unwrapped struct {
	words   []word       // the command (nil: none, or not a wrapper)
	assigns []assignment // environment it sets for the command
	cwd     *word        // working directory it gives the command
	script  *word        // a shell script it runs instead (watch, flock -c, env -S)
	bad     string       // why the command cannot be found
}

// unwrap returns the command a wrapper runs (`timeout 5 go test` → `go
// test`). An option the policy does not know leaves the command unknown:
// bad says so.
func unwrap(ws []word) unwrapped {
	if len(ws) == 0 || !ws[0].lit {
		return unwrapped{}
	}
	name := filepath.Base(ws[0].val)
	spec, ok := wrappers()[name]
	if !ok {
		return unwrapped{}
	}
	x := &unwrapper{name: name, spec: spec, rest: ws[1:]}
	switch {
	case !x.options() || x.u.script != nil:
		return x.u
	case spec.assigns && !x.assigns():
		return x.u
	case spec.skip > 0 && !x.skip():
		return x.u
	case len(x.rest) == 0 && name == "xargs":
		return unwrapped{words: []word{{val: "echo", lit: true, text: "echo"}}}
	case len(x.rest) == 0:
		return x.u
	case spec.shellArgs && !hasShortFlag(ws[1:len(ws)-len(x.rest)], 'x', "--exec"):
		// watch joins its arguments and runs them with sh -c.
		s := word{val: strings.Join(vals(x.rest), " "), lit: true}
		for _, w := range x.rest {
			s.lit = s.lit && w.lit
		}
		x.u.script = &s
		return x.u
	}
	x.u.words = x.rest
	return x.u
}

// unwrapper reads a wrapper's arguments: rest is what is left to read.
type unwrapper struct {
	name string
	spec wrapSpec
	rest []word
	u    unwrapped
}

// options reads the wrapper's options up to its command. It returns false
// when unwrapping ends there (u says how: bad, or nothing runs).
func (x *unwrapper) options() bool {
	for len(x.rest) > 0 {
		w := x.rest[0]
		v := w.val
		switch {
		case !w.lit && (w.lead == "" || strings.HasPrefix(w.lead, "-")):
			x.u.bad = x.name + " has an argument not known before the line runs"
			return false
		case !w.lit:
			return true
		case v == "--":
			x.rest = x.rest[1:]
			return true
		case x.name == "env" && v == "-": // env - is env -i
			x.rest = x.rest[1:]
			continue
		case !strings.HasPrefix(v, "-") || v == "-":
			return true
		}
		x.rest = x.rest[1:]
		if !x.option(v) {
			return false
		}
	}
	return true
}

// option reads one option word, a long option or a cluster of short
// ones, with the value it takes; the value of the script and working
// directory options is kept.
func (x *unwrapper) option(v string) bool {
	var opt string
	var arg *word
	ok := false
	if strings.HasPrefix(v, "--") {
		opt, arg, ok = x.long(v)
	} else {
		opt, arg, ok = x.shorts(v)
	}
	switch {
	case !ok || arg == nil:
	case opt == x.spec.script || opt == "--split-string" || opt == "--command":
		x.u.script = arg
	case opt == x.spec.chdir || opt == "--chdir":
		x.u.cwd = arg
	}
	return ok
}

func (x *unwrapper) long(v string) (opt string, arg *word, ok bool) {
	n, val, hasVal := strings.Cut(v, "=")
	switch {
	case wordIn(x.spec.longArg, n):
		arg, ok = x.value(val, hasVal)
		return n, arg, ok
	case wordIn(x.spec.long, n) && !hasVal:
		return "", nil, true
	}
	x.u.bad = x.name + " has an option the policy does not know (" + v + ")"
	return "", nil, false
}

// shorts reads a cluster of short options; the first that takes a value
// ends it (-n5, -n 5).
func (x *unwrapper) shorts(v string) (opt string, arg *word, ok bool) {
	for j := 1; j < len(v); j++ {
		c := v[j]
		switch {
		case strings.IndexByte(x.spec.noRun, c) >= 0:
			x.u = unwrapped{} // command -v: nothing runs
			return "", nil, false
		case strings.IndexByte(x.spec.shortArg, c) >= 0:
			arg, ok = x.value(v[j+1:], j+1 < len(v))
			return string(c), arg, ok
		case strings.IndexByte(x.spec.short, c) >= 0:
		case x.name == "nice" && c >= '0' && c <= '9':
			return "", nil, true // nice -5
		default:
			x.u.bad = x.name + " has an option the policy does not know (" + v + ")"
			return "", nil, false
		}
	}
	return "", nil, true
}

// value is an option's value: attached to it, or the next word. ok is
// false when there is none (the wrapper then runs nothing).
func (x *unwrapper) value(attached string, has bool) (*word, bool) {
	switch {
	case has:
		return &word{val: attached, lit: true, lead: attached, text: quoteWord(attached)}, true
	case len(x.rest) > 0:
		arg := &x.rest[0]
		x.rest = x.rest[1:]
		return arg, true
	}
	return nil, false
}

// assigns reads env's NAME=value words, the command's environment; false
// when one is not known before the line runs.
func (x *unwrapper) assigns() bool {
	for len(x.rest) > 0 && x.rest[0].lit && strings.Contains(x.rest[0].val, "=") && !strings.HasPrefix(x.rest[0].val, "=") {
		n, v, _ := strings.Cut(x.rest[0].val, "=")
		x.u.assigns = append(x.u.assigns, assignment{name: n, value: word{val: v, lit: true, text: quoteWord(v)}})
		x.rest = x.rest[1:]
	}
	if len(x.rest) > 0 && !x.rest[0].lit && strings.Contains(x.rest[0].lead, "=") {
		x.u.bad = x.name + " sets a variable not known before the line runs"
		return false
	}
	return true
}

// skip passes the words between the options and the command (timeout's
// duration, flock's lock file); false when unwrapping ends there: too few
// words, or flock FILE -c SCRIPT.
func (x *unwrapper) skip() bool {
	if len(x.rest) < x.spec.skip {
		return false
	}
	if x.name == "flock" && len(x.rest) > 1 && x.rest[1].lit && (x.rest[1].val == "-c" || x.rest[1].val == "--command") {
		if len(x.rest) > 2 {
			x.u.script = &x.rest[2]
		}
		return false
	}
	x.rest = x.rest[x.spec.skip:]
	return true
}

func wordIn(list, w string) bool {
	for _, x := range strings.Fields(list) {
		if x == w {
			return true
		}
	}
	return false
}

// hasShortFlag reports whether options hold flag c (in a cluster) or the
// long form.
func hasShortFlag(opts []word, c byte, long string) bool {
	for _, o := range opts {
		if o.val == long || strings.HasPrefix(o.val, "-") && !strings.HasPrefix(o.val, "--") && strings.IndexByte(o.val[1:], c) >= 0 {
			return true
		}
	}
	return false
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
