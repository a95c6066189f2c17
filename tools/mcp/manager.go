package mcp

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentd/agentd/tools"
)

// Options configures a Manager.
type Options struct {
	// Root is the workspace: every stdio server may read it, runs in it by
	// default, and is told it as its root.
	Root string
	// StateDir is the workspace's state directory: the servers' own
	// directories and the remembered approvals live under it.
	StateDir string
	// Version is agentd's, sent in the MCP handshake.
	Version string
	Logger  *slog.Logger
	// Sandbox starts the stdio servers, as it starts every process (the
	// agent's: its child environment with the user's extra names, its
	// caches); nil means tools.DefaultSandbox.
	Sandbox *tools.Sandbox
	// User are the servers of ~/.config/agentd/config.json; Workspace
	// those of the workspace's .mcp.json.
	User      []Server
	Workspace []Server
	// OnChange is told when a server's state changes (starting, connected,
	// failed, stopped, disabled); called on its own goroutine.
	OnChange func(name string, state State)
}

func (o Options) sandbox() *tools.Sandbox {
	if o.Sandbox != nil {
		return o.Sandbox
	}
	return tools.DefaultSandbox()
}

// Manager runs a workspace's MCP servers: the user's, the workspace's once
// approved, and those an editor passes for a session. Servers start in
// the background as soon as they may; a run takes the tools of those that
// are connected (Tools). Safe for concurrent use.
type Manager struct {
	opts   Options
	log    *slog.Logger
	ctx    context.Context // the servers' lifetime
	cancel context.CancelFunc
	store  *approvals
	// toggles are the user's switches (Enable, Disable), over the
	// configuration's "disabled".
	toggles *toggles

	mu       sync.Mutex
	conns    map[string]*conn    // by Server.key
	sessions map[string][]Server // by agent session id
	allowed  map[string][]string // session id → workspace server keys allowed for the session

	// starts are the connects under way, which Close waits for: one
	// still starting a server after Close would make its state directory
	// and process after the caller let go of them.
	life   sync.Mutex // guards closed and starts.Add
	closed bool
	starts sync.WaitGroup
}

// NewManager starts the user's servers, and the workspace's the user
// approved for good, in the background.
func NewManager(opts Options) *Manager {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{opts: opts, log: opts.Logger, ctx: ctx, cancel: cancel, conns: map[string]*conn{},
		sessions: map[string][]Server{}, allowed: map[string][]string{}, store: loadApprovals(opts.StateDir, opts.Logger),
		toggles: loadToggles(opts.StateDir, opts.Logger)}
	for _, s := range m.Servers("") {
		if m.Approval("", s) == Approved && !s.Disabled {
			m.conn(s).start(false)
		}
	}
	return m
}

// Close stops every server, and returns once none is still starting.
func (m *Manager) Close() {
	m.life.Lock()
	m.closed = true
	m.life.Unlock()
	defer m.starts.Wait()
	m.cancel()
	m.mu.Lock()
	conns := make([]*conn, 0, len(m.conns))
	for _, c := range m.conns {
		conns = append(conns, c)
	}
	m.mu.Unlock()
	for _, c := range conns {
		c.stop()
	}
}

// starting counts a connect under way for Close; false once closed.
func (m *Manager) starting() bool {
	m.life.Lock()
	defer m.life.Unlock()
	if m.closed {
		return false
	}
	m.starts.Add(1)
	return true
}

// SetSession gives a session the servers its editor passed (ACP's
// session/new), replacing earlier ones, and starts them.
func (m *Manager) SetSession(sessionID string, servers []Server) {
	for i := range servers {
		servers[i].Origin = OriginSession
	}
	m.mu.Lock()
	m.sessions[sessionID] = slices.Clone(servers)
	m.mu.Unlock()
	for _, s := range servers {
		if !s.Disabled {
			m.conn(s).start(false)
		}
	}
}

// Warm starts servers ahead of the session that will see them: their
// connections are shared by name and configuration.
func (m *Manager) Warm(servers []Server) {
	for _, s := range servers {
		s.Origin = OriginSession
		if !s.Disabled {
			m.conn(s).start(false)
		}
	}
}

