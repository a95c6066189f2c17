package policy

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentd/agentd/internal/lazy"
	"github.com/agentd/agentd/tools"
)

// gitSafeConfig is the git configuration every auto-allowed git command
// runs with (as GIT_CONFIG_COUNT/KEY/VALUE, which win over every
// configuration file): a repository's configuration, which a command may
// have written, can then run nothing. External diff drivers and textconv
// filters are turned off by options instead (--no-ext-diff
// --no-textconv), since no configuration disables them.
var gitSafeConfig = [][2]string{
	{"core.fsmonitor", "false"},
	{"core.hooksPath", "/dev/null"},
	{"core.pager", "cat"},
	{"core.askPass", ""},
	{"credential.helper", ""},
	{"protocol.allow", "never"},
	{"safe.bareRepository", "explicit"},
	{"log.showSignature", "false"},
	{"gpg.program", "gpg"},
	{"gpg.ssh.program", "ssh-keygen"},
	{"gpg.x509.program", "gpgsm"},
}

// gitSafeEnv is the environment that carries gitSafeConfig, plus what
// keeps git from writing, paging, prompting or fetching.
func gitSafeEnv() []string {
	env := []string{"GIT_CONFIG_COUNT=" + strconv.Itoa(len(gitSafeConfig))}
	for i, kv := range gitSafeConfig {
		env = append(env, "GIT_CONFIG_KEY_"+strconv.Itoa(i)+"="+kv[0], "GIT_CONFIG_VALUE_"+strconv.Itoa(i)+"="+kv[1])
	}
	return append(env, "GIT_OPTIONAL_LOCKS=0", "GIT_PAGER=cat", "PAGER=cat", "GIT_TERMINAL_PROMPT=0",
		"GIT_NO_LAZY_FETCH=1", "LESSSECURE=1")
}

// gitGlobalFlags are git's global options that change nothing git runs.
var gitGlobalFlags = sync.OnceValue(func() map[string]bool {
	return setOf("--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--glob-pathspecs",
		"--noglob-pathspecs", "--icase-pathspecs", "--no-replace-objects", "--no-lazy-fetch", "--no-advice")
})

// gitReadOnly judges a git command: global options from a short list,
// a read-only subcommand with allowed options, run in a repository whose
// configuration predates the session.
func (a *analyzer) gitReadOnly(p *shellPart, fl *flow) string {
	args := p.words[1:]
	cwd := fl.cwd
	i := 0
	for ; i < len(args); i++ {
		w := args[i]
		if !w.lit {
			return "git has an argument not known before the line runs (" + w.text + ")"
		}
		switch {
		case gitGlobalFlags()[w.val]:
		case w.val == "-C" && i+1 < len(args):
			cwd = a.cdTarget(args[i+1], &flow{cwd: cwd, old: fl.old}, false)
			i++
		case w.val == "--version":
			return ""
		case strings.HasPrefix(w.val, "-"):
			return "git " + w.val + " (a global option) can change what git runs"
		default:
			goto sub
		}
	}
	return "git without a subcommand"
sub:
	subw, rest := args[i], args[i+1:]
	if why := gitSubReadOnly(subw.val, rest); why != "" {
		return why
	}
	if why := a.gitTrust(cwd); why != "" {
		return why
	}
	at := subw
	if subw.val == "stash" {
		at = rest[0]
	}
	if text := gitSafeArgs()[subw.val]; text != "" {
		if a.nested() > 0 || !at.located || at.end > len(a.src()) || !strings.Contains(a.src()[at.pos:at.end], at.val) {
			return "git's safe options cannot be added here"
		}
		p.gitSafe = &insertion{at: at.end, text: text}
	}
	return ""
}

// gitSafeArgs are the options added after a subcommand that shows diffs:
// no external diff driver, no textconv filter.
var gitSafeArgs = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"diff": " --no-ext-diff --no-textconv", "log": " --no-ext-diff --no-textconv",
		"show": " --no-ext-diff --no-textconv", "whatchanged": " --no-ext-diff --no-textconv",
		"stash": " --no-ext-diff --no-textconv", "blame": " --no-textconv",
	}
})

