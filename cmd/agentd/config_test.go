package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/pgtest"
	"github.com/agentd/agentd/internal/proctest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// configHome gives the test its own config directory and environment.
func configHome(t *testing.T, configJSON string, env ...string) string {
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("AGENTD_STATE_DIR", t.TempDir())
	for _, name := range []string{"OPENAI_BASE_URL", "OPENAI_API_KEY", "AGENTD_MODEL", "AGENTD_POLICY", "AGENTD_MAX_STEPS"} {
		t.Setenv(name, "")
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	if configJSON != "" {
		require.NoError(t, os.MkdirAll(filepath.Join(home, "agentd"), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(home, "agentd", "config.json"), []byte(configJSON), 0o600))
	}
	return filepath.Join(home, "agentd", "config.json")
}

func runAgentd(args ...string) (int, string, string) {
	var out, errs bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errs)
	return code, out.String(), errs.String()
}

func TestConfigCommand(t *testing.T) {
	file := configHome(t, `{"model": {"name": "qwen"}, "maxSteps": 9, "colour": "blue"}`, "OPENAI_API_KEY=sk-secret")
	code, out, errs := runAgentd("config")
	assert.Equal(t, 0, code)
	assert.Contains(t, errs, file+`: unknown key "colour" (ignored)`)
	assert.Regexp(t, `maxSteps\s+AGENTD_MAX_STEPS\s+9\n`, out)
	assert.Regexp(t, `model.baseUrl \*\s+OPENAI_BASE_URL\s+https://api.openai.com/v1\n`, out, "a key alone means OpenAI")
	assert.Regexp(t, `model.apiKey \*\s+OPENAI_API_KEY\s+\(set\)\n`, out)
	assert.NotContains(t, out, "sk-secret")
}

// TestRunSaysWhatIsMissing: the terminal names the missing setting and
// where it is read from, and never mentions the editor's options.
func TestRunSaysWhatIsMissing(t *testing.T) {
	file := configHome(t, "", "OPENAI_API_KEY=sk-secret")
	code, _, errs := runAgentd("run", "hello")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, "no model name is configured (the endpoint is https://api.openai.com/v1). Set AGENTD_MODEL or model.name in "+file)
	assert.NotContains(t, errs, "initializationOptions")

	configHome(t, `{"approvalPolicy": "yolo"}`)
	code, _, errs = runAgentd("run", "hello")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, `approvalPolicy: "yolo" is not a mode`)
}

// Every subcommand has --help (exit 0, its flags on stdout); usage errors
// exit 2.
func TestHelpForEverySubcommand(t *testing.T) {
	configHome(t, "")
	names := []string{"run", "sessions", "serve", "acp", "index", "search", "config", "search-eval", "doctor"}
	_, usage, _ := runAgentd("help")
	for _, name := range names {
		assert.Contains(t, usage, "agentd "+name+" ", "the usage lists every subcommand")
	}
	for _, name := range names {
		for _, args := range [][]string{{name, "--help"}, {name, "-h"}, {"help", name}} {
			code, out, errs := runAgentd(args...)
			assert.Equal(t, 0, code, "%v: %s", args, errs)
			assert.Contains(t, out, "usage: agentd "+name, "%v", args)
		}
	}
	_, out, _ := runAgentd("run", "--help")
	for _, flag := range []string{"-policy", "-no-index", "-json", "-session", "-dir", "-reasoning", "Ctrl-C", "Exit status"} {
		assert.Contains(t, out, flag)
	}
	_, out, _ = runAgentd("serve", "--help")
	assert.Contains(t, out, "-no-index")
	for _, args := range [][]string{{"run"}, {"run", "--bogus", "hi"}, {"run", "hi", "--policy", "yolo"},
		{"search"}, {"serve", "extra"}, {"config", "extra"}, {"index", "a", "b"}, {"search-eval"}, {"nonsense"},
		{"sessions", "extra"}, {"sessions", "--bogus"}, {"doctor", "extra"}, {"doctor", "--bench", "-1"}} {
		code, _, errs := runAgentd(args...)
		assert.Equal(t, 2, code, "%v", args)
		assert.NotEmpty(t, errs, "%v says nothing", args)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	proctest.Cleanup()
	pgtest.Cleanup()
	os.Exit(code)
}
