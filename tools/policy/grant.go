package policy

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentd/agentd/tools"
)

// Grant turns the user's answer to a confirmation into rules. allow_session
// lasts for the session; allow_always and reject_always are stored for the
// workspace. It returns the rules added, as decisions name them.
func (p *Policy) Grant(sessionID string, c *tools.Call, decision tools.Decision) (string, error) {
	var action Action
	scope := ScopeGrant
	switch decision {
	case tools.AllowSession:
		action, scope = Allow, ScopeSession
	case tools.AllowAlways:
		action = Allow
	case tools.RejectAlways:
		action = Deny
	default:
		return "", fmt.Errorf("decision %q stores no rule", decision)
	}
	rules, err := p.deriveRules(sessionID, c, action, scope)
	if err != nil {
		return "", err
	}
	if len(rules) == 0 {
		return "", errors.New("the call needs no rule")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	names := make([]string, len(rules))
	for i, r := range rules {
		names[i] = r.String()
	}
	if scope == ScopeSession {
		p.session[sessionID] = append(p.session[sessionID], rules...)
		return strings.Join(names, "; "), nil
	}
	if p.grantFile == "" {
		return "", errors.New("no state directory to store the rule in")
	}
	next := append(append([]Rule(nil), p.grants...), rules...)
	if err := saveRules(p.grantFile, next); err != nil {
		return "", err
	}
	p.grants = next
	return strings.Join(names, "; "), nil
}

// deriveRules picks what a grant covers: for a command, each part that was
// not already allowed, exactly (`git --no-pager log -1` stores itself, not
// `git *`) or, for a test or build command users approve as a whole, the
// command with any arguments but those that run programs (grantFamilies);
// for writes, each path.
func (p *Policy) deriveRules(sessionID string, c *tools.Call, action Action, scope string) ([]Rule, error) {
	var out []Rule
	for _, w := range c.Writes {
		out = addRule(out, Rule{Tool: "write", Pattern: pathRule(w.Path), Action: action, Scope: scope})
		if w.OldPath != "" {
			out = addRule(out, Rule{Tool: "write", Pattern: pathRule(w.OldPath), Action: action, Scope: scope})
		}
	}
	if c.Host != nil {
		// A host: the grant names it, exactly (a private host's must).
		return addRule(out, Rule{Tool: c.Tool, Pattern: c.Host.Name, Action: action, Scope: scope}), nil
	}
	if c.Command == nil {
		if len(c.Writes) == 0 && c.Effect != tools.EffectRead {
			// A tool only its name describes (an MCP tool): the grant names it.
			out = addRule(out, Rule{Tool: c.Tool, Action: action, Scope: scope})
		}
		return out, nil
	}
	an := p.analyze(c.Command)
	if an.ParseErr != nil {
		return nil, fmt.Errorf("the command cannot be parsed: %w", an.ParseErr)
	}
	if len(an.Denials) > 0 && action == Allow {
		return nil, errors.New("the built-in policy denies this command; no rule can allow it")
	}
	for _, r := range p.grantRules(p.rules(sessionID), an, action, scope) {
		out = addRule(out, r)
	}
	return out, nil
}

// grantRules are the rules a lasting answer stores for a command line:
// the exact text of each part that asks (for a rejection: each part not
// already denied, skipping read-only parts of a chain), and each write.
// A part the built-in denials cannot check (a program in a variable, rm
// of "$X") gets none: it asks every time.
func (p *Policy) grantRules(rules []Rule, an *shellAnalysis, action Action, scope string) []Rule {
	var out []Rule
	quiet := len(an.Writes) == 0 && len(an.NotRO) == 0
	for _, part := range an.Parts {
		if part.unchecked != "" || part.Dynamic {
			continue
		}
		d := decidePart(rules, tools.ModeAsk, part, quiet)
		switch {
		case action == Deny && d.Action != Deny:
			if part.why == "" && len(an.Parts) > 1 {
				continue // rejecting `ls && rm x` must not ban ls
			}
		case d.Action != Ask:
			continue
		}
		pattern := grantPattern(part)
		if f, ok := familyPattern(part); ok && action == Allow {
			pattern = f
		}
		out = addRule(out, Rule{Tool: tools.RunCmdToolName, Pattern: pattern, Action: action, Scope: scope})
	}
	for _, w := range an.Writes {
		if w.Abs == "" {
			continue
		}
		if _, rel, err := tools.ResolvePath(p.root, w.Abs); err == nil {
			out = addRule(out, Rule{Tool: "write", Pattern: pathRule(rel), Action: action, Scope: scope})
		}
	}
	return out
}

// grantPattern is the exact command a grant stores: its environment and
// words, quoted as the shell needs, with glob characters escaped.
func grantPattern(part shellPart) string { return escapeGlob(part.fullText()) }

func addRule(rs []Rule, r Rule) []Rule {
	for _, o := range rs {
		if o.Tool == r.Tool && o.Pattern == r.Pattern {
			return rs
		}
	}
	return append(rs, r)
}

func escapeGlob(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`)
	return r.Replace(s)
}

// grantNote tells the user what a lasting answer would store.
func grantNote(rs []Rule) string {
	var ps []string
	for _, r := range rs {
		p := "`" + r.Pattern + "`"
		if r.Tool != tools.RunCmdToolName {
			p = r.Tool + " " + p
		}
		ps = append(ps, p)
	}
	if len(ps) == 0 {
		return ""
	}
	return "; always allow stores " + strings.Join(ps, ", ")
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
