package policy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentd/agentd/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGrantsStoreTheCommandAsApproved: a lasting answer stores exactly
// what was approved (a test or build command: that command with any
// arguments but the risky ones, family.go), and the confirmation's rule
// says so beforehand.
func TestGrantsStoreTheCommandAsApproved(t *testing.T) {
	env := newEnv(t)
	p, _ := newPolicy(t, env, tools.ModeAsk)
	cases := []struct {
		line   string
		stored string
		still  []string // must still ask after the grant
	}{
		{"git --no-pager log -1 --stat --ext-diff", "git --no-pager log -1 --stat --ext-diff",
			[]string{"git log --ext-diff", "git push", "git --no-pager log -2 --ext-diff"}},
		{"make -C . all", "make -C . all", []string{"make", "make install", "make -C . all SHELL=/tmp/x"}},
		{"go test ./pkg", `go test *`, []string{"go run ./pkg", "go test -toolexec /tmp/x ./pkg", "go test ./pkg -exec /tmp/x"}},
		{"npm run build", `npm run build *`, []string{"npm run deploy"}},
		{"CGO_ENABLED=0 go build -o bin/app .", "CGO_ENABLED=0 go build -o bin/app .", []string{"go build -o bin/app .", "GOFLAGS=-toolexec=x go build -o bin/app ."}},
		{"rm -rf 'build dir'", `rm -rf 'build dir'`, []string{"rm -rf build dir", "rm -rf build"}},
		{"cp *.go backup/", `cp \*.go backup/`, []string{"cp x.go backup/"}},
	}
	for _, c := range cases {
		d := p.Decide("s", tools.ModeAsk, cmdCall(c.line))
		require.Equal(t, Ask, d.Action, c.line)
		assert.Contains(t, d.Rule, "always allow stores `"+c.stored+"`", "the confirmation shows what a grant stores: %s", c.line)
		rule, err := p.Grant("s", cmdCall(c.line), tools.AllowSession)
		require.NoError(t, err, c.line)
		assert.Contains(t, rule, "run_cmd `"+c.stored+"`: allow (session rule)")
		assert.Equal(t, Allow, p.Decide("s", tools.ModeAsk, cmdCall(c.line)).Action, c.line)
		for _, other := range c.still {
			assert.Equal(t, Ask, p.Decide("s", tools.ModeAsk, cmdCall(other)).Action, "granting %q must not allow %q", c.line, other)
		}
	}
}

// TestWildcardRulesNeverAdmitProgramRunningOptions: a rule with a
// wildcard (a user's `go test *`, or an old grant) does not cover an
// option or variable that runs programs; an exact rule or a deny still
// applies.
func TestWildcardRulesNeverAdmitProgramRunningOptions(t *testing.T) {
	env := newEnv(t)
	require.NoError(t, os.MkdirAll(filepath.Join(env.StateDir), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(env.StateDir, "rules.json"), []byte(`{"rules":[
		{"tool":"run_cmd","pattern":"go test *","action":"allow"},
		{"tool":"run_cmd","pattern":"git *","action":"allow"},
		{"tool":"run_cmd","pattern":"rg *","action":"allow"},
		{"tool":"run_cmd","pattern":"make *","action":"allow"},
		{"tool":"run_cmd","pattern":"sort *","action":"allow"},
		{"tool":"run_cmd","pattern":"go test -exec ./runner ./...","action":"allow"},
		{"tool":"run_cmd","pattern":"rm *","action":"deny"}]}`), 0o600))
	p, _ := newPolicy(t, env, tools.ModeAsk)
	allowed := []string{"go test ./...", "go test -run X -v ./pkg", "git commit -m x", "rg -n foo",
		"make build", "sort -u f", "go test -exec ./runner ./...", "CGO_ENABLED=0 go test ./..."}
	for _, l := range allowed {
		assert.Equal(t, Allow, p.Decide("s", tools.ModeAsk, cmdCall(l)).Action, l)
	}
	// A command rule never grants the network: git push asks for it.
	d := p.Decide("s", tools.ModeAsk, cmdCall("git push"))
	assert.Equal(t, Ask, d.Action, "%+v", d)
	assert.Contains(t, d.Rule, "needs the network")
	asks := []string{"go test -toolexec /tmp/x ./...", "go test -exec=/tmp/x ./...", "go test -c -o bin/x ./pkg",
		"go test -vettool=/tmp/x ./...", "go test --toolexec=/tmp/x ./...", "go test $FLAGS ./...",
		"LD_PRELOAD=/tmp/x.so go test ./...", "GOFLAGS=-toolexec=/tmp/x go test ./...",
		"git -c core.fsmonitor=/tmp/x status", "git --config-env=core.pager=X log", "git diff --ext-diff",
		"git grep -O/tmp/x foo", "git rebase -x /tmp/x main", "git fetch --upload-pack=/tmp/x origin",
		"rg --pre /tmp/x foo", "make SHELL=/tmp/x build", "make --eval='x:=$(shell id)'", "sort --compress-program=/tmp/x f",
		"sort -uo out.txt f"}
	for _, l := range asks {
		d := p.Decide("s", tools.ModeAsk, cmdCall(l))
		assert.Equal(t, Ask, d.Action, "%s: %+v", l, d)
	}
	assert.Equal(t, Deny, p.Decide("s", tools.ModeFullAuto, cmdCall("LD_PRELOAD=x rm -rf build")).Action, "a deny rule sees through the environment")
	assert.Equal(t, Deny, p.Decide("s", tools.ModeFullAuto, cmdCall("rm --recursive build")).Action)
}

// TestGrantRefusesWhatCannotBeChecked: a part the built-in denials cannot
// see through stores no rule, and keeps asking.
func TestGrantRefusesWhatCannotBeChecked(t *testing.T) {
	env := newEnv(t)
	p, _ := newPolicy(t, env, tools.ModeAsk)
	for _, l := range []string{`rm -rf "$X"`, `$CMD build`, `cat list | xargs rm -rf`, `sh -c "$X"`} {
		d := p.Decide("s", tools.ModeFullAuto, cmdCall(l))
		require.Equal(t, Ask, d.Action, l)
		assert.NotContains(t, d.Rule, "always allow stores", l)
		_, _ = p.Grant("s", cmdCall(l), tools.AllowAlways)
		assert.Equal(t, Ask, p.Decide("s", tools.ModeFullAuto, cmdCall(l)).Action, "still asks after a grant: %s", l)
	}
	rule, err := p.Grant("s", cmdCall(`make build && rm -rf "$OUT"`), tools.AllowAlways)
	require.NoError(t, err)
	assert.Equal(t, "run_cmd `make build`: allow (workspace grant rule)", rule, "only the part that can be checked")
}
