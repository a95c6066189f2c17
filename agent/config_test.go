package agent

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/tools"
)

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func TestSettingsLayers(t *testing.T) {
	c := DefaultConfig()
	assert.Equal(t, tools.ModeAsk, c.Policy)
	assert.Equal(t, 30*time.Minute, c.QuestionTimeout)
	assert.Equal(t, defaultMaxSteps, c.MaxSteps)
	assert.Equal(t, "native", c.Model.ToolMode)

	warnings, err := c.LoadJSON([]byte(`{"model": {"name": "qwen", "baseUrl": "http://file", "colour": "blue"},
		"approvalPolicy": "auto-edit", "questionTimeout": "0", "maxSteps": 7, "embeddings": null, "extra": {"a": 1}}`), "config.json", false)
	require.NoError(t, err)
	assert.Equal(t, []string{`config.json: unknown key "extra.a" (ignored)`, `config.json: unknown key "model.colour" (ignored)`}, warnings)
	assert.Equal(t, ModelConfig{Name: "qwen", BaseURL: "http://file", ToolMode: "native",
		StreamIdleTimeout: DefaultStreamIdleTimeout, CallTimeout: DefaultCallTimeout, MaxRetryWait: DefaultMaxRetryWait,
		Images: ImagesAuto, ImageMaxSide: 2000}, c.Model)
	assert.Equal(t, tools.ModeAutoEdit, c.Policy)
	assert.Zero(t, c.QuestionTimeout, "0 is never")
	assert.Equal(t, 7, c.MaxSteps)

	require.NoError(t, c.LoadEnv(env(map[string]string{"OPENAI_BASE_URL": "http://env", "AGENTD_MAX_STEPS": "", "AGENTD_POLICY": "read-only"})))
	assert.Equal(t, "http://env", c.Model.BaseURL, "the environment over the file")
	assert.Equal(t, 7, c.MaxSteps, "an empty variable is unset")
	assert.Equal(t, tools.ModeReadOnly, c.Policy)

	warnings, err = c.LoadJSON([]byte(`{"model": {"name": "gpt"}, "maxSteps": 3}`), "initializationOptions", true)
	require.NoError(t, err)
	assert.Equal(t, "gpt", c.Model.Name, "the editor over the environment")
	assert.Equal(t, 7, c.MaxSteps, "but not for what the editor may not set")
	assert.Equal(t, []string{`initializationOptions: "maxSteps" cannot be set here (ignored); set it in config.json or the environment`}, warnings)
}

func TestSettingsErrorsNameTheKey(t *testing.T) {
	for doc, want := range map[string]string{
		`{"approvalPolicy": "yolo"}`:     `f.json: approvalPolicy: "yolo" is not a mode`,
		`{"model": {"toolMode": "txt"}}`: `f.json: model.toolMode: "txt" is not one of native, text`,
		`{"maxSteps": -1}`:               `f.json: maxSteps: "-1" is not a positive whole number`,
		`{"questionTimeout": "soon"}`:    `f.json: questionTimeout: "soon" is not a duration`,
		`{"model": "gpt"}`:               `f.json: model must be an object`,
		`{"model": {"name": true}}`:      `f.json: model.name: must be a string, not true`,
		`[1, 2]`:                         `f.json: not a JSON object`,
	} {
		c := DefaultConfig()
		_, err := c.LoadJSON([]byte(doc), "f.json", false)
		require.Error(t, err, doc)
		assert.Contains(t, err.Error(), want, doc)
	}
	c := DefaultConfig()
	err := c.LoadEnv(env(map[string]string{"AGENTD_QUESTION_TIMEOUT": "10"}))
	assert.ErrorContains(t, err, `AGENTD_QUESTION_TIMEOUT="10": "10" is not a duration`)
}

// TestCheckModelSaysWhatIsMissing: the error names what is missing and
// every place it is read from; the editor's options only where an editor
// configures the agent.
func TestCheckModelSaysWhatIsMissing(t *testing.T) {
	c := DefaultConfig()
	c.UserConfigDir = "/home/ada/.config/agentd"
	err := c.CheckModel()
	require.True(t, errors.Is(err, ErrNoModel))
	assert.Contains(t, err.Error(), "no model is configured. Set OPENAI_BASE_URL or model.baseUrl in /home/ada/.config/agentd/config.json, and AGENTD_MODEL or model.name in")
	assert.NotContains(t, err.Error(), "initializationOptions")

	require.NoError(t, c.LoadEnv(env(map[string]string{"OPENAI_API_KEY": "sk-1"})))
	err = c.CheckModel()
	assert.Contains(t, err.Error(), "no model name is configured (the endpoint is https://api.openai.com/v1). Set AGENTD_MODEL or model.name")
	assert.NotContains(t, err.Error(), "sk-1")

	c = DefaultConfig()
	c.Model.Name, c.FromEditor = "qwen", true
	err = c.CheckModel()
	assert.Contains(t, err.Error(), "no model endpoint is configured for model qwen. Set OPENAI_BASE_URL or model.baseUrl in config.json or initializationOptions.model.baseUrl in the editor's settings")

	c.Model.BaseURL = "http://x"
	assert.NoError(t, c.CheckModel())
}

// TestEveryRequestKindHasARule: each kind is answered one way (a decision,
// or a reply that is checked) and tells the model something when answered.
func TestEveryRequestKindHasARule(t *testing.T) {
	for _, k := range RequestKinds {
		rule, ok := requestRules[k]
		require.True(t, ok, k)
		assert.NotEqual(t, rule.decision, rule.reply != nil, "%s is answered one way", k)
		if rule.decision {
			assert.NotEmpty(t, rule.what, k)
		} else {
			assert.NotNil(t, rule.answered, k)
		}
	}
	assert.Len(t, requestRules, len(RequestKinds))
}

