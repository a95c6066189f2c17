package policy

import (
	"slices"
	"strconv"
	"strings"
	"sync"
)

// A confined command finds the repository's git directory read-only: a
// command that could write it could write .git/commondir or a submodule's
// config and have the user's next git run its code (docs/security.md). The
// one exception is a line that runs git itself and nothing else, with
// subcommands that change the repository through git's own code only:
// such a line runs with git's safe settings (no hooks, no fsmonitor, no
// pager, no credential helper) and Confine.Git, which lets the kernel
// sandbox open the object store, the refs and the index to it, never the
// configuration, the hooks, info/ or commondir.

// gitWriteSubcommands are what such a line may run: the subcommands that
// record, move and share work, and the read-only ones that show it.
var gitWriteSubcommands = sync.OnceValue(func() map[string]bool {
	return setOf("add", "commit", "checkout", "switch", "restore", "reset", "stash", "merge", "rebase",
		"cherry-pick", "revert", "branch", "tag", "rm", "mv", "apply", "am", "notes", "fetch", "pull", "push",
		"status", "diff", "log", "show", "rev-parse", "ls-files", "blame", "describe", "shortlog", "show-ref", "rev-list",
		"ls-tree", "cat-file", "reflog", "whatchanged", "grep")
})

// gitWriteNetwork are the subcommands among them that use the network: the
// line then runs without git's "protocol.allow never".
var gitWriteNetwork = sync.OnceValue(func() map[string]bool {
	return setOf("fetch", "pull", "push")
})

// gitWriteRisky are options of those subcommands that make git run a
// program or write a file it names, beyond the ones every git part is
// checked for (gitRisky): a merge strategy is a program git-merge-NAME
// looked up in PATH.
var gitWriteRisky = []string{"-s", "--strategy", "--work-tree", "--git-dir", "--prefix", "--exec", "-x",
	"--output", "-o", "--template", "--upload-pack", "--receive-pack", "--ext-diff", "--textconv", "-O",
	"--open-files-in-pager", "--extcmd", "--tool"}

// gitOnly reports whether the line runs git alone: every simple command is
// git (by that name, looked up in PATH) or a cd, every word is literal, no
// environment is given, nothing is redirected or hidden from the checks,
// no global option but those that change nothing git runs (and -C), a
// subcommand of gitWriteSubcommands, none of the options that run a
// program or write a file of the caller's choosing.
func gitOnly(an *shellAnalysis) bool {
	if an.ParseErr != nil || len(an.Parts) == 0 || len(an.Writes) > 0 || len(an.Denials) > 0 ||
		len(an.unchecked()) > 0 || len(an.NotRO) > 0 || an.Network {
		return false
	}
	git := false
	for _, p := range an.Parts {
		if p.Dynamic || p.risky != "" || p.unchecked != "" || p.appended || len(p.assigns) > 0 || len(p.words) == 0 {
			return false
		}
		if slices.ContainsFunc(p.words, func(w word) bool { return !w.lit }) {
			return false
		}
		switch p.words[0].val {
		case "cd", "pushd", "popd":
			continue
		case "git":
		default:
			return false
		}
		if _, ok := gitWriteSub(p.words[1:]); !ok {
			return false
		}
		git = true
	}
	return git
}

// gitWriteSub finds the subcommand of git's arguments and checks them.
func gitWriteSub(args []word) (string, bool) {
	i := 0
	for ; i < len(args); i++ {
		v := args[i].val
		switch {
		case gitGlobalFlags()[v]:
		case v == "-C" && i+1 < len(args):
			i++
		case strings.HasPrefix(v, "-"):
			return "", false // -c, --git-dir, --work-tree, --exec-path, -p (a pager) …
		default:
			sub := v
			if !gitWriteSubcommands()[sub] {
				return "", false
			}
			for _, w := range args[i+1:] {
				if w.val == "--" {
					break
				}
				for _, o := range gitWriteRisky {
					if optionMatches("git", w.val, o) {
						return "", false
					}
				}
			}
			return sub, true
		}
	}
	return "", false
}

// gitWriteExec is a git-only line as it must run: git's safe settings
// exported first (without "protocol.allow never" when a part fetches or
// pushes), and the safe options after git's diff commands.
func gitWriteExec(an *shellAnalysis) string {
	for _, p := range an.Parts {
		if sub, ok := gitWriteSub(p.words[1:]); ok && p.words[0].val == "git" && gitWriteNetwork()[sub] {
			return execWith(an, gitNetworkEnv())
		}
	}
	return safeExec(an)
}

// gitNetworkEnv is gitSafeEnv for a git that fetches or pushes: the same
// configuration but protocol.allow, and nothing that stops it fetching.
func gitNetworkEnv() []string {
	var cfg [][2]string
	for _, kv := range gitSafeConfig {
		if kv[0] != "protocol.allow" {
			cfg = append(cfg, kv)
		}
	}
	env := []string{"GIT_CONFIG_COUNT=" + strconv.Itoa(len(cfg))}
	for i, kv := range cfg {
		env = append(env, "GIT_CONFIG_KEY_"+strconv.Itoa(i)+"="+kv[0], "GIT_CONFIG_VALUE_"+strconv.Itoa(i)+"="+kv[1])
	}
	return append(env, "GIT_PAGER=cat", "PAGER=cat", "GIT_TERMINAL_PROMPT=0")
}
