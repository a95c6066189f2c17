package acp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/tools"
)

// modes are agentd's approval policies as ACP session modes.
var modes = []acpsdk.SessionMode{
	mode(tools.ModeReadOnly, "Read-only", "Reads and searches; no writes, no commands."),
	mode(tools.ModePlan, "Plan", "Reads and searches, then proposes a plan to approve before any change."),
	mode(tools.ModeAsk, "Ask", "Asks before every write and every command."),
	mode(tools.ModeAutoEdit, "Auto-edit", "Edits files in the workspace without asking; asks before commands."),
	mode(tools.ModeFullAuto, "Full auto", "Edits and runs commands without asking (deny rules still apply)."),
}

func mode(id tools.Mode, name, desc string) acpsdk.SessionMode {
	return acpsdk.SessionMode{Id: acpsdk.SessionModeId(id), Name: name, Description: &desc}
}

func modeState(current tools.Mode) *acpsdk.SessionModeState {
	return &acpsdk.SessionModeState{AvailableModes: modes, CurrentModeId: acpsdk.SessionModeId(current)}
}

// afterResponse delays what must follow a response (available commands,
// re-asked requests), since the SDK gives no hook after it is written.
const afterResponse = 50 * time.Millisecond

// NewSession opens a session in the workspace at cwd. Its agent session is
// created by the first prompt.
func (s *server) NewSession(ctx context.Context, p acpsdk.NewSessionRequest) (acpsdk.NewSessionResponse, error) {
	ws, err := s.workspace(p.Cwd)
	if err != nil {
		return acpsdk.NewSessionResponse{}, err
	}
	id := newSessionID()
	m := sessionMeta{Mode: s.opts.Agent.Policy}
	ws.meta.set(id, m)
	sess := s.open(ws, id, m)
	sess.useMCP(s.mcpServers(p.McpServers))
	time.AfterFunc(afterResponse, sess.announceCommands)
	set := sess.settings()
	return acpsdk.NewSessionResponse{SessionId: acpsdk.SessionId(id), Modes: modeState(set.ApprovalPolicy),
		ConfigOptions: sess.configOptions(ctx), Models: sess.modelState(ctx, set.Model)}, nil
}

// LoadSession replays every run of the session as session/update, then
// asks again whatever the session's runs still wait for.
func (s *server) LoadSession(ctx context.Context, p acpsdk.LoadSessionRequest) (acpsdk.LoadSessionResponse, error) {
	sess, err := s.reopen(p.Cwd, string(p.SessionId))
	if err != nil {
		return acpsdk.LoadSessionResponse{}, err
	}
	sess.useMCP(s.mcpServers(p.McpServers))
	if err := sess.replay(ctx); err != nil {
		return acpsdk.LoadSessionResponse{}, err
	}
	sess.attach()
	time.AfterFunc(afterResponse, func() {
		sess.announceCommands()
		sess.askPending()
	})
	set := sess.settings()
	return acpsdk.LoadSessionResponse{Modes: modeState(set.ApprovalPolicy), ConfigOptions: sess.configOptions(ctx),
		Models: sess.modelState(ctx, set.Model)}, nil
}

// ResumeSession reopens a session without replaying it.
func (s *server) ResumeSession(ctx context.Context, p acpsdk.ResumeSessionRequest) (acpsdk.ResumeSessionResponse, error) {
	sess, err := s.reopen(p.Cwd, string(p.SessionId))
	if err != nil {
		return acpsdk.ResumeSessionResponse{}, err
	}
	if p.McpServers != nil { // optional here: left out, the session keeps its servers
		sess.useMCP(s.mcpServers(p.McpServers))
	}
	sess.attach()
	time.AfterFunc(afterResponse, func() {
		sess.announceCommands()
		sess.askPending()
	})
	set := sess.settings()
	return acpsdk.ResumeSessionResponse{Modes: modeState(set.ApprovalPolicy), ConfigOptions: sess.configOptions(ctx),
		Models: sess.modelState(ctx, set.Model)}, nil
}

