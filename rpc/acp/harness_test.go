package acp

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/internal/await"
	"github.com/agentd/agentd/tools"
	"github.com/agentd/agentd/tools/lsp"
)

// harness is one agentd ACP server and an SDK client talking to it.
type harness struct {
	t       *testing.T
	conn    *acpsdk.ClientSideConnection
	client  *fakeClient
	out     *syncBuffer // every byte the server wrote
	in      *io.PipeWriter
	stopped chan struct{}
}

type config struct {
	stateDir string
	modelURL string
	form     bool // the client offers form elicitation
	fs       acpsdk.FileSystemCapabilities
	client   string // initialize's clientInfo.name ("" sends none)
	index    IndexStarter
	policy   tools.Mode
	// userConfigDir is ~/.config/agentd (custom commands); hooks the
	// user's hooks.
	userConfigDir string
	hooks         agent.Hooks
	log           *slog.Logger // nil: testLogger
	// languageServers are agentd's own (off by default), with the wait
	// for their diagnostics after a reply's edits.
	languageServers    lsp.Settings
	diagnosticsTimeout time.Duration
}

func start(t *testing.T, c config) *harness {
	t.Helper()
	cr, cw := io.Pipe() // client → server
	sr, sw := io.Pipe() // server → client
	out := &syncBuffer{}
	opts := Options{Version: "test", StateDirs: func(string) (string, string, error) { return c.stateDir, c.stateDir, nil },
		Agent: agent.Config{Model: agent.ModelConfig{BaseURL: c.modelURL, Name: "fake"}, RetryBase: time.Millisecond, MaxSteps: 10,
			Policy: c.policy, UserConfigDir: c.userConfigDir, Hooks: c.hooks, LanguageServers: c.languageServers,
			DiagnosticsTimeout: c.diagnosticsTimeout}, OpenIndex: c.index, Logger: cmp.Or(c.log, testLogger(t))}
	h := &harness{t: t, client: newFakeClient(), out: out, in: cw, stopped: make(chan struct{})}
	go func() {
		defer close(h.stopped)
		_ = Serve(context.Background(), cr, io.MultiWriter(sw, out), opts)
		sw.Close()
	}()
	h.conn = acpsdk.NewClientSideConnection(h.client, cw, sr)
	caps := acpsdk.ClientCapabilities{Fs: c.fs}
	if c.form {
		caps.Elicitation = &acpsdk.ElicitationCapabilities{Form: &acpsdk.ElicitationFormCapabilities{}}
	}
	init := acpsdk.InitializeRequest{ProtocolVersion: acpsdk.ProtocolVersionNumber, ClientCapabilities: caps}
	if c.client != "" {
		init.ClientInfo = &acpsdk.Implementation{Name: c.client, Version: "1"}
	}
	resp, err := h.conn.Initialize(h.ctx(), init)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if resp.ProtocolVersion != 1 || !resp.AgentCapabilities.LoadSession {
		t.Fatalf("initialize answered %+v", resp)
	}
	t.Cleanup(h.stop)
	return h
}

func TestMain(m *testing.M) {
	slog.SetDefault(testLogger(nil)) // the SDK logs there
	os.Exit(m.Run())
}

func testLogger(t *testing.T) *slog.Logger {
	if os.Getenv("ACP_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// stop closes the client's side, as an editor that quits does.
func (h *harness) stop() {
	h.in.Close()
	select {
	case <-h.stopped:
	case <-time.After(await.Timeout(10 * time.Second)):
		h.t.Errorf("server did not stop")
	}
}

// errServerStopped ends a call the server stopped before answering.
var errServerStopped = errors.New("the server stopped before answering")

// ctx bounds a call: 20 s (scaled for the machine), and no longer than the
// server runs (an answer already sent gets a second to arrive).
func (h *harness) ctx() context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	h.t.Cleanup(func() { cancel(nil) })
	timer := time.AfterFunc(await.Timeout(20*time.Second), func() {
		cancel(fmt.Errorf("no answer within %s", await.NewDeadline(20*time.Second)))
	})
	h.t.Cleanup(func() { timer.Stop() })
	go func() {
		select {
		case <-h.stopped:
			select {
			case <-time.After(time.Second):
				cancel(errServerStopped)
			case <-ctx.Done():
			}
		case <-ctx.Done():
		}
	}()
	return ctx
}

// callErr says why a call failed: the context's cause when it ended it.
func callErr(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && errors.Is(err, ctx.Err()) {
		return fmt.Errorf("%w (%v)", err, cause)
	}
	return err
}

func (h *harness) newSession(cwd string) acpsdk.SessionId {
	h.t.Helper()
	ctx := h.ctx()
	resp, err := h.conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		h.t.Fatalf("session/new: %v", callErr(ctx, err))
	}
	if resp.Modes == nil || len(resp.Modes.AvailableModes) != 5 {
		h.t.Fatalf("session/new modes: %+v", resp.Modes)
	}
	return resp.SessionId
}

func (h *harness) prompt(id acpsdk.SessionId, text string) acpsdk.StopReason {
	h.t.Helper()
	ctx := h.ctx()
	resp, err := h.conn.Prompt(ctx, acpsdk.PromptRequest{SessionId: id, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock(text)}})
	if err != nil {
		h.t.Fatalf("session/prompt %q: %v", text, callErr(ctx, err))
	}
	return resp.StopReason
}

func script(t *testing.T, js string) string {
	t.Helper()
	s, err := modeltest.ParseScript([]byte(js))
	if err != nil {
		t.Fatalf("script: %v", err)
	}
	return modeltest.StartT(t, s).URL
}

