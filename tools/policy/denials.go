package policy

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/agentd/agentd/tools"
	"mvdan.cc/sh/v3/syntax"
)

var downloaders = sync.OnceValue(func() map[string]bool {
	return setOf("curl", "wget", "fetch", "aria2c", "http", "https", "xh")
})

var shells = sync.OnceValue(func() map[string]bool {
	return setOf("sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "rbash", "fish", "csh",
		"tcsh", "busybox", "python", "python2", "python3", "perl", "ruby", "node", "php", "lua", "osascript", "pwsh",
		"powershell")
})

func isShellName(name string) bool { return shells()[name] }

func setOf(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// denial says why a simple command is refused whatever the mode and the
// rules, or "". It may mark the part unchecked when a target it must see
// is not known before the line runs.
func (a *analyzer) denial(p *shellPart, fl *flow, o origin) string {
	if p.Dynamic {
		return ""
	}
	name := p.name()
	args := p.words[1:]
	switch {
	case name == "sudo" || name == "su" || name == "doas" || name == "pkexec" || name == "run0":
		return "privilege escalation (" + name + ") is never allowed"
	case strings.HasPrefix(name, "mkfs") || name == "mke2fs" || name == "mkswap" || name == "fdisk" ||
		name == "sfdisk" || name == "parted" || name == "wipefs":
		return "formatting or partitioning disks (" + name + ") is never allowed"
	case name == "dd":
		for _, w := range args {
			if strings.HasPrefix(w.val, "of=/dev/") && w.val != "of=/dev/null" {
				return "dd to a device is never allowed"
			}
		}
	case name == "shutdown" || name == "reboot" || name == "halt" || name == "poweroff" ||
		((name == "init" || name == "telinit") && len(args) > 0 && (args[0].val == "0" || args[0].val == "6")) ||
		(name == "systemctl" && len(args) > 0 && setOf("poweroff", "reboot", "halt", "suspend", "hibernate", "kexec")[args[0].val]):
		return "shutting down or rebooting the machine is never allowed"
	case name == "rm" || name == "shred" || name == "rmdir" || name == "unlink":
		return a.destroy(p, name, args, true, fl, o)
	case name == "chmod" || name == "chown" || name == "chgrp":
		return a.destroy(p, name, args, false, fl, o)
	case name == "find":
		roots, expr, ok := findRoots(args)
		for _, w := range expr {
			if w.lit && w.val == "-delete" {
				if !ok {
					p.unchecked = "find -delete from a starting point not known before the line runs"
					return ""
				}
				return a.destroy(p, "find -delete", append([]word{{val: "-r", lit: true}}, roots...), true, fl, origin{})
			}
		}
	case commandRunners()[name]:
		for i := 1; i < len(args); i++ {
			if args[i].lit && denialNames()[filepath.Base(args[i].val)] {
				q := &shellPart{words: args[i:], Words: vals(args[i:])}
				if why := a.denial(q, fl, o); why != "" {
					return why
				}
			}
		}
	}
	return ""
}

// commandRunners run a command given in their arguments behind options
// the policy does not read; the command is found by its name.
var commandRunners = sync.OnceValue(func() map[string]bool {
	return setOf("strace", "ltrace", "valgrind", "unshare", "nsenter", "firejail", "proot", "bwrap",
		"catchsegv", "faketime", "torsocks", "proxychains", "proxychains4", "dbus-run-session", "xvfb-run",
		"systemd-run", "runuser", "setpriv", "capsh", "prlimit", "numactl", "cgexec", "trickle", "ssh", "docker",
		"podman", "kubectl", "chrt", "taskset", "perf", "gdb", "rr")
})

var denialNames = sync.OnceValue(func() map[string]bool {
	return setOf("rm", "shred", "rmdir", "unlink", "sudo", "su", "doas", "pkexec", "run0", "mkfs",
		"mke2fs", "mkswap", "fdisk", "sfdisk", "parted", "wipefs", "dd", "shutdown", "reboot", "halt", "poweroff",
		"init", "telinit", "systemctl", "chmod", "chown", "chgrp", "find")
})

// destroy refuses rm/shred/rmdir (and recursive chmod/chown) of /, the
// home directory or any path outside the workspace, with the targets
// resolved where the command runs, through symlinks. A target not known
// before the line runs makes the part unchecked.
func (a *analyzer) destroy(p *shellPart, name string, args []word, always bool, fl *flow, o origin) string {
	recursive, afterDashes := false, false
	var targets []word
	for _, w := range args {
		switch {
		case afterDashes || !w.lit && !strings.HasPrefix(w.lead, "-") || w.lit && (!strings.HasPrefix(w.val, "-") || w.val == "-"):
			targets = append(targets, w)
		case !w.lit:
			p.unchecked = name + " has an option not known before the line runs"
		case w.val == "--":
			afterDashes = true
		case w.val == "--no-preserve-root":
			return name + " --no-preserve-root is never allowed"
		case w.val == "--recursive" || !strings.HasPrefix(w.val, "--") && strings.ContainsAny(w.val, "rR"):
			recursive = true
		}
	}
	if !always && !recursive {
		return ""
	}
	if !always && len(targets) > 0 {
		targets = targets[1:] // chmod's mode, chown's owner
	}
	if o.xargs {
		switch fl.stdin.kind {
		case stdinPaths:
			for _, r := range strings.Split(fl.stdin.roots, "\x00") {
				targets = append(targets, word{val: r, lit: true, lead: r, text: r})
			}
		case stdinText:
			for _, f := range strings.Fields(fl.stdin.text) {
				targets = append(targets, word{val: f, lit: true, lead: f, text: f})
			}
		case stdinNull:
		default:
			p.unchecked = name + " gets its targets from xargs's input, which the policy cannot see"
		}
	}
	for _, t := range targets {
		if t.lit && t.val == "{}" && o.findRoots != nil {
			for _, r := range o.findRoots {
				if why := a.destroyTarget(p, name, r, fl); why != "" {
					return why
				}
			}
			continue
		}
		if why := a.destroyTarget(p, name, t, fl); why != "" {
			return why
		}
	}
	return ""
}

func (a *analyzer) destroyTarget(p *shellPart, name string, t word, fl *flow) string {
	abs, ok := a.targetPaths(t, fl)
	if !ok {
		p.unchecked = name + "'s target " + t.text + " is not known before the line runs"
		return ""
	}
	for _, x := range abs {
		switch {
		case x == "/" || a.home != "" && x == a.home || x == userHome() && x != "":
			return name + " of " + t.text + " (the root or home directory) is never allowed"
		case !tools.Within(a.root, x):
			return name + " of " + t.text + " outside the workspace is never allowed"
		}
	}
	return ""
}

// targetPaths resolves what a destroying command acts on: a glob acts
// under its literal start; the last component of a path is not followed
// (rm removes a link, not what it points to) unless a slash ends it.
func (a *analyzer) targetPaths(t word, fl *flow) ([]string, bool) {
	if !t.lit {
		if len(t.params) > 0 || t.subst || len(t.arith) > 0 || !t.glob {
			if _, isHome := homePrefix(t); !isHome {
				return nil, false
			}
			return a.paths(t, fl.cwd)
		}
		base := globBase(t.lead)
		return a.paths(word{val: base, lit: true, tilde: t.tilde, lead: base}, fl.cwd)
	}
	p, ok := a.expandTilde(t, fl)
	if !ok {
		return nil, false
	}
	if strings.HasSuffix(p, "/") || filepath.Base(p) == "." || filepath.Base(p) == ".." {
		return a.resolveIn(p, fl.cwd)
	}
	dirs, ok := a.resolveIn(filepath.Dir(p), fl.cwd)
	if !ok {
		return nil, false
	}
	for i, d := range dirs {
		dirs[i] = filepath.Join(d, filepath.Base(p))
	}
	return dirs, true
}

// globBase is the directory a glob acts in: /usr/* → /usr/, * → ".".
func globBase(lead string) string {
	if j := strings.LastIndex(lead, "/"); j >= 0 {
		return lead[:j+1]
	}
	return "."
}

func hasAnyArg(args []string, xs ...string) bool {
	for _, a := range args {
		for _, x := range xs {
			if a == x {
				return true
			}
		}
	}
	return false
}

// downloads reports whether node runs a downloader (curl, wget, …).
func downloads(node syntax.Node) bool {
	found := false
	syntax.Walk(node, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 {
			ws := make([]word, len(c.Args))
			for i, w := range c.Args {
				ws[i] = decodeWord(w, "")
			}
			for len(ws) > 0 {
				if ws[0].lit && downloaders()[filepath.Base(ws[0].val)] {
					found = true
				}
				ws = unwrap(ws).words
			}
		}
		return !found
	})
	return found
}

