package policy

import (
	"strings"
)

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

// safeEnvVars are variables a command may be given in the line and still
// count as read-only: they change how output looks, never what runs.
var safeEnvVars = setOf("LANG", "LANGUAGE", "TZ", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE",
	"COLUMNS", "LINES", "TERM", "COLORTERM", "CI", "POSIXLY_CORRECT", "GREP_COLOR", "GREP_COLORS", "LS_COLORS",
	"TIME_STYLE", "QUOTING_STYLE", "BLOCK_SIZE", "GOOS", "GOARCH", "GOAMD64", "GOARM", "GOARM64", "CGO_ENABLED",
	"RUST_BACKTRACE", "RUST_LOG", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING", "NODE_ENV",
	"GIT_PAGER", "PAGER")

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
	return safeEnvVars[as.name] || strings.HasPrefix(as.name, "LC_")
}

// networkPrograms always use the network; networkSubcommands do for the
// subcommands listed. This is the one list: the analysis marks the parts
// (shellPart.network), which are then not read-only and ask for the
// network apart (network.go). Building or testing can download too (go
// test with a missing module, cargo build): the model says so with
// run_cmd's network parameter.
var networkPrograms = setOf("curl", "wget", "ssh", "scp", "sftp", "nc", "ncat", "netcat", "socat", "telnet", "ftp",
	"ping", "ping6", "dig", "nslookup", "host", "whois", "traceroute", "mtr", "npx", "bunx", "pipx", "uvx", "gh", "aws",
	"gcloud", "az", "kubectl", "helm", "terraform", "http", "https", "xh", "aria2c")

var networkSubcommands = map[string]map[string]bool{
	"git":      setOf("clone", "fetch", "pull", "push", "ls-remote", "submodule"),
	"go":       setOf("get"),
	"npm":      setOf("install", "i", "ci", "add", "update", "upgrade", "publish", "view", "info", "outdated", "audit", "login", "search", "ping", "create", "exec", "x"),
	"pnpm":     setOf("install", "i", "add", "update", "up", "publish", "dlx", "fetch", "create", "outdated", "audit"),
	"yarn":     setOf("install", "add", "upgrade", "up", "publish", "dlx", "create", "npm", "outdated", "audit"),
	"bun":      setOf("install", "i", "add", "update", "x", "create", "publish"),
	"pip":      setOf("install", "download", "index", "search"),
	"pip3":     setOf("install", "download", "index", "search"),
	"uv":       setOf("pip", "sync", "lock", "add", "tool", "python", "run"),
	"poetry":   setOf("install", "add", "update", "lock", "publish"),
	"cargo":    setOf("fetch", "install", "update", "publish", "search", "add", "login"),
	"docker":   setOf("pull", "push", "login", "search", "build", "run"),
	"podman":   setOf("pull", "push", "login", "search", "build", "run"),
	"apt":      setOf("update", "install", "upgrade", "full-upgrade", "download", "source"),
	"apt-get":  setOf("update", "install", "upgrade", "dist-upgrade", "download", "source"),
	"brew":     setOf("install", "update", "upgrade", "fetch", "search", "tap"),
	"gem":      setOf("install", "update", "fetch", "search", "push"),
	"bundle":   setOf("install", "update", "add"),
	"composer": setOf("install", "update", "require", "create-project"),
	"mvn":      setOf("install", "deploy", "dependency:resolve", "dependency:get"),
	"rustup":   setOf("update", "install", "toolchain", "target", "component"),
	"deno":     setOf("install", "add", "cache"),
	"conda":    setOf("install", "update", "create"),
	"dotnet":   setOf("restore", "add", "tool"),
}

// subcommandValueOptions are global options whose value is the next word,
// so it is not the subcommand: git -C dir fetch, go -C dir get.
var subcommandValueOptions = map[string]map[string]bool{
	"git": setOf("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"),
	"go":  setOf("-C"),
}

// needsNetwork reports whether a command is known to need the network.
// Others may use it too; this only names the ones it surely does.
func needsNetwork(p *shellPart) bool {
	name := p.name()
	if networkPrograms[name] {
		return true
	}
	if name == "rsync" {
		for _, w := range p.words[1:] {
			if !strings.HasPrefix(w.val, "-") && strings.Contains(w.val, ":") {
				return true // host:path
			}
		}
	}
	subs, ok := networkSubcommands[name]
	if !ok {
		return false
	}
	args := p.words[1:]
	for i := 0; i < len(args); i++ {
		w := args[i]
		if w.lit && strings.HasPrefix(w.val, "-") {
			if subcommandValueOptions[name][w.val] {
				i++ // the option's value is not the subcommand
			}
			continue
		}
		if !w.lit {
			return false
		}
		if name == "go" {
			return goNeedsNetwork(w.val, args[i+1:])
		}
		return subs[w.val]
	}
	return false
}

// goNeedsNetwork: go get downloads; go mod download, tidy, graph, verify,
// vendor and why may; go install and go run of pkg@version download (of a
// local package they do not).
func goNeedsNetwork(sub string, rest []word) bool {
	switch sub {
	case "get":
		return true
	case "mod":
		for _, w := range rest {
			if w.lit && !strings.HasPrefix(w.val, "-") {
				return w.val != "edit" && w.val != "init"
			}
		}
	case "install", "run":
		for _, w := range rest {
			if strings.Contains(w.val, "@") {
				return true
			}
		}
	}
	return false
}

// riskyOptions are options that make a program run another program (or a
// shell string), by program: a rule with a wildcard never covers a command
// that has one, so `go test *` does not admit `go test -toolexec x`.
var riskyOptions = map[string][]string{
	"go":     {"-toolexec", "-exec", "-vettool", "-ldflags", "-gccgoflags", "-overlay", "-pkgdir", "-o"},
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

// riskyOption names what keeps wildcard rules from covering a part, or "".
func riskyOption(p *shellPart) string {
	name := p.name()
	if name == "git" {
		return gitRisky(p.words[1:])
	}
	opts, ok := riskyOptions[name]
	if (name == "python" || name == "python3") && len(p.words) > 2 && p.words[1].val == "-m" && p.words[2].val == "pytest" {
		opts, ok = riskyOptions["pytest"], true
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
