package mcp

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/internal/await"
	"github.com/agentd/agentd/tools"
	"github.com/agentd/agentd/tools/mcp/mcptest"
)

// newManager runs the given servers for a fresh workspace; it is closed
// at the end of the test.
func newManager(t *testing.T, user ...Server) (*Manager, string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for i := range user {
		user[i].Origin = OriginUser
	}
	m := NewManager(Options{Root: root, StateDir: t.TempDir(), User: user})
	t.Cleanup(m.Close)
	return m, root
}

func testServer(t *testing.T, name string, args ...string) Server {
	return Server{Name: name, Command: mcptest.Server(t), Args: args}
}

// ctxFor is a context of d, scaled for the machine (internal/await).
func ctxFor(t *testing.T, d time.Duration) context.Context {
	return await.Context(t, d)
}

// toolsOf takes the servers' tools as a run does, by name.
func toolsOf(t *testing.T, m *Manager) map[string]tools.Tool {
	t.Helper()
	out := map[string]tools.Tool{}
	for _, tl := range m.Tools(ctxFor(t, time.Minute), m.Servers("")) {
		out[tl.Info().Name] = tl
	}
	return out
}

// call prepares and runs a tool call as the agent would.
func call(t *testing.T, tl tools.Tool, args string, asker tools.Asker) tools.Result {
	t.Helper()
	c, refusal := tools.Prepare(context.Background(), tl, &tools.Env{Asker: asker}, json.RawMessage(args))
	require.Nil(t, refusal)
	ctx, cancel := context.WithTimeout(context.Background(), tl.Info().Timeout)
	defer cancel()
	res, err := c.Run(ctx)
	require.NoError(t, err)
	return res
}

func status(m *Manager, name string) Status {
	for _, s := range m.Status("") {
		if s.Name == name {
			return s
		}
	}
	return Status{}
}

func TestParseServers(t *testing.T) {
	servers, warnings, err := ParseServers([]byte(`{
		"gh": {"command": "npx", "args": ["-y", "@x/gh"], "env": {"TOKEN": "${GH_TOKEN}"}, "network": true, "startupTimeout": "45s"},
		"docs": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}, "callTimeout": 20, "alwaysAllow": []}
	}`), OriginUser)
	require.NoError(t, err)
	require.Len(t, servers, 2)
	assert.Equal(t, "docs", servers[0].Name, "sorted by name")
	assert.True(t, servers[0].IsHTTP())
	assert.Equal(t, 20*time.Second, servers[0].callTimeout())
	assert.Equal(t, "gh", servers[1].Name)
	assert.Equal(t, 45*time.Second, servers[1].startupTimeout())
	assert.Equal(t, "npx -y @x/gh", servers[1].CommandLine())
	assert.Equal(t, "sandbox read, network", servers[1].Confinement())
	assert.Equal(t, []string{"GH_TOKEN"}, servers[1].Variables())
	assert.Equal(t, []string{`mcpServers.docs: unknown key "alwaysAllow" (ignored)`}, warnings)

	for cfg, want := range map[string]string{
		`{"x": {}}`: "x: needs a command",
		`{"x": {"command": "a", "url": "http://h/mcp"}}`:    "x: has both",
		`{"x": {"type": "sse", "url": "http://h/sse"}}`:     "x: the SSE transport is not supported",
		`{"x": {"url": "ftp://h"}}`:                         "x: url \"ftp://h\" is not an http",
		`{"x": {"command": "a", "sandbox": "open"}}`:        "unknown sandbox profile",
		`{"x": {"command": "a", "args": "-y"}}`:             "args must be a list of strings",
		`{"x": {"command": "a", "startupTimeout": "soon"}}`: "not a duration",
		`[]`: "mcpServers must be an object",
	} {
		_, _, err := ParseServers([]byte(cfg), OriginUser)
		if assert.Error(t, err, cfg) {
			assert.Contains(t, err.Error(), want, cfg)
		}
	}
}