// A download must not reach a program that runs it (issue 11: curl | sh;
// issue 24: curl | awk '{system($0)}'). The family is every program that
// runs what it is given as code: shells and interpreters, eval and source,
// awk's system() and pipes, sed's e, xargs running a program with the
// download as its arguments, and the programs that read commands on their
// input (at, crontab, parallel, ed, dc, database shells …). A line that
// pipes a download into one, or passes one a download as an argument, is
// refused in every mode; so is a program named by a download.

// stdinRunners run the commands they read on their standard input.
var stdinRunners = sync.OnceValue(func() map[string]bool {
	return setOf("parallel", "at", "batch", "crontab", "ed", "ex", "dc", "sqlite3", "psql", "mysql", "mariadb",
		"tclsh", "expect", "wish", "gdb", "lldb", "jshell", "irb", "Rscript", "R", "julia", "lua", "luajit", "bun", "deno",
		"ksh93", "elvish", "nu", "xonsh", "ipython")
})

// argRunners run code given in their arguments (beside shellNames, eval
// and source): a script, an expression, a command to run.
var argRunners = sync.OnceValue(func() map[string]bool {
	return setOf("awk", "gawk", "mawk", "nawk", "sed", "gsed", "xargs", "find", "parallel", "make", "gmake",
		"git", "vim", "nvim", "vi", "gdb", "env", "watch", "flock", "script", "ssh")
})

