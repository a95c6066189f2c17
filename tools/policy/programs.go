package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/agentd/agentd/internal/lazy"
	"github.com/agentd/agentd/tools"
)

// roSpec is the allow-list of arguments a read-only program may be given:
// options known to change only what it prints. Anything else (an option
// not listed, too many operands, an argument not known before the line
// runs where an option could hide) makes the command not read-only.
type roSpec struct {
	// any: every option only changes what the program prints, so options
	// are not checked (operands still are).
	any      bool
	short    string // short flags without an argument
	shortArg string // short flags taking one (attached or the next word)
	long     string // long options without an argument, space separated
	longArg  string // long options taking one (--x=v or --x v)
	longOpt  string // long options with an optional attached argument (--x or --x=v)
	digits   bool   // -NUM (head -5)
	// maxOps bounds the operands (uniq IN OUT writes OUT); -1 any.
	maxOps int
	// operand checks each operand (date's must be +FORMAT).
	operand func(string) bool
	// plus accepts words starting with + (more +10); nil treats them as
	// operands.
	plus func(string) bool
}

func anyOpts() roSpec { return roSpec{any: true, maxOps: -1} }

// readOnlyPrograms change nothing and run nothing, given the options listed.
var readOnlyPrograms = sync.OnceValue(func() map[string]roSpec {
	return map[string]roSpec{
		"ls": anyOpts(), "cat": anyOpts(), "head": anyOpts(), "tail": anyOpts(), "wc": anyOpts(), "pwd": anyOpts(),
		"echo": anyOpts(), "which": anyOpts(), "type": anyOpts(), "stat": anyOpts(), "du": anyOpts(), "df": anyOpts(),
		"diff": anyOpts(), "cmp": anyOpts(), "cut": anyOpts(), "tr": anyOpts(), "true": anyOpts(), "false": anyOpts(),
		"basename": anyOpts(), "dirname": anyOpts(), "realpath": anyOpts(), "readlink": anyOpts(), "nl": anyOpts(),
		"grep": anyOpts(), "egrep": anyOpts(), "fgrep": anyOpts(), "whoami": anyOpts(), "uname": anyOpts(),
		"id": anyOpts(), "printenv": anyOpts(), "test": anyOpts(), "[": anyOpts(), "md5sum": anyOpts(),
		"sha1sum": anyOpts(), "sha224sum": anyOpts(), "sha256sum": anyOpts(), "sha384sum": anyOpts(),
		"sha512sum": anyOpts(), "b2sum": anyOpts(), "cksum": anyOpts(), "base64": anyOpts(), "jq": anyOpts(),
		"column": anyOpts(), "seq": anyOpts(), "expr": anyOpts(), "cd": anyOpts(), "pushd": anyOpts(),
		"popd": anyOpts(), "sleep": anyOpts(), "od": anyOpts(), "hexdump": anyOpts(), "strings": anyOpts(),
		"comm": anyOpts(), "paste": anyOpts(), "fold": anyOpts(), "rev": anyOpts(), "tac": anyOpts(),
		"nproc": anyOpts(), "free": anyOpts(), "uptime": anyOpts(), "ps": anyOpts(), "lsof": anyOpts(),
		"printf": {maxOps: -1}, // printf -v assigns a variable
		"file": {short: "0bcdEhiklLNnprsSvzZ", shortArg: "efFmP", long: "--brief --debug --dereference --no-dereference " +
			"--keep-going --list --mime --mime-type --mime-encoding --no-buffer --no-pad --print0 --raw --special-files " +
			"--uncompress --uncompress-noreport --extension --apple --help --version", longArg: "--exclude --exclude-quiet " +
			"--files-from --magic-file --separator --parameter", maxOps: -1},
		"tree": {short: "adlfxisugphDFqNQrtvUcSnCAJX", shortArg: "LPIH", long: "--noreport --dirsfirst --filesfirst --du " +
			"--si --prune --matchdirs --ignore-case --gitignore --inodes --device --nolinks --help --version --metafirst " +
			"--info", longArg: "--charset --filelimit --timefmt --sort --gitfile --hintro --houtro", maxOps: -1},
		"date": {short: "Ru", shortArg: "dfr", long: "--rfc-email --utc --universal --debug --help --version --resolution",
			longArg: "--date --file --reference --rfc-3339", longOpt: "--iso-8601", maxOps: 1,
			operand: func(s string) bool { return strings.HasPrefix(s, "+") }},
		"hostname": {short: "aAdfiIsy", long: "--alias --all-fqdns --all-ip-addresses --domain --fqdn --long " +
			"--ip-address --short --nis --yp --help --version", maxOps: 0},
		"uniq": {short: "cdDiuz", shortArg: "fsw", long: "--count --repeated --unique --ignore-case --zero-terminated " +
			"--help --version", longArg: "--skip-fields --skip-chars --check-chars", longOpt: "--all-repeated --group",
			maxOps: 1},
		"sort": {short: "bdfghiMnRrVcCmsuz", shortArg: "ktS", long: "--ignore-leading-blanks --dictionary-order " +
			"--ignore-case --general-numeric-sort --ignore-nonprinting --month-sort --human-numeric-sort --numeric-sort " +
			"--random-sort --reverse --version-sort --check --merge --stable --unique --zero-terminated --debug --help " +
			"--version", longArg: "--key --field-separator --buffer-size --parallel --batch-size --sort --files0-from " +
			"--random-source", longOpt: "--check", maxOps: -1},
		"less": {short: "aBcCdeEfFgGiIJKLmMnNqQrRsSuUVwWX~", shortArg: "bhjpPxyz#", long: "--quit-if-one-screen " +
			"--no-init --RAW-CONTROL-CHARS --raw-control-chars --chop-long-lines --LINE-NUMBERS --line-numbers " +
			"--ignore-case --IGNORE-CASE --squeeze-blank-lines --quiet --silent --QUIET --long-prompt --LONG-PROMPT " +
			"--quit-at-eof --QUIT-AT-EOF --mouse --status-column --help --version", longArg: "--pattern --tabs --shift " +
			"--jump-target --window --prompt --buffers --wheel-lines", maxOps: -1,
			plus: func(string) bool { return false }}, // +cmd runs a less command, ! included
		"more": {short: "dlfpcsu", shortArg: "n", digits: true, maxOps: -1,
			plus: func(s string) bool { return isNumber(s) || strings.HasPrefix(s, "+/") }},
		"rg": {short: "iIsSwxvclLnNHhqoaUuz0.pFbE", shortArg: "egtTABCmjMrfd", long: "--files --files-with-matches " +
			"--files-without-match --count --count-matches --type-list --hidden --no-ignore --no-ignore-vcs " +
			"--no-ignore-parent --no-ignore-dot --no-ignore-global --no-ignore-exclude --no-ignore-files " +
			"--fixed-strings --word-regexp --line-regexp --ignore-case --smart-case --case-sensitive --invert-match " +
			"--json --vimgrep --heading --no-heading --line-number --no-line-number --column --no-column --follow " +
			"--multiline --multiline-dotall --pcre2 --trim --only-matching --null --null-data --stats --debug --trace " +
			"--no-messages --no-config --unrestricted --text --binary --passthru --byte-offset --glob-case-insensitive " +
			"--no-filename --with-filename --quiet --help --version --max-columns-preview --no-unicode --crlf " +
			"--one-file-system --search-zip --sort-files --no-require-git --include-zero --no-pcre2-unicode --auto-hybrid-regex",
			longArg: "--glob --iglob --type --type-not --context --after-context --before-context --max-count " +
				"--max-depth --max-filesize --color --colors --sort --sortr --engine --replace --path-separator " +
				"--threads --max-columns --ignore-file --type-add --type-clear --regexp --file --encoding --dfa-size-limit " +
				"--regex-size-limit --context-separator --field-context-separator --field-match-separator",
			maxOps: -1},
		"ag": {short: "iQsSvwlLcFuUatfH0", shortArg: "ABCGgmp", long: "--nocolor --color --nogroup --group --hidden " +
			"--ignore-case --literal --files-with-matches --files-without-matches --count --column --numbers " +
			"--nonumbers --vimgrep --case-sensitive --smart-case --unrestricted --all-text --search-binary --follow " +
			"--nofollow --only-matching --null --stats --filename --nofilename --heading --noheading --word-regexp " +
			"--invert-match --help --version", longArg: "--depth --ignore --max-count --context --after --before " +
			"--file-search-regex --path-to-ignore", maxOps: -1},
		// env alone prints the whole environment, secrets given to the run
		// included; with a command it is a wrapper.
		"env":     {maxOps: -1},
		"command": {short: "pvV", maxOps: -1},
	}
})