func TestExpandedVariables(t *testing.T) {
	s := Server{Name: "x", Command: "srv", Args: []string{"--dir=${HOME_DIR:-/srv}"}, Env: map[string]string{"T": "${TOK}"}}
	env := map[string]string{"TOK": "secret"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	got, err := s.expanded(lookup)
	require.NoError(t, err)
	assert.Equal(t, []string{"--dir=/srv"}, got.Args)
	assert.Equal(t, "secret", got.Env["T"])
	delete(env, "TOK")
	_, err = s.expanded(lookup)
	assert.ErrorContains(t, err, "uses TOK, which is not set")
	assert.Equal(t, s.Fingerprint(), s.Fingerprint())
	s2 := s
	s2.Args = []string{"--other"}
	assert.NotEqual(t, s.Fingerprint(), s2.Fingerprint(), "another command line is another approval")
}

func TestToolName(t *testing.T) {
	assert.Equal(t, "mcp__github__create_issue", ToolName("github", "create_issue"))
	assert.Equal(t, "mcp__my_server__get_a_b", ToolName("my server", "get.a/b"))
	long := ToolName(strings.Repeat("s", 40), strings.Repeat("t", 40))
	assert.Len(t, long, 64)
	assert.NotEqual(t, long, ToolName(strings.Repeat("s", 40), strings.Repeat("t", 41)), "cut names stay apart")
}

// TestStdioServer: a server on stdio, in the sandbox, lists its tools in a
// fixed order with its schemas, and a call's result comes back as text.
func TestStdioServer(t *testing.T) {
	m, _ := newManager(t, testServer(t, "test"))
	ts := m.Tools(ctxFor(t, time.Minute), m.Servers(""))
	var names []string
	for _, tl := range ts {
		names = append(names, tl.Info().Name)
	}
	assert.Equal(t, []string{"mcp__test__ask", "mcp__test__crash", "mcp__test__dial", "mcp__test__echo", "mcp__test__env",
		"mcp__test__fail", "mcp__test__flood", "mcp__test__grow", "mcp__test__login", "mcp__test__read", "mcp__test__sleep", "mcp__test__state", "mcp__test__write"}, names)
	echo := ts[3]
	in := echo.Info()
	assert.Equal(t, tools.EffectUnknown, in.Effect, "an MCP tool's effect is unknown, whatever its annotations say")
	assert.JSONEq(t, `{"type":"object","properties":{"text":{"type":"string","description":"the text to echo"}},"required":["text"],"additionalProperties":false}`, string(in.Parameters))
	assert.Equal(t, DefaultCallTimeout+questionWait, in.Timeout, "the call's own timeout excludes the user's answers")

	res := call(t, echo, `{"text":"hi"}`, nil)
	assert.Equal(t, tools.Result{Output: "echo: hi"}, res)
	res = call(t, ts[5], `{}`, nil)
	assert.True(t, res.IsError)
	assert.Equal(t, "this tool always fails", res.Output)

	c, refusal := tools.Prepare(context.Background(), echo, &tools.Env{}, json.RawMessage(`[1]`))
	assert.Nil(t, c)
	require.NotNil(t, refusal)
	assert.Contains(t, refusal.Output, "must be one JSON object")
	// The server's schema is checked before the call reaches it.
	c, refusal = tools.Prepare(context.Background(), echo, &tools.Env{}, json.RawMessage(`{"txt":"hi"}`))
	assert.Nil(t, c)
	require.NotNil(t, refusal)
	assert.Equal(t, "invalid arguments: text is required (a string); unknown parameter txt (did you mean text?): the parameters are text", refusal.Output)

	c, _ = tools.Prepare(context.Background(), echo, &tools.Env{}, json.RawMessage(`{"text":"x"}`))
	assert.Equal(t, "test: echo", c.Title)
	assert.Contains(t, c.Detail, "The server describes the tool as: read-only, open world (not verified)")

	st := status(m, "test")
	assert.Equal(t, StateConnected, st.State)
	assert.Equal(t, "read, no network", st.Sandbox)
	assert.Equal(t, 1, st.Starts)
	require.Len(t, st.Tools, 13)
	assert.Equal(t, &Hints{ReadOnly: true}, st.Tools[3].Hints)
}

// TestCrashRestarts: a server that dies in the middle of a call gives the
// model an error saying so, in the server's own words, and is started
// again by the next call.
func TestCrashRestarts(t *testing.T) {
	starts := filepath.Join(t.TempDir(), "starts")
	srv := testServer(t, "test", "-starts", starts)
	srv.Write = []string{filepath.Dir(starts)}
	m, _ := newManager(t, srv)
	ts := toolsOf(t, m)
	res := call(t, ts["mcp__test__crash"], `{}`, nil)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Output, "MCP server test stopped during the call")
	assert.Contains(t, res.Output, "exited with status 3: crashing on purpose")
	assert.Contains(t, res.Output, "started again at the next call")
	assert.Equal(t, StateFailed, status(m, "test").State)

	res = call(t, ts["mcp__test__echo"], `{"text":"again"}`, nil)
	assert.Equal(t, "echo: again", res.Output)
	st := status(m, "test")
	assert.Equal(t, StateConnected, st.State)
	assert.Equal(t, 2, st.Starts)
	data, err := os.ReadFile(starts)
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(data), "\n"), "the process was started twice")
}

