package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent"
)

// The model client's settings, from the config file and over it the
// environment.
func TestModelClientSettings(t *testing.T) {
	cfg := agent.DefaultConfig()
	assert.Equal(t, agent.DefaultStreamIdleTimeout, cfg.Model.StreamIdleTimeout)
	warnings, err := cfg.LoadJSON([]byte(`{"model":{"name":"m","reasoningEffort":"low",
		"streamIdleTimeout":"90s","callTimeout":"10m","maxRetryWait":"30s"}}`), "config.json", false)
	require.NoError(t, err)
	assert.Empty(t, warnings)
	assert.Equal(t, "low", cfg.Model.ReasoningEffort)
	assert.Equal(t, 90*time.Second, cfg.Model.StreamIdleTimeout)
	assert.Equal(t, 10*time.Minute, cfg.Model.CallTimeout)
	assert.Equal(t, 30*time.Second, cfg.Model.MaxRetryWait)

	env := map[string]string{"AGENTD_REASONING_EFFORT": "high", "AGENTD_STREAM_IDLE_TIMEOUT": "2m",
		"AGENTD_MODEL_TIMEOUT": "1h", "AGENTD_RETRY_MAX_WAIT": "5s"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	require.NoError(t, cfg.LoadEnv(lookup))
	assert.Equal(t, "high", cfg.Model.ReasoningEffort)
	assert.Equal(t, 2*time.Minute, cfg.Model.StreamIdleTimeout)
	assert.Equal(t, time.Hour, cfg.Model.CallTimeout)
	assert.Equal(t, 5*time.Second, cfg.Model.MaxRetryWait)

	env["AGENTD_REASONING_EFFORT"] = "extreme"
	assert.ErrorContains(t, cfg.LoadEnv(lookup), `AGENTD_REASONING_EFFORT="extreme"`)
	env["AGENTD_REASONING_EFFORT"] = ""
	env["AGENTD_STREAM_IDLE_TIMEOUT"] = "soon"
	assert.ErrorContains(t, cfg.LoadEnv(lookup), "AGENTD_STREAM_IDLE_TIMEOUT")
}