// transparentWrappers run their command and do nothing else that
// matters: read-only when their command is.
var transparentWrappers = sync.OnceValue(func() map[string]bool {
	return setOf("env", "timeout", "nice", "ionice", "stdbuf", "command", "builtin", "time",
		"setsid", "chronic", "unbuffer", "caffeinate")
})

// procReadable are /proc files anyone may read that hold no secret.
var procReadable = lazy.Regexp(`^/proc/(cpuinfo|meminfo|version|loadavg|uptime|stat|mounts|filesystems|` +
	`partitions|diskstats|swaps|vmstat|zoneinfo|sys/.*|self/(status|limits|mountinfo|cgroup))$`)

// readOnlyWhy says why a simple command is not read-only, or "".
func (a *analyzer) readOnlyWhy(p *shellPart, fl *flow) string {
	name, args := p.name(), p.words[1:]
	if _, defined := a.funcs[p.Words[0]]; defined {
		return "" // a function of the line: its body is judged where it runs
	}
	if why := a.programOutside(p.Words[0], fl.cwd); why != "" {
		return why
	}
	if why := a.procReads(args, fl.cwd); why != "" {
		return why
	}
	if why := a.privateReads(args, fl.cwd); why != "" {
		return why
	}
	if spec := readOnlyPrograms()[name]; p.appended && !(spec.any && spec.maxOps < 0) {
		return name + " gets more arguments from xargs's input"
	}
	switch name {
	case "xargs":
		u := unwrap(p.words)
		if fl.stdin.kind == stdinPaths && fl.stdin.nul && u.bad == "" && u.script == nil && u.words != nil &&
			hasShortFlag(args, '0', "--null") {
			return "" // NUL-separated paths under find's roots: no option can hide among them
		}
		return "xargs takes arguments from its input, which may be options"
	case "git":
		return a.gitReadOnly(p, fl)
	case "go":
		return goReadOnly(args)
	case "gofmt":
		return goFlagsReadOnly("gofmt", args, setOf("l", "d", "e", "s"), setOf("r"), -1)
	case "find":
		return findReadOnly(args)
	case "sed":
		return sedReadOnly(args)
	case "awk", "gawk", "mawk", "nawk":
		return awkReadOnly(name, args)
	case "xxd":
		return xxdReadOnly(args)
	case "command":
		if hasShortFlag(args, 'v', "") || hasShortFlag(args, 'V', "") {
			return ""
		}
	}
	if transparentWrappers()[name] && len(args) > 0 {
		u := unwrap(p.words)
		if u.bad == "" && u.script == nil && u.words != nil {
			return "" // its command is judged on its own
		}
		if name != "env" && name != "command" {
			return name + " runs no command the policy can see"
		}
	}
	spec, ok := readOnlyPrograms()[name]
	if !ok {
		return name + " is not a known read-only program"
	}
	if (name == "env" || name == "printenv") && !hasOperand(args) {
		return name + " alone prints the whole environment, secrets included"
	}
	return checkArgs(name, spec, args)
}