// TestSandbox: a stdio server reads the workspace but cannot write it,
// writes its own state directory, has no network unless configured, and
// gets the configured environment but not the daemon's secrets.
func TestSandbox(t *testing.T) {
	t.Setenv("AGENTD_TEST_SECRET_TOKEN", "hunter2")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	closed := testServer(t, "closed")
	closed.Env = map[string]string{"GIVEN": "yes"}
	open := testServer(t, "open")
	open.Network = true
	m, root := newManager(t, closed, open)
	require.NoError(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("workspace file"), 0o644))
	ts := toolsOf(t, m)

	assert.Equal(t, "read: workspace file", call(t, ts["mcp__closed__read"], `{"path":"a.txt"}`, nil).Output)
	out := call(t, ts["mcp__closed__write"], `{"path":"b.txt"}`, nil).Output
	assert.Contains(t, out, "write failed")
	assert.NoFileExists(t, filepath.Join(root, "b.txt"))
	assert.Contains(t, call(t, ts["mcp__closed__state"], `{}`, nil).Output, "state kept in")
	assert.Contains(t, call(t, ts["mcp__closed__dial"], `{"addr":"`+ln.Addr().String()+`"}`, nil).Output, "dial failed")
	assert.Contains(t, call(t, ts["mcp__open__dial"], `{"addr":"`+ln.Addr().String()+`"}`, nil).Output, "dialed")
	assert.Equal(t, "GIVEN=yes", call(t, ts["mcp__closed__env"], `{"name":"GIVEN"}`, nil).Output)
	assert.Equal(t, "AGENTD_TEST_SECRET_TOKEN=", call(t, ts["mcp__closed__env"], `{"name":"AGENTD_TEST_SECRET_TOKEN"}`, nil).Output)
	assert.Equal(t, "read, network", status(m, "open").Sandbox)
}