// gitSpec is a read-only git subcommand's allowed options.
type gitSpec struct {
	flags    string // long and short options without a value, space separated
	valued   string // options taking a value (--x=v, --x v; short: -xv, -x v)
	prefixes []string
	// diffOpts: the revision and diff options of log, diff and show.
	diffOpts bool
	// operands: false refuses every operand (git branch NAME creates one).
	operands bool
}

var gitSubcommands = sync.OnceValue(func() map[string]gitSpec {
	return map[string]gitSpec{
		"diff":        {diffOpts: true, operands: true, flags: "--cached --staged --merge-base --no-index"},
		"log":         {diffOpts: true, operands: true},
		"show":        {diffOpts: true, operands: true},
		"whatchanged": {diffOpts: true, operands: true},
		"shortlog":    {diffOpts: true, operands: true, flags: "-n -s -e -c --numbered --summary --email --committer", valued: "--group"},
		"rev-list": {diffOpts: true, operands: true, flags: "--count --objects --objects-edge --objects-edge-aggressive " +
			"--unpacked --object-names --no-object-names --timestamp --header --in-commit-order --no-filter " +
			"--filter-print-omitted --exclude-promisor-objects --quiet --disk-usage", valued: "--missing --filter"},
		"diff-tree":  {diffOpts: true, operands: true, flags: "--stdin --no-commit-id --root -t -r"},
		"diff-index": {diffOpts: true, operands: true, flags: "--cached -m"},
		"diff-files": {diffOpts: true, operands: true, flags: "-q -0 -1 -2 -3 --base --ours --theirs"},
		"grep": {operands: true, flags: "-i -I -w -v -n -h -H -l -L -c -o -q -z -E -F -G -P -a -p -W --cached --untracked " +
			"--no-index --recurse-submodules --exclude-standard --no-exclude-standard --full-name --count --break --heading " +
			"--show-function --function-context --and --or --not ( ) --all-match --column --color --no-color " +
			"--line-number --only-matching --null --name-only --files-with-matches --files-without-match --ignore-case " +
			"--word-regexp --invert-match --text --extended-regexp --fixed-strings --basic-regexp --perl-regexp --quiet " +
			"--no-textconv --no-recursive -r --recursive", valued: "-e -f -A -B -C -m --max-depth --max-count " +
			"--threads --context --after-context --before-context --color"},
		"status": {operands: true, flags: "-s -b -v -z -u --short --branch --long --show-stash --verbose --column " +
			"--no-column --ahead-behind --no-ahead-behind --renames --no-renames --null -M",
			prefixes: []string{"--porcelain", "--untracked-files", "-u", "--ignored", "--ignore-submodules", "--find-renames"}},
		"blame": {operands: true, flags: "-b -l -t -s -e -p -w -c -f -n --root --show-stats --porcelain --line-porcelain " +
			"--incremental --reverse --first-parent --progress --no-progress --score-debug --show-name --show-number " +
			"--show-email --minimal --color-lines --color-by-age --no-textconv",
			valued:   "-L --contents --ignore-rev --ignore-revs-file -S --abbrev --date --encoding --since",
			prefixes: []string{"-M", "-C"}},
		"ls-files": {operands: true, flags: "-c -d -m -o -i -s -u -k -z -t -v -f --cached --deleted --modified --others " +
			"--ignored --stage --unmerged --killed --directory --no-empty-directory --eol --exclude-standard " +
			"--error-unmatch --full-name --recurse-submodules --debug --deduplicate --sparse",
			valued: "-x -X --exclude --exclude-from --exclude-per-directory --with-tree --format --abbrev"},
		"ls-tree": {operands: true, flags: "-d -r -t -l -z --long --name-only --name-status --object-only --full-name " +
			"--full-tree", valued: "--abbrev --format"},
		"rev-parse": {operands: true, prefixes: []string{"-"}}, // every rev-parse option only prints
		"describe": {operands: true, flags: "--all --tags --contains --exact-match --debug --long --always --first-parent",
			valued: "--abbrev --candidates --match --exclude", prefixes: []string{"--dirty", "--broken"}},
		"cat-file": {operands: true, flags: "-t -s -e -p --batch-all-objects --buffer --follow-symlinks --unordered " +
			"--allow-unknown-type --use-mailmap --mailmap --no-mailmap -Z",
			prefixes: []string{"--batch", "--batch-check", "--batch-command"}},
		"merge-base": {operands: true, flags: "-a --all --octopus --independent --is-ancestor --fork-point"},
		"show-ref": {operands: true, flags: "--head --heads --tags --branches -d --dereference -s --verify --exists -q --quiet",
			prefixes: []string{"--hash", "--abbrev"}},
		"for-each-ref": {operands: true, flags: "--ignore-case --omit-empty --shell --perl --python --tcl --merged " +
			"--no-merged --contains --no-contains --color",
			valued: "--count --sort --format --points-at --exclude --merged --no-merged --contains --no-contains"},
		"name-rev":      {operands: true, flags: "--tags --all --name-only --no-undefined --always --annotate-stdin", valued: "--refs --exclude"},
		"check-ignore":  {operands: true, flags: "-q -v -n -z --quiet --verbose --stdin --non-matching --no-index"},
		"check-attr":    {operands: true, flags: "-a --all --cached --stdin -z", valued: "--source"},
		"count-objects": {flags: "-v -H --verbose --human-readable"},
		"version":       {flags: "--build-options"},
		"branch": {flags: "-a -r -v -vv -l -i --list --show-current --all --remotes --verbose --ignore-case " +
			"--column --no-column --no-color --no-abbrev --omit-empty",
			valued: "--sort --format --points-at --abbrev", prefixes: []string{"--contains", "--no-contains", "--merged",
				"--no-merged", "--color"}},
		"tag": {flags: "-l -i --list --ignore-case --column --no-column --no-color --omit-empty",
			valued: "--sort --format --points-at", prefixes: []string{"-n", "--contains", "--no-contains", "--merged",
				"--no-merged", "--color"}},
	}
})