// fakeClient records updates and answers requests as a test says.
type fakeClient struct {
	mu         sync.Mutex
	updates    []acpsdk.SessionNotification
	permission func(acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse
	elicit     func(acpsdk.UnstableCreateElicitationRequest) acpsdk.UnstableCreateElicitationResponse
	asked      chan acpsdk.RequestPermissionRequest
	// buffers are the editor's unsaved buffers, by absolute path: fs reads
	// see them before the disk, fs writes land in them.
	buffers  map[string]string
	fsReads  []acpsdk.ReadTextFileRequest
	fsWrites []acpsdk.WriteTextFileRequest
	writeErr error // fs/write_text_file fails with it
}

func newFakeClient() *fakeClient {
	return &fakeClient{asked: make(chan acpsdk.RequestPermissionRequest, 10), buffers: map[string]string{}}
}

func (c *fakeClient) SessionUpdate(ctx context.Context, n acpsdk.SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.updates = append(c.updates, n)
	return nil
}

func (c *fakeClient) RequestPermission(ctx context.Context, p acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
	c.asked <- p
	c.mu.Lock()
	f := c.permission
	c.mu.Unlock()
	if f == nil {
		<-ctx.Done() // left open: the test answers nothing
		return acpsdk.RequestPermissionResponse{}, ctx.Err()
	}
	return f(p), nil
}

func (c *fakeClient) UnstableCreateElicitation(ctx context.Context, p acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error) {
	c.mu.Lock()
	f := c.elicit
	c.mu.Unlock()
	if f == nil {
		return acpsdk.UnstableCreateElicitationResponse{}, errors.New("no elicitation expected")
	}
	return f(p), nil
}

func (c *fakeClient) setPermission(f func(acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.permission = f
}

func (c *fakeClient) ReadTextFile(ctx context.Context, p acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fsReads = append(c.fsReads, p)
	if s, ok := c.buffers[p.Path]; ok {
		return acpsdk.ReadTextFileResponse{Content: s}, nil
	}
	b, err := os.ReadFile(p.Path)
	if err != nil {
		return acpsdk.ReadTextFileResponse{}, &acpsdk.RequestError{Code: -32002, Message: "Resource not found: " + p.Path}
	}
	return acpsdk.ReadTextFileResponse{Content: string(b)}, nil
}

func (c *fakeClient) WriteTextFile(ctx context.Context, p acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fsWrites = append(c.fsWrites, p)
	if c.writeErr != nil {
		return acpsdk.WriteTextFileResponse{}, c.writeErr
	}
	c.buffers[p.Path] = p.Content
	return acpsdk.WriteTextFileResponse{}, nil
}

// fsCalls returns the fs requests the client has had.
func (c *fakeClient) fsCalls() ([]acpsdk.ReadTextFileRequest, []acpsdk.WriteTextFileRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.fsReads), slices.Clone(c.fsWrites)
}

// setWriteErr makes fs/write_text_file fail with err: a plain error (the
// SDK sends it as an internal error whose data holds its text) or an
// *acpsdk.RequestError as it is.
func (c *fakeClient) setWriteErr(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writeErr = err
}

func (c *fakeClient) setBuffer(path, content string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buffers[path] = content
}

func (c *fakeClient) buffer(path string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.buffers[path]
	return s, ok
}
func (c *fakeClient) CreateTerminal(context.Context, acpsdk.CreateTerminalRequest) (acpsdk.CreateTerminalResponse, error) {
	return acpsdk.CreateTerminalResponse{}, errors.New("not offered")
}
func (c *fakeClient) KillTerminal(context.Context, acpsdk.KillTerminalRequest) (acpsdk.KillTerminalResponse, error) {
	return acpsdk.KillTerminalResponse{}, errors.New("not offered")
}
func (c *fakeClient) TerminalOutput(context.Context, acpsdk.TerminalOutputRequest) (acpsdk.TerminalOutputResponse, error) {
	return acpsdk.TerminalOutputResponse{}, errors.New("not offered")
}
func (c *fakeClient) ReleaseTerminal(context.Context, acpsdk.ReleaseTerminalRequest) (acpsdk.ReleaseTerminalResponse, error) {
	return acpsdk.ReleaseTerminalResponse{}, errors.New("not offered")
}
func (c *fakeClient) WaitForTerminalExit(context.Context, acpsdk.WaitForTerminalExitRequest) (acpsdk.WaitForTerminalExitResponse, error) {
	return acpsdk.WaitForTerminalExitResponse{}, errors.New("not offered")
}

// text joins the agent message chunks of a session.
func (c *fakeClient) text(id acpsdk.SessionId) string {
	var b strings.Builder
	for _, u := range c.of(id) {
		if m := u.AgentMessageChunk; m != nil && m.Content.Text != nil {
			b.WriteString(m.Content.Text.Text)
		}
	}
	return b.String()
}

func (c *fakeClient) of(id acpsdk.SessionId) []acpsdk.SessionUpdate {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []acpsdk.SessionUpdate
	for _, n := range c.updates {
		if n.SessionId == id {
			out = append(out, n.Update)
		}
	}
	return out
}

// waitFor polls until cond holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	await.Until(t, what, 10*time.Second, cond)
}

func selected[T ~string](id T) acpsdk.RequestPermissionResponse {
	return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{
		Selected: &acpsdk.RequestPermissionOutcomeSelected{OptionId: acpsdk.PermissionOptionId(id)}}}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
