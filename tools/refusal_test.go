package tools

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/tools/sandbox"
)

// TestHelperNet is not a test: TestRefusalHints runs the test binary,
// copied into a workspace, as a Go program that listens on the loopback
// and then dials out, and reports its errors as Go does (in lower case).
func TestHelperNet(t *testing.T) {
	if _, err := os.Stat("net-helper"); err != nil {
		t.Skip("a helper process for TestRefusalHints")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println("listening on the loopback")
	ln.Close()
	if _, err := net.DialTimeout("tcp", "192.0.2.1:80", 10*time.Second); err != nil {
		fmt.Println(err)
	}
	os.Exit(1)
}

// netHelper puts the test binary in env's workspace as ./net-helper.
func netHelper(t *testing.T, env *Env) string {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	src, err := os.Open(exe)
	require.NoError(t, err)
	defer src.Close()
	dst, err := os.OpenFile(filepath.Join(env.Root, "net-helper"), os.O_CREATE|os.O_WRONLY, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, err)
	require.NoError(t, dst.Close())
	return "./net-helper -test.run=^TestHelperNet$"
}

// A command the sandbox refused says so, and how to ask: a Go program's
// refused socket (Go writes "socket: permission denied" in lower case), a
// session's command that can bind the loopback but reach nothing else, a
// write a profile does not allow.
func TestRefusalHints(t *testing.T) {
	if !sandbox.Check().Supports(sandbox.WorkspaceWrite) {
		t.Skip("no kernel sandbox here")
	}
	env := newEnv(t)
	line := netHelper(t, env)

	// In the session's network: the loopback works, the rest is unreachable.
	r := runConfined(t, t.Context(), env, Confine{Profile: ProfileRead}, RunCmdParams{Command: line})
	assert.True(t, r.IsError)
	assert.Contains(t, r.Output, "listening on the loopback")
	assert.Contains(t, r.Output, "connect: network is unreachable")
	assert.Contains(t, r.Output, "[sandbox: this command ran without the network, in this session's private network")
	assert.Contains(t, r.Output, "run it again with network: true")
	assert.NotContains(t, r.Output, "read profile", "no word about files")

	// With no session, no socket at all: Go's lower-case refusal.
	env.SessionID = ""
	r = runConfined(t, t.Context(), env, Confine{Profile: ProfileRead}, RunCmdParams{Command: line})
	assert.Contains(t, r.Output, "listen tcp 127.0.0.1:0: socket: permission denied")
	assert.Contains(t, r.Output, "[sandbox: this command ran without the network: it could open no socket but local ones.")
	assert.Contains(t, r.Output, "run it again with network: true")

	// A write the read profile refuses.
	r = runConfined(t, t.Context(), env, Confine{Profile: ProfileRead}, RunCmdParams{Command: "echo x > f.txt"})
	assert.Contains(t, r.Output, "Permission denied")
	assert.Contains(t, r.Output, "[sandbox: this command ran in the read profile")
	assert.NotContains(t, r.Output, "without the network")

	// A write outside the workspace in workspace-write.
	r = runConfined(t, t.Context(), env, Confine{Profile: ProfileWorkspaceWrite}, RunCmdParams{Command: "mkdir /usr/agentd-refusal-test"})
	assert.True(t, r.IsError)
	assert.Contains(t, r.Output, "[sandbox: this command ran in the workspace-write profile")

	// Without the sandbox nothing is added: the refusal is the system's.
	r = runConfined(t, t.Context(), env, Confine{Profile: ProfileFull}, RunCmdParams{Command: "echo 'socket: permission denied'; exit 1"})
	assert.NotContains(t, r.Output, "[sandbox:")
}

func TestRefusalNote(t *testing.T) {
	read := Confine{Profile: ProfileRead}
	for _, tc := range []struct {
		out, want string
		c         Confine
	}{
		{"go: example.com/m@v1.0.0: module lookup disabled by GOPROXY=off", "GOPROXY=off", read},
		{"curl: (6) Could not resolve host: example.com", "ran without the network", read},
		{"psycopg2.OperationalError: connection refused", "ran without the network", read},
		{"dial tcp 127.0.0.1:5432: connect: connection refused", "", Confine{Profile: ProfileRead, Network: true}},
		{"touch: cannot touch 'x': Read-only file system", "read profile", read},
		{"mkdir: cannot create directory '/opt/x': Permission denied", "workspace-write profile", Confine{Profile: ProfileWorkspaceWrite}},
		{"all good", "", read},
	} {
		got := refusalNote(tc.out, tc.c, true)
		if tc.want == "" {
			assert.Empty(t, got, tc.out)
			continue
		}
		assert.Contains(t, got, tc.want, tc.out)
	}
}
