package agent

import (
	"errors"
	"fmt"

	"github.com/agentd/agentd/tools/policy"
)

// The rules view (issue 31): what the policy applies, and taking back or
// changing what the user's answers stored. The policy owns the rules
// (tools/policy/ruleview.go); the agent shows them to the front ends in
// these words, which are the protocol's, and checks the session.

// RuleInfo is one rule as the rules view lists it.
type RuleInfo struct {
	// ID names the rule for RevokeRule and EditRule: stable while the rule
	// is unchanged.
	ID      string `json:"id"`
	Tool    string `json:"tool"`
	Pattern string `json:"pattern"`
	// Action is one of RuleActions; Scope one of RuleScopes.
	Action string `json:"action"`
	Scope  string `json:"scope"`
	// Revocable: stored by the user's answers (always, session).
	Revocable bool `json:"revocable,omitempty"`
}

// RuleFiles are the files the rules are read from.
type RuleFiles struct {
	User      string `json:"user,omitempty"`
	Workspace string `json:"workspace"`
	Grants    string `json:"grants,omitempty"`
}

// RuleEdit changes a rule: a field left empty (Pattern nil) stays.
type RuleEdit struct {
	Tool    string
	Pattern *string
	Action  string
}

// RuleScopes and RuleActions are the words of the rules view.
var (
	RuleScopes  = strs(policy.RuleScopes)
	RuleActions = strs(policy.Actions)
)

// ErrUnknownRule: no rule has that id (revoked, or edited since).
var ErrUnknownRule = errors.New("unknown rule")

func strs[T ~string](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}

func ruleInfo(r policy.RuleInfo) RuleInfo {
	return RuleInfo{ID: r.ID, Tool: r.Tool, Pattern: r.Pattern, Action: string(r.Action), Scope: string(r.Scope), Revocable: r.Revocable}
}

// ruleErr gives the policy's errors the agent's meaning.
func ruleErr(err error) error {
	switch {
	case errors.Is(err, policy.ErrUnknownRule):
		return fmt.Errorf("%w: %w", ErrUnknownRule, err)
	case errors.Is(err, policy.ErrRuleFixed), errors.Is(err, policy.ErrInvalidRule):
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return err
}

// Rules lists the rules the policy applies to a session's calls ("" for
// none: the session's own rules are then left out), and the files they
// are read from.
func (a *Agent) Rules(sessionID string) ([]RuleInfo, RuleFiles, error) {
	if sessionID != "" {
		if _, err := a.session(sessionID); err != nil {
			return nil, RuleFiles{}, err
		}
	}
	var out []RuleInfo
	for _, r := range a.policy.Rules(sessionID) {
		out = append(out, ruleInfo(r))
	}
	f := a.policy.RuleFiles(a.cfg.UserConfigDir)
	return out, RuleFiles{User: f.User, Workspace: f.Workspace, Grants: f.Grants}, nil
}

// RevokeRule takes back a rule an "always" or "for this session" answer
// stored; the calls it covered ask again.
func (a *Agent) RevokeRule(sessionID, id string) error {
	return ruleErr(a.policy.RevokeRule(sessionID, id))
}

// EditRule changes such a rule in place.
func (a *Agent) EditRule(sessionID, id string, e RuleEdit) (RuleInfo, error) {
	r, err := a.policy.EditRule(sessionID, id, policy.RuleChange{Tool: e.Tool, Pattern: e.Pattern, Action: policy.Action(e.Action)})
	if err != nil {
		return RuleInfo{}, ruleErr(err)
	}
	return ruleInfo(r), nil
}
