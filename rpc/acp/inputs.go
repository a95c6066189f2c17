package acp

import (
	"context"
	"fmt"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/tools"
)

// ask puts an input request to the client in the best form it offers.
// Called by the workspace worker, so whatever waits runs in a goroutine.
func (s *session) ask(req agent.InputRequest) {
	form := s.srv.formElicitation()
	switch req.Kind {
	case agent.KindConfirmWrite, agent.KindConfirmCommand:
		go s.askPermission(req)
	case agent.KindChoice:
		if form {
			go s.elicit(req)
		} else {
			go s.askChoice(req)
		}
	case agent.KindQuestion:
		if form {
			go s.elicit(req)
		} else {
			s.askInChat(req)
		}
	default:
		// Secrets never go into a form (the schema forbids it); in the chat
		// the answer still reaches only the command, not the model.
		s.askInChat(req)
	}
}

// askPending asks again every open request of the session's runs, after a
// restart or when another editor reopens the session.
func (s *session) askPending() {
	s.mu.Lock()
	agentID := s.agentID
	s.mu.Unlock()
	if agentID == "" {
		return
	}
	for _, req := range s.ws.agent.Pending("") {
		if req.SessionID == agentID {
			s.ask(req)
		}
	}
}

// confirmOptions are the decisions ACP's permission kinds can express.
var confirmOptions = []acpsdk.PermissionOption{
	permission(tools.AllowOnce, "Allow", acpsdk.PermissionOptionKindAllowOnce),
	permission(tools.AllowAlways, "Always allow", acpsdk.PermissionOptionKindAllowAlways),
	permission(tools.RejectOnce, "Reject", acpsdk.PermissionOptionKindRejectOnce),
	permission(tools.RejectAlways, "Always reject", acpsdk.PermissionOptionKindRejectAlways),
}

func permission(d tools.Decision, name string, kind acpsdk.PermissionOptionKind) acpsdk.PermissionOption {
	return acpsdk.PermissionOption{OptionId: acpsdk.PermissionOptionId(d), Name: name, Kind: kind}
}

// permissionKinds are the ACP kinds of the decisions ACP can express;
// allow_session has none (ACP's "always" is the workspace's).
var permissionKinds = map[tools.Decision]acpsdk.PermissionOptionKind{
	tools.AllowOnce: acpsdk.PermissionOptionKindAllowOnce, tools.AllowFull: acpsdk.PermissionOptionKindAllowOnce,
	tools.AllowAlways: acpsdk.PermissionOptionKindAllowAlways, tools.RejectOnce: acpsdk.PermissionOptionKindRejectOnce,
	tools.RejectAlways: acpsdk.PermissionOptionKindRejectAlways,
}

// permissionOptions are the decisions the request offers that ACP can
// express (a command the sandbox cannot confine offers fewer; one it can
// also offers to run without it).
func permissionOptions(req agent.InputRequest) []acpsdk.PermissionOption {
	if len(req.Options) == 0 {
		return confirmOptions
	}
	var out []acpsdk.PermissionOption
	for _, o := range req.Options {
		if kind, ok := permissionKinds[tools.Decision(o.OptionID)]; ok {
			out = append(out, permission(tools.Decision(o.OptionID), o.Label, kind))
		}
	}
	return out
}

// askPermission asks for a confirmation. A rejection lets the run go on;
// the outcome cancelled means the user stopped the turn.
func (s *session) askPermission(req agent.InputRequest) {
	ctx, ok := s.track(req.RequestID)
	if !ok {
		return
	}
	defer s.untrack(req.RequestID)
	resp, err := s.srv.client().RequestPermission(ctx, acpsdk.RequestPermissionRequest{SessionId: acpsdk.SessionId(s.id),
		ToolCall: permissionCall(s.ws.root, req), Options: permissionOptions(req)})
	if err != nil {
		if ctx.Err() == nil {
			s.srv.log.Warn("session/request_permission failed", "request", req.RequestID, "err", err)
		}
		return
	}
	if resp.Outcome.Selected == nil {
		s.cancelRun(req.RunID)
		return
	}
	p := agent.ConfirmParams{RequestID: req.RequestID, Decision: tools.Decision(resp.Outcome.Selected.OptionId)}
	if !p.Decision.Allows() {
		p.Reason = "rejected in the editor"
	}
	if err := s.ws.agent.Confirm(context.Background(), p); err != nil {
		s.srv.log.Info("confirmation not applied", "request", req.RequestID, "err", err)
	}
}

