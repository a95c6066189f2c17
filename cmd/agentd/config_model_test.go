package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The model client's settings, from the config file and over it the
// environment.
func TestModelClientSettings(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"model":{"name":"m","reasoningEffort":"low",
		"streamIdleTimeout":"90s","callTimeout":"10m","maxRetryWait":"30s"}}`), 0o600))
	s := settings{UserConfigDir: dir}
	require.NoError(t, s.applyFile(path))
	assert.Equal(t, "low", s.Model.ReasoningEffort)
	assert.Equal(t, 90*time.Second, s.Model.StreamIdleTimeout)
	assert.Equal(t, 10*time.Minute, s.Model.CallTimeout)
	assert.Equal(t, 30*time.Second, s.Model.MaxRetryWait)

	t.Setenv("AGENTD_REASONING_EFFORT", "high")
	t.Setenv("AGENTD_STREAM_IDLE_TIMEOUT", "2m")
	t.Setenv("AGENTD_MODEL_TIMEOUT", "1h")
	t.Setenv("AGENTD_RETRY_MAX_WAIT", "5s")
	require.NoError(t, s.applyEnv())
	assert.Equal(t, "high", s.Model.ReasoningEffort)
	assert.Equal(t, 2*time.Minute, s.Model.StreamIdleTimeout)
	assert.Equal(t, time.Hour, s.Model.CallTimeout)
	assert.Equal(t, 5*time.Second, s.Model.MaxRetryWait)

	t.Setenv("AGENTD_REASONING_EFFORT", "extreme")
	assert.ErrorContains(t, s.applyEnv(), `reasoning effort "extreme": use low, medium or high`)
	t.Setenv("AGENTD_REASONING_EFFORT", "")
	t.Setenv("AGENTD_STREAM_IDLE_TIMEOUT", "soon")
	assert.ErrorContains(t, s.applyEnv(), "AGENTD_STREAM_IDLE_TIMEOUT")
}
