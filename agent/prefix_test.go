package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStoredPrefixesAreBounded: sessions are never deleted, so the stored
// prompt prefixes are bounded instead: past prefixKeep, those used longest
// ago are dropped, and reading one (a session continued) counts as a use.
func TestStoredPrefixesAreBounded(t *testing.T) {
	state := t.TempDir()
	dir := filepath.Join(state, "prefixes")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	id := func(i int) string { return fmt.Sprintf("s_%04d", i) }
	base := time.Now().Add(-48 * time.Hour)
	n := prefixKeep + 10
	for i := range n { // s_0000 is the one used longest ago
		p := filepath.Join(dir, id(i)+".json")
		require.NoError(t, os.WriteFile(p, []byte(`{"system":"You are agentd.","tools":["read_file"]}`), 0o600))
		at := base.Add(time.Duration(i) * time.Minute)
		require.NoError(t, os.Chtimes(p, at, at))
	}
	cfg := Config{Root: t.TempDir(), StateDir: state, Model: ModelConfig{BaseURL: "http://127.0.0.1:1", Name: "fake"}}
	a, err := New(cfg)
	require.NoError(t, err)
	// A session continued now reads its prefix: it is used again.
	pfx := a.sessionPrefix(context.Background(), id(3), nil)
	assert.Equal(t, "You are agentd.", pfx.System)
	a.Shutdown()

	// The next daemon holds none of them: the times alone decide.
	a, err = New(cfg)
	require.NoError(t, err)
	t.Cleanup(a.Shutdown)
	a.prunePrefixes()
	des, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, des, prefixKeep)
	for i := range n {
		_, err := os.Stat(filepath.Join(dir, id(i)+".json"))
		switch {
		case i == 3:
			assert.NoError(t, err, "the prefix read now is kept")
		case i < 11:
			assert.ErrorIs(t, err, os.ErrNotExist, "%s was used longest ago", id(i))
		default:
			assert.NoError(t, err, id(i))
		}
	}
}

// TestRulesFollowTheFrontEnd: the rules say what the front end can do. An
// editor that shows questions and approvals gets ask_user and the rule that
// writes and commands may need approval; a front end that shows none (agentd
// run without a terminal) is told no one can answer or approve, so a model
// does not plan on a command the policy will refuse.
func TestRulesFollowTheFrontEnd(t *testing.T) {
	for _, c := range []struct {
		kinds     []RequestKind
		has, hasn []string
	}{
		{nil, []string{rulesAsk, rulesApprove}, []string{rulesNoAsk, rulesNoApprove}},
		{[]RequestKind{}, []string{rulesNoAsk, rulesNoApprove}, []string{rulesAsk, rulesApprove}},
		{[]RequestKind{KindConfirmCommand}, []string{rulesNoAsk, rulesApprove}, []string{rulesAsk, rulesNoApprove}},
	} {
		a, err := New(Config{Root: t.TempDir(), StateDir: t.TempDir(), RequestKinds: c.kinds, Model: ModelConfig{BaseURL: "http://127.0.0.1:1", Name: "fake"}})
		require.NoError(t, err)
		system := a.systemPrompt(a.offeredTools(), nil, "", time.Now())
		a.Shutdown()
		for _, s := range c.has {
			assert.Contains(t, system, s, c.kinds)
		}
		for _, s := range c.hasn {
			assert.NotContains(t, system, s, c.kinds)
		}
	}
}