// Servers lists the servers a session sees, by name: the user's, the
// workspace's whose name (as tool names spell it) the user's and the
// session's did not take, and the session's, which replace any of the
// same name. "" is no session.
func (m *Manager) Servers(sessionID string) []Server {
	byName := map[string]Server{}
	for _, s := range m.opts.Workspace {
		byName[s.Name] = s
	}
	for _, s := range m.opts.User {
		byName[s.Name] = s
	}
	m.mu.Lock()
	for _, s := range m.sessions[sessionID] {
		byName[s.Name] = s
	}
	m.mu.Unlock()
	// A workspace server whose name reads like another's ("my.tools"
	// beside the user's "my_tools") is hidden too: its tools would have
	// the same names (mcp__my_tools__…), and the one listed first would
	// take the calls, and the rules, meant for the other.
	trusted := map[string]bool{}
	for _, s := range byName {
		if s.Origin != OriginWorkspace {
			trusted[sanitize(s.Name)] = true
		}
	}
	out := make([]Server, 0, len(byName))
	for _, s := range byName {
		if s.Origin == OriginWorkspace && trusted[sanitize(s.Name)] {
			continue
		}
		out = append(out, m.toggles.apply(s))
	}
	slices.SortFunc(out, func(a, b Server) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Approval is whether a server may start.
type Approval int

// Approvals.
const (
	// Ask: a workspace server the user has not decided on.
	Ask Approval = iota
	Approved
	Rejected
	// Refused: a workspace server that asks for more than a command could
	// get; it is neither started nor asked about (Refusal says why).
	Refused
)

// Approval says whether a server may start for a session: the user's and
// the editor's may; a workspace server once the user approved its exact
// configuration (remembered for the workspace, or for the session).
func (m *Manager) Approval(sessionID string, s Server) Approval {
	if s.Origin != OriginWorkspace {
		return Approved
	}
	if m.Refusal(s) != nil {
		return Refused
	}
	if allow, ok := m.store.get(s); ok {
		if allow {
			return Approved
		}
		return Rejected
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if slices.Contains(m.allowed[sessionID], s.key()) {
		return Approved
	}
	return Ask
}

// Refusal says why a workspace server may not start whatever the user
// answers, or nil.
func (m *Manager) Refusal(s Server) error { return s.checkWorkspace(m.opts.Root, commandEnv()) }

// Decide records the user's decision on starting a workspace server:
// allow_always and reject_always for the workspace (they survive
// restarts), allow_session for the session; allow_once and reject_once
// are the caller's, for one run.
func (m *Manager) Decide(sessionID string, s Server, d tools.Decision) error {
	switch d {
	case tools.AllowAlways, tools.RejectAlways:
		return m.store.set(s, d == tools.AllowAlways)
	case tools.AllowSession:
		m.mu.Lock()
		m.allowed[sessionID] = append(m.allowed[sessionID], s.key())
		m.mu.Unlock()
	}
	return nil
}

func (m *Manager) conn(s Server) *conn {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := s.key()
	c, ok := m.conns[k]
	if !ok {
		c = newConn(m, s)
		m.conns[k] = c
	}
	return c
}

func (m *Manager) existing(s Server) *conn {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.conns[s.key()]
}

// Tools starts the servers that are not running (a server that failed a
// moment ago is left alone), waits for those starting (each within its
// start-up timeout, or until ctx ends), lists again the tools of those
// that said their tools changed, and returns the tools of every connected
// server: by server name, then tool name, so the list the model sees is
// the same from one run to the next. Servers still starting are left out:
// their tools come with a later run.
func (m *Manager) Tools(ctx context.Context, servers []Server) []tools.Tool {
	var conns []*conn
	var wg sync.WaitGroup
	for _, s := range servers {
		if s.Disabled {
			continue
		}
		c := m.conn(s)
		conns = append(conns, c)
		ready := c.start(false)
		wg.Go(func() {
			select {
			case <-ready:
				c.refresh(ctx)
			case <-ctx.Done():
			}
		})
	}
	wg.Wait()
	var out []tools.Tool
	for _, c := range conns {
		for _, t := range c.snapshot() {
			out = append(out, newTool(c, t))
		}
	}
	return out
}

// Status is one server as the status request shows it.
type Status struct {
	Name      string `json:"name"`
	Origin    Origin `json:"origin"`
	Transport string `json:"transport"`
	// Command is a stdio server's command line, URL an HTTP server's, as
	// configured (${VAR} references unexpanded; environment and headers,
	// which carry tokens, are never shown).
	Command string `json:"command,omitempty"`
	URL     string `json:"url,omitempty"`
	// Sandbox says how a stdio server is confined: "read, no network".
	Sandbox string `json:"sandbox,omitempty"`
	State   State  `json:"state"`
	// Error says why a failed server failed, in the server's words where
	// it said any (the end of its stderr).
	Error string     `json:"error,omitempty"`
	Tools []ToolInfo `json:"tools,omitempty"`
	// ToolsChanged: the server announced new tools; they are listed
	// again when a run next takes the tools (new sessions offer them).
	ToolsChanged bool       `json:"toolsChanged,omitempty"`
	ConnectedAt  *time.Time `json:"connectedAt,omitempty"`
	// Starts counts the start attempts (1 after a clean start; more after
	// crashes and retries).
	Starts int `json:"starts,omitempty"`
}

// Status reports every server the session sees ("" for none).
func (m *Manager) Status(sessionID string) []Status {
	out := []Status{}
	for _, s := range m.Servers(sessionID) {
		st := Status{State: StateIdle}
		if c := m.existing(s); c != nil {
			st = c.status()
		}
		switch {
		case s.Disabled:
			st = Status{State: StateDisabled}
		case st.State == StateIdle && m.Refusal(s) != nil:
			st = Status{State: StateFailed, Error: m.Refusal(s).Error()}
		case st.State == StateIdle && m.Approval(sessionID, s) == Ask:
			st.State = StateNeedsApproval
		case st.State == StateIdle && m.Approval(sessionID, s) == Rejected:
			st.State = StateRejected
		}
		st.Name, st.Origin, st.Transport = s.Name, s.Origin, s.Transport()
		if s.IsHTTP() {
			st.URL = s.URL
		} else {
			st.Command = s.CommandLine()
			st.Sandbox = strings.TrimPrefix(s.Confinement(), "sandbox ")
		}
		out = append(out, st)
	}
	return out
}

// ToolInfo is one tool of a server, as the status shows it.
type ToolInfo struct {
	// Name is what the model calls it: mcp__<server>__<tool>.
	Name string `json:"name"`
	// Tool is the server's own name for it.
	Tool        string `json:"tool"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Hints are what the server says about the tool; they are shown, never
	// trusted: every call asks (except in full-auto) whatever they say.
	Hints *Hints `json:"hints,omitempty"`
}

// Hints are a tool's annotations: claims of its server.
type Hints struct {
	ReadOnly    bool  `json:"readOnly,omitempty"`
	Destructive *bool `json:"destructive,omitempty"`
	Idempotent  bool  `json:"idempotent,omitempty"`
	OpenWorld   *bool `json:"openWorld,omitempty"`
}

// String says the hints in words: "read-only, closed world".
func (h *Hints) String() string {
	if h == nil {
		return ""
	}
	var parts []string
	if h.ReadOnly {
		parts = append(parts, "read-only")
	} else {
		parts = append(parts, "may change things")
		if h.Destructive == nil || *h.Destructive {
			parts = append(parts, "may be destructive")
		}
		if h.Idempotent {
			parts = append(parts, "idempotent")
		}
	}
	if h.OpenWorld != nil && !*h.OpenWorld {
		parts = append(parts, "closed world")
	} else {
		parts = append(parts, "open world")
	}
	return strings.Join(parts, ", ")
}
