package tools

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/internal/await"
	"github.com/agentd/agentd/tools/sandbox"
)

// unavailable is a sandbox on a machine that cannot confine anything.
func unavailable() *Sandbox {
	return NewSandbox(SandboxConfig{status: &sandbox.Status{OS: "linux", Problems: []string{"Landlock is not available (test)"}}})
}

// landlockAlone confines read but not workspace-write (no namespaces).
func landlockAlone() *Sandbox {
	return NewSandbox(SandboxConfig{status: &sandbox.Status{OS: "linux", Landlock: 7, EntryPoint: true}})
}

func policyWith(t *testing.T, env *Env, mode Mode, sb *Sandbox) *Policy {
	t.Helper()
	p, err := LoadPolicy(PolicyConfig{Mode: mode, Root: env.Root, StateDir: env.StateDir, UserConfigDir: t.TempDir(), Sandbox: sb})
	require.NoError(t, err)
	return p
}

func netCall(line string) *Call {
	c := cmdCall(line)
	c.Command.Network = true
	return c
}

// TestPolicyProfilePerMode is issue 11 item 2: read-only lines run unasked
// in read; other commands ask (or are refused in read-only) and, approved,
// run in workspace-write; full-auto runs everything in workspace-write.
func TestPolicyProfilePerMode(t *testing.T) {
	env := newEnv(t)
	p := policyWith(t, env, ModeAsk, nil)
	type verdict struct {
		Action  Action
		Profile Profile
	}
	readOnly, other := "git status && ls -la | grep x", "go test ./..."
	want := map[Mode][2]verdict{
		ModeReadOnly: {{Allow, ProfileRead}, {Deny, ""}},
		ModeAsk:      {{Allow, ProfileRead}, {Ask, ProfileWorkspaceWrite}},
		ModeAutoEdit: {{Allow, ProfileRead}, {Ask, ProfileWorkspaceWrite}},
		ModeFullAuto: {{Allow, ProfileWorkspaceWrite}, {Allow, ProfileWorkspaceWrite}},
	}
	for mode, w := range want {
		for i, line := range []string{readOnly, other} {
			d := p.Decide("s", mode, cmdCall(line))
			assert.Equal(t, w[i], verdict{d.Action, d.Confine.Profile}, "%s in %s: %+v", line, mode, d)
			assert.False(t, d.Confine.Network, "no network unless needed: %s in %s", line, mode)
		}
	}
	// A grant lets the command run unasked, still confined.
	_, err := p.Grant("s", cmdCall("go test ./..."), AllowSession)
	require.NoError(t, err)
	d := p.Decide("s", ModeAsk, cmdCall("go test ./..."))
	assert.Equal(t, Allow, d.Action)
	assert.Equal(t, ProfileWorkspaceWrite, d.Confine.Profile)
	// A redirect makes a read-only program a write.
	d = p.Decide("s", ModeAsk, cmdCall("ls > out.txt"))
	assert.Equal(t, Ask, d.Action)
	assert.Equal(t, ProfileWorkspaceWrite, d.Confine.Profile)
	// Built-in denials hold in every mode, full-auto included.
	assert.Equal(t, Deny, p.Decide("s", ModeFullAuto, cmdCall("rm -rf /")).Action)
}

