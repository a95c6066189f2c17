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

// machine is a kernel sandbox as the policy sees it: the profiles it can
// confine commands in (full always) and its summary.
type machine struct {
	profiles []tools.Profile
	summary  string
}

func (m machine) Supports(p tools.Profile) bool {
	return p == tools.ProfileFull || slices.Contains(m.profiles, p)
}

func (m machine) Status() tools.SandboxStatus {
	return tools.SandboxStatus{Active: m.Supports(tools.ProfileRead), Summary: m.summary}
}

// unavailable is a machine that cannot confine anything.
func unavailable() machine {
	return machine{summary: "the kernel sandbox is not available: every command asks, and runs with your full rights"}
}

// landlockAlone confines read but not workspace-write (no namespaces).
func landlockAlone() machine {
	return machine{profiles: []tools.Profile{tools.ProfileRead}, summary: "read-only commands run in the kernel sandbox"}
}

func policyWith(t *testing.T, env *tools.Env, mode tools.Mode, sb Confiner) *Policy {
	t.Helper()
	p, err := Load(Config{Mode: mode, Root: env.Root, StateDir: env.StateDir, UserConfigDir: t.TempDir(), Sandbox: sb})
	require.NoError(t, err)
	return p
}

func netCall(line string) *tools.Call {
	c := cmdCall(line)
	c.Command.Network = true
	return c
}

// TestPolicyProfilePerMode is issue 11 item 2: read-only lines run unasked
// in read; other commands ask (or are refused in read-only) and, approved,
// run in workspace-write; full-auto runs everything in workspace-write.
func TestPolicyProfilePerMode(t *testing.T) {
	env := newEnv(t)
	p := policyWith(t, env, tools.ModeAsk, nil)
	type verdict struct {
		Action  Action
		Profile tools.Profile
	}
	readOnly, other := "git status && ls -la | grep x", "go test ./..."
	want := map[tools.Mode][2]verdict{
		tools.ModeReadOnly: {{Allow, tools.ProfileRead}, {Deny, ""}},
		tools.ModeAsk:      {{Allow, tools.ProfileRead}, {Ask, tools.ProfileWorkspaceWrite}},
		tools.ModeAutoEdit: {{Allow, tools.ProfileRead}, {Ask, tools.ProfileWorkspaceWrite}},
		tools.ModeFullAuto: {{Allow, tools.ProfileWorkspaceWrite}, {Allow, tools.ProfileWorkspaceWrite}},
	}
	for mode, w := range want {
		for i, line := range []string{readOnly, other} {
			d := p.Decide("s", mode, cmdCall(line))
			assert.Equal(t, w[i], verdict{d.Action, d.Confine.Profile}, "%s in %s: %+v", line, mode, d)
			assert.False(t, d.Confine.Network, "no network unless needed: %s in %s", line, mode)
		}
	}
	// A grant lets the command run unasked, still confined.
	_, err := p.Grant("s", cmdCall("go test ./..."), tools.AllowSession)
	require.NoError(t, err)
	d := p.Decide("s", tools.ModeAsk, cmdCall("go test ./..."))
	assert.Equal(t, Allow, d.Action)
	assert.Equal(t, tools.ProfileWorkspaceWrite, d.Confine.Profile)
	// A redirect makes a read-only program a write.
	d = p.Decide("s", tools.ModeAsk, cmdCall("ls > out.txt"))
	assert.Equal(t, Ask, d.Action)
	assert.Equal(t, tools.ProfileWorkspaceWrite, d.Confine.Profile)
	// Built-in denials hold in every mode, full-auto included.
	assert.Equal(t, Deny, p.Decide("s", tools.ModeFullAuto, cmdCall("rm -rf /")).Action)
}

