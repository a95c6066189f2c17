package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/tools"
	"github.com/agentd/agentd/tools/mcp/mcptest"
)

// changes records what OnChange was told.
type changes struct {
	mu   sync.Mutex
	seen []string
}

func (c *changes) add(name string, st State) {
	c.mu.Lock()
	c.seen = append(c.seen, name+" "+string(st))
	c.mu.Unlock()
}

func (c *changes) has(s string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, x := range c.seen {
		if x == s {
			return true
		}
	}
	return false
}

// TestDisableEnableRestart: a disabled server stops, offers no tools and
// stays disabled after a restart of the daemon; enabled, it starts again;
// a restart starts a new process. Every change is reported.
func TestDisableEnableRestart(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	state := t.TempDir()
	starts := filepath.Join(t.TempDir(), "starts")
	srv := testServer(t, "test", "-starts", starts)
	srv.Origin, srv.Write = OriginUser, []string{filepath.Dir(starts)}
	off := testServer(t, "off")
	off.Origin, off.Disabled = OriginUser, true
	var ch changes
	open := func() *Manager {
		m := NewManager(Options{Root: root, StateDir: state, User: []Server{srv, off}, OnChange: ch.add})
		t.Cleanup(m.Close)
		return m
	}
	m := open()
	require.Len(t, toolsOf(t, m), 13)
	assert.Equal(t, StateDisabled, status(m, "off").State)
	require.Eventually(t, func() bool { return ch.has("test connected") }, 10*time.Second, 10*time.Millisecond)

	st, err := m.Disable("", "test")
	require.NoError(t, err)
	assert.Equal(t, StateDisabled, st.State)
	assert.Empty(t, toolsOf(t, m), "a disabled server offers no tools")
	require.Eventually(t, func() bool { return ch.has("test disabled") }, 10*time.Second, 10*time.Millisecond)
	m.Close()

	m = open()
	assert.Equal(t, StateDisabled, status(m, "test").State, "disabled is remembered")
	assert.Empty(t, toolsOf(t, m))
	_, err = m.Restart("", "test")
	require.ErrorIs(t, err, ErrNotStartable)
	assert.Contains(t, err.Error(), "enable it")

	st, err = m.Enable("", "test")
	require.NoError(t, err)
	assert.Equal(t, StateStarting, st.State, "enable answers as the start begins")
	require.Len(t, toolsOf(t, m), 13)
	st, err = m.Enable("", "off")
	require.NoError(t, err, "a server the configuration disables can be enabled")
	assert.Contains(t, []State{StateStarting, StateConnected}, st.State)
	require.Len(t, toolsOf(t, m), 26)

	before := countLines(t, starts)
	st, err = m.Restart("", "test")
	require.NoError(t, err)
	assert.Equal(t, StateStarting, st.State)
	require.Eventually(t, func() bool { return status(m, "test").State == StateConnected }, 30*time.Second, 20*time.Millisecond)
	assert.Equal(t, before+1, countLines(t, starts), "a restart starts a new process")

	_, err = m.Disable("", "nope")
	require.ErrorIs(t, err, ErrUnknownServer)
}

func countLines(t *testing.T, path string) int {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return strings.Count(string(data), "\n")
}

// TestEnableForgetsARejection: enabling a workspace server the user
// rejected for good asks about it again, rather than starting it.
func TestEnableForgetsARejection(t *testing.T) {
	root, state := t.TempDir(), t.TempDir()
	cfg := `{"mcpServers": {"ws": {"command": "` + mcptest.Server(t) + `"}}}`
	require.NoError(t, os.WriteFile(filepath.Join(root, ".mcp.json"), []byte(cfg), 0o644))
	ws, _, err := ReadWorkspace(root)
	require.NoError(t, err)
	m := NewManager(Options{Root: root, StateDir: state, Workspace: ws})
	t.Cleanup(m.Close)
	require.NoError(t, m.Decide("s1", ws[0], tools.RejectAlways))
	assert.Equal(t, StateRejected, status(m, "ws").State)
	_, err = m.Restart("", "ws")
	require.ErrorIs(t, err, ErrNotStartable)
	st, err := m.Enable("", "ws")
	require.NoError(t, err)
	assert.Equal(t, StateNeedsApproval, st.State, "asked about again, not started")
}