// gitDiffFlags and gitDiffValued are the revision and diff options that
// only select and format: everything but --output, --ext-diff and
// --textconv.
var gitDiffFlags = sync.OnceValue(func() map[string]bool {
	return setOf(strings.Fields(`-p -u -s -z -w -b -R -a -D -W -m -c -t -r -i -E -F -P -g
	--patch --no-patch --raw --patch-with-raw --patch-with-stat --stat --numstat --shortstat --summary --name-only
	--name-status --check --full-index --binary --no-renames --minimal --patience --histogram --text
	--ignore-all-space --ignore-space-change --ignore-space-at-eol --ignore-blank-lines --ignore-cr-at-eol
	--function-context --exit-code --quiet --no-prefix --default-prefix --cumulative --compact-summary --no-color
	--graph --oneline --all --branches --tags --remotes --no-merges --merges --first-parent --reverse
	--relative-date --follow --topo-order --date-order --author-date-order --left-right --boundary --full-history
	--dense --sparse --simplify-merges --simplify-by-decoration --show-pulls --source --use-mailmap --mailmap
	--no-mailmap --log-size --no-notes --invert-grep --all-match --regexp-ignore-case --basic-regexp
	--extended-regexp --fixed-strings --perl-regexp --pickaxe-all --pickaxe-regex --cc --dd --remerge-diff
	--combined-all-paths --irreversible-delete --full-diff --walk-reflogs --reflog --not --bisect
	--single-worktree --indexed-objects --parents --children --no-walk --do-walk --abbrev-commit
	--no-abbrev-commit --no-abbrev --no-expand-tabs --show-linear-break --no-ext-diff --no-textconv
	--no-color-moved --no-color-moved-ws --ita-invisible-in-index --ita-visible-in-index --no-relative
	--find-copies-harder --clear-decorations --no-decorate --no-min-parents --no-max-parents --cherry
	--cherry-mark --cherry-pick --show-signature --stdin --exclude-first-parent-only --no-standard-notes
	--standard-notes --show-notes-by-default --no-show-signature --name-only --stat-count --no-indent-heuristic
	--indent-heuristic --ignore-submodules --histogram`)...)
})

