package policy

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/tools"
)

// TestSessionGrantCoversTheCommandsFamily is issue 24 item 4: "Yes, for
// this session" on `go test -run X .` covers go test with other packages
// and safe options, never an option that runs a program, an unknown
// argument, an environment that changes what runs, another subcommand
// or another session; the same for the other test and build commands of
// grantFamilies, and for none of make's targets.
func TestSessionGrantCoversTheCommandsFamily(t *testing.T) {
	env := newEnv(t)
	p, _ := newPolicy(t, env, tools.ModeAsk)
	for granted, lines := range map[string]map[string]Action{
		"go test -run X .": {
			"go test ./...": Allow, "go test -count=1 ./...": Allow, "go test -run Y -v ./pkg": Allow, "go test": Allow,
			"go test -race -timeout 60s -json ./... -args -update": Allow, "CGO_ENABLED=0 go test ./...": Allow,
			"go test -exec evil ./...": Ask, "go test -toolexec=x ./...": Ask, "go test -vettool=x ./...": Ask,
			"go test -ldflags=-extld=/tmp/x ./...": Ask, "go test -compiler=gccgo ./...": Ask,
			"GOFLAGS=-toolexec=x go test ./...": Ask, "go test $(cat pkgs)": Ask, "go test $FLAGS ./...": Ask,
			"go run .": Ask, "go build ./...": Ask, "go -C .. test ./...": Ask, "./go test": Ask,
			"go test ./... && rm -rf build": Ask,
		},
		"npm run build": {"npm run build -- --watch": Allow, "npm run build": Allow, "npm run deploy": Ask,
			"npm run build --script-shell=/tmp/x": Ask, "npm test": Ask},
		"pytest -k slow": {"pytest tests/": Allow, "pytest -x -q": Allow, "pytest -p evil": Ask, "python -m pytest": Ask},
		"cargo test --lib": {"cargo test": Allow, "cargo test -- --nocapture": Allow, "cargo test --config x": Ask,
			"cargo run": Ask},
		"make test": {"make test": Allow, "make test deploy": Ask, "make test CC=evil": Ask},
	} {
		sid := "s-" + strings.ReplaceAll(granted, " ", "_")
		require.Equal(t, Ask, p.Decide(sid, tools.ModeAsk, cmdCall(granted)).Action, granted)
		_, err := p.Grant(sid, cmdCall(granted), tools.AllowSession)
		require.NoError(t, err, granted)
		assert.Equal(t, Allow, p.Decide(sid, tools.ModeAsk, cmdCall(granted)).Action, granted)
		for line, want := range lines {
			assert.Equal(t, want, p.Decide(sid, tools.ModeAsk, cmdCall(line)).Action, "after %q: %s", granted, line)
		}
		assert.Equal(t, Ask, p.Decide("another", tools.ModeAsk, cmdCall(granted)).Action, "another session: %s", granted)
	}
}

// TestCoversSaysWhatAGrantAllows: the confirmation says, in words, what
// "allow for this session" and "always allow" would allow from then on.
func TestCoversSaysWhatAGrantAllows(t *testing.T) {
	env := newEnv(t)
	p, _ := newPolicy(t, env, tools.ModeAsk)
	covers := p.Covers("s", cmdCall("go test -run X . > out.txt"))
	require.Len(t, covers, 2)
	assert.Equal(t, "`go test` with any arguments, except options that run another program or name a file to write "+
		"(-toolexec, -exec, -vettool, -ldflags, -gccgoflags, -compiler, -overlay, -pkgdir, -o), arguments not known "+
		"before the line runs, and environment variables that change what runs", covers[0])
	assert.Equal(t, "writing out.txt", covers[1])
	assert.Equal(t, []string{"`make clean` exactly"}, p.Covers("s", cmdCall("make clean")))
	assert.Equal(t, []string{"`go test -exec x ./...` exactly"}, p.Covers("s", cmdCall("go test -exec x ./...")))
	assert.Equal(t, []string{"writing .vscode/tasks.json"}, p.Covers("s", writeCall(".vscode/tasks.json")))
	assert.Equal(t, []string{"`curl -s https://example.com` exactly", "the network for `curl -s https://example.com`"},
		p.Covers("s", cmdCall("curl -s https://example.com")))
}
