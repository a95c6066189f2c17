package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/rag"
	"github.com/agentd/agentd/tools"
)

// Index is the workspace index running in the background, as this front
// end uses it; cmd plugs in the rag package through an IndexStarter.
type Index interface {
	Search(ctx context.Context, query string, limit int) ([]rag.SearchHit, bool, error)
	Close() error
}

// IndexStarter starts the index of root, keeping its files in dir.
type IndexStarter func(root, dir string) Index

// noIndex stands in when the agent runs without an index.
type noIndex struct{}

func (noIndex) Search(context.Context, string, int) ([]rag.SearchHit, bool, error) {
	return nil, false, errors.New("this agent runs without a workspace index")
}

func (noIndex) Close() error { return nil }

// Options configures the ACP server.
type Options struct {
	Version string
	// Agent is the configuration built from the daemon's settings; each
	// workspace's agent starts from it. Its Policy is the mode of new
	// sessions.
	Agent agent.Config
	// StateDirs returns a workspace's state and cache (index) directories.
	StateDirs func(root string) (state, cache string, err error)
	// OpenIndex starts the workspace index; nil runs without one.
	OpenIndex IndexStarter
	Logger    *slog.Logger
}

// server implements the SDK's Agent and AgentLoader.
type server struct {
	opts  Options
	log   *slog.Logger
	conn  atomic.Pointer[acpsdk.AgentSideConnection] // set once, after the SDK's reader has started
	quit  chan struct{}                              // closed when Serve returns: stops the workers
	ready chan struct{}                              // closed once conn is set

	mu         sync.Mutex // guards workspaces, sessions, caps, closed
	workspaces map[string]*workspace
	sessions   map[string]*session // by ACP session id
	caps       acpsdk.ClientCapabilities
	clientName string // initialize's clientInfo.name
	closed     bool
}

// Serve speaks ACP on r and w until the client goes away or ctx ends. Runs
// waiting on people stay persisted, so a restarted agentd asks again.
func Serve(ctx context.Context, r io.Reader, w io.Writer, opts Options) error {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Agent.Policy == "" {
		opts.Agent.Policy = tools.ModeAsk
	}
	s := &server{opts: opts, log: opts.Logger, quit: make(chan struct{}), ready: make(chan struct{}),
		workspaces: map[string]*workspace{}, sessions: map[string]*session{}}
	// The SDK's diagnostics go to slog's default logger: SetLogger would race
	// with the reader the constructor starts.
	wire := newWireLog(s.log, s.secretAsked)
	conn := acpsdk.NewAgentSideConnection(s, &scopeWriter{w: w, log: wire}, wire.reader(r))
	s.conn.Store(conn)
	close(s.ready)
	select {
	case <-conn.Done():
	case <-ctx.Done():
	}
	s.shutdown()
	return nil
}

func (s *server) shutdown() {
	s.mu.Lock()
	s.closed = true
	wss := make([]*workspace, 0, len(s.workspaces))
	for _, ws := range s.workspaces {
		wss = append(wss, ws)
	}
	s.mu.Unlock()
	close(s.quit)
	for _, ws := range wss {
		ws.close()
	}
}

// Initialize answers with what agentd offers; the client's capabilities
// decide how questions are asked.
func (s *server) Initialize(ctx context.Context, p acpsdk.InitializeRequest) (acpsdk.InitializeResponse, error) {
	name := "unknown"
	if p.ClientInfo != nil {
		name = p.ClientInfo.Name
	}
	s.mu.Lock()
	s.caps, s.clientName = p.ClientCapabilities, name
	s.mu.Unlock()
	s.log.Info("acp client", "name", name, "protocolVersion", p.ProtocolVersion)
	if p.ClientCapabilities.Fs.WriteTextFile && confirmsWrites(name) {
		s.log.Info("the client confirms each fs/write_text_file itself: writes go to the disk once agentd's permission allowed them",
			"client", name)
	}
	title := "agentd"
	// The kernel sandbox's status, as the native protocol's initialize
	// gives it (docs/security.md): a client that reads _meta can warn at
	// once; every client also gets a warning in the chat at the first
	// command when commands cannot be confined.
	sb := tools.NewSandbox(tools.SandboxConfig{Off: s.opts.Agent.Sandbox == "off", LandlockOnly: s.opts.Agent.Sandbox == "landlock"}).Status()
	return acpsdk.InitializeResponse{
		Meta:            map[string]any{"agentd": map[string]any{"sandbox": sb}},
		ProtocolVersion: acpsdk.ProtocolVersionNumber,
		AgentInfo:       &acpsdk.Implementation{Name: "agentd", Title: &title, Version: s.opts.Version},
		AuthMethods:     []acpsdk.AuthMethod{},
		AgentCapabilities: acpsdk.AgentCapabilities{
			LoadSession:        true,
			PromptCapabilities: acpsdk.PromptCapabilities{EmbeddedContext: true, Image: true},
			McpCapabilities:    acpsdk.McpCapabilities{Http: true},
			SessionCapabilities: acpsdk.SessionCapabilities{
				List:   &acpsdk.SessionListCapabilities{},
				Resume: &acpsdk.SessionResumeCapabilities{},
				Close:  &acpsdk.SessionCloseCapabilities{},
			},
		},
	}, nil
}

// Authenticate is a no-op: the model's key comes from the configuration.
func (s *server) Authenticate(ctx context.Context, p acpsdk.AuthenticateRequest) (acpsdk.AuthenticateResponse, error) {
	return acpsdk.AuthenticateResponse{}, nil
}

// client is the connection to the editor. Handlers can run before Serve
// has stored it, hence the wait.
func (s *server) client() *acpsdk.AgentSideConnection {
	<-s.ready
	return s.conn.Load()
}

func (s *server) formElicitation() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps.Elicitation != nil && s.caps.Elicitation.Form != nil
}

// workspace returns the agent of the workspace at cwd, opening it on first
// use.
func (s *server) workspace(cwd string) (*workspace, error) {
	root, err := rootOf(cwd)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("shutting down")
	}
	if ws, ok := s.workspaces[root]; ok {
		return ws, nil
	}
	ws, err := openWorkspace(s, root)
	if err != nil {
		return nil, err
	}
	s.workspaces[root] = ws
	return ws, nil
}

// rootOf checks that cwd is an absolute directory and resolves symlinks, so
// one workspace has one key.
func rootOf(cwd string) (string, error) {
	if cwd == "" || !filepath.IsAbs(cwd) {
		return "", invalidParams("cwd must be an absolute path, got %q", cwd)
	}
	root, err := filepath.EvalSymlinks(filepath.Clean(cwd))
	if err != nil {
		return "", invalidParams("cwd %s: %v", cwd, err)
	}
	return root, nil
}

func invalidParams(format string, args ...any) error {
	return &acpsdk.RequestError{Code: -32602, Message: fmt.Sprintf(format, args...)}
}
