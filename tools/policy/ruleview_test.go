package policy

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/tools"
)

func ruleOf(t *testing.T, rs []RuleInfo, scope RuleScope, tool, pattern string) RuleInfo {
	t.Helper()
	i := slices.IndexFunc(rs, func(r RuleInfo) bool { return r.Scope == scope && r.Tool == tool && r.Pattern == pattern })
	require.GreaterOrEqual(t, i, 0, "no %s rule %s %q in %+v", scope, tool, pattern, rs)
	return rs[i]
}

// TestRulesListRevokeEdit: the rules the user's answers stored are listed
// with the others, and revoking or editing one changes what the policy
// decides, after a restart too.
func TestRulesListRevokeEdit(t *testing.T) {
	env := newEnv(t)
	p, cfg := newPolicy(t, env, tools.ModeAsk)
	require.NoError(t, os.WriteFile(filepath.Join(cfg.UserConfigDir, "rules.json"), []byte(`{"rules":[{"tool":"run_cmd","pattern":"make *","action":"allow"}]}`), 0o600))
	p, _ = newPolicyWith(t, cfg)

	_, err := p.Grant("s", cmdCall("go test -ldflags=-s ./pkg"), tools.AllowAlways)
	require.NoError(t, err)
	_, err = p.Grant("s", cmdCall("npm run build"), tools.AllowSession)
	require.NoError(t, err)
	_, err = p.Grant("s", writeCall("secrets.env"), tools.RejectAlways)
	require.NoError(t, err)

	rs := p.Rules("s")
	always := ruleOf(t, rs, RuleAlways, tools.RunCmdToolName, "go test -ldflags=-s ./pkg")
	assert.True(t, always.Revocable)
	assert.Equal(t, Allow, always.Action)
	session := ruleOf(t, rs, RuleSession, tools.RunCmdToolName, `npm run build *`)
	assert.True(t, session.Revocable)
	deny := ruleOf(t, rs, RuleAlways, "write", "./secrets.env")
	assert.Equal(t, Deny, deny.Action)
	user := ruleOf(t, rs, RuleUser, tools.RunCmdToolName, "make *")
	assert.False(t, user.Revocable)
	builtin := ruleOf(t, rs, RuleBuiltin, "write", "**/.git/**")
	assert.False(t, builtin.Revocable)
	assert.NotContains(t, p.Rules(""), session, "without the session, its rules are not listed")
	assert.Equal(t, always.ID, ruleOf(t, p.Rules(""), RuleAlways, tools.RunCmdToolName, "go test -ldflags=-s ./pkg").ID, "ids are stable")

	// Fixed rules are refused, naming their file.
	err = p.RevokeRule("s", user.ID)
	require.ErrorIs(t, err, ErrRuleFixed)
	assert.Contains(t, err.Error(), "rules.json")
	require.ErrorIs(t, p.RevokeRule("s", builtin.ID), ErrRuleFixed)
	require.ErrorIs(t, p.RevokeRule("s", "rule_nope"), ErrUnknownRule)

	// Revoke: the command asks again, after a restart too.
	require.Equal(t, Allow, p.Decide("s", tools.ModeAsk, cmdCall("go test -ldflags=-s ./pkg")).Action)
	require.NoError(t, p.RevokeRule("s", always.ID))
	assert.Equal(t, Ask, p.Decide("s", tools.ModeAsk, cmdCall("go test -ldflags=-s ./pkg")).Action)
	require.ErrorIs(t, p.RevokeRule("s", always.ID), ErrUnknownRule, "revoked once")
	again, _ := newPolicyWith(t, cfg)
	assert.Equal(t, Ask, again.Decide("s", tools.ModeAsk, cmdCall("go test -ldflags=-s ./pkg")).Action, "the revoke was saved")
	assert.Equal(t, Deny, again.Decide("s", tools.ModeAsk, writeCall("secrets.env")).Action, "the other stored rule stays")

	// A session rule is revoked for its session.
	require.Equal(t, Allow, p.Decide("s", tools.ModeAsk, cmdCall("npm run build")).Action)
	require.ErrorIs(t, p.RevokeRule("other", session.ID), ErrUnknownRule, "another session has no such rule")
	require.NoError(t, p.RevokeRule("s", session.ID))
	assert.Equal(t, Ask, p.Decide("s", tools.ModeAsk, cmdCall("npm run build")).Action)

	// Edit: the deny becomes an ask; a widened pattern covers more.
	pat := "go test *"
	_, err = p.Grant("s", cmdCall("go test -ldflags=-s ./pkg"), tools.AllowAlways)
	require.NoError(t, err)
	id := ruleOf(t, p.Rules("s"), RuleAlways, tools.RunCmdToolName, "go test -ldflags=-s ./pkg").ID
	edited, err := p.EditRule("s", id, RuleChange{Pattern: &pat})
	require.NoError(t, err)
	assert.Equal(t, "go test *", edited.Pattern)
	assert.NotEqual(t, id, edited.ID)
	assert.Equal(t, Allow, p.Decide("s", tools.ModeAsk, cmdCall("go test ./other")).Action)
	assert.Equal(t, Ask, p.Decide("s", tools.ModeAsk, cmdCall("go test -toolexec /tmp/x ./...")).Action, "a wildcard never admits a program-running option")
	edited, err = p.EditRule("s", deny.ID, RuleChange{Action: Ask})
	require.NoError(t, err)
	assert.Equal(t, Ask, p.Decide("s", tools.ModeAsk, writeCall("secrets.env")).Action)
	_, err = p.EditRule("s", edited.ID, RuleChange{Action: "maybe"})
	require.ErrorIs(t, err, ErrInvalidRule)
	_, err = p.EditRule("s", user.ID, RuleChange{Action: Deny})
	require.ErrorIs(t, err, ErrRuleFixed)
	again, _ = newPolicyWith(t, cfg)
	assert.Equal(t, Allow, again.Decide("s", tools.ModeAsk, cmdCall("go test ./other")).Action, "edits are saved")
	assert.Equal(t, Ask, again.Decide("s", tools.ModeAsk, writeCall("secrets.env")).Action)

	// Built-in denials still win over an edited allow.
	star := "**"
	w, err := p.Grant("s", writeCall("notes.txt"), tools.AllowAlways)
	require.NoError(t, err, w)
	id = ruleOf(t, p.Rules("s"), RuleAlways, "write", "./notes.txt").ID
	_, err = p.EditRule("s", id, RuleChange{Pattern: &star})
	require.NoError(t, err)
	assert.Equal(t, Allow, p.Decide("s", tools.ModeAsk, writeCall("src/a.go")).Action)
	assert.Equal(t, Deny, p.Decide("s", tools.ModeAsk, writeCall(".git/config")).Action)
}

func newPolicyWith(t *testing.T, cfg Config) (*Policy, Config) {
	t.Helper()
	p, err := Load(cfg)
	require.NoError(t, err)
	return p, cfg
}