// programOutside says why the program a name runs may be a file of the
// workspace (untrusted content: a script named ls or git), or "". A name
// with a slash is that path; a bare name is found in PATH as the shell
// would, and a PATH entry that is relative or inside the workspace makes
// it suspect too.
func (a *analyzer) programOutside(name string, cwd dirSet) string {
	inWorkspace := "it runs " + name + ", which may be a program of the workspace"
	if strings.Contains(name, "/") {
		ps, ok := a.paths(word{val: name, lit: true}, cwd)
		for _, p := range ps {
			ok = ok && !tools.Within(a.root, p)
		}
		if !ok {
			return inWorkspace
		}
		return ""
	}
	if isShellBuiltin()[name] {
		return ""
	}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		dirs := []string{dir}
		if !filepath.IsAbs(dir) {
			if cwd.unknown {
				return inWorkspace
			}
			dirs = nil
			for _, d := range cwd.dirs {
				dirs = append(dirs, filepath.Join(d, dir))
			}
		}
		for _, d := range dirs {
			p := filepath.Join(d, name)
			if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
				continue
			}
			if r, ok := a.physical(p); !ok || tools.Within(a.root, r) {
				return inWorkspace
			}
			return ""
		}
	}
	return ""
}

// isShellBuiltin are bash builtins the read-only lists name: bash runs
// them whatever PATH holds.
var isShellBuiltin = sync.OnceValue(func() map[string]bool {
	return setOf("echo", "printf", "pwd", "type", "test", "[", "true", "false", "cd", "pushd",
		"popd", "command", "builtin", "time")
})

