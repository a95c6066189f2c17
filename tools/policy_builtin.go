package tools

import (
	"os"
	"path/filepath"
	"strings"
)

var downloaders = setOf("curl", "wget", "fetch", "aria2c", "http", "https", "xh")

var shells = setOf("sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "csh", "tcsh", "busybox",
	"python", "python2", "python3", "perl", "ruby", "node", "php", "lua", "osascript", "pwsh", "powershell")

func isShellName(name string) bool { return shells[name] }

func setOf(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// unwrap returns the command a wrapper runs (`timeout 5 go test` → `go
// test`), or nil when words is not a wrapper.
func unwrap(words []string) []string {
	if len(words) < 2 {
		return nil
	}
	rest := words[1:]
	skipFlags := func(withArg map[string]bool) []string {
		for len(rest) > 0 && strings.HasPrefix(rest[0], "-") {
			f := rest[0]
			rest = rest[1:]
			if withArg[f] && len(rest) > 0 {
				rest = rest[1:]
			}
		}
		return rest
	}
	switch filepath.Base(words[0]) {
	case "sudo", "doas":
		rest = skipFlags(setOf("-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"))
	case "env":
		rest = skipFlags(setOf("-u", "-C", "-S"))
		for len(rest) > 0 && strings.Contains(rest[0], "=") {
			rest = rest[1:]
		}
	case "nohup", "time", "command", "exec", "builtin", "setsid":
		rest = skipFlags(nil)
	case "nice", "ionice", "chrt", "taskset":
		rest = skipFlags(setOf("-n", "-c", "-p"))
	case "stdbuf":
		rest = skipFlags(nil)
	case "timeout":
		rest = skipFlags(setOf("-s", "-k", "--signal", "--kill-after"))
		if len(rest) > 0 {
			rest = rest[1:] // the duration
		}
	case "xargs":
		rest = skipFlags(setOf("-I", "-n", "-P", "-L", "-d", "-E", "-s", "-a"))
	case "watch":
		rest = skipFlags(setOf("-n", "-d"))
	default:
		return nil
	}
	return rest
}

// findExecs returns the commands of find's -exec/-execdir/-ok arguments.
func findExecs(words []string) [][]string {
	if filepath.Base(words[0]) != "find" {
		return nil
	}
	var out [][]string
	for i := 1; i < len(words); i++ {
		switch words[i] {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(words) && words[j] != ";" && words[j] != "+" && words[j] != `\;` {
				j++
			}
			if j > i+1 {
				out = append(out, words[i+1:j])
			}
			i = j
		}
	}
	return out
}

// builtinDenial says why a simple command is refused whatever the mode
// and the rules, or "".
func builtinDenial(p shellPart, root, cwd string) string {
	name := p.name()
	args := p.Words[1:]
	switch {
	case name == "sudo" || name == "su" || name == "doas" || name == "pkexec" || name == "run0":
		return "privilege escalation (" + name + ") is never allowed"
	case strings.HasPrefix(name, "mkfs") || name == "mke2fs" || name == "mkswap" || name == "fdisk" ||
		name == "sfdisk" || name == "parted" || name == "wipefs":
		return "formatting or partitioning disks (" + name + ") is never allowed"
	case name == "dd":
		for _, a := range args {
			if strings.HasPrefix(a, "of=/dev/") && a != "of=/dev/null" {
				return "dd to a device is never allowed"
			}
		}
	case name == "shutdown" || name == "reboot" || name == "halt" || name == "poweroff" ||
		((name == "init" || name == "telinit") && len(args) > 0 && (args[0] == "0" || args[0] == "6")) ||
		(name == "systemctl" && len(args) > 0 && setOf("poweroff", "reboot", "halt", "suspend", "hibernate", "kexec")[args[0]]):
		return "shutting down or rebooting the machine is never allowed"
	case name == "rm" || name == "shred" || name == "rmdir":
		return destroyOutside(name, args, true, root, cwd)
	case name == "chmod" || name == "chown" || name == "chgrp":
		return destroyOutside(name, args, false, root, cwd)
	}
	return ""
}

// destroyOutside refuses rm/shred (and recursive chmod/chown) of /, the
// home directory or any path outside the workspace. Targets with
// expansions other than ~/$HOME cannot be resolved and are left to the
// other rules (they ask).
func destroyOutside(name string, args []string, always bool, root, cwd string) string {
	recursive, targets, afterDashes := false, []string(nil), false
	for _, a := range args {
		switch {
		case afterDashes || !strings.HasPrefix(a, "-") || a == "-":
			targets = append(targets, a)
		case a == "--":
			afterDashes = true
		case a == "--no-preserve-root":
			return name + " --no-preserve-root is never allowed"
		case a == "--recursive" || (!strings.HasPrefix(a, "--") && strings.ContainsAny(a, "rR")):
			recursive = true
		}
	}
	if !always && !recursive {
		return ""
	}
	if !always && len(targets) > 0 {
		targets = targets[1:] // chmod's mode, chown's owner
	}
	home, _ := os.UserHomeDir()
	for _, t := range targets {
		if strings.ContainsAny(strings.TrimPrefix(strings.TrimPrefix(t, "${HOME}"), "$HOME"), "$`") {
			continue
		}
		abs := expandPath(globBase(t), cwd)
		switch {
		case abs == "/" || abs == filepath.Clean(home):
			return name + " of " + t + " (the root or home directory) is never allowed"
		case !within(root, abs):
			return name + " of " + t + " outside the workspace is never allowed"
		}
	}
	return ""
}

// globBase is the part of a path before its first glob character's
// component: /usr/* → /usr/, * → "".
func globBase(p string) string {
	i := strings.IndexAny(p, "*?[")
	if i < 0 {
		return p
	}
	d := p[:i]
	if j := strings.LastIndex(d, "/"); j >= 0 {
		return d[:j+1]
	}
	return "."
}

// readOnlyCommands change nothing and are allowed without asking (unless
// a redirect or substitution in the line could make them write).
var readOnlyCommands = setOf("ls", "cat", "head", "tail", "wc", "pwd", "echo", "printf", "which", "type", "file",
	"stat", "du", "df", "tree", "diff", "cmp", "uniq", "cut", "tr", "true", "false", "date", "basename", "dirname",
	"realpath", "readlink", "nl", "grep", "egrep", "fgrep", "rg", "ag", "whoami", "uname", "id", "hostname",
	"printenv", "test", "[", "md5sum", "sha1sum", "sha256sum", "sha512sum", "jq", "column", "seq", "expr", "less",
	"more", "cd", "pushd", "popd", "sleep", "od", "hexdump", "xxd", "strings", "comm", "paste", "fold", "rev",
	"tac", "nproc", "free", "uptime", "ps", "lsof")

// readOnlyGit are git subcommands that only read.
var readOnlyGit = setOf("status", "diff", "log", "show", "blame", "ls-files", "ls-tree", "rev-parse", "describe",
	"grep", "shortlog", "cat-file", "rev-list", "merge-base", "show-ref", "whatchanged")

// isReadOnly reports whether a simple command only reads.
func isReadOnly(p shellPart) bool {
	if p.Dynamic || len(p.Words) == 0 {
		return false
	}
	name, args := p.name(), p.Words[1:]
	switch name {
	case "git":
		return readOnlyGitCall(args)
	case "go":
		return len(args) > 0 && setOf("vet", "version", "list", "doc")[args[0]] ||
			len(args) == 1 && args[0] == "env"
	case "gofmt":
		return !hasArg(args, "-w")
	case "find":
		return !hasAnyArg(args, "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls")
	case "sort":
		return !hasArgPrefix(args, "-o", "--output")
	}
	return readOnlyCommands[name]
}

func readOnlyGitCall(args []string) bool {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return false // global options (-c, --git-dir) can change what git runs
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "branch", "tag":
		for _, a := range rest {
			if !setOf("-a", "-r", "-v", "-vv", "--list", "-l", "--show-current", "--all", "--remotes")[a] {
				return false
			}
		}
		return true
	case "remote":
		return len(rest) == 0 || (len(rest) == 1 && rest[0] == "-v")
	case "stash":
		return len(rest) > 0 && (rest[0] == "list" || rest[0] == "show")
	}
	return readOnlyGit[sub] && !hasArgPrefix(rest, "--output", "--ext-diff")
}