// TestPolicyNetwork: the network is off unless needed; a known network
// program or the model's flag asks for it separately, in every mode but
// read-only (refused) and full-auto (allowed); a grant covers the pattern.
func TestPolicyNetwork(t *testing.T) {
	env := newEnv(t)
	p := policyWith(t, env, tools.ModeAsk, nil)
	for _, line := range []string{"curl -s https://example.com", "git fetch origin", "go mod download", "npm install",
		"timeout 30 wget -q https://x", "pip install -r requirements.txt"} {
		assert.True(t, p.Decide("s", tools.ModeAsk, cmdCall(line)).Confine.Network, line)
		assert.Equal(t, Deny, p.Decide("s", tools.ModeReadOnly, cmdCall(line)).Action, line)
		full := p.Decide("s", tools.ModeFullAuto, cmdCall(line))
		assert.Equal(t, Allow, full.Action, line)
		assert.True(t, full.Confine.Network, line)
	}
	for _, line := range []string{"go test ./...", "git status", "npm test", "make"} {
		assert.False(t, p.Decide("s", tools.ModeFullAuto, cmdCall(line)).Confine.Network, line)
	}

	// A command that would run unasked asks when it needs the network.
	d := p.Decide("s", tools.ModeAsk, netCall("ls"))
	assert.Equal(t, Ask, d.Action)
	assert.True(t, d.Confine.Network)
	assert.Equal(t, tools.ProfileRead, d.Confine.Profile, "still read-only")
	assert.Contains(t, d.Rule, "needs the network")
	_, err := p.Grant("s", cmdCall("go test ./..."), tools.AllowSession)
	require.NoError(t, err)
	d = p.Decide("s", tools.ModeAsk, netCall("go test ./..."))
	assert.Equal(t, Ask, d.Action, "a command grant is not a network grant")

	// The network part of a confirmation is granted apart, for the exact
	// command (as command grants are): for the session...
	assert.Contains(t, d.Rule, "always allow stores network `go test ./...`", "the confirmation says what a grant stores")
	rule, err := p.GrantNetwork("s", netCall("go test ./..."), tools.AllowSession)
	require.NoError(t, err)
	assert.Equal(t, "network `go test ./...`: allow (session rule)", rule)
	d = p.Decide("s", tools.ModeAsk, netCall("go test ./..."))
	assert.Equal(t, Allow, d.Action)
	assert.True(t, d.Confine.Network)
	assert.Equal(t, Ask, p.Decide("s", tools.ModeAsk, netCall("go test ./pkg")).Action, "another command")
	assert.Equal(t, Ask, p.Decide("other", tools.ModeAsk, netCall("go test ./...")).Action, "another session")
	assert.Equal(t, Deny, p.Decide("s", tools.ModeReadOnly, netCall("ls")).Action, "read-only mode gives no network, whatever the grants")

	// ... or always, stored for the workspace; a risky program gets its exact line.
	rule, err = p.GrantNetwork("s", cmdCall("curl -s https://example.com/api"), tools.AllowAlways)
	require.NoError(t, err)
	assert.Equal(t, "network `curl -s https://example.com/api`: allow (workspace grant rule)", rule)
	p2 := policyWith(t, env, tools.ModeAsk, nil)
	_, err = p2.Grant("s2", cmdCall("curl -s https://example.com/api"), tools.AllowAlways)
	require.NoError(t, err)
	assert.Equal(t, Allow, p2.Decide("s2", tools.ModeAsk, cmdCall("curl -s https://example.com/api")).Action)
	assert.Equal(t, Ask, p2.Decide("s2", tools.ModeAsk, cmdCall("curl -s https://evil.example/x")).Action)

	// A user's network deny rule refuses it in every mode.
	cfg := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(cfg, "rules.json"),
		[]byte(`{"rules":[{"tool":"network","pattern":"*","action":"deny"}]}`), 0o600))
	p3, err := Load(Config{Mode: tools.ModeFullAuto, Root: env.Root, UserConfigDir: cfg})
	require.NoError(t, err)
	d = p3.Decide("s", "", cmdCall("git fetch"))
	assert.Equal(t, Deny, d.Action)
	assert.Contains(t, d.Reason, "network is refused")
	assert.Equal(t, Allow, p3.Decide("s", "", cmdCall("go build ./...")).Action, "a network rule says nothing about other commands")
}

