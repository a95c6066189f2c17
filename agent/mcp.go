package agent

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/agentd/agentd/tools"
	"github.com/agentd/agentd/tools/mcp"
)

// A session offers the MCP tools its first run took, after agentd's own,
// by server and tool name: their names are part of the session's prefix
// (prefix.go), so the tools the model sees are the same bytes in every
// request of the session and providers' prompt caches hit. Each run takes
// the servers' tools again when it starts (that is what it calls); a
// server that is not connected then leaves its tools out of that run, and
// tools a server added since (tools/list_changed) come with the next
// session.

// toolSet is the MCP tools of one run.
type toolSet struct {
	order  []tools.Tool
	byName map[string]tools.Tool
}

func newToolSet(ts []tools.Tool) *toolSet {
	s := &toolSet{byName: map[string]tools.Tool{}}
	for _, t := range ts {
		name := t.Info().Name
		if _, dup := s.byName[name]; dup {
			continue // two tools whose names sanitize alike: the first wins
		}
		s.byName[name] = t
		s.order = append(s.order, t)
	}
	return s
}

// newMCP opens the workspace's MCP servers: the user's and, once
// approved, the workspace's.
func newMCP(cfg Config, sb *tools.Sandbox) *mcp.Manager {
	var onChange func(string, mcp.State)
	if l, ok := cfg.Listener.(MCPListener); ok {
		onChange = l.MCPChanged
	}
	var ws []mcp.Server
	if cfg.Root != "" {
		var warnings []string
		var err error
		ws, warnings, err = mcp.ReadWorkspace(cfg.Root)
		for _, w := range warnings {
			cfg.Logger.Warn(w)
		}
		if err != nil {
			cfg.Logger.Warn("the workspace's MCP servers are ignored", "err", err)
		}
	}
	return mcp.NewManager(mcp.Options{Root: cfg.Root, StateDir: cfg.StateDir, Logger: cfg.Logger, Sandbox: sb,
		User: cfg.MCPServers, Workspace: ws, OnChange: onChange})
}

// MCPListener is a Listener that also wants to know when an MCP server's
// state changes (the native protocol's mcp/changed), so a status it shows
// stays current. Called on a goroutine of its own, never with a lock held.
type MCPListener interface {
	MCPChanged(name string, state mcp.State)
}

// EnableMCPServer lets a server start again (see mcp.Manager.Enable).
func (a *Agent) EnableMCPServer(sessionID, name string) (mcp.Status, error) {
	return a.mcp.Enable(sessionID, name)
}

// DisableMCPServer stops a server and keeps it stopped.
func (a *Agent) DisableMCPServer(sessionID, name string) (mcp.Status, error) {
	return a.mcp.Disable(sessionID, name)
}

// RestartMCPServer stops a server and starts it again.
func (a *Agent) RestartMCPServer(sessionID, name string) (mcp.Status, error) {
	return a.mcp.Restart(sessionID, name)
}

// SetSessionMCPServers gives a session the MCP servers its editor passed
// (ACP's session/new and session/load) and starts them. They are not
// persisted (their environment often holds tokens): after a restart the
// editor passes them again.
func (a *Agent) SetSessionMCPServers(sessionID string, servers []mcp.Server) {
	a.mcp.SetSession(sessionID, servers)
}

// StartMCPServers starts servers an editor passed before any session of
// agentd's exists for them (ACP's session/new), so they are connected by
// the first prompt.
func (a *Agent) StartMCPServers(servers []mcp.Server) {
	a.mcp.Warm(servers)
}

// MCPStatus reports each MCP server a session sees ("" for the servers
// every session sees): its state, its tools, why it failed.
func (a *Agent) MCPStatus(sessionID string) []mcp.Status {
	return a.mcp.Status(sessionID)
}

// toolNamed finds a tool the run may call: agentd's own, or one of the
// MCP tools it took at its start.
func (r *run) toolNamed(name string) (tools.Tool, bool) {
	if t, ok := r.a.tools[name]; ok {
		return t, true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.rec.mcp; s != nil {
		t, ok := s.byName[name]
		return t, ok
	}
	return nil, false
}

// mcpToolNames names the MCP tools the run took, in their order.
func (r *run) mcpToolNames() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rec.mcp == nil {
		return nil
	}
	names := make([]string, 0, len(r.rec.mcp.order))
	for _, t := range r.rec.mcp.order {
		names = append(names, t.Info().Name)
	}
	return names
}

// specsLocked describes the named tools of the session's prefix to the
// model: agentd's own, then the MCP tools among them that the run took (a
// server that is not connected now leaves its tools out). r.mu is held.
func (r *run) specsLocked(names []string) []ToolSpec {
	specs := r.a.specsFor(names)
	if r.rec.mcp == nil {
		return specs
	}
	for _, n := range names {
		if t, ok := r.rec.mcp.byName[n]; ok {
			in := t.Info()
			specs = append(specs, ToolSpec{Name: in.Name, Description: in.Description, Parameters: in.Parameters})
		}
	}
	return specs
}

