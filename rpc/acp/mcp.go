package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/tools/mcp"
)

// The MCP servers a client passes in session/new (and again in
// session/load and session/resume) are the session's: the model gets
// their tools as mcp__<server>__<tool> from the session's first prompt on
// (its tool list is then fixed).
// A stdio server runs in the sandbox like the user's own servers; its
// `_meta.agentd` may carry agentd's keys (network, sandbox, read, write,
// startupTimeout, callTimeout), which ACP has no words for.

// mcpServers turns the client's servers into agentd's. A server agentd
// cannot use (SSE, ACP-channel servers) is left out and logged.
func (s *server) mcpServers(in []acpsdk.McpServer) []mcp.Server {
	var out []mcp.Server
	for _, m := range in {
		srv, err := fromACP(m)
		if err != nil {
			s.log.Warn("MCP server from the client ignored", "err", err)
			continue
		}
		out = append(out, srv)
	}
	return out
}

func fromACP(m acpsdk.McpServer) (mcp.Server, error) {
	var srv mcp.Server
	var meta map[string]any
	switch {
	case m.Stdio != nil:
		srv = mcp.Server{Name: m.Stdio.Name, Command: m.Stdio.Command, Args: m.Stdio.Args}
		for _, e := range m.Stdio.Env {
			if srv.Env == nil {
				srv.Env = map[string]string{}
			}
			srv.Env[e.Name] = e.Value
		}
		meta = m.Stdio.Meta
	case m.Http != nil:
		srv = mcp.Server{Name: m.Http.Name, URL: m.Http.Url}
		for _, h := range m.Http.Headers {
			if srv.Headers == nil {
				srv.Headers = map[string]string{}
			}
			srv.Headers[h.Name] = h.Value
		}
		meta = m.Http.Meta
	case m.Sse != nil:
		return srv, fmt.Errorf("%s: the SSE transport is not supported (agentd speaks streamable HTTP)", m.Sse.Name)
	default:
		return srv, fmt.Errorf("an MCP server of a transport agentd does not speak")
	}
	if err := applyMeta(&srv, meta); err != nil {
		return srv, fmt.Errorf("%s: _meta.agentd: %w", srv.Name, err)
	}
	srv.Origin = mcp.OriginSession
	return srv, srv.Check()
}

// applyMeta reads agentd's own keys from a server's _meta.agentd.
func applyMeta(srv *mcp.Server, meta map[string]any) error {
	own, ok := meta["agentd"]
	if !ok {
		return nil
	}
	data, err := json.Marshal(own)
	if err != nil {
		return err
	}
	var keys struct {
		Sandbox        string       `json:"sandbox"`
		Network        bool         `json:"network"`
		Read           []string     `json:"read"`
		Write          []string     `json:"write"`
		StartupTimeout mcp.Duration `json:"startupTimeout"`
		CallTimeout    mcp.Duration `json:"callTimeout"`
	}
	if err := json.Unmarshal(data, &keys); err != nil {
		return err
	}
	srv.Sandbox, srv.Network, srv.Read, srv.Write = keys.Sandbox, keys.Network, keys.Read, keys.Write
	srv.StartupTimeout, srv.CallTimeout = keys.StartupTimeout, keys.CallTimeout
	return nil
}

// mcpCommand is /mcp: each MCP server the session sees, its state and
// tools, in the chat.
func (s *session) mcpCommand(ctx context.Context) (acpsdk.PromptResponse, error) {
	s.mu.Lock()
	agentID := s.agentID
	s.mu.Unlock()
	s.say(formatMCPStatus(s.ws.agent.MCPStatus(agentID)))
	return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonEndTurn}, nil
}

func formatMCPStatus(servers []mcp.Status) string {
	if len(servers) == 0 {
		return "No MCP servers: add them under `mcpServers` in ~/.config/agentd/config.json or the workspace's .mcp.json, or in your editor's settings (docs/extensions.md)."
	}
	var b strings.Builder
	b.WriteString("MCP servers:\n")
	for _, st := range servers {
		where := st.Command
		if st.URL != "" {
			where = st.URL
		}
		fmt.Fprintf(&b, "\n**%s** (%s, %s): %s", st.Name, st.Origin, st.Transport, st.State)
		if st.Error != "" {
			b.WriteString(" — " + st.Error)
		}
		fmt.Fprintf(&b, "\n`%s`", where)
		if st.Sandbox != "" {
			b.WriteString(" (sandbox " + st.Sandbox + ")")
		}
		b.WriteString("\n")
		for _, t := range st.Tools {
			fmt.Fprintf(&b, "- `%s`", t.Name)
			if h := t.Hints.String(); h != "" {
				b.WriteString(" — says: " + h)
			}
			b.WriteString("\n")
		}
		if st.ToolsChanged {
			b.WriteString("_Its tools changed; new sessions offer them._\n")
		}
	}
	return b.String()
}

// useMCP keeps the client's servers for the session's runs, and starts
// them now: with the agent session when it exists, ahead of it otherwise.
func (s *session) useMCP(servers []mcp.Server) {
	if servers == nil {
		servers = []mcp.Server{}
	}
	s.mu.Lock()
	s.mcp = servers
	agentID := s.agentID
	s.mu.Unlock()
	if agentID != "" {
		s.ws.agent.SetSessionMCPServers(agentID, servers)
	} else {
		s.ws.agent.StartMCPServers(servers)
	}
}
