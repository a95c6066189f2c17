package tools

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Commands run without the network unless it is granted. A command needs it
// when the model says so (run_cmd's network parameter) or when one of its
// parts is a program this file knows reaches the network. Either way the
// user is asked (once, for the session, or always), unless a network rule
// already covers it: `{"tool": "network", "pattern": "go mod download *",
// "action": "allow"}`. Network rules are command patterns like run_cmd's
// and cover the network only; a command rule never grants the network.

// NetworkRuleTool is the tool name of network rules.
const NetworkRuleTool = "network"

// networkPrograms reach the network whatever their arguments.
var networkPrograms = setOf("curl", "wget", "ssh", "scp", "sftp", "ftp", "rsync", "nc", "ncat", "netcat", "socat",
	"telnet", "ping", "ping6", "dig", "nslookup", "host", "whois", "http", "https", "xh", "aria2c", "gh", "aws",
	"gcloud", "az", "kubectl", "helm", "terraform", "npx", "bunx", "pipx", "uvx")

// networkSubcommands are the subcommands of common tools that download or
// upload. Building or testing can download too (go test with a missing
// module, cargo build): the model says so with network: true.
var networkSubcommands = map[string]map[string]bool{
	"git":      setOf("clone", "fetch", "pull", "push", "ls-remote", "submodule", "remote-https", "archive"),
	"go":       setOf("get"),
	"npm":      setOf("install", "i", "ci", "add", "update", "upgrade", "publish", "view", "info", "outdated", "audit", "login", "exec", "create", "init", "dlx"),
	"pnpm":     setOf("install", "i", "add", "update", "up", "publish", "dlx", "fetch", "outdated", "audit", "create"),
	"yarn":     setOf("install", "add", "upgrade", "up", "publish", "dlx", "create", "npm", "outdated", "audit"),
	"bun":      setOf("install", "i", "add", "update", "publish", "x", "create"),
	"pip":      setOf("install", "download", "index", "search"),
	"pip3":     setOf("install", "download", "index", "search"),
	"uv":       setOf("add", "sync", "lock", "pip", "tool", "run"),
	"poetry":   setOf("install", "add", "update", "lock", "publish"),
	"cargo":    setOf("fetch", "install", "update", "publish", "search", "add", "login"),
	"docker":   setOf("pull", "push", "login", "build", "run", "search"),
	"podman":   setOf("pull", "push", "login", "build", "run", "search"),
	"apt":      setOf("update", "install", "upgrade", "download", "source"),
	"apt-get":  setOf("update", "install", "upgrade", "dist-upgrade", "download", "source"),
	"brew":     setOf("install", "update", "upgrade", "fetch", "tap"),
	"gem":      setOf("install", "update", "fetch", "push"),
	"bundle":   setOf("install", "update", "add"),
	"composer": setOf("install", "update", "require", "create-project"),
	"mvn":      setOf("install", "deploy", "dependency:resolve", "dependency:get"),
	"rustup":   setOf("update", "install", "toolchain", "target", "component"),
	"deno":     setOf("install", "add", "cache"),
	"conda":    setOf("install", "update", "create"),
	"dotnet":   setOf("restore", "add", "tool"),
}

// needsNetwork reports whether a simple command is a known network one.
func needsNetwork(p shellPart) bool {
	if len(p.Words) == 0 || p.Dynamic {
		return false
	}
	name := p.name()
	if networkPrograms[name] {
		return true
	}
	subs, ok := networkSubcommands[name]
	if !ok {
		return false
	}
	args := p.Words[1:]
	for i := 0; i < len(args); i++ {
		w := args[i]
		if strings.HasPrefix(w, "-") {
			if name == "git" && (w == "-C" || w == "-c") {
				i++ // git -C dir fetch: the option's value is not the subcommand
			}
			continue
		}
		if subs[w] {
			return true
		}
		switch {
		case name == "go" && w == "mod":
			return slices.Contains(p.Words, "download") || slices.Contains(p.Words, "tidy")
		case name == "go" && (w == "install" || w == "run"):
			// go install pkg@version downloads; go install ./cmd/x does not.
			return slices.ContainsFunc(p.Words, func(a string) bool { return strings.Contains(a, "@") })
		}
		return false
	}
	return false
}

