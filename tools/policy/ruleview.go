package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/agentd/agentd/tools"
)

// The rules a user can see and take back (issue 31): every rule the policy
// applies, listed with where it comes from; the ones the user's own answers
// stored ("always" for the workspace, "for this session") can be revoked
// or edited. Rules of files the user writes (their rules.json, the
// workspace's) are listed, not changed: the file is theirs.

// RuleScope says where a listed rule comes from, in the protocol's words.
type RuleScope string

// Rule scopes as lists show them.
const (
	RuleBuiltin   RuleScope = "built-in"
	RuleUser      RuleScope = "user"
	RuleWorkspace RuleScope = "workspace"
	RuleAlways    RuleScope = "always"
	RuleSession   RuleScope = "session"
)

// RuleScopes lists every rule scope.
var RuleScopes = []RuleScope{RuleBuiltin, RuleUser, RuleWorkspace, RuleAlways, RuleSession}

// Actions lists the actions a rule may take.
var Actions = []Action{Allow, Ask, Deny}

// ErrUnknownRule: no rule has that id (it was revoked, or edited since).
var ErrUnknownRule = errors.New("unknown rule")

// ErrRuleFixed: the rule lives in a file the user edits, not in the
// policy's grants.
var ErrRuleFixed = errors.New("rule not revocable")

// RuleInfo is one rule as a list shows it.
type RuleInfo struct {
	// ID names the rule for RevokeRule and EditRule: stable while the rule
	// is unchanged.
	ID      string    `json:"id"`
	Tool    string    `json:"tool"`
	Pattern string    `json:"pattern"`
	Action  Action    `json:"action"`
	Scope   RuleScope `json:"scope"`
	// Revocable: stored by the user's answers (always, session), so it can
	// be revoked and edited.
	Revocable bool `json:"revocable,omitempty"`
}

// RuleFiles are the files rules are read from.
type RuleFiles struct {
	User      string `json:"user,omitempty"`
	Workspace string `json:"workspace"`
	Grants    string `json:"grants,omitempty"`
}

// RuleChange is an edit of a rule: an empty field stays as it is.
type RuleChange struct {
	Tool    string
	Pattern *string
	Action  Action
}

func scopeOf(s string) RuleScope {
	switch s {
	case ScopeBuiltin:
		return RuleBuiltin
	case ScopeUser:
		return RuleUser
	case ScopeWorkspace:
		return RuleWorkspace
	case ScopeGrant:
		return RuleAlways
	}
	return RuleSession
}

func infoOf(r Rule) RuleInfo {
	sc := scopeOf(r.Scope)
	sum := sha256.Sum256([]byte(string(sc) + "\x00" + r.Tool + "\x00" + r.Pattern + "\x00" + string(r.Action)))
	return RuleInfo{ID: "rule_" + hex.EncodeToString(sum[:8]), Tool: r.Tool, Pattern: r.Pattern, Action: r.Action,
		Scope: sc, Revocable: sc == RuleAlways || sc == RuleSession}
}

// Rules lists every rule the policy applies to a session's calls ("" for
// none: no session rules), in the order the policy holds them: built-in,
// the user's, the workspace's, the stored answers, the session's. The
// workspace's allow rules, which grant nothing, are left out.
func (p *Policy) Rules(sessionID string) []RuleInfo {
	rs := p.rules(sessionID)
	out := make([]RuleInfo, 0, len(rs))
	for _, r := range rs {
		out = append(out, infoOf(r))
	}
	return out
}

// RuleFiles says where the policy reads its rules.
func (p *Policy) RuleFiles(userConfigDir string) RuleFiles {
	f := RuleFiles{Workspace: filepath.Join(p.root, ".agentd", "rules.json"), Grants: p.grantFile}
	if userConfigDir != "" {
		f.User = filepath.Join(userConfigDir, "rules.json")
	}
	return f
}

// RevokeRule takes back a rule the user's answers stored: an "always" rule
// is removed from the workspace's grants (the file is rewritten), a
// session's from the session. The next call it covered asks again.
func (p *Policy) RevokeRule(sessionID, id string) error {
	_, err := p.changeRule(sessionID, id, nil)
	return err
}

// EditRule changes a rule the user's answers stored, in place; it returns
// the rule as it is now.
func (p *Policy) EditRule(sessionID, id string, c RuleChange) (RuleInfo, error) {
	return p.changeRule(sessionID, id, &c)
}

// changeRule removes the rule (c nil) or replaces it by its edit. p.mu is
// taken; an "always" change is saved before it applies.
func (p *Policy) changeRule(sessionID, id string, c *RuleChange) (RuleInfo, error) {
	for _, r := range p.fixed {
		if infoOf(r).ID == id {
			return RuleInfo{}, fmt.Errorf("%w: %s is a %s rule; it lives in %s", ErrRuleFixed, r, r.Scope, p.fixedHome(r.Scope))
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	list, session := p.grants, false
	i := slices.IndexFunc(list, func(r Rule) bool { return infoOf(r).ID == id })
	if i < 0 && sessionID != "" {
		list, session = p.session[sessionID], true
		i = slices.IndexFunc(list, func(r Rule) bool { return infoOf(r).ID == id })
	}
	if i < 0 {
		return RuleInfo{}, fmt.Errorf("%w: %s", ErrUnknownRule, id)
	}
	next := slices.Delete(slices.Clone(list), i, i+1)
	var changed Rule
	if c != nil {
		var err error
		if changed, err = c.apply(list[i]); err != nil {
			return RuleInfo{}, err
		}
		next = slices.Insert(next, i, changed)
		next = dedupeRules(next)
	}
	if session {
		p.session[sessionID] = next
	} else {
		if p.grantFile == "" {
			return RuleInfo{}, errors.New("no state directory to store the rules in")
		}
		if err := saveRules(p.grantFile, next); err != nil {
			return RuleInfo{}, err
		}
		p.grants = next
	}
	if c == nil {
		return RuleInfo{}, nil
	}
	return infoOf(changed), nil
}

func (c RuleChange) apply(r Rule) (Rule, error) {
	if c.Tool != "" {
		r.Tool = c.Tool
	}
	if c.Pattern != nil {
		r.Pattern = *c.Pattern
	}
	if c.Action != "" {
		r.Action = c.Action
	}
	if !slices.Contains(Actions, r.Action) {
		return Rule{}, fmt.Errorf("%w: action %q (want allow, ask or deny)", ErrInvalidRule, r.Action)
	}
	if err := tools.CheckGlob(r.Pattern); err != nil {
		return Rule{}, fmt.Errorf("%w: %w", ErrInvalidRule, err)
	}
	return r, nil
}

// ErrInvalidRule: an edit that makes no valid rule.
var ErrInvalidRule = errors.New("invalid rule")

// dedupeRules drops a later rule equal to an earlier one (an edit that made two
// the same).
func dedupeRules(rs []Rule) []Rule {
	var out []Rule
	for _, r := range rs {
		if !slices.ContainsFunc(out, func(o Rule) bool { return o.Tool == r.Tool && o.Pattern == r.Pattern && o.Action == r.Action }) {
			out = append(out, r)
		}
	}
	return out
}

func (p *Policy) fixedHome(scope string) string {
	switch scope {
	case ScopeBuiltin:
		return "agentd itself (it protects .git and .agentd)"
	case ScopeWorkspace:
		return filepath.Join(p.root, ".agentd", "rules.json")
	}
	return "your rules.json (~/.config/agentd/rules.json)"
}

// ForgetSession drops a session's rules (the session was deleted).
func (p *Policy) ForgetSession(sessionID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.session, sessionID)
}