var gitDiffValued = sync.OnceValue(func() map[string]bool {
	return setOf(strings.Fields(`-n -S -G -L -O -l --author --committer --grep --grep-reflog --since
	--after --until --before --max-count --skip --max-age --min-age --max-parents --min-parents --since-as-filter
	--stat-width --stat-name-width --stat-graph-width --find-object --diff-filter --ignore-matching-lines -I
	--output-indicator-new --output-indicator-old --output-indicator-context --src-prefix --dst-prefix
	--line-prefix --decorate-refs --decorate-refs-exclude --exclude --glob --anchored --inter-hunk-context
	--diff-algorithm --skip-to --rotate-to --branches --tags --remotes`)...)
})

// gitDiffPrefixes take an optional attached value (--stat=80, -M50%).
var gitDiffPrefixes = []string{"--stat", "--dirstat", "-X", "--word-diff", "--color-words", "--color-moved",
	"--color-moved-ws", "--color", "--unified", "-U", "-M", "-C", "-B", "--find-renames", "--find-copies",
	"--break-rewrites", "--relative", "--submodule", "--ignore-submodules", "--ws-error-highlight", "--decorate",
	"--pretty", "--format", "--abbrev", "--encoding", "--notes", "--show-notes", "--date", "--diff-merges",
	"--ancestry-path", "--expand-tabs", "--no-walk", "--dirstat-by-file", "--cherry", "--output-indicator"}

var gitNumberFlag = lazy.Regexp(`^-[0-9]+$`)

// gitSubReadOnly judges a git subcommand and its options.
func gitSubReadOnly(sub string, rest []word) string {
	switch sub {
	case "stash":
		if len(rest) == 0 || !rest[0].lit || rest[0].val != "list" && rest[0].val != "show" {
			return "git stash changes the repository unless it is stash list or show"
		}
		return gitOptions("stash "+rest[0].val, gitSpec{diffOpts: true, operands: rest[0].val == "show"}, rest[1:])
	case "remote":
		switch {
		case len(rest) == 0, len(rest) == 1 && rest[0].lit && (rest[0].val == "-v" || rest[0].val == "--verbose"):
			return ""
		case rest[0].lit && rest[0].val == "get-url":
			return gitOptions("remote get-url", gitSpec{operands: true, flags: "--push --all"}, rest[1:])
		}
		return "git remote changes or contacts a remote unless it only lists"
	case "reflog":
		if len(rest) > 0 && rest[0].lit && rest[0].val == "show" {
			rest = rest[1:]
		} else if len(rest) > 0 && rest[0].lit && !strings.HasPrefix(rest[0].val, "-") {
			return "git reflog " + rest[0].val + " changes the reflog"
		}
		return gitOptions("reflog", gitSpec{diffOpts: true, operands: true}, rest)
	case "worktree":
		if len(rest) > 0 && rest[0].lit && rest[0].val == "list" {
			return gitOptions("worktree list", gitSpec{flags: "-v --verbose --porcelain -z", valued: "--expire"}, rest[1:])
		}
		return "git worktree changes worktrees unless it is worktree list"
	case "config":
		return gitConfigReadOnly(rest)
	case "branch", "tag":
		spec := gitSubcommands()[sub]
		for _, w := range rest {
			if w.lit && (w.val == "-l" || w.val == "--list") {
				spec.operands = true
			}
		}
		return gitOptions(sub, spec, rest)
	}
	spec, ok := gitSubcommands()[sub]
	if !ok {
		return "git " + sub + " is not a read-only git command"
	}
	return gitOptions(sub, spec, rest)
}

