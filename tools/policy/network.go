package policy

import (
	"fmt"
	"strings"
	"sync"

	"github.com/agentd/agentd/tools"
)

// Commands run without the network unless it is granted. A command needs it
// when the model says so (run_cmd's network parameter), when one of its
// parts is a program known to reach the network (risk.go's
// needsNetwork, the one list), or when it opens a connection itself
// (bash's /dev/tcp). Either way the
// user is asked (once, for the session, or always), unless a network rule
// already covers it: `{"tool": "network", "pattern": "go mod download *",
// "action": "allow"}`. Network rules are command patterns like run_cmd's
// and cover the network only; a command rule never grants the network.

// NetworkRuleTool is the tool name of network rules.
const NetworkRuleTool = "network"

// networkParts lists the parts of a command that need the network: the
// known network programs (the shell analysis marks them:
// risk.go's needsNetwork), or, when the model said the command
// needs it and none is known, every part that is not read-only (the
// network grant then covers those), or every part when all are.
func networkParts(an *shellAnalysis, declared bool) []shellPart {
	var out []shellPart
	for _, part := range an.Parts {
		if part.network {
			out = append(out, part)
		}
	}
	if len(out) > 0 || !declared {
		return out
	}
	for _, part := range an.Parts {
		if part.why != "" || part.Dynamic {
			out = append(out, part)
		}
	}
	if len(out) == 0 {
		out = an.Parts
	}
	return out
}

// decideNetwork judges the network a command needs: a deny rule refuses
// it, allow rules covering every part grant it, otherwise the mode's
// default for network access decides (read-only refuses, ask and
// auto-edit ask, full-auto allows). A line that opens a connection itself
// (bash's /dev/tcp) has no part a rule could name: the mode decides.
func decideNetwork(rules []Rule, mode tools.Mode, an *shellAnalysis, parts []shellPart) Verdict {
	allowed := len(parts) > 0 && !an.Network
	var allowRule string
	for _, part := range parts {
		d, ok := matchNetworkRules(rules, part)
		switch {
		case ok && d.Action == Deny:
			d.Reason = "the network is refused for " + part.text() + " (" + d.Reason + ")"
			return d
		case ok && d.Action == Allow && mode != tools.ModeReadOnly:
			allowRule = d.Rule
		default:
			allowed = false
		}
	}
	if allowed && allowRule != "" {
		return Verdict{Action: Allow, Rule: allowRule, Reason: "the network is granted for this command"}
	}
	d := modeDefault(mode, tools.EffectNetwork)
	what, texts := "the line", "the model said so"
	switch {
	case an.Network && len(parts) == 0:
		texts = "a /dev/tcp or /dev/udp redirect"
	case len(parts) > 0:
		what, texts = parts[0].name(), partsText(parts)
	}
	d.Rule = fmt.Sprintf("network: %s needs the network: %s (mode %s)", what, d.Action, mode)
	d.Reason = "the command needs the network (" + texts + ")"
	if d.Action == Deny {
		d.Reason += "; " + string(mode) + " mode gives no command the network"
	}
	return d
}

func partsText(parts []shellPart) string {
	texts := make([]string, len(parts))
	for i, p := range parts {
		texts[i] = p.text()
	}
	return strings.Join(texts, "; ")
}

// matchNetworkRules is matchRules for network rules alone: a rule for
// run_cmd or "*" says nothing about the network. Like command rules, a
// rule matches the part with or without its environment, and an allow
// rule with a wildcard never covers a part with an option that runs
// programs (matchPart).
func matchNetworkRules(rules []Rule, part shellPart) (Verdict, bool) {
	return matchPartBy(rules, part, func(tool string) bool { return tool == NetworkRuleTool })
}

// networkPrograms always use the network; networkSubcommands do for the
// subcommands listed. This is the one list: the analysis marks the parts
// (shellPart.network), which are then not read-only and ask for the
// network apart (network.go). Building or testing can download too (go
// test with a missing module, cargo build): the model says so with
// run_cmd's network parameter.
var networkPrograms = sync.OnceValue(func() map[string]bool {
	return setOf("curl", "wget", "ssh", "scp", "sftp", "nc", "ncat", "netcat", "socat", "telnet", "ftp",
		"ping", "ping6", "dig", "nslookup", "host", "whois", "traceroute", "mtr", "npx", "bunx", "pipx", "uvx", "gh", "aws",
		"gcloud", "az", "kubectl", "helm", "terraform", "http", "https", "xh", "aria2c")
})

var networkSubcommands = sync.OnceValue(func() map[string]map[string]bool {
	return map[string]map[string]bool{
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
})

// subcommandValueOptions are global options whose value is the next word,
// so it is not the subcommand: git -C dir fetch, go -C dir get.
var subcommandValueOptions = sync.OnceValue(func() map[string]map[string]bool {
	return map[string]map[string]bool{
		"git": setOf("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"),
		"go":  setOf("-C"),
	}
})

// needsNetwork reports whether a command is known to need the network.
// Others may use it too; this only names the ones it surely does.
func needsNetwork(p *shellPart) bool {
	name := p.name()
	if networkPrograms()[name] {
		return !onlyLoopback(p)
	}
	if name == "rsync" {
		for _, w := range p.words[1:] {
			if !strings.HasPrefix(w.val, "-") && strings.Contains(w.val, ":") {
				return true // host:path
			}
		}
	}
	subs, ok := networkSubcommands()[name]
	if !ok {
		return false
	}
	args := p.words[1:]
	for i := 0; i < len(args); i++ {
		w := args[i]
		if w.lit && strings.HasPrefix(w.val, "-") {
			if subcommandValueOptions()[name][w.val] {
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
