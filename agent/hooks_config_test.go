package agent

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHooksConfig(t *testing.T) {
	home, err := os.UserHomeDir()
	require.NoError(t, err)
	c := DefaultConfig()
	warnings, err := c.LoadJSON([]byte(`{"approvalPolicy": "ask", "hooks": {
		"before_tool": [{"match": "run_cmd|mcp__.*", "command": "~/.config/agentd/hooks/guard.sh", "timeout": "5s", "matcher": "Bash"}],
		"after_tool": [{"command": ["/usr/bin/logger", "-t", "agentd"], "timeout": 2, "write": ["~/logs"], "read": ["/opt/x"]}],
		"input_requested": [{"command": "notify-send agentd \"$(jq -r .request.title)\"", "sandbox": "full", "env": {"URGENCY": "critical"}}],
		"run_finished": [{"command": "curl -s -d @- https://example.com/hook", "network": true}],
		"PreToolUse": [{"command": "true"}]
	}}`), "config.json", false)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{
		`config.json: hooks: before_tool[0]: unknown key "matcher" (ignored)`,
		`config.json: hooks: unknown event "PreToolUse" (ignored); the events are before_tool, after_tool, input_requested, run_finished`,
	}, warnings)

	before := c.Hooks[HookBeforeTool][0]
	assert.True(t, before.matches("run_cmd"))
	assert.True(t, before.matches("mcp__github__create_issue"))
	assert.False(t, before.matches("run_cmd2"), "the whole name must match")
	assert.False(t, before.matches("write_file"))
	assert.Equal(t, 5*time.Second, before.Timeout)
	assert.Equal(t, filepath.Join(home, ".config/agentd/hooks/guard.sh"), before.program(), "a script named by path is made readable")
	assert.Equal(t, []string{"/bin/sh", "-c", "~/.config/agentd/hooks/guard.sh"}, before.argv())

	after := c.Hooks[HookAfterTool][0]
	assert.Equal(t, []string{"/usr/bin/logger", "-t", "agentd"}, after.argv())
	assert.Equal(t, 2*time.Second, after.Timeout, "a number is seconds")
	assert.Equal(t, []string{filepath.Join(home, "logs")}, after.Write)
	assert.True(t, after.matches("anything"), "no match: every tool")

	asked := c.Hooks[HookInputRequested][0]
	assert.Equal(t, "full", asked.Sandbox)
	assert.Equal(t, defaultHookTimeout, asked.Timeout)
	assert.Equal(t, map[string]string{"URGENCY": "critical"}, asked.Env)
	assert.Empty(t, asked.program(), "notify-send is found in PATH")
	assert.True(t, c.Hooks[HookRunFinished][0].Network)

	i := slicesIndex(t, "hooks")
	assert.Equal(t, "before_tool: 1, after_tool: 1, input_requested: 1, run_finished: 1", Settings()[i].Value(&c))
}

func slicesIndex(t *testing.T, key string) int {
	for i, s := range Settings() {
		if s.Key == key {
			return i
		}
	}
	t.Fatalf("no setting %s", key)
	return -1
}

func TestHooksConfigErrors(t *testing.T) {
	for hooks, want := range map[string]string{
		`[]`:                                                       "must be an object of events",
		`{"before_tool": {"command": "x"}}`:                        "before_tool must be a list of hooks",
		`{"before_tool": [{}]}`:                                    "before_tool[0]: command is required",
		`{"before_tool": [{"command": ""}]}`:                       "command is empty",
		`{"before_tool": [{"command": []}]}`:                       "non-empty list",
		`{"before_tool": [{"command": 3}]}`:                        "shell line or a non-empty list",
		`{"before_tool": [{"command": "x", "match": "("}]}`:        `match "(" is not a regular expression`,
		`{"run_finished": [{"command": "x", "match": "run_cmd"}]}`: "tool calls only",
		`{"after_tool": [{"command": "x", "timeout": "soon"}]}`:    `timeout "soon" is not a duration`,
		`{"after_tool": [{"command": "x", "timeout": 0}]}`:         "more than zero",
		`{"after_tool": [{"command": "x", "sandbox": "none"}]}`:    `sandbox "none" is not one of read, workspace-write, full`,
		`{"after_tool": [{"command": "x", "write": ["logs"]}]}`:    `write: "logs" must be absolute`,
		`{"after_tool": [{"command": "x", "network": "yes"}]}`:     "network must be true or false",
		`{"after_tool": [{"command": "x", "env": {"A=B": "c"}}]}`:  "not a variable name",
	} {
		c := DefaultConfig()
		_, err := c.LoadJSON([]byte(`{"hooks": `+hooks+`}`), "config.json", false)
		require.Error(t, err, hooks)
		assert.Contains(t, err.Error(), "config.json: hooks: ", hooks)
		assert.Contains(t, err.Error(), want, hooks)
		assert.Empty(t, c.Hooks, "nothing of a refused configuration is kept")
	}
}

// An editor cannot add hooks: they are commands the daemon runs.
func TestHooksNotFromTheEditor(t *testing.T) {
	c := DefaultConfig()
	warnings, err := c.LoadJSON([]byte(`{"hooks": {"run_finished": [{"command": "touch /tmp/pwned"}]}}`), "initializationOptions", true)
	require.NoError(t, err)
	assert.Equal(t, []string{`initializationOptions: "hooks" cannot be set here (ignored); set it in config.json or the environment`}, warnings)
	assert.Empty(t, c.Hooks)
}