// xargsHarmless are the programs xargs may feed a download to: they print
// their arguments, whatever they are.
var xargsHarmless = sync.OnceValue(func() map[string]bool {
	return setOf("echo", "printf", "basename", "dirname", "wc", "true")
})

// runsInput says what in a pipeline stage would run what it reads (""
// for nothing): a shell or interpreter (possibly behind env or sudo), a
// program not known before the line runs ($SHELL), or one of the family
// above.
func runsInput(st *syntax.Stmt, src string) string {
	what := ""
	syntax.Walk(st, func(n syntax.Node) bool {
		c, ok := n.(*syntax.CallExpr)
		if !ok || len(c.Args) == 0 || what != "" {
			return what == ""
		}
		ws := make([]word, len(c.Args))
		for i, w := range c.Args {
			ws[i] = decodeWord(w, src)
		}
		what = stageRuns(ws)
		return false
	})
	return what
}

// stageRuns is runsInput for one command and the commands it wraps.
func stageRuns(ws []word) string {
	for len(ws) > 0 {
		if !ws[0].lit {
			return "a program not known before the line runs"
		}
		name := filepath.Base(ws[0].val)
		switch {
		case isShellName(name) || name == "source" || name == "." || name == "eval":
			return "a shell"
		case stdinRunners()[name]:
			return name + ", which runs the commands it reads"
		case awkNames[name] && awkReadOnly(name, ws[1:]) != "":
			return name + ", whose program may run what it reads (" + awkReadOnly(name, ws[1:]) + ")"
		case sedNames[name] && strings.Contains(sedReadOnly(ws[1:]), "run"):
			return name + ", whose script runs what it reads"
		case unwrap(ws).script != nil:
			return "a shell" // env -S, watch, flock -c: a script run by sh, reading the stage's input
		case name == "xargs":
			inner := unwrap(ws).words
			if len(inner) > 0 && (!inner[0].lit || !xargsHarmless()[filepath.Base(inner[0].val)]) {
				return "xargs, which runs " + inner[0].text + " with what it reads as arguments"
			}
		}
		ws = unwrap(ws).words
	}
	return ""
}