// networkParts lists the parts of a command that need the network: the
// known network programs, or, when the model said the command needs it
// and none is known, every part that is not read-only (the network grant
// then covers those).
func networkParts(an *shellAnalysis, declared bool) []shellPart {
	var out []shellPart
	for _, part := range an.Parts {
		if needsNetwork(part) {
			out = append(out, part)
		}
	}
	if len(out) > 0 || !declared {
		return out
	}
	for _, part := range an.Parts {
		if !isReadOnly(part) {
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
// auto-edit ask, full-auto allows).
func decideNetwork(rules []Rule, mode Mode, parts []shellPart) Verdict {
	allowed := true
	var allowRule string
	for _, part := range parts {
		d, ok := matchNetworkRules(rules, part.text())
		switch {
		case ok && d.Action == Deny:
			d.Reason = "the network is refused for " + part.text() + " (" + d.Reason + ")"
			return d
		case ok && d.Action == Allow && mode != ModeReadOnly:
			allowRule = d.Rule
		default:
			allowed = false
		}
	}
	if allowed && allowRule != "" {
		return Verdict{Action: Allow, Rule: allowRule, Reason: "the network is granted for this command"}
	}
	d := modeDefault(mode, EffectNetwork)
	d.Rule = fmt.Sprintf("network: %s needs the network: %s (mode %s)", parts[0].name(), d.Action, mode)
	d.Reason = "the command needs the network (" + partsText(parts) + ")"
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
// run_cmd or "*" says nothing about the network.
func matchNetworkRules(rules []Rule, cmd string) (Verdict, bool) {
	var net []Rule
	for _, r := range rules {
		if r.Tool == NetworkRuleTool {
			net = append(net, r)
		}
	}
	return matchRules(net, NetworkRuleTool, "", cmd, matchCommand)
}

// GrantNetwork stores the network part of the user's answer to a command
// confirmation that asked for the network: allow_session for the session,
// allow_always for the workspace (a rejection stores no network rule: the
// command's own reject_always rule covers it). Each part that needs the
// network and no rule grants it yet gets the narrowest pattern the policy
// derives for a grant. It returns the rules added, "" when there are none.
func (p *Policy) GrantNetwork(sessionID string, c *Call, decision Decision) (string, error) {
	if c.Command == nil {
		return "", nil
	}
	scope := ScopeGrant
	switch decision {
	case AllowSession:
		scope = ScopeSession
	case AllowAlways:
	default:
		return "", nil
	}
	an := p.analyze(c.Command)
	if an.ParseErr != nil {
		return "", nil
	}
	known := p.rules(sessionID)
	var rules []Rule
	var names []string
	for _, part := range networkParts(an, c.Command.Network) {
		if d, ok := matchNetworkRules(known, part.text()); ok && d.Action == Allow {
			continue
		}
		r := Rule{Tool: NetworkRuleTool, Pattern: derivePrefix(part), Action: Allow, Scope: scope}
		if !slices.ContainsFunc(rules, func(o Rule) bool { return o.Pattern == r.Pattern }) {
			rules = append(rules, r)
			names = append(names, r.String())
		}
	}
	if len(rules) == 0 {
		return "", nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if scope == ScopeSession {
		p.session[sessionID] = append(p.session[sessionID], rules...)
		return strings.Join(names, "; "), nil
	}
	if p.grantFile == "" {
		return "", errors.New("no state directory to store the rule in")
	}
	next := append(slices.Clone(p.grants), rules...)
	if err := saveRules(p.grantFile, next); err != nil {
		return "", err
	}
	p.grants = next
	return strings.Join(names, "; "), nil
}