// TestServersStartThroughTheOneDoor: a stdio server starts as every
// process does (tools.Sandbox.Command, with the agent's sandbox): it
// inherits the variables the user's commandEnv names and no others, gets
// its workspace's caches of read processes (its own npm cache wins), and
// where the sandbox cannot confine its profile (here switched off) it is
// not started, unless the user made it full.
func TestServersStartThroughTheOneDoor(t *testing.T) {
	t.Setenv("AGENTD_TEST_ALLOWED", "yes")
	t.Setenv("AGENTD_TEST_PRIVATE", "hunter2")
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	cache, state := t.TempDir(), t.TempDir()
	srv := testServer(t, "test")
	srv.Origin = OriginUser
	m := NewManager(Options{Root: root, StateDir: state, User: []Server{srv},
		Sandbox: tools.NewSandbox(tools.SandboxConfig{EnvAllow: []string{"AGENTD_TEST_ALLOWED"}, CacheDir: cache})})
	t.Cleanup(m.Close)
	env := toolsOf(t, m)["mcp__test__env"]
	require.NotNil(t, env, "the server started: %s", status(m, "test").Error)
	assert.Equal(t, "AGENTD_TEST_ALLOWED=yes", call(t, env, `{"name":"AGENTD_TEST_ALLOWED"}`, nil).Output)
	assert.Equal(t, "AGENTD_TEST_PRIVATE=", call(t, env, `{"name":"AGENTD_TEST_PRIVATE"}`, nil).Output)
	assert.Equal(t, "GOCACHE="+filepath.Join(m.opts.Sandbox.WorkspaceCacheDir(root), "read", "go-build"), call(t, env, `{"name":"GOCACHE"}`, nil).Output)
	assert.Equal(t, "npm_config_cache="+filepath.Join(StateDir(state, "test"), "npm"), call(t, env, `{"name":"npm_config_cache"}`, nil).Output)

	confined, full := testServer(t, "confined"), testServer(t, "full")
	full.Sandbox = string(tools.ProfileFull)
	for _, s := range []*Server{&confined, &full} {
		s.Origin = OriginUser
	}
	off := NewManager(Options{Root: root, StateDir: t.TempDir(), User: []Server{confined, full},
		Sandbox: tools.NewSandbox(tools.SandboxConfig{Off: true, CacheDir: cache})})
	t.Cleanup(off.Close)
	ts := toolsOf(t, off)
	assert.Nil(t, ts["mcp__confined__echo"])
	assert.Contains(t, status(off, "confined").Error, "cannot confine")
	require.NotNil(t, ts["mcp__full__echo"], status(off, "full").Error)
	assert.Equal(t, "echo: hi", call(t, ts["mcp__full__echo"], `{"text":"hi"}`, nil).Output)
}

// TestStartFailures: a server that exits at start, or does not answer in
// time, is failed with why; it has no tools.
func TestStartFailures(t *testing.T) {
	bad := testServer(t, "bad", "-fail", "no credentials configured")
	slow := testServer(t, "slow", "-start-delay", "1m")
	slow.StartupTimeout = Duration(300 * time.Millisecond)
	missing := Server{Name: "missing", Command: "/nonexistent/server"}
	m, _ := newManager(t, bad, slow, missing)
	assert.Empty(t, toolsOf(t, m))
	st := status(m, "bad")
	assert.Equal(t, StateFailed, st.State)
	assert.Contains(t, st.Error, "exited with status 2: no credentials configured")
	assert.Contains(t, status(m, "slow").Error, "did not start within 300ms")
	assert.Contains(t, status(m, "missing").Error, "/nonexistent/server")
}

// TestCallTimeout: a call that takes longer than the server's call
// timeout is cancelled and says so.
func TestCallTimeout(t *testing.T) {
	srv := testServer(t, "test")
	srv.CallTimeout = Duration(200 * time.Millisecond)
	m, _ := newManager(t, srv)
	res := call(t, toolsOf(t, m)["mcp__test__sleep"], `{"ms": 60000}`, nil)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Output, "timed out after 200ms")
	assert.Equal(t, "echo: x", call(t, toolsOf(t, m)["mcp__test__echo"], `{"text":"x"}`, nil).Output, "the server is still there")
}

// TestUserTimeDoesNotCount: a call's timeout counts the server's time,
// not the time the user takes to answer its question.
func TestUserTimeDoesNotCount(t *testing.T) {
	srv := testServer(t, "test")
	srv.CallTimeout = Duration(300 * time.Millisecond)
	m, _ := newManager(t, srv)
	slow := &asker{answer: func(q tools.Question) tools.Answer {
		time.Sleep(400 * time.Millisecond) // the user thinks for longer than the call may take
		if len(q.Options) > 0 {
			return tools.Answer{OptionID: "red"}
		}
		return tools.Answer{Text: "Bo"}
	}}
	assert.Equal(t, "name=Bo color=red age=30", call(t, toolsOf(t, m)["mcp__test__ask"], `{}`, slow).Output)
}