// gitOptions checks a git subcommand's arguments against its spec.
func gitOptions(sub string, spec gitSpec, args []word) string {
	dashdash := false
	for i := 0; i < len(args); i++ {
		w := args[i]
		if dashdash || w.lit && (!strings.HasPrefix(w.val, "-") || w.val == "-") {
			if !spec.operands {
				return "git " + sub + " with an operand changes something"
			}
			if !w.lit && !dashdash && (w.lead == "" || strings.HasPrefix(w.lead, "-")) {
				return "git " + sub + " has an argument not known before the line runs (" + w.text + "), which may be an option"
			}
			continue
		}
		if !w.lit {
			if w.lead == "" || !strings.HasPrefix(w.lead, "-") {
				if !spec.operands {
					return "git " + sub + " with an operand changes something"
				}
				if w.lead == "" {
					return "git " + sub + " has an argument not known before the line runs (" + w.text + "), which may be an option"
				}
				continue
			}
			n, _, hasVal := strings.Cut(w.lead, "=")
			if hasVal && gitValued(spec, n) || gitPrefixed(spec, w.lead) {
				continue
			}
			return "git " + sub + " has an argument not known before the line runs (" + w.text + ")"
		}
		v := w.val
		if v == "--" {
			dashdash = true
			continue
		}
		n, _, hasVal := strings.Cut(v, "=")
		switch {
		case gitValued(spec, n):
			if !hasVal {
				i++
			}
		case gitValued(spec, v[:min(2, len(v))]) && !strings.HasPrefix(v, "--"):
			// -n5, -Sfoo: a short option with its value attached
		case !hasVal && (wordIn(spec.flags, v) || spec.diffOpts && (gitDiffFlags()[v] || gitNumberFlag().MatchString(v))):
		case gitPrefixed(spec, v):
		default:
			return "git " + sub + " " + n + " is not known to be read-only"
		}
	}
	return ""
}

func gitValued(spec gitSpec, n string) bool {
	return wordIn(spec.valued, n) || spec.diffOpts && gitDiffValued()[n]
}

// gitPrefixed accepts an option of the spec's (or the diff options')
// prefixes, alone or with a value attached.
func gitPrefixed(spec gitSpec, v string) bool {
	ps := spec.prefixes
	if spec.diffOpts {
		ps = append(append([]string(nil), ps...), gitDiffPrefixes...)
	}
	for _, p := range ps {
		if p == "-" && strings.HasPrefix(v, "-") {
			return true
		}
		if v == p || strings.HasPrefix(v, p+"=") || !strings.HasPrefix(p, "--") && strings.HasPrefix(v, p) {
			return true
		}
	}
	return false
}

// gitConfigReadOnly allows reading configuration: --get and kin, --list,
// and the get/list subcommands.
func gitConfigReadOnly(args []word) string {
	reading := false
	for _, w := range args {
		if !w.lit {
			return "git config has an argument not known before the line runs (" + w.text + ")"
		}
		switch v := w.val; {
		case v == "get" || v == "list" || v == "--get" || v == "--get-all" || v == "--get-regexp" ||
			v == "--get-urlmatch" || v == "--list" || v == "-l" || v == "--get-color" || v == "--get-colorbool":
			reading = true
		case v == "--show-origin" || v == "--show-scope" || v == "--name-only" || v == "--null" || v == "-z" ||
			v == "--local" || v == "--global" || v == "--system" || v == "--worktree" || v == "--includes" ||
			v == "--no-includes" || v == "--all" || v == "--regexp" || strings.HasPrefix(v, "--type=") ||
			strings.HasPrefix(v, "--default=") || v == "--bool" || v == "--int" || v == "--path":
		case strings.HasPrefix(v, "-"):
			return "git config " + v + " is not known to be read-only"
		}
	}
	if !reading {
		return "git config without --get or --list changes the configuration"
	}
	return ""
}

// gitTrustBase is what the policy knew of the workspace's repositories
// when it loaded: configuration older than since predates the session,
// and rootGit (the workspace's git directory then, if any) is trusted,
// since commands cannot write its configuration.
type gitTrustBase struct {
	since   time.Time
	rootGit string
}