// askChoice offers a choice's options as permission options, for clients
// without form elicitation.
func (s *session) askChoice(req agent.InputRequest) {
	ctx, ok := s.track(req.RequestID)
	if !ok {
		return
	}
	defer s.untrack(req.RequestID)
	opts := make([]acpsdk.PermissionOption, 0, len(req.Options))
	for _, o := range req.Options {
		opts = append(opts, acpsdk.PermissionOption{OptionId: acpsdk.PermissionOptionId(o.OptionID), Name: o.Label,
			Kind: acpsdk.PermissionOptionKindAllowOnce})
	}
	resp, err := s.srv.client().RequestPermission(ctx, acpsdk.RequestPermissionRequest{SessionId: acpsdk.SessionId(s.id),
		ToolCall: questionCall(req), Options: opts})
	if err != nil {
		if ctx.Err() == nil {
			s.srv.log.Warn("choice as session/request_permission failed", "request", req.RequestID, "err", err)
		}
		return
	}
	if resp.Outcome.Selected == nil {
		s.cancelRun(req.RunID)
		return
	}
	p := agent.ReplyParams{RequestID: req.RequestID, OptionID: string(resp.Outcome.Selected.OptionId)}
	if err := s.ws.agent.Reply(context.Background(), p); err != nil {
		s.srv.log.Info("choice not applied", "request", req.RequestID, "err", err)
	}
}

// askInChat writes the question as an agent message and ends the turn; the
// next prompt is the answer.
func (s *session) askInChat(req agent.InputRequest) {
	s.mu.Lock()
	for _, q := range s.asking {
		if q.RequestID == req.RequestID {
			s.mu.Unlock()
			return // already asked: a re-ask racing the live notification
		}
	}
	s.asking = append(s.asking, req)
	t := s.turn
	if t != nil && t.runID == req.RunID {
		s.turn = nil
	} else {
		t = nil
	}
	s.mu.Unlock()
	s.say(chatQuestion(req))
	if t != nil {
		t.done <- turnEnd{stop: acpsdk.StopReasonEndTurn}
	}
}

func chatQuestion(req agent.InputRequest) string {
	var b strings.Builder
	b.WriteString("\n\n**" + firstNonEmpty(req.Title, "Question") + "**\n\n" + req.Message + "\n")
	for i, o := range req.Options {
		fmt.Fprintf(&b, "\n%d. %s", i+1, o.Label)
		if o.Description != "" {
			b.WriteString(" — " + o.Description)
		}
	}
	switch {
	case req.Kind == agent.KindSecret:
		b.WriteString("\n\n_Send the value as your next message. It goes to the command only, never to the model; your editor keeps it in this chat._")
	case len(req.Options) > 0:
		b.WriteString("\n\n_Answer with a number or an option in your next message._")
	default:
		b.WriteString("\n\n_Your next message is the answer._")
	}
	return b.String()
}

// cancelRun ends a run whose request the client cancelled: in ACP that is
// the user stopping the turn.
func (s *session) cancelRun(runID string) {
	if err := s.ws.agent.Cancel(context.Background(), runID); err != nil {
		s.srv.log.Warn("cancelling run", "run", runID, "err", err)
	}
}

// permissionCall is the tool call a confirmation is about, with the diff of
// every file it writes or the command it runs.
func permissionCall(root string, req agent.InputRequest) acpsdk.ToolCallUpdate {
	kind, status := acpsdk.ToolKindEdit, acpsdk.ToolCallStatusPending
	title := firstNonEmpty(req.Title, req.Message)
	tc := acpsdk.ToolCallUpdate{ToolCallId: toolCallID(req), Title: &title, Kind: &kind, Status: &status}
	if req.Kind == agent.KindConfirmCommand {
		kind = acpsdk.ToolKindExecute
		tc.RawInput = map[string]any{"command": req.Command, "cwd": req.Cwd}
		tc.Content = append(tc.Content, acpsdk.ToolContent(acpsdk.TextBlock("```sh\n"+req.Command+"\n```")))
	}
	for _, d := range req.Diff {
		tc.Content = append(tc.Content, diffContent(root, d))
		tc.Locations = append(tc.Locations, acpsdk.ToolCallLocation{Path: absPath(root, d.Path)})
	}
	if req.Kind == agent.KindConfirmCommand && req.Message != "" {
		tc.Content = append(tc.Content, acpsdk.ToolContent(acpsdk.TextBlock(req.Message)))
	}
	if req.Rule != "" {
		meta := map[string]any{"rule": req.Rule, "requestId": req.RequestID}
		if req.Profile != "" {
			meta["profile"], meta["network"] = req.Profile, req.Network
		}
		if len(req.Secrets) > 0 {
			meta["secrets"] = req.Secrets
		}
		tc.Meta = map[string]any{"agentd": meta}
	}
	return tc
}

func questionCall(req agent.InputRequest) acpsdk.ToolCallUpdate {
	kind, status := acpsdk.ToolKindOther, acpsdk.ToolCallStatusPending
	title := firstNonEmpty(req.Message, req.Title)
	return acpsdk.ToolCallUpdate{ToolCallId: toolCallID(req), Title: &title, Kind: &kind, Status: &status,
		Content: []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(req.Message))}}
}

// toolCallID names the tool call a request belongs to; a request outside
// any call gets one of its own, which clients create on the fly.
func toolCallID(req agent.InputRequest) acpsdk.ToolCallId {
	return acpsdk.ToolCallId(firstNonEmpty(req.ToolCallID, req.RequestID))
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
