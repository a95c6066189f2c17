package policy

import (
	"path"
	"strings"

	"github.com/agentd/agentd/tools"
)

// A network tool that names its host (web_fetch) is judged per host: a
// rule {"tool": "web_fetch", "pattern": "docs.github.com"} (or a glob such
// as "*.github.com") allows or denies it, an answer "for this session" or
// "always" stores the host, and without a rule the mode's default for the
// network decides. A host on this machine or a private network is allowed
// only by a rule that names it exactly, never by a glob or by the mode:
// even full-auto asks.

func decideHost(rules []Rule, mode tools.Mode, c *tools.Call) Verdict {
	h := *c.Host
	d, ok := strictestRule(rules, h.Name, func(r *Rule) bool {
		if !toolMatches(r.Tool, c.Tool, "") {
			return false
		}
		if h.Private && r.Action == Allow {
			return r.Pattern == h.Name
		}
		return matchHost(r.Pattern, h.Name)
	})
	switch {
	case ok && !(d.Action == Allow && mode == tools.ModeReadOnly):
		return d
	case mode == tools.ModeReadOnly:
		return modeDefault(mode, tools.EffectNetwork)
	case h.Private:
		return Verdict{Action: Ask, Rule: "private host " + h.Name,
			Reason: h.Name + " is on this machine or a private network: only the user can allow it, by name"}
	}
	return modeDefault(mode, tools.EffectNetwork)
}

// matchHost matches a host against a rule's pattern: the host itself, a
// glob (`*.github.com`), or everything ("" or "*").
func matchHost(pattern, host string) bool {
	pattern = strings.ToLower(pattern)
	if pattern == "" || pattern == "*" || pattern == host {
		return true
	}
	ok, err := path.Match(pattern, host)
	return err == nil && ok
}

// HostAllowed says whether a network tool may reach the host without
// asking: for the redirects a fetch meets.
func (p *Policy) HostAllowed(sessionID string, mode tools.Mode, tool string, h tools.HostAccess) bool {
	c := &tools.Call{Tool: tool, Effect: tools.EffectNetwork, Host: &h}
	return p.Decide(sessionID, mode, c).Action == Allow
}

// HostRefused says whether a network tool is refused every request to the
// host, public or not (read-only mode, a deny rule): the tool then does
// not look the name up, which would already send it out.
func (p *Policy) HostRefused(sessionID string, mode tools.Mode, tool, host string) bool {
	for _, private := range []bool{false, true} {
		c := &tools.Call{Tool: tool, Effect: tools.EffectNetwork, Host: &tools.HostAccess{Name: host, Private: private}}
		if p.Decide(sessionID, mode, c).Action != Deny {
			return false
		}
	}
	return true
}