// TestPolicyNetwork: the network is off unless needed; a known network
// program or the model's flag asks for it separately, in every mode but
// read-only (refused) and full-auto (allowed); a grant covers the pattern.
func TestPolicyNetwork(t *testing.T) {
	env := newEnv(t)
	p := policyWith(t, env, ModeAsk, nil)
	for _, line := range []string{"curl -s https://example.com", "git fetch origin", "go mod download", "npm install",
		"timeout 30 wget -q https://x", "pip install -r requirements.txt"} {
		assert.True(t, p.Decide("s", ModeAsk, cmdCall(line)).Confine.Network, line)
		assert.Equal(t, Deny, p.Decide("s", ModeReadOnly, cmdCall(line)).Action, line)
		full := p.Decide("s", ModeFullAuto, cmdCall(line))
		assert.Equal(t, Allow, full.Action, line)
		assert.True(t, full.Confine.Network, line)
	}
	for _, line := range []string{"go test ./...", "git status", "npm test", "make"} {
		assert.False(t, p.Decide("s", ModeFullAuto, cmdCall(line)).Confine.Network, line)
	}

	// A command that would run unasked asks when it needs the network.
	d := p.Decide("s", ModeAsk, netCall("ls"))
	assert.Equal(t, Ask, d.Action)
	assert.True(t, d.Confine.Network)
	assert.Equal(t, ProfileRead, d.Confine.Profile, "still read-only")
	assert.Contains(t, d.Rule, "needs the network")
	_, err := p.Grant("s", cmdCall("go test ./..."), AllowSession)
	require.NoError(t, err)
	d = p.Decide("s", ModeAsk, netCall("go test ./..."))
	assert.Equal(t, Ask, d.Action, "a command grant is not a network grant")

	// The network part of a confirmation is granted apart, for the exact
	// command (as command grants are): for the session...
	assert.Contains(t, d.Rule, "always allow stores network `go test ./...`", "the confirmation says what a grant stores")
	rule, err := p.GrantNetwork("s", netCall("go test ./..."), AllowSession)
	require.NoError(t, err)
	assert.Equal(t, "network `go test ./...`: allow (session rule)", rule)
	d = p.Decide("s", ModeAsk, netCall("go test ./..."))
	assert.Equal(t, Allow, d.Action)
	assert.True(t, d.Confine.Network)
	assert.Equal(t, Ask, p.Decide("s", ModeAsk, netCall("go test ./pkg")).Action, "another command")
	assert.Equal(t, Ask, p.Decide("other", ModeAsk, netCall("go test ./...")).Action, "another session")
	assert.Equal(t, Deny, p.Decide("s", ModeReadOnly, netCall("ls")).Action, "read-only mode gives no network, whatever the grants")

	// ... or always, stored for the workspace; a risky program gets its exact line.
	rule, err = p.GrantNetwork("s", cmdCall("curl -s https://example.com/api"), AllowAlways)
	require.NoError(t, err)
	assert.Equal(t, "network `curl -s https://example.com/api`: allow (workspace grant rule)", rule)
	p2 := policyWith(t, env, ModeAsk, nil)
	_, err = p2.Grant("s2", cmdCall("curl -s https://example.com/api"), AllowAlways)
	require.NoError(t, err)
	assert.Equal(t, Allow, p2.Decide("s2", ModeAsk, cmdCall("curl -s https://example.com/api")).Action)
	assert.Equal(t, Ask, p2.Decide("s2", ModeAsk, cmdCall("curl -s https://evil.example/x")).Action)

	// A user's network deny rule refuses it in every mode.
	cfg := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(cfg, "rules.json"),
		[]byte(`{"rules":[{"tool":"network","pattern":"*","action":"deny"}]}`), 0o600))
	p3, err := LoadPolicy(PolicyConfig{Mode: ModeFullAuto, Root: env.Root, UserConfigDir: cfg})
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
	p := policyWith(t, env, ModeFullAuto, nil)
	c, r := prepare(t, env, RunCmdToolName, RunCmdParams{Command: `echo "//r/:_authToken=${NPM_TOKEN}" > .npmrc && npm publish`})
	require.Nil(t, r)
	assert.Equal(t, []string{"NPM_TOKEN"}, c.Command.Secrets)
	d := p.Decide("s", ModeFullAuto, c)
	assert.Equal(t, Ask, d.Action, "never auto-allowed, even in full-auto")
	assert.Equal(t, []string{"NPM_TOKEN"}, d.Secrets)
	assert.Contains(t, d.Rule, "$NPM_TOKEN")
	assert.Equal(t, Deny, p.Decide("s", ModeReadOnly, c).Action)

	c, r = prepare(t, env, RunCmdToolName, RunCmdParams{Command: "echo NPM_TOKENS $OTHERWISE"})
	require.Nil(t, r)
	assert.Empty(t, c.Command.Secrets, "a longer name is another name")
	assert.Equal(t, Allow, p.Decide("s", ModeFullAuto, c).Action)
}