// procReads refuses reads of another process's environment or memory
// (where the daemon keeps the model's key) among a read-only command's
// operands.
// privateReads says why a command that runs in, or names a path in,
// agentd's own directories (a workspace that is the home directory holds
// them) is not read-only: what it reads there is other projects'
// transcripts and the user's rules. The sandbox hides them from commands;
// this makes such a command ask first.
func (a *analyzer) privateReads(args []word, cwd dirSet) string {
	inPrivate := func(p string) string {
		for _, d := range a.private {
			if tools.Within(d, p) {
				return d
			}
		}
		return ""
	}
	for _, d := range cwd.dirs {
		if pd := inPrivate(d); pd != "" {
			return "it runs in " + pd + ", agentd's own state and configuration"
		}
	}
	for _, w := range args {
		if !w.lit && w.lead == "" {
			continue
		}
		v := w
		if !w.lit {
			v = word{val: w.lead, lit: true, lead: w.lead, text: w.lead}
		}
		ps, ok := a.paths(v, cwd)
		if !ok {
			continue
		}
		for _, p := range ps {
			if pd := inPrivate(p); pd != "" {
				return "it reads " + w.text + ", inside " + pd + ", agentd's own state and configuration"
			}
		}
	}
	return ""
}

func (a *analyzer) procReads(args []word, cwd dirSet) string {
	for _, w := range args {
		v := w.val
		if !w.lit {
			v = w.lead
		}
		if strings.HasPrefix(v, "-") {
			continue
		}
		cands := []string{v}
		if w.lit && !filepath.IsAbs(v) && !cwd.unknown {
			cands = nil
			for _, d := range cwd.dirs {
				cands = append(cands, filepath.Join(d, v))
			}
		}
		for _, c := range cands {
			if w.lit {
				c = filepath.Clean(c)
			}
			if strings.HasPrefix(c, "/proc/") && !procReadable().MatchString(c) {
				return "it reads " + w.text + ", another process's state"
			}
		}
	}
	return ""
}

