package policy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/tools"
)

func fetchCall(host string, private bool) *tools.Call {
	return &tools.Call{Tool: tools.WebFetchToolName, Kind: tools.KindFetch, Effect: tools.EffectNetwork,
		Host: &tools.HostAccess{Name: host, Private: private}}
}

// A fetch is judged per host: the mode decides a public host without a
// rule, a host on this machine or a private network asks even in
// full-auto, and only a rule naming it exactly allows it.
func TestPolicyHosts(t *testing.T) {
	env := newEnv(t)
	p, cfg := newPolicy(t, env, tools.ModeAsk)
	require.NoError(t, os.WriteFile(filepath.Join(cfg.UserConfigDir, "rules.json"), []byte(`{"rules": [
		{"tool": "web_fetch", "pattern": "*.github.com", "action": "allow"},
		{"tool": "web_fetch", "pattern": "evil.test", "action": "deny"},
		{"tool": "web_fetch", "pattern": "*.internal", "action": "allow"}]}`), 0o644))
	p, err := Load(cfg)
	require.NoError(t, err)
	cases := []struct {
		mode    tools.Mode
		host    string
		private bool
		want    Action
	}{
		{tools.ModeAsk, "docs.github.com", false, Allow},
		{tools.ModeAsk, "go.dev", false, Ask},
		{tools.ModeAsk, "evil.test", false, Deny},
		{tools.ModeFullAuto, "go.dev", false, Allow},
		{tools.ModeFullAuto, "evil.test", false, Deny},
		{tools.ModeFullAuto, "localhost", true, Ask},
		{tools.ModeFullAuto, "db.internal", true, Ask}, // a glob never allows a private host
		{tools.ModeReadOnly, "docs.github.com", false, Deny},
		{tools.ModeReadOnly, "localhost", true, Deny},
	}
	for _, c := range cases {
		got := p.Decide("s1", c.mode, fetchCall(c.host, c.private))
		assert.Equal(t, c.want, got.Action, "%s %s: %s", c.mode, c.host, got.Rule)
	}

	// An answer for the session names the host exactly: then, and only for
	// that host and session, the private host is allowed.
	rules, err := p.Grant("s1", fetchCall("localhost", true), tools.AllowSession)
	require.NoError(t, err)
	assert.Contains(t, rules, "web_fetch `localhost`")
	assert.Equal(t, Allow, p.Decide("s1", tools.ModeFullAuto, fetchCall("localhost", true)).Action)
	assert.True(t, p.HostAllowed("s1", tools.ModeAsk, tools.WebFetchToolName, tools.HostAccess{Name: "localhost", Private: true}))
	assert.Equal(t, Ask, p.Decide("s2", tools.ModeFullAuto, fetchCall("localhost", true)).Action, "another session")
	assert.Equal(t, Ask, p.Decide("s1", tools.ModeFullAuto, fetchCall("127.0.0.1", true)).Action, "another host")
	assert.False(t, p.HostAllowed("s1", tools.ModeAsk, tools.WebFetchToolName, tools.HostAccess{Name: "go.dev"}))
}

// A host the policy refuses whatever it resolves to (read-only mode, a
// deny rule) is not looked up by the web tools; one it may allow or ask
// about is.
func TestHostRefused(t *testing.T) {
	env := newEnv(t)
	_, cfg := newPolicy(t, env, tools.ModeAsk)
	require.NoError(t, os.WriteFile(filepath.Join(cfg.UserConfigDir, "rules.json"), []byte(`{"rules": [
		{"tool": "web_fetch", "pattern": "*.evil.test", "action": "deny"},
		{"tool": "web_fetch", "pattern": "docs.internal", "action": "allow"}]}`), 0o644))
	p, err := Load(cfg)
	require.NoError(t, err)
	tool := tools.WebFetchToolName
	assert.True(t, p.HostRefused("s1", tools.ModeReadOnly, tool, "c2VjcmV0.leak.example"))
	assert.True(t, p.HostRefused("s1", tools.ModeFullAuto, tool, "x.evil.test"))
	assert.False(t, p.HostRefused("s1", tools.ModeAsk, tool, "go.dev"))
	assert.False(t, p.HostRefused("s1", tools.ModeFullAuto, tool, "docs.internal"))
}