// TestPolicySandboxUnavailable: where the kernel cannot confine commands,
// every command asks in every mode (read-only and full-auto included) and,
// approved, runs with the user's rights; refusals stay refusals.
func TestPolicySandboxUnavailable(t *testing.T) {
	env := newEnv(t)
	p := policyWith(t, env, ModeAsk, unavailable())
	for _, mode := range Modes {
		d := p.Decide("s", mode, cmdCall("git status"))
		assert.Equal(t, Ask, d.Action, mode)
		assert.Equal(t, ProfileFull, d.Confine.Profile, mode)
		assert.Contains(t, d.Rule, "sandbox: not available", mode)
		assert.Contains(t, d.Reason, "not available", mode)
	}
	assert.Equal(t, Ask, p.Decide("s", ModeFullAuto, cmdCall("go test ./...")).Action)
	assert.Equal(t, Deny, p.Decide("s", ModeReadOnly, cmdCall("go test ./...")).Action)
	assert.Equal(t, Deny, p.Decide("s", ModeFullAuto, cmdCall("sudo ls")).Action)
	_, err := p.Grant("s", cmdCall("go test ./..."), AllowAlways)
	require.NoError(t, err)
	assert.Equal(t, Ask, p.Decide("s", ModeAsk, cmdCall("go test ./...")).Action, "no rule runs a command unconfined unasked")
	// Reads and writes of the file tools do not depend on the sandbox.
	assert.Equal(t, Allow, p.Decide("s", ModeFullAuto, writeCall("a.go")).Action)

	// With Landlock alone, read-only commands run confined; others ask and run unconfined.
	p = policyWith(t, env, ModeFullAuto, landlockAlone())
	d := p.Decide("s", ModeAsk, cmdCall("git status"))
	assert.Equal(t, Allow, d.Action)
	assert.Equal(t, ProfileRead, d.Confine.Profile)
	d = p.Decide("s", ModeFullAuto, cmdCall("go build ./..."))
	assert.Equal(t, Ask, d.Action)
	assert.Equal(t, ProfileFull, d.Confine.Profile)
}

// TestSandboxStatus: the status says what is offered and why not.
func TestSandboxStatus(t *testing.T) {
	st := unavailable().Status()
	assert.False(t, st.Active)
	assert.Equal(t, []Profile{ProfileFull}, st.Profiles)
	assert.Contains(t, st.Summary, "not available")
	assert.Equal(t, []string{"Landlock is not available (test)"}, st.Problems)

	st = NewSandbox(SandboxConfig{Off: true}).Status()
	assert.False(t, st.Active)
	assert.True(t, st.Off)
	assert.Contains(t, st.Summary, "switched off")

	st = landlockAlone().Status()
	assert.True(t, st.Active)
	assert.Equal(t, []Profile{ProfileRead, ProfileFull}, st.Profiles)
	assert.True(t, strings.HasPrefix(st.Summary, "read-only commands run in the kernel sandbox"))
}

// TestUnconfinedIsNeverSilent: a process in a profile the machine cannot
// confine does not start, and the model reads why.
func TestUnconfinedIsNeverSilent(t *testing.T) {
	env := newEnv(t)
	env.Sandbox = unavailable()
	marker := filepath.Join(env.Root, "ran")
	for _, profile := range []Profile{ProfileRead, ProfileWorkspaceWrite, ""} {
		r := runConfined(t, t.Context(), env, Confine{Profile: profile}, RunCmdParams{Command: "touch " + marker})
		mustErr(t, r)
		assert.Contains(t, r.Output, "not run: the kernel sandbox cannot confine this command here")
		assert.NoFileExists(t, marker)
	}
	r := mustOK(t, runConfined(t, t.Context(), env, Confine{Profile: ProfileFull}, RunCmdParams{Command: "touch " + marker}))
	assert.Contains(t, r.Output, "[exit code 0")
	assert.FileExists(t, marker, "full runs, by the user's explicit choice")
}