var (
	awkNames = setOf("awk", "gawk", "mawk", "nawk")
	sedNames = setOf("sed", "gsed")
)

// runsCode reports whether a command (behind its wrappers) runs code
// given in its arguments: a shell, an interpreter, eval or source, or one
// of argRunners; or a program not known before the line runs.
func runsCode(ws []word) bool {
	for len(ws) > 0 {
		if !ws[0].lit {
			return true
		}
		n := filepath.Base(ws[0].val)
		if isShellName(n) || n == "eval" || n == "source" || n == "." || argRunners()[n] || stdinRunners()[n] {
			return true
		}
		ws = unwrap(ws).words
	}
	return false
}

// A download saved to a file and run later in the same line (`curl -o
// i.sh … && sh i.sh`, `wget -O x.py … ; python3 x.py`, `curl … > f &&
// chmod +x f && ./f`) is the same as piping it into the program: the
// files a downloader writes are remembered, and a part that runs one (as
// its program, or as the script or code of a program that runs code) is
// refused.

// downloadedTo marks the files a downloading command's output redirects
// fill.
func (a *analyzer) downloadedTo(redirs []*syntax.Redirect, fl *flow) {
	for _, r := range redirs {
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.RdrClob:
			a.markDownloaded(decodeWord(r.Word, a.src()), fl)
		}
	}
}

func (a *analyzer) markDownloaded(w word, fl *flow) {
	ps, ok := a.paths(w, fl.cwd)
	if !ok {
		return
	}
	if a.downloaded == nil {
		a.downloaded = map[string]bool{}
	}
	for _, p := range ps {
		a.downloaded[p] = true
	}
}

// runsDownloaded says why a part runs a file the line downloaded, or "":
// as its program (./f), as a shell's or interpreter's script (sh f,
// python3 f, source f) or as awk's or sed's program file (-f f).
func (a *analyzer) runsDownloaded(p *shellPart, fl *flow) string {
	if len(a.downloaded) == 0 || p.Dynamic {
		return ""
	}
	is := func(w word) bool {
		ps, ok := a.paths(w, fl.cwd)
		return ok && slices.ContainsFunc(ps, func(x string) bool { return a.downloaded[x] })
	}
	if strings.Contains(p.words[0].val, "/") && is(p.words[0]) {
		return "running a downloaded file (" + p.words[0].text + ")"
	}
	if code := codeFile(p); code != nil && is(*code) {
		return "running a downloaded file with " + p.name() + " (" + code.text + ")"
	}
	return ""
}

// codeFile is the file a part runs as code, nil when none: a shell's or
// interpreter's first operand, source's, awk's or sed's -f.
func codeFile(p *shellPart) *word {
	name, args := p.name(), p.words[1:]
	switch {
	case awkNames[name] || sedNames[name]:
		for i, w := range args {
			switch {
			case (w.val == "-f" || w.val == "--file") && i+1 < len(args):
				return &args[i+1]
			case strings.HasPrefix(w.val, "--file="):
				v := strings.TrimPrefix(w.val, "--file=")
				return &word{val: v, lit: w.lit, lead: v, text: v}
			}
		}
	case isShellName(name) || name == "source" || name == ".":
		for i, w := range args {
			if w.lit && w.val != "-" && !strings.HasPrefix(w.val, "-") {
				return &args[i]
			}
		}
	}
	return nil
}
