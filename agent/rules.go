package agent

import (
	"github.com/agentd/agentd/tools"
)

// The rules view (issue 31): what the policy applies, and taking back or
// changing what the user's answers stored. The policy owns the rules
// (tools/policy_grants.go); the agent only checks the session.

// Rules lists the rules the policy applies to a session's calls ("" for
// none: the session's own rules are then left out), and the files they
// are read from.
func (a *Agent) Rules(sessionID string) ([]tools.RuleInfo, tools.RuleFiles, error) {
	if sessionID != "" {
		if _, err := a.session(sessionID); err != nil {
			return nil, tools.RuleFiles{}, err
		}
	}
	return a.policy.Rules(sessionID), a.policy.RuleFiles(a.cfg.UserConfigDir), nil
}

// RevokeRule takes back a rule an "always" or "for this session" answer
// stored; the calls it covered ask again.
func (a *Agent) RevokeRule(sessionID, id string) error {
	return a.policy.RevokeRule(sessionID, id)
}

// EditRule changes such a rule in place.
func (a *Agent) EditRule(sessionID, id string, c tools.RuleChange) (tools.RuleInfo, error) {
	return a.policy.EditRule(sessionID, id, c)
}
