package policy

import (
	"path/filepath"
	"strings"
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

var wrappers = map[string]wrapSpec{
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
	spec, ok := wrappers[name]
	if !ok {
		return unwrapped{}
	}
	var u unwrapped
	rest := ws[1:]
	for len(rest) > 0 {
		w := rest[0]
		if !w.lit {
			if w.lead == "" || strings.HasPrefix(w.lead, "-") {
				u.bad = name + " has an argument not known before the line runs"
				return u
			}
			break
		}
		v := w.val
		if v == "--" {
			rest = rest[1:]
			break
		}
		if name == "env" && v == "-" { // env - is env -i
			rest = rest[1:]
			continue
		}
		if !strings.HasPrefix(v, "-") || v == "-" {
			break
		}
		rest = rest[1:]
		var arg *word // the option's value, when it takes one
		opt := ""     // the option that took it: a short letter or a long name
		value := func(attached string, has bool) bool {
			switch {
			case has:
				arg = &word{val: attached, lit: true, lead: attached, text: quoteWord(attached)}
			case len(rest) > 0:
				arg, rest = &rest[0], rest[1:]
			default:
				return false
			}
			return true
		}
		if strings.HasPrefix(v, "--") {
			n, val, hasVal := strings.Cut(v, "=")
			switch {
			case wordIn(spec.longArg, n):
				if !value(val, hasVal) {
					return u
				}
				opt = n
			case wordIn(spec.long, n) && !hasVal:
			default:
				u.bad = name + " has an option the policy does not know (" + v + ")"
				return u
			}
		}
		for j := 1; j < len(v) && !strings.HasPrefix(v, "--"); j++ {
			c := v[j]
			switch {
			case strings.IndexByte(spec.noRun, c) >= 0:
				return unwrapped{}
			case strings.IndexByte(spec.shortArg, c) >= 0:
				if !value(v[j+1:], j+1 < len(v)) {
					return u
				}
				opt, j = string(c), len(v)
			case strings.IndexByte(spec.short, c) >= 0:
			case name == "nice" && c >= '0' && c <= '9':
				j = len(v) // nice -5
			default:
				u.bad = name + " has an option the policy does not know (" + v + ")"
				return u
			}
		}
		switch {
		case arg == nil:
		case opt == spec.script || opt == "--split-string" || opt == "--command":
			u.script = arg
		case opt == spec.chdir || opt == "--chdir":
			u.cwd = arg
		}
	}
	if u.script != nil {
		return u
	}
	if spec.assigns {
		for len(rest) > 0 && rest[0].lit && strings.Contains(rest[0].val, "=") && !strings.HasPrefix(rest[0].val, "=") {
			n, v, _ := strings.Cut(rest[0].val, "=")
			u.assigns = append(u.assigns, assignment{name: n, value: word{val: v, lit: true, text: quoteWord(v)}})
			rest = rest[1:]
		}
		if len(rest) > 0 && !rest[0].lit && strings.Contains(rest[0].lead, "=") {
			u.bad = name + " sets a variable not known before the line runs"
			return u
		}
	}
	if spec.skip > 0 {
		if len(rest) < spec.skip {
			return u
		}
		if name == "flock" && len(rest) > 1 && rest[1].lit && (rest[1].val == "-c" || rest[1].val == "--command") {
			if len(rest) > 2 {
				u.script = &rest[2]
			}
			return u
		}
		rest = rest[spec.skip:]
	}
	if len(rest) == 0 {
		if name == "xargs" {
			return unwrapped{words: []word{{val: "echo", lit: true, text: "echo"}}}
		}
		return u
	}
	if spec.shellArgs && !hasShortFlag(ws[1:len(ws)-len(rest)], 'x', "--exec") {
		s := word{val: strings.Join(vals(rest), " "), lit: true}
		for _, w := range rest {
			s.lit = s.lit && w.lit
		}
		u.script = &s
		return u
	}
	u.words = rest
	return u
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