// reopen finds a session by the id the client kept: an ACP id from
// session/new, or an agent session id (from session/list or our own
// protocol).
func (s *server) reopen(cwd, id string) (*session, error) {
	ws, err := s.workspace(cwd)
	if err != nil {
		return nil, err
	}
	m, ok := ws.meta.get(id)
	if !ok {
		if _, known := ws.agent.SessionInfo(id); !known {
			return nil, notFound("unknown session %s in %s", id, ws.root)
		}
		m = sessionMeta{AgentID: id}
		ws.meta.set(id, m)
	}
	if m.Mode == "" {
		m.Mode = s.opts.Agent.Policy
	}
	if old := s.lookup(id); old != nil {
		old.close()
	}
	return s.open(ws, id, m), nil
}

// ListSessions lists the sessions of the workspace at cwd, or of every
// workspace this connection has opened.
func (s *server) ListSessions(ctx context.Context, p acpsdk.ListSessionsRequest) (acpsdk.ListSessionsResponse, error) {
	var wss []*workspace
	if p.Cwd != nil {
		ws, err := s.workspace(*p.Cwd)
		if err != nil {
			return acpsdk.ListSessionsResponse{}, err
		}
		wss = append(wss, ws)
	} else {
		s.mu.Lock()
		for _, ws := range s.workspaces {
			wss = append(wss, ws)
		}
		s.mu.Unlock()
	}
	out := []acpsdk.SessionInfo{}
	for _, ws := range wss {
		for _, si := range ws.agent.Sessions() {
			title, updated := si.Title, si.UpdatedAt.UTC().Format(time.RFC3339)
			out = append(out, acpsdk.SessionInfo{SessionId: acpsdk.SessionId(ws.meta.acpID(si.SessionID)),
				Cwd: ws.root, Title: &title, UpdatedAt: &updated})
		}
	}
	slices.SortFunc(out, func(a, b acpsdk.SessionInfo) int { return compareStr(*b.UpdatedAt, *a.UpdatedAt) })
	return acpsdk.ListSessionsResponse{Sessions: out}, nil
}

func compareStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// CloseSession cancels the session's work, as session/cancel does, and
// forgets it in this connection; its state stays on disk.
func (s *server) CloseSession(ctx context.Context, p acpsdk.CloseSessionRequest) (acpsdk.CloseSessionResponse, error) {
	sess, err := s.session(p.SessionId)
	if err != nil {
		return acpsdk.CloseSessionResponse{}, err
	}
	sess.cancel()
	sess.close()
	return acpsdk.CloseSessionResponse{}, nil
}

// Cancel stops the session's run: the prompt in flight ends cancelled. It
// stops the run in the background: the SDK holds every response behind the
// notifications received before it, and a stopping run may still ask the
// editor for files (its final diff), which would wait on this handler.
func (s *server) Cancel(ctx context.Context, p acpsdk.CancelNotification) error {
	sess, err := s.session(p.SessionId)
	if err != nil {
		return nil // a notification: nothing to answer
	}
	go sess.cancel()
	return nil
}

func (s *server) open(ws *workspace, id string, m sessionMeta) *session {
	sess := newSession(s, ws, id, m)
	s.mu.Lock()
	s.sessions[id] = sess
	s.mu.Unlock()
	return sess
}

func (s *server) lookup(id string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[id]
}

func (s *server) forget(sess *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sessions[sess.id] == sess {
		delete(s.sessions, sess.id)
	}
}

func (s *server) session(id acpsdk.SessionId) (*session, error) {
	if sess := s.lookup(string(id)); sess != nil {
		return sess, nil
	}
	return nil, notFound("unknown session %s; open it with session/new, session/load or session/resume", id)
}

// agentErr maps the agent's sentinel errors to JSON-RPC errors whose
// message says what went wrong (editors show the message, not the data).
func agentErr(err error) error {
	code := -32603
	switch {
	case err == nil:
		return nil
	case errors.Is(err, agent.ErrInvalid):
		code = -32602
	case errors.Is(err, agent.ErrUnknownSession), errors.Is(err, agent.ErrUnknownRun), errors.Is(err, agent.ErrUnknownRequest):
		code = -32002
	}
	return &acpsdk.RequestError{Code: code, Message: err.Error()}
}

func notFound(format string, args ...any) error {
	return &acpsdk.RequestError{Code: -32002, Message: fmt.Sprintf(format, args...)}
}