// TestPolicySecrets: a command that names a secret the user gave always
// asks, says which, and is refused in read-only mode.
func TestPolicySecrets(t *testing.T) {
	env := newEnv(t)
	env.Secrets = map[string]string{"NPM_TOKEN": "npm-s3cret-value", "OTHER": "other-value"}
	p := policyWith(t, env, tools.ModeFullAuto, nil)
	c, r := prepare(t, env, tools.RunCmdToolName, tools.RunCmdParams{Command: `echo "//r/:_authToken=${NPM_TOKEN}" > .npmrc && npm publish`})
	require.Nil(t, r)
	assert.Equal(t, []string{"NPM_TOKEN"}, c.Command.Secrets)
	d := p.Decide("s", tools.ModeFullAuto, c)
	assert.Equal(t, Ask, d.Action, "never auto-allowed, even in full-auto")
	assert.Equal(t, []string{"NPM_TOKEN"}, d.Secrets)
	assert.Contains(t, d.Rule, "$NPM_TOKEN")
	assert.Equal(t, Deny, p.Decide("s", tools.ModeReadOnly, c).Action)

	c, r = prepare(t, env, tools.RunCmdToolName, tools.RunCmdParams{Command: "echo NPM_TOKENS $OTHERWISE"})
	require.Nil(t, r)
	assert.Empty(t, c.Command.Secrets, "a longer name is another name")
	assert.Equal(t, Allow, p.Decide("s", tools.ModeFullAuto, c).Action)
}

// TestPolicySandboxUnavailable: where the kernel cannot confine commands,
// every command asks in every mode (read-only and full-auto included) and,
// approved, runs with the user's rights; refusals stay refusals.
func TestPolicySandboxUnavailable(t *testing.T) {
	env := newEnv(t)
	p := policyWith(t, env, tools.ModeAsk, unavailable())
	for _, mode := range tools.Modes {
		d := p.Decide("s", mode, cmdCall("git status"))
		assert.Equal(t, Ask, d.Action, mode)
		assert.Equal(t, tools.ProfileFull, d.Confine.Profile, mode)
		assert.Contains(t, d.Rule, "sandbox: not available", mode)
		assert.Contains(t, d.Reason, "not available", mode)
	}
	assert.Equal(t, Ask, p.Decide("s", tools.ModeFullAuto, cmdCall("go test ./...")).Action)
	assert.Equal(t, Deny, p.Decide("s", tools.ModeReadOnly, cmdCall("go test ./...")).Action)
	assert.Equal(t, Deny, p.Decide("s", tools.ModeFullAuto, cmdCall("sudo ls")).Action)
	_, err := p.Grant("s", cmdCall("go test ./..."), tools.AllowAlways)
	require.NoError(t, err)
	assert.Equal(t, Ask, p.Decide("s", tools.ModeAsk, cmdCall("go test ./...")).Action, "no rule runs a command unconfined unasked")
	// Reads and writes of the file tools do not depend on the sandbox.
	assert.Equal(t, Allow, p.Decide("s", tools.ModeFullAuto, writeCall("a.go")).Action)

	// With Landlock alone, read-only commands run confined; others ask and run unconfined.
	p = policyWith(t, env, tools.ModeFullAuto, landlockAlone())
	d := p.Decide("s", tools.ModeAsk, cmdCall("git status"))
	assert.Equal(t, Allow, d.Action)
	assert.Equal(t, tools.ProfileRead, d.Confine.Profile)
	d = p.Decide("s", tools.ModeFullAuto, cmdCall("go build ./..."))
	assert.Equal(t, Ask, d.Action)
	assert.Equal(t, tools.ProfileFull, d.Confine.Profile)
}

func TestNeedsNetwork(t *testing.T) {
	env := newEnv(t)
	for line, want := range map[string]bool{
		"curl -s https://x": true, "git -C sub fetch origin": true, "git push": true, "go get example.com/m@v1": true,
		"go install golang.org/x/tools/gopls@latest": true, "go mod download": true, "npm ci": true, "pip3 install x": true,
		"env A=1 wget x": true, "xargs curl": true,
		"go install ./cmd/x": false, "go build ./...": false, "git status": false, "npm test": false, "npm run build": false,
		"make": false, "ls": false, "cargo build": false, "$PROG fetch": false,
	} {
		an := analyzeCommand(line, env.Root, env.Root)
		require.NoError(t, an.ParseErr, line)
		assert.Equal(t, want, len(networkParts(an, false)) > 0, line)
	}
}