// checkArgs checks a program's arguments against its allow-list.
func checkArgs(name string, spec roSpec, args []word) string {
	ops := 0
	dashdash := false
	for i := 0; i < len(args); i++ {
		w := args[i]
		isOpt := !dashdash && (w.lit && strings.HasPrefix(w.val, "-") && w.val != "-" ||
			!w.lit && (w.lead == "" || strings.HasPrefix(w.lead, "-")))
		if !dashdash && spec.plus != nil && strings.HasPrefix(w.val, "+") {
			if !w.lit || !spec.plus(w.val) {
				return name + " " + w.text + " is not known to be read-only"
			}
			continue
		}
		if !isOpt {
			if w.multi() && spec.maxOps >= 0 {
				return name + "'s operand " + w.text + " may become several, and a later one is written"
			}
			ops++
			if spec.maxOps >= 0 && ops > spec.maxOps {
				return name + " with more than " + plural(spec.maxOps, "operand") + " changes something"
			}
			if spec.operand != nil && (!w.lit || !spec.operand(w.val)) {
				return name + " " + w.text + " changes something"
			}
			continue
		}
		if w.lit && w.val == "--" {
			dashdash = true
			continue
		}
		if spec.any {
			if w.multi() && spec.maxOps >= 0 {
				return name + "'s argument " + w.text + " may become several"
			}
			continue
		}
		if !w.lit && !optionKnown(spec, w.lead) {
			return name + " has an argument not known before the line runs (" + w.text + "), which may be an option"
		}
		consumed, why := checkOption(name, spec, w)
		if why != "" {
			return why
		}
		if consumed {
			if i+1 >= len(args) {
				return ""
			}
			i++
		}
	}
	return ""
}

// optionKnown reports whether the known start of a dynamic word fixes an
// allowed option whose value is what is dynamic (--color=$X, -n$X).
func optionKnown(spec roSpec, lead string) bool {
	if n, _, ok := strings.Cut(lead, "="); ok && strings.HasPrefix(n, "--") {
		return wordIn(spec.longArg, n) || wordIn(spec.longOpt, n)
	}
	if len(lead) >= 2 && lead[0] == '-' && lead[1] != '-' {
		for j := 1; j < len(lead); j++ {
			switch {
			case strings.IndexByte(spec.shortArg, lead[j]) >= 0:
				return true
			case strings.IndexByte(spec.short, lead[j]) < 0:
				return false
			}
		}
	}
	return false
}

// checkOption checks one option word; consumed says it takes the next
// word as its argument.
func checkOption(name string, spec roSpec, w word) (consumed bool, why string) {
	v := w.val
	if !w.lit {
		return false, "" // optionKnown accepted it
	}
	if strings.HasPrefix(v, "--") {
		n, _, hasVal := strings.Cut(v, "=")
		switch {
		case wordIn(spec.longArg, n):
			return !hasVal, ""
		case wordIn(spec.longOpt, n), wordIn(spec.long, n) && !hasVal:
			return false, ""
		}
		return false, name + " " + n + " is not known to be read-only"
	}
	if spec.digits && isNumber(v[1:]) {
		return false, ""
	}
	for j := 1; j < len(v); j++ {
		c := v[j]
		switch {
		case strings.IndexByte(spec.shortArg, c) >= 0:
			return j == len(v)-1, ""
		case strings.IndexByte(spec.short, c) < 0:
			return false, name + " -" + string(c) + " is not known to be read-only"
		}
	}
	return false, ""
}

// goFlagsReadOnly checks Go-style flags (-name, -name=value, -name value;
// one or two dashes, never clustered): bools and flags with a value.
func goFlagsReadOnly(name string, args []word, bools, valued map[string]bool, maxOps int) string {
	ops := 0
	for i := 0; i < len(args); i++ {
		w := args[i]
		v := w.val
		if !w.lit {
			v = w.lead
		}
		if v == "--" {
			ops += len(args) - i - 1
			break
		}
		if !strings.HasPrefix(v, "-") || v == "-" {
			if !w.lit && w.lead == "" {
				return name + " has an argument not known before the line runs (" + w.text + "), which may be a flag"
			}
			ops++
			continue
		}
		f, _, hasVal := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(v, "-"), "-"), "=")
		switch {
		case valued[f]:
			if !hasVal {
				i++
			}
		case bools[f]:
			if !w.lit && !hasVal {
				return name + " -" + f + " with an argument not known before the line runs"
			}
		default:
			return name + " -" + f + " is not known to be read-only"
		}
	}
	if maxOps >= 0 && ops > maxOps {
		return name + " with more than " + plural(maxOps, "operand") + " changes something"
	}
	return ""
}