// TestLoopToolSchemas: the loop tools' schemas come from their params; the
// plan's statuses are the run's.
func TestLoopToolSchemas(t *testing.T) {
	var plan struct {
		Required   []string
		Properties struct {
			Plan struct {
				Items struct {
					Required   []string
					Properties struct{ Status struct{ Enum []Status } }
				}
			}
		}
	}
	require.NoError(t, json.Unmarshal(planSchema, &plan))
	assert.Equal(t, []string{"plan"}, plan.Required)
	assert.Equal(t, []string{"step", "status"}, plan.Properties.Plan.Items.Required)
	assert.Equal(t, Statuses, plan.Properties.Plan.Items.Properties.Status.Enum)
	var ask struct{ Required []string }
	require.NoError(t, json.Unmarshal(askSchema, &ask))
	assert.Equal(t, []string{"question"}, ask.Required)
	assert.Contains(t, askDescription, "Ask the user a question")
	assert.Contains(t, planDescription, "Publish or revise your plan")
}

// TestEmbeddingsKeyStaysWithItsHost: the model's key goes to the
// embeddings endpoint only when it is on the model's host.
func TestEmbeddingsKeyStaysWithItsHost(t *testing.T) {
	for _, c := range []struct {
		model, embed, own, want string
	}{
		{"https://api.openai.com/v1", "https://api.openai.com/v1", "", "model-key"},
		{"https://api.openai.com/v1", "https://api.openai.com:443/v1/embeddings", "", "model-key"},
		{"https://api.openai.com/v1", "https://embed.example.com/v1", "", ""},
		{"http://127.0.0.1:11434/v1", "http://127.0.0.1:8080/v1", "", ""},
		{"https://api.openai.com/v1", "http://api.openai.com/v1", "", ""},
		{"https://api.openai.com/v1", "https://embed.example.com/v1", "own", "own"},
	} {
		cfg := Config{Model: ModelConfig{BaseURL: c.model, APIKey: "model-key"}, Embeddings: EmbeddingsConfig{BaseURL: c.embed, APIKey: c.own}}
		assert.Equal(t, c.want, cfg.EmbeddingsKey(), "%s → %s", c.model, c.embed)
	}
}

func TestCommandSettings(t *testing.T) {
	cfg := DefaultConfig()
	assert.Equal(t, "auto", cfg.Sandbox)
	require.NoError(t, cfg.LoadEnv(func(k string) (string, bool) {
		v, ok := map[string]string{"AGENTD_COMMAND_ENV": "DATABASE_URL, MY_*", "AGENTD_SANDBOX": "off"}[k]
		return v, ok
	}))
	assert.Equal(t, []string{"DATABASE_URL", "MY_*"}, cfg.CommandEnv)
	assert.Equal(t, "off", cfg.Sandbox)
	_, err := cfg.LoadJSON([]byte(`{"commandEnv":["A","B_*"],"sandbox":"auto"}`), "config.json", false)
	require.NoError(t, err)
	assert.Equal(t, []string{"A", "B_*"}, cfg.CommandEnv)
	_, err = cfg.LoadJSON([]byte(`{"sandbox":"maybe"}`), "config.json", false)
	assert.ErrorContains(t, err, "sandbox")
	warnings, err := cfg.LoadJSON([]byte(`{"sandbox":"off"}`), "initializationOptions", true)
	require.NoError(t, err)
	assert.NotEmpty(t, warnings, "an editor cannot switch the sandbox off")
	assert.Equal(t, "auto", cfg.Sandbox)
}

// TestObjectSetting: mcpServers is taken whole, so its servers' keys are
// not unknown settings; a key a server entry does not know is warned
// about with its whole path, and a bad entry is an error naming it.
func TestObjectSetting(t *testing.T) {
	c := DefaultConfig()
	warnings, err := c.LoadJSON([]byte(`{"mcpServers": {"gh": {"command": "npx", "args": ["-y", "gh-mcp"], "colour": 1},
		"docs": {"url": "https://example.com/mcp"}}, "extra": 1}`), "config.json", false)
	require.NoError(t, err)
	assert.Equal(t, []string{`config.json: unknown key "extra" (ignored)`,
		`config.json: mcpServers.gh: unknown key "colour" (ignored)`}, warnings)
	require.Len(t, c.MCPServers, 2)
	assert.Equal(t, "docs", c.MCPServers[0].Name)
	assert.Equal(t, "npx -y gh-mcp", c.MCPServers[1].CommandLine())
	i := slices.IndexFunc(Settings(), func(s Setting) bool { return s.Key == "mcpServers" })
	assert.Equal(t, "docs (http: https://example.com/mcp); gh (stdio: npx -y gh-mcp (sandbox read, no network))", Settings()[i].Value(&c))

	_, err = c.LoadJSON([]byte(`{"mcpServers": {"bad": {"args": []}}}`), "config.json", false)
	assert.EqualError(t, err, "config.json: mcpServers: bad: needs a command (a process on stdio) or a url (streamable HTTP)")
	warnings, err = c.LoadJSON([]byte(`{"mcpServers": {}}`), "initializationOptions", true)
	require.NoError(t, err)
	assert.Equal(t, []string{`initializationOptions: "mcpServers" cannot be set here (ignored); set it in config.json or the environment`}, warnings)
}