func hasArg(args []string, a string) bool { return hasAnyArg(args, a) }

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

func hasArgPrefix(args []string, prefixes ...string) bool {
	for _, a := range args {
		for _, p := range prefixes {
			if strings.HasPrefix(a, p) {
				return true
			}
		}
	}
	return false
}

// subcommandPrograms take a subcommand as their first argument, so a
// grant covers `prog sub *` rather than the whole program.
var subcommandPrograms = setOf("git", "go", "npm", "pnpm", "yarn", "bun", "cargo", "docker", "podman", "kubectl",
	"helm", "make", "pip", "pip3", "poetry", "uv", "gh", "terraform", "dotnet", "mvn", "gradle", "gradlew",
	"bazel", "deno", "rustup", "brew", "apt", "apt-get", "conda", "composer", "bundle", "rake", "mix", "swift",
	"zig", "cmake", "just", "task", "nx", "turbo", "systemctl", "aws", "gcloud", "az", "flutter", "dart")

// riskyPrograms can do anything with their arguments; a grant for them is
// the exact command, never the bare program.
var riskyPrograms = setOf("rm", "rmdir", "mv", "cp", "dd", "chmod", "chown", "chgrp", "ln", "curl", "wget", "ssh",
	"scp", "rsync", "sftp", "ftp", "nc", "ncat", "socat", "telnet", "kill", "pkill", "killall", "eval", "exec",
	"source", ".", "xargs", "find", "env", "sudo", "su", "npx", "bunx", "pipx", "truncate", "shred", "crontab",
	"awk", "gawk", "sed", "perl", "tee", "install", "git-filter-repo")

// derivePrefix turns a simple command into the rule a grant stores:
// `go test ./...` → `go test *`; `ls -la` → `ls *`; risky programs and
// interpreters get their exact command line.
func derivePrefix(p shellPart) string {
	w := p.Words
	name := p.name()
	switch {
	case (name == "python" || name == "python3") && len(w) > 2 && w[1] == "-m":
		return escapeGlob(strings.Join(w[:3], " ")) + " *"
	case subcommandPrograms[name] && len(w) > 1 && !strings.HasPrefix(w[1], "-"):
		return escapeGlob(w[0]+" "+w[1]) + " *"
	case riskyPrograms[name] || shells[name] || p.Dynamic:
		return escapeGlob(p.text())
	}
	return escapeGlob(w[0]) + " *"
}

func escapeGlob(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`)
	return r.Replace(s)
}
