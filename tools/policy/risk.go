package policy

import (
	"strings"
	"sync"
)

// safeEnvVars are variables a command may be given in the line and still
// count as read-only: they change how output looks, never what runs.
var safeEnvVars = sync.OnceValue(func() map[string]bool {
	return setOf("LANG", "LANGUAGE", "TZ", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE",
		"COLUMNS", "LINES", "TERM", "COLORTERM", "CI", "POSIXLY_CORRECT", "GREP_COLOR", "GREP_COLORS", "LS_COLORS",
		"TIME_STYLE", "QUOTING_STYLE", "BLOCK_SIZE", "GOOS", "GOARCH", "GOAMD64", "GOARM", "GOARM64", "CGO_ENABLED",
		"RUST_BACKTRACE", "RUST_LOG", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING", "NODE_ENV",
		"GIT_PAGER", "PAGER")
})

// safeEnvAssign reports whether giving a command NAME=value cannot make it
// run code: a name from safeEnvVars (or the locale's LC_*) with a literal
// value. LESSOPEN, GIT_CONFIG_*, GIT_EXTERNAL_DIFF, LD_PRELOAD, PATH,
// GOFLAGS, BASH_ENV and every other name can.
func safeEnvAssign(as assignment) bool {
	if !as.value.lit {
		return false
	}
	if (as.name == "PAGER" || as.name == "GIT_PAGER") && as.value.val != "cat" {
		return false
	}
	return safeEnvVars()[as.name] || strings.HasPrefix(as.name, "LC_")
}