// TestHTTPServer: a server on streamable HTTP gets the configured headers.
func TestHTTPServer(t *testing.T) {
	u := mcptest.StartHTTP(t, "TEST_TOKEN=sesame")
	good := Server{Name: "web", URL: u, Headers: map[string]string{"X-Test-Token": "${WEB_TOKEN}"}}
	bad := Server{Name: "nokey", URL: u}
	t.Setenv("WEB_TOKEN", "sesame")
	m, _ := newManager(t, good, bad)
	ts := toolsOf(t, m)
	assert.Equal(t, "echo: over http", call(t, ts["mcp__web__echo"], `{"text":"over http"}`, nil).Output)
	assert.Equal(t, StateFailed, status(m, "nokey").State)
	assert.Contains(t, status(m, "nokey").Error, "Unauthorized")
	assert.Equal(t, "http", status(m, "web").Transport)
}

// TestHTTPServerGoneAndBack: a call to an HTTP server that went away is
// an error the model reads; once the server is back, the next call
// connects again.
func TestHTTPServerGoneAndBack(t *testing.T) {
	u := mcptest.StartHTTP(t)
	m, _ := newManager(t, Server{Name: "web", URL: u})
	echo := toolsOf(t, m)["mcp__web__echo"]
	assert.Equal(t, "echo: one", call(t, echo, `{"text":"one"}`, nil).Output)
	resp, err := http.Get(strings.TrimSuffix(u, "/mcp") + "/exit")
	if err == nil {
		resp.Body.Close()
	}
	gone := call(t, echo, `{"text":"two"}`, nil)
	assert.True(t, gone.IsError)
	assert.Contains(t, gone.Output, "MCP server web")
	mcptest.StartHTTPAt(t, strings.TrimSuffix(strings.TrimPrefix(u, "http://"), "/mcp"))
	assert.Equal(t, "echo: three", call(t, echo, `{"text":"three"}`, nil).Output)
	assert.Equal(t, StateConnected, status(m, "web").State)
	assert.GreaterOrEqual(t, status(m, "web").Starts, 2)
}

// asker answers questions from a script and records them.
type asker struct {
	mu     sync.Mutex
	asked  []tools.Question
	answer func(q tools.Question) tools.Answer
}

func (a *asker) Ask(_ context.Context, q tools.Question) (tools.Answer, error) {
	a.mu.Lock()
	a.asked = append(a.asked, q)
	a.mu.Unlock()
	return a.answer(q), nil
}

// TestElicitation: the server's form becomes one question per required
// field: free text for a string, a closed choice for an enum; an optional
// field takes its default; the answers go back typed.
func TestElicitation(t *testing.T) {
	m, _ := newManager(t, testServer(t, "test"))
	ask := toolsOf(t, m)["mcp__test__ask"]
	a := &asker{answer: func(q tools.Question) tools.Answer {
		if len(q.Options) > 0 {
			return tools.Answer{OptionID: "blue", Text: "blue"}
		}
		return tools.Answer{Text: "Ada"}
	}}
	assert.Equal(t, "name=Ada color=blue age=30", call(t, ask, `{}`, a).Output)
	require.Len(t, a.asked, 2)
	assert.Equal(t, "test asks", a.asked[0].Title)
	assert.Contains(t, a.asked[0].Message, "The MCP server test asks, while running ask:\nWho is asking?\n\nName: your name")
	assert.Empty(t, a.asked[0].Options)
	assert.Equal(t, []tools.Option{{OptionID: "red", Label: "red"}, {OptionID: "blue", Label: "blue"},
		{OptionID: declineID, Label: "Decline (answer nothing)"}}, a.asked[1].Options)
	assert.True(t, a.asked[1].Closed)
	assert.NotEqual(t, a.asked[0].Key, a.asked[1].Key)
	assert.True(t, strings.HasPrefix(a.asked[0].Key, "mcp:test:"), "keyed: the question is durable")

	again := &asker{answer: a.answer}
	call(t, ask, `{}`, again)
	assert.Equal(t, a.asked[0].Key, again.asked[0].Key, "the same question has the same key")

	declined := &asker{answer: func(q tools.Question) tools.Answer {
		if len(q.Options) > 0 {
			return tools.Answer{OptionID: declineID}
		}
		return tools.Answer{Text: "Ada"}
	}}
	assert.Equal(t, "the user did not answer: decline", call(t, ask, `{}`, declined).Output)
	gone := &asker{answer: func(tools.Question) tools.Answer { return tools.Answer{TimedOut: true} }}
	assert.Equal(t, "the user did not answer: cancel", call(t, ask, `{}`, gone).Output)
	assert.Equal(t, "the user did not answer: decline", call(t, ask, `{}`, nil).Output, "nobody to ask")
}