// goReadOnly allows go version, env (to print), list, doc and vet with
// flags that only change what they report.
func goReadOnly(args []word) string {
	if len(args) == 0 || !args[0].lit {
		return "go without a subcommand the policy can read"
	}
	sub, rest := args[0].val, args[1:]
	build := setOf("tags", "mod", "modfile", "p", "buildvcs")
	buildBools := setOf("v", "x", "n", "trimpath", "race", "a", "json")
	switch sub {
	case "version":
		return goFlagsReadOnly("go version", rest, setOf("m", "v", "json"), nil, -1)
	case "env":
		return goFlagsReadOnly("go env", rest, setOf("json", "changed"), nil, -1)
	case "doc":
		return goFlagsReadOnly("go doc", rest, setOf("all", "c", "cmd", "short", "src", "u"), nil, 2)
	case "list":
		for _, w := range rest {
			if w.lit && (w.val == "-u" || w.val == "-versions" || w.val == "-retracted" || strings.HasPrefix(w.val, "-reuse")) {
				return "go list " + w.val + " needs the network"
			}
		}
		return goFlagsReadOnly("go list", rest, merge(buildBools, setOf("m", "deps", "test", "e", "find", "export",
			"compiled", "json")), merge(build, setOf("f", "json", "pgo")), -1)
	case "vet":
		vetBools := merge(buildBools, goAnalyzers())
		return goVetFlags(rest, vetBools, merge(build, setOf("c")))
	}
	return "go " + sub + " is not a read-only go command"
}

// goVetFlags is goFlagsReadOnly that also takes analyzer options such as
// -printf.funcs=x.
func goVetFlags(args []word, bools, valued map[string]bool) string {
	var plain []word
	for _, w := range args {
		f, _, _ := strings.Cut(strings.TrimLeft(w.val, "-"), "=")
		if a, _, ok := strings.Cut(f, "."); ok && w.lit && strings.HasPrefix(w.val, "-") && goAnalyzers()[a] && strings.Contains(w.val, "=") {
			continue
		}
		plain = append(plain, w)
	}
	return goFlagsReadOnly("go vet", plain, bools, valued, -1)
}

var goAnalyzers = sync.OnceValue(func() map[string]bool {
	return setOf("appends", "asmdecl", "assign", "atomic", "bools", "buildtag", "cgocall", "composites",
		"copylocks", "defers", "directive", "errorsas", "framepointer", "hostport", "httpresponse", "ifaceassert",
		"loopclosure", "lostcancel", "nilfunc", "printf", "shift", "sigchanyzer", "slog", "stdmethods", "stdversion",
		"stringintconv", "structtag", "testinggoroutine", "tests", "timeformat", "unmarshal", "unreachable",
		"unsafeptr", "unusedresult", "waitgroup")
})

func merge(ms ...map[string]bool) map[string]bool {
	out := map[string]bool{}
	for _, m := range ms {
		for k := range m {
			out[k] = true
		}
	}
	return out
}

