package policy

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentd/agentd/tools"
)

// TestCommandsAndAgentDirs is issue 24's hole seen from the shell
// analysis: in a workspace that is the home directory, a command line
// that writes agentd's own rules, audit log or state is refused in every
// mode, and one that reads them is not read-only (it asks; the sandbox
// hides them too).
func TestCommandsAndAgentDirs(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env, ".config/agentd/rules.json", `{"rules":[]}`)
	writeFile(t, env, ".local/state/agentd/0123456789abcdef/audit.jsonl", "{}\n")
	writeFile(t, env, "project/main.go", "package main\n")
	private := []string{filepath.Join(env.Root, ".config/agentd"), filepath.Join(env.Root, ".local/state/agentd")}
	p, _ := newPolicyWith(t, Config{Mode: tools.ModeAsk, Root: env.Root, StateDir: env.StateDir, UserConfigDir: t.TempDir(), Private: private})
	for line, want := range map[string]expect{
		`echo '{"rules":[{"tool":"*","action":"allow"}]}' > .config/agentd/rules.json`: denied,
		`: > .local/state/agentd/0123456789abcdef/audit.jsonl`:                         denied,
		`cp evil.json .config/agentd/rules.json`:                                       denied,
		`sed -i 's/deny/allow/' .config/agentd/rules.json`:                             denied,
		`cd .config && tee agentd/rules.json < evil.json`:                              denied,
		`cat .local/state/agentd/0123456789abcdef/audit.jsonl`:                         notReadOnly,
		`cat .local/state/agentd/*/runs/*/events.jsonl`:                                notReadOnly,
		`cd .config/agentd && cat rules.json`:                                          notReadOnly,
		`cat project/main.go`:                                                          readOnly,
		`echo hi > project/out.txt`:                                                    notReadOnly,
	} {
		var got [4]Action
		for i, mode := range tools.Modes {
			got[i] = p.Decide("s", mode, cmdCall(line)).Action
		}
		assert.Equal(t, expectActions[want], got, "%s: want %s; %+v", line, want, p.Decide("s", tools.ModeFullAuto, cmdCall(line)))
	}
}