func (r *run) setTools(s *toolSet) {
	r.mu.Lock()
	r.rec.mcp = s
	r.mu.Unlock()
}

// startTools takes, once per run (and again after a restart), the tools of
// the MCP servers the session sees: it asks the user about workspace
// servers not approved yet, starts what is not running and waits for
// what is starting (each server within its start-up timeout).
func (r *run) startTools(ctx context.Context) error {
	r.mu.Lock()
	sid, taken := r.rec.SessionID, r.rec.mcp != nil
	r.mu.Unlock()
	if taken {
		return nil
	}
	// A session whose tool list is fixed would not offer a newly approved
	// server's tools: the question waits for the next session.
	ask := !r.a.hasPrefix(sid)
	var use []mcp.Server
	for _, s := range r.a.mcp.Servers(sid) {
		if s.Disabled {
			continue
		}
		switch r.a.mcp.Approval(sid, s) {
		case mcp.Approved:
			use = append(use, s)
		case mcp.Ask:
			if !ask {
				continue
			}
			ok, err := r.approveServer(ctx, sid, s)
			if err != nil {
				return err
			}
			if ok {
				use = append(use, s)
			}
		}
	}
	ts := r.a.mcp.Tools(ctx, use)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	r.setTools(newToolSet(ts))
	r.tellMCPFailures(sid)
	return nil
}

// tellMCPFailures says which MCP servers could not start and why, once per
// session and failure: without it a terminal or editor user only sees the
// model lack the tools they configured.
func (r *run) tellMCPFailures(sid string) {
	for _, st := range r.a.mcp.Status(sid) {
		if st.State != mcp.StateFailed {
			continue
		}
		if _, told := r.a.mcpTold.LoadOrStore(sid+"\x00"+st.Name+"\x00"+st.Error, true); told {
			continue
		}
		r.update(Update{Kind: UpdateNotice, Text: fmt.Sprintf("The MCP server %s could not start, so its tools are not offered: %s", st.Name, st.Error)})
	}
}

// approveServer asks the user whether a workspace server may start, as a
// command confirmation held by the run (durable like any other).
func (r *run) approveServer(ctx context.Context, sid string, s mcp.Server) (bool, error) {
	if !r.a.renders(KindConfirmCommand) {
		r.logger().Warn("MCP server from the workspace not started: the editor cannot show the approval", "mcp_server", s.Name)
		return false, nil
	}
	key := "mcp-server:" + s.Name + ":" + s.Fingerprint()
	_, res, err := r.hold(ctx, key, "", func() *InputRequest {
		req := r.newRequest("")
		req.Kind, req.Options, req.Rule = KindConfirmCommand, confirmOptions, "workspace MCP server: ask"
		req.Title, req.Message = serverApproval(s)
		req.Command, req.Cwd = s.CommandLine(), s.Cwd
		if req.Cwd == "" {
			req.Cwd = "."
		}
		expireAfter(req, r.a.cfg.ConfirmTimeout)
		return req
	})
	if err != nil {
		return false, err
	}
	if res.Decision != "" {
		if err := r.a.mcp.Decide(sid, s, res.Decision); err != nil {
			r.logger().Warn("remembering the MCP server decision", "mcp_server", s.Name, "err", err)
		}
	}
	r.logger().Info("workspace MCP server", "mcp_server", s.Name, "outcome", res.Outcome)
	return res.Decision.Allows(), nil
}

// serverApproval is the title and message of a workspace server's approval.
func serverApproval(s mcp.Server) (string, string) {
	verb, title := "start", "Start MCP server "+s.Name
	if s.IsHTTP() {
		verb, title = "connect to", "Connect to MCP server "+s.Name
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The workspace's .mcp.json asks agentd to %s the MCP server %s (%s). "+
		"Its tools would be offered to the model; each call still asks.", verb, s.Name, s.Describe())
	if len(s.Env) > 0 {
		names := make([]string, 0, len(s.Env))
		for k := range s.Env {
			names = append(names, k)
		}
		slices.Sort(names)
		fmt.Fprintf(&b, " Environment: %s.", strings.Join(names, ", "))
	}
	if len(s.Headers) > 0 {
		fmt.Fprintf(&b, " It sends %d configured header(s).", len(s.Headers))
	}
	if vs := s.Variables(); len(vs) > 0 {
		fmt.Fprintf(&b, " It is given agentd's %s.", strings.Join(prefixAll("$", vs), ", "))
	}
	b.WriteString(" Always allow remembers this exact configuration; a change asks again.")
	return title, b.String()
}

func prefixAll(p string, xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = p + x
	}
	return out
}

// hasPrefix reports whether the session's prompt prefix (and so its tool
// list) is made already.
func (a *Agent) hasPrefix(sessionID string) bool {
	a.pfx.mu.Lock()
	_, ok := a.pfx.bySession[sessionID]
	a.pfx.mu.Unlock()
	if ok {
		return true
	}
	_, err := os.Stat(a.prefixPath(sessionID))
	return err == nil
}