// findTests are find's expression words that only select or print, with
// the number of arguments each takes.
var findTests = sync.OnceValue(func() map[string]int {
	return map[string]int{
		"-name": 1, "-iname": 1, "-path": 1, "-ipath": 1, "-wholename": 1, "-iwholename": 1, "-regex": 1, "-iregex": 1,
		"-lname": 1, "-ilname": 1, "-type": 1, "-xtype": 1, "-size": 1, "-mtime": 1, "-mmin": 1, "-atime": 1,
		"-amin": 1, "-ctime": 1, "-cmin": 1, "-newer": 1, "-anewer": 1, "-cnewer": 1, "-perm": 1, "-user": 1,
		"-group": 1, "-uid": 1, "-gid": 1, "-links": 1, "-inum": 1, "-samefile": 1, "-maxdepth": 1, "-mindepth": 1,
		"-regextype": 1, "-used": 1, "-fstype": 1, "-printf": 1,
		"-print": 0, "-print0": 0, "-ls": 0, "-prune": 0, "-quit": 0, "-true": 0, "-false": 0, "-empty": 0,
		"-readable": 0, "-writable": 0, "-executable": 0, "-nouser": 0, "-nogroup": 0, "-depth": 0, "-d": 0,
		"-xdev": 0, "-mount": 0, "-follow": 0, "-noleaf": 0, "-daystart": 0, "-ignore_readdir_race": 0,
		"-noignore_readdir_race": 0, "-not": 0, "-a": 0, "-o": 0, "-and": 0, "-or": 0, "!": 0, "(": 0, ")": 0,
		",": 0, "-warn": 0, "-nowarn": 0,
	}
})

var findNewerXY = lazy.Regexp(`^-newer[aBcmt][aBcmt]$`)

// findReadOnly allows find with starting points and an expression made
// only of tests and printing actions (never -exec, -delete, -fprint).
func findReadOnly(args []word) string {
	roots, expr, ok := findRoots(args)
	if !ok {
		return "find has a starting point not known before the line runs, which may be an option"
	}
	for _, r := range roots {
		if r.glob && r.lead == "" {
			return "find's starting point " + r.text + " is a glob, which may expand to an action"
		}
	}
	for i := 0; i < len(expr); i++ {
		w := expr[i]
		if !w.lit {
			return "find's expression has " + w.text + ", not known before the line runs"
		}
		n, ok := findTests()[w.val]
		if !ok && findNewerXY().MatchString(w.val) {
			n, ok = 1, true
		}
		if !ok {
			return "find " + w.val + " is not known to be read-only"
		}
		for j := 0; j < n; j++ {
			i++
			if i < len(expr) && expr[i].multi() {
				return "find's argument " + expr[i].text + " may become several words"
			}
		}
	}
	return ""
}

// xxdReadOnly allows xxd dumping one input to stdout (a second operand is
// written; -r reverses into it).
func xxdReadOnly(args []word) string {
	flags := setOf("-p", "-ps", "-plain", "-postscript", "-i", "-include", "-u", "-E", "-EBCDIC", "-b", "-bits",
		"-a", "-autoskip", "-C", "-capitalize", "-e", "-d", "-v", "-version", "-h", "-help")
	valued := regexp.MustCompile(`^-(c|cols|g|groupsize|l|len|s|seek|o|offset|n|name|R)$`)
	attached := regexp.MustCompile(`^-(c|g|l|s|o)[-+]?(0x)?[0-9a-fA-F]+$`)
	ops := 0
	for i := 0; i < len(args); i++ {
		w := args[i]
		switch {
		case !w.lit:
			if w.lead == "" || strings.HasPrefix(w.lead, "-") || w.multi() {
				return "xxd has an argument not known before the line runs (" + w.text + ")"
			}
			ops++
		case flags[w.val], attached.MatchString(w.val):
		case valued.MatchString(w.val):
			i++
		case strings.HasPrefix(w.val, "-") && w.val != "-":
			return "xxd " + w.val + " is not known to be read-only"
		default:
			ops++
		}
	}
	if ops > 1 {
		return "xxd with two operands writes the second"
	}
	return ""
}

// hasOperand reports whether some argument is not an option.
func hasOperand(args []word) bool {
	for _, w := range args {
		if !w.lit || !strings.HasPrefix(w.val, "-") {
			return true
		}
	}
	return false
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