// riskyOptions are options that make a program run another program (or a
// shell string), by program: a rule with a wildcard never covers a command
// that has one, so `go test *` does not admit `go test -toolexec x`.
var riskyOptions = sync.OnceValue(func() map[string][]string {
	return map[string][]string{
		"go":     {"-toolexec", "-exec", "-vettool", "-ldflags", "-gccgoflags", "-compiler", "-overlay", "-pkgdir", "-o"},
		"git":    {"-c", "--config-env", "--exec-path", "-u", "--upload-pack", "--receive-pack", "--exec", "-x", "--ext-diff", "--textconv", "-O", "--open-files-in-pager", "--output", "--extcmd", "--tool", "-t", "--template"},
		"rg":     {"--pre", "--hostname-bin"},
		"ag":     {"--pager"},
		"sort":   {"--compress-program", "-o", "--output"},
		"find":   {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"},
		"sed":    {"-f", "--file", "-i", "--in-place"},
		"awk":    {"-f", "--file", "-i", "--include", "-l", "--load", "-E", "--exec"},
		"gawk":   {"-f", "--file", "-i", "--include", "-l", "--load", "-E", "--exec"},
		"less":   {"-k", "--lesskey-file", "-o", "-O", "--log-file", "-t", "-T"},
		"tar":    {"--to-command", "--use-compress-program", "-I", "--checkpoint-action", "--rsh-command", "-F", "--info-script", "--new-volume-script"},
		"rsync":  {"-e", "--rsh", "--rsync-path"},
		"ssh":    {"-o", "-F"},
		"scp":    {"-o", "-F", "-S"},
		"make":   {"--eval", "-E", "-f", "--file", "--makefile"},
		"npm":    {"--script-shell", "--node-options"},
		"pnpm":   {"--script-shell", "--node-options"},
		"yarn":   {"--script-shell"},
		"cargo":  {"--config", "-Z"},
		"zip":    {"-TT", "--unzip-command"},
		"curl":   {"-K", "--config"},
		"wget":   {"-e", "--execute"},
		"pytest": {"-p"},
		"env":    {"-S", "--split-string"},
		"xargs":  {""}, // its arguments come from its input
	}
})

// riskyOption names what keeps wildcard rules from covering a part, or "".
func riskyOption(p *shellPart) string {
	name := p.name()
	if name == "git" {
		return gitRisky(p.words[1:])
	}
	opts, ok := riskyOptions()[name]
	if (name == "python" || name == "python3") && len(p.words) > 2 && p.words[1].val == "-m" && p.words[2].val == "pytest" {
		opts, ok = riskyOptions()["pytest"], true
	}
	if !ok {
		return ""
	}
	if name == "xargs" {
		return "xargs takes its arguments from its input"
	}
	for _, w := range p.words[1:] {
		if w.lit && w.val == "--" {
			break
		}
		if !w.lit && (w.lead == "" || strings.HasPrefix(w.lead, "-") && !strings.Contains(w.lead, "=")) {
			return name + "'s argument " + w.text + " is not known before the line runs and may be such an option"
		}
		v := w.val
		if !w.lit {
			v = w.lead
		}
		for _, o := range opts {
			if optionMatches(name, v, o) {
				return name + " " + o + " runs another program or writes a file it names"
			}
		}
		if name == "make" && w.lit && strings.Contains(v, "=") && !strings.HasPrefix(v, "-") {
			return "make " + v + " overrides a variable, which can change the commands it runs"
		}
	}
	if name == "sed" {
		for _, s := range sedScripts(p.words[1:]) {
			if strings.Contains(sedScriptWhy(s), "runs") {
				return "sed's script runs a command"
			}
		}
	}
	return ""
}

// optionMatches reports whether argument v is option o: exactly, with a
// value attached, with Go's two-dash spelling, or inside a cluster of
// short options.
func optionMatches(prog, v, o string) bool {
	switch {
	case v == o || strings.HasPrefix(v, o+"="):
		return true
	case prog == "go" || prog == "find":
		return v == "-"+o || strings.HasPrefix(v, "-"+o+"=")
	case len(o) == 2 && o[1] != '-' && strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--"):
		return strings.Contains(v[1:], o[1:])
	}
	return false
}

// gitRisky finds git's options that run programs: -c and kin before the
// subcommand, and the subcommand options that name a program or a file
// to write.
func gitRisky(args []word) string {
	sub := ""
	for i, w := range args {
		v := w.val
		if !w.lit {
			if w.lead == "" || strings.HasPrefix(w.lead, "-") && !strings.Contains(w.lead, "=") {
				return "git's argument " + w.text + " is not known before the line runs and may be such an option"
			}
			v = w.lead
		}
		if v == "--" {
			break
		}
		if sub == "" {
			switch {
			case v == "-c" || v == "--config-env" || strings.HasPrefix(v, "--config-env=") || strings.HasPrefix(v, "--exec-path"):
				return "git " + v + " can make git run any program"
			case !strings.HasPrefix(v, "-"):
				if i > 0 && (args[i-1].val == "-C" || args[i-1].val == "--git-dir" || args[i-1].val == "--work-tree" || args[i-1].val == "--namespace") {
					continue
				}
				sub = v
			}
			continue
		}
		for _, o := range []string{"--exec", "--ext-diff", "--textconv", "--open-files-in-pager", "--output",
			"--extcmd", "--tool", "--upload-pack", "--receive-pack", "--template"} {
			if optionMatches("git", v, o) {
				return "git " + sub + " " + o + " runs another program or writes a file it names"
			}
		}
		short := map[string]string{"grep": "-O", "rebase": "-x", "difftool": "-x", "mergetool": "-t", "fetch": "-u",
			"clone": "-u", "pull": "-u", "ls-remote": "-u"}[sub]
		if short != "" && optionMatches("git", v, short) {
			return "git " + sub + " " + short + " runs another program"
		}
	}
	return ""
}

// sedScripts returns the literal scripts of a sed command, for risk.
func sedScripts(args []word) []string {
	var out []string
	for i, w := range args {
		if w.val == "-e" && i+1 < len(args) {
			out = append(out, args[i+1].val)
		}
	}
	if len(out) == 0 {
		for _, w := range args {
			if !strings.HasPrefix(w.val, "-") {
				return []string{w.val}
			}
		}
	}
	return out
}
