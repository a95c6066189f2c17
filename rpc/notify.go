package rpc

import (
	"context"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/rpc/wire"
	"github.com/agentd/agentd/tools"
	"github.com/agentd/agentd/tools/mcp"
)

// The server is the agent's Listener: each run notification goes to the
// editor under its method. The agent calls these in seq order with the
// run's lock held; the write to the pipe is all they wait on.

// Update implements agent.Listener.
func (s *Server) Update(p agent.UpdateParams) { s.notify(wire.MethodUpdate, p) }

// InputRequest implements agent.Listener.
func (s *Server) InputRequest(p agent.InputRequest) { s.notify(wire.MethodInputRequest, p) }

// InputResolved implements agent.Listener.
func (s *Server) InputResolved(p agent.InputResolved) { s.notify(wire.MethodInputResolved, p) }

// RunState implements agent.Listener.
func (s *Server) RunState(p agent.RunState) { s.notify(wire.MethodRunState, p) }

// MCPChanged implements agent.MCPListener: the editor asks mcp/status
// again.
func (s *Server) MCPChanged(name string, state mcp.State) {
	s.notify(wire.MethodMCPChanged, MCPChangedParams{Name: name, State: state})
}

// ProcessChanged implements agent.ProcessListener: a background process
// started, ended or was stopped.
func (s *Server) ProcessChanged(info tools.ProcessInfo) {
	s.notify(wire.MethodProcessChanged, ProcessResult{Process: info})
}

// notify sends a notification to the editor.
func (s *Server) notify(method string, params any) {
	if err := s.conn.Notify(context.Background(), method, params); err != nil {
		s.log.Debug("notify failed", "method", method, "err", err)
	}
}

// eventMethods names the method each kind of logged event was sent under.
var eventMethods = map[agent.EventKind]string{
	agent.EventUpdate:        wire.MethodUpdate,
	agent.EventInputRequest:  wire.MethodInputRequest,
	agent.EventInputResolved: wire.MethodInputResolved,
	agent.EventRunState:      wire.MethodRunState,
}

// wireEvents shows a run's logged events as the notifications they were.
func wireEvents(evs []agent.Event) []Event {
	out := make([]Event, 0, len(evs))
	for _, ev := range evs {
		out = append(out, Event{Seq: ev.Seq, Method: eventMethods[ev.Kind], Params: ev.Params})
	}
	return out
}
