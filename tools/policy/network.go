package policy

import (
	"errors"
	"fmt"
	"slices"
	"strings"

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

// networkGrantRules are the network rules a lasting answer stores: the
// exact text of each part that needs the network and that no rule grants
// it yet (never a wildcard, like command grants). A part the built-in
// denials cannot check gets none.
func (p *Policy) networkGrantRules(known []Rule, an *shellAnalysis, declared bool, scope string) []Rule {
	var rules []Rule
	for _, part := range networkParts(an, declared) {
		if part.unchecked != "" || part.Dynamic {
			continue
		}
		if d, ok := matchNetworkRules(known, part); ok && d.Action == Allow {
			continue
		}
		rules = addRule(rules, Rule{Tool: NetworkRuleTool, Pattern: grantPattern(part), Action: Allow, Scope: scope})
	}
	return rules
}

// networkGrantNote tells the user what a lasting answer would store for
// the network.
func networkGrantNote(rs []Rule) string {
	var ps []string
	for _, r := range rs {
		ps = append(ps, "network `"+r.Pattern+"`")
	}
	if len(ps) == 0 {
		return ""
	}
	return "; always allow stores " + strings.Join(ps, ", ")
}

// GrantNetwork stores the network part of the user's answer to a command
// confirmation that asked for the network: allow_session for the session,
// allow_always for the workspace (a rejection stores no network rule: the
// command's own reject_always rule covers it). Each part that needs the
// network and no rule grants it yet gets its exact text, as command grants
// do. It returns the rules added, "" when there are none.
func (p *Policy) GrantNetwork(sessionID string, c *tools.Call, decision tools.Decision) (string, error) {
	if c.Command == nil {
		return "", nil
	}
	scope := ScopeGrant
	switch decision {
	case tools.AllowSession:
		scope = ScopeSession
	case tools.AllowAlways:
	default:
		return "", nil
	}
	an := p.analyze(c.Command)
	if an.ParseErr != nil || len(an.Denials) > 0 {
		return "", nil
	}
	rules := p.networkGrantRules(p.rules(sessionID), an, c.Command.Network, scope)
	if len(rules) == 0 {
		return "", nil
	}
	names := make([]string, len(rules))
	for i, r := range rules {
		names[i] = r.String()
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