// TestConfinedGoUsesTheUserModules: a confined go command finds the modules
// the user already downloaded (through the file:// proxy in front of
// GOPROXY) without the network, and writes only the caches confined
// commands share.
func TestConfinedGoUsesTheUserModules(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not on PATH")
	}
	user := userModCache(ChildEnv(os.Environ(), nil, nil))
	zip := filepath.Join(user, "cache", "download", "github.com", "stretchr", "testify", "@v", "v1.12.1.zip")
	if _, err := os.Stat(zip); err != nil {
		t.Skip("testify v1.12.1 is not in the user's module cache")
	}
	sum, err := os.ReadFile(filepath.Join("..", "go.sum"))
	require.NoError(t, err)
	env := newEnv(t)
	env.Sandbox = NewSandbox(SandboxConfig{CacheDir: t.TempDir()}) // a fresh module cache: every module comes through the proxy
	writeFile(t, env, "go.mod", "module example.com/m\n\ngo 1.21\n\nrequire github.com/stretchr/testify v1.12.1\n")
	writeFile(t, env, "go.sum", string(sum))
	writeFile(t, env, "m.go", "package m\n\nimport \"github.com/stretchr/testify/assert\"\n\nvar _ = assert.Equal\n")
	r := runConfined(t, t.Context(), env, Confine{Profile: ProfileWorkspaceWrite}, RunCmdParams{Command: "go list -mod=mod -deps ./... > /dev/null && echo loaded", Timeout: 300})
	mustOK(t, r)
	assert.Contains(t, r.Output, "loaded")
	assert.DirExists(t, filepath.Join(env.Sandbox.cacheDir(), "go-mod", "github.com", "stretchr", "testify@v1.12.1"))
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

// TestCommandEnvFromSettings: a name the user adds (commandEnv) reaches
// commands; without it, the allow-list keeps it with the daemon.
func TestCommandEnvFromSettings(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://u:pw@db/app")
	env := newEnv(t)
	r := mustOK(t, call(t, env, RunCmdToolName, RunCmdParams{Command: "env"}))
	assert.NotContains(t, r.Output, "DATABASE_URL")
	env.Sandbox = NewSandbox(SandboxConfig{EnvAllow: []string{"DATABASE_URL"}})
	r = mustOK(t, call(t, env, RunCmdToolName, RunCmdParams{Command: "env"}))
	assert.Contains(t, r.Output, "DATABASE_URL=postgres://u:pw@db/app")
}

// TestSandboxStatusIsKept: the machine's answer is kept in the user's
// cache, outside what confined commands write; a daemon starts with the
// kept answer and replaces it with the machine's shortly after.
func TestSandboxStatusIsKept(t *testing.T) {
	if !sandbox.Check().Supports(sandbox.Read) {
		t.Skip("no kernel sandbox here")
	}
	dir := filepath.Join(t.TempDir(), "sandbox")
	assert.True(t, NewSandbox(SandboxConfig{CacheDir: dir}).Status().Active)
	file := dir + "-status.json"
	require.FileExists(t, file)

	// A stale answer (here: nothing available) serves at once, then the
	// machine's replaces it.
	stale, err := json.Marshal(cachedStatus{Key: statusKey(), Status: sandbox.Status{OS: "linux", Problems: []string{"stale"}}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, stale, 0o600))
	sb := NewSandbox(SandboxConfig{CacheDir: dir})
	assert.False(t, sb.Status().Active, "the kept answer, at once")
	require.Eventually(t, func() bool { return sb.Status().Active }, await.Timeout(10*time.Second), 20*time.Millisecond, "then the machine's")

	// Another kernel or binary: the kept answer does not apply.
	other, err := json.Marshal(cachedStatus{Key: "other", Status: sandbox.Status{OS: "linux", Problems: []string{"other"}}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, other, 0o600))
	assert.True(t, NewSandbox(SandboxConfig{CacheDir: dir}).Status().Active)
}