// TestListChanged: a server's new tool is not in the tools already taken;
// the next taking lists it.
func TestListChanged(t *testing.T) {
	m, _ := newManager(t, testServer(t, "test"))
	first := toolsOf(t, m)
	assert.Equal(t, "added late", call(t, first["mcp__test__grow"], `{}`, nil).Output)
	require.Eventually(t, func() bool { return status(m, "test").ToolsChanged }, await.Timeout(10*time.Second), 10*time.Millisecond,
		"the server announces its new tool")
	assert.NotContains(t, first, "mcp__test__late")
	next := toolsOf(t, m)
	assert.Contains(t, next, "mcp__test__late")
	assert.False(t, status(m, "test").ToolsChanged)
}

// TestWorkspaceApproval: a workspace server waits for the user's decision;
// allow_always is remembered for its exact configuration.
func TestWorkspaceApproval(t *testing.T) {
	root := t.TempDir()
	state := t.TempDir()
	bin := mcptest.Server(t)
	write := func(args string) {
		cfg := `{"mcpServers": {"ws": {"command": "` + bin + `", "args": [` + args + `]}}}`
		require.NoError(t, os.WriteFile(filepath.Join(root, ".mcp.json"), []byte(cfg), 0o644))
	}
	write(`"-start-delay", "0s"`)
	ws, warnings, err := ReadWorkspace(root)
	require.NoError(t, err)
	assert.Empty(t, warnings)
	m := NewManager(Options{Root: root, StateDir: state, Workspace: ws})
	assert.Equal(t, Ask, m.Approval("s1", ws[0]))
	assert.Equal(t, StateNeedsApproval, status(m, "ws").State)
	require.NoError(t, m.Decide("s1", ws[0], tools.AllowSession))
	assert.Equal(t, Approved, m.Approval("s1", ws[0]))
	assert.Equal(t, Ask, m.Approval("s2", ws[0]), "allow_session is for the session")
	require.NoError(t, m.Decide("s1", ws[0], tools.AllowAlways))
	m.Close()

	m = NewManager(Options{Root: root, StateDir: state, Workspace: ws})
	defer m.Close()
	assert.Equal(t, Approved, m.Approval("s2", ws[0]), "allow_always is remembered")
	write(`"-start-delay", "1ms"`)
	changed, _, err := ReadWorkspace(root)
	require.NoError(t, err)
	assert.Equal(t, Ask, m.Approval("s2", changed[0]), "a changed command line is asked about again")
}

// TestCIInstallsTheNPMPackages: .ci/test installs the packages the tests
// run through the tests' own installer (mcptest.NPM, versions and cache
// directory included), requiring them.
func TestCIInstallsTheNPMPackages(t *testing.T) {
	data, err := os.ReadFile("../../.ci/test")
	require.NoError(t, err)
	assert.Contains(t, string(data), `AGENTD_TEST_REQUIRE_NPM=1 go test -count=1 -run '^TestNPMPackages$' ./tools/mcp/mcptest`)
}