func newGitTrustBase(root string) *gitTrustBase {
	return &gitTrustBase{since: time.Now(), rootGit: gitDirOf(root)}
}

// gitTrust refuses to auto-run git in a repository whose configuration
// changed since the session began (a repository a command made, or a
// link to a git directory it wrote): filters and drivers named there run
// even with git's safe settings.
func (a *analyzer) gitTrust(cwd dirSet) string {
	if a.trust == nil {
		return ""
	}
	if cwd.unknown {
		return "git runs in a directory not known before the line runs"
	}
	for _, d := range cwd.dirs {
		if why := a.trust.check(d, a.root); why != "" {
			return why
		}
	}
	return ""
}

// check finds the repository git would use from dir (inside the
// workspace) and checks that its configuration and link files are older
// than the session, unless it is the workspace's own as it was then.
func (t *gitTrustBase) check(dir, root string) string {
	for d := dir; tools.Within(root, d); d = filepath.Dir(d) {
		dotgit := filepath.Join(d, ".git")
		fi, err := os.Lstat(dotgit)
		if err != nil {
			if d == root {
				break
			}
			continue
		}
		gd := gitDirOf(d)
		if t.rootGit != "" && (gd == t.rootGit || tools.Within(t.rootGit, gd)) {
			return ""
		}
		files := []string{filepath.Join(gd, "config"), filepath.Join(gd, "config.worktree"), filepath.Join(gd, "commondir")}
		if !fi.IsDir() {
			files = append(files, dotgit)
		}
		for _, f := range files {
			if changedSince(f, t.since) {
				return "git would read " + tools.RelPath(root, f) + ", which changed during this session"
			}
		}
		return ""
	}
	return ""
}

// gitDirOf is the git directory of a working tree at d: .git itself, or
// where a .git file points.
func gitDirOf(d string) string {
	dotgit := filepath.Join(d, ".git")
	fi, err := os.Lstat(dotgit)
	switch {
	case err != nil:
		return ""
	case fi.IsDir():
		return dotgit
	case fi.Mode().IsRegular():
		b, err := tools.ReadRegularFile(dotgit, 4<<10)
		if err != nil {
			return ""
		}
		p, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
		if !ok {
			return ""
		}
		p = strings.TrimSpace(p)
		if !filepath.IsAbs(p) {
			p = filepath.Join(d, p)
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return filepath.Clean(p)
	}
	return dotgit // a symlink: judged by what it is, a change since
}

// changedSince reports whether a file's status changed (ctime) at or after
// t. A missing file has not.
func changedSince(path string, t time.Time) bool {
	fi, err := os.Lstat(path)
	if err != nil {
		return false
	}
	return !statChangeTime(fi).Before(t)
}

// gitConfigScripts checks the values of git -c options that git runs as
// commands (aliases with !, pagers, editors, fsmonitor, drivers) against
// the built-in denials.
func (a *analyzer) gitConfigScripts(args []word, fl *flow) {
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.lit || !strings.HasPrefix(w.val, "-") {
			return
		}
		if w.val != "-c" || i+1 >= len(args) {
			continue
		}
		i++
		kv := args[i]
		if !kv.lit {
			a.unchecked("git -c with a setting not known before the line runs")
			continue
		}
		k, v, _ := strings.Cut(kv.val, "=")
		if gitCommandKey().MatchString(strings.ToLower(k)) {
			a.script(strings.TrimPrefix(v, "!"), fl.sub(), "git's "+k)
		}
	}
}

var gitCommandKey = lazy.Regexp(`^(alias\..*|core\.(pager|editor|fsmonitor|sshcommand|askpass|hookspath)|` +
	`pager\..*|diff\.external|diff\..*\.(command|textconv)|filter\..*\.(clean|smudge|process)|merge\..*\.driver|` +
	`credential\.helper|sequence\.editor|gpg\..*program|uploadpack\.packobjectshook|core\.gitproxy)$`)
