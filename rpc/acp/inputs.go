package acp

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/tools"
	"github.com/agentd/agentd/tools/mcp"
)

// ask puts an input request to the client in the best form it offers, by
// the request's generic form (whatever its kind): a decision is a
// permission, a reply a form, or else a message in the chat. Called by the
// workspace worker, so whatever waits runs in a goroutine.
//
// A choice goes into a form when the client offers one, else into the chat
// as numbered options, like a question: ACP's permission options have four
// kinds (allow or reject, once or always) and clients show or answer them
// by kind — CodeCompanion labels each option after its kind, acpx's y/N
// picks the first allow or the first reject option — so a choice's own
// options cannot be told apart there. Secrets never go into a form (the
// schema forbids it); in the chat the answer still reaches only the
// command, not the model.
func (s *session) ask(req agent.InputRequest) {
	form := s.srv.formElicitation()
	switch {
	case req.AnswerWith == agent.AnswerConfirm:
		s.srv.log.Debug("acp ask", "as", "session/request_permission", "session", s.id, "request", req.RequestID, "kind", req.Kind, "toolCall", req.ToolCallID)
		go s.askPermission(req)
	case form && !secret(req):
		s.srv.log.Debug("acp ask", "as", "elicitation/create", "session", s.id, "request", req.RequestID, "kind", req.Kind, "toolCall", req.ToolCallID)
		go s.elicit(req)
	default:
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
		ToolCall: permissionCall(s.ws.root, req, s.toolKind(req.RunID, req.ToolCallID)), Options: permissionOptions(req)})
	if err != nil {
		if ctx.Err() == nil {
			s.srv.log.Warn("session/request_permission failed", "request", req.RequestID, "err", err)
		} else {
			s.srv.log.Debug("acp permission withdrawn", "request", req.RequestID, "why", "resolved elsewhere")
		}
		return
	}
	if resp.Outcome.Selected == nil {
		s.srv.log.Info("permission cancelled in the editor: the turn stops", "session", s.id, "request", req.RequestID, "run", req.RunID)
		s.cancelRun(req.RunID)
		return
	}
	p := agent.ConfirmParams{RequestID: req.RequestID, Decision: tools.Decision(resp.Outcome.Selected.OptionId)}
	if !p.Decision.Allows() {
		p.Reason = "rejected in the editor"
	}
	s.srv.log.Debug("acp permission answered", "session", s.id, "request", req.RequestID, "decision", p.Decision)
	if err := s.ws.agent.Confirm(context.Background(), p); err != nil {
		s.srv.log.Info("confirmation not applied", "request", req.RequestID, "decision", p.Decision, "err", err)
	}
}

// secretAsked says whether the session's next prompt answers a secret
// question (the wire log must not show it).
func (s *server) secretAsked(sessionID string) bool {
	sess := s.lookup(sessionID)
	if sess == nil {
		return false
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.activeTurnLocked() == nil && len(sess.asking) > 0 && secret(sess.asking[0])
}

// secret says whether the request's answer is a secret, which never goes
// into a form and is never logged.
func secret(req agent.InputRequest) bool { return req.Input != nil && req.Input.Secret }

// ownText says whether typed text may be the answer itself (a question's,
// or a choice's other answer), rather than only words with an option.
func ownText(req agent.InputRequest) bool { return req.Input != nil && len(req.Input.With) == 0 }

// textWith says whether words go with the option id (a plan's feedback).
func textWith(req agent.InputRequest, id string) bool {
	return req.Input != nil && slices.Contains(req.Input.With, id)
}

// askInChat writes the question as an agent message and ends the turn; the
// next prompt is the answer.
func (s *session) askInChat(req agent.InputRequest) { s.askInChatNote(req, "") }

// reask asks again a question whose typed answer did not fit.
func (s *session) reask(req agent.InputRequest, answer string) {
	note := "That answer does not fit the question."
	if len(req.Options) > 0 {
		note = fmt.Sprintf("%s is not one of the options.", codeSpan(clipLine(answer, 80)))
	}
	s.askInChatNote(req, note)
}

func (s *session) askInChatNote(req agent.InputRequest, note string) {
	s.mu.Lock()
	for _, q := range s.asking {
		if q.RequestID == req.RequestID {
			s.mu.Unlock()
			return // already asked: a re-ask racing the live notification
		}
	}
	s.asking = append(s.asking, req)
	t := s.turns[req.RunID]
	if t != nil && !t.queued {
		delete(s.turns, req.RunID)
	} else {
		t = nil
	}
	s.mu.Unlock()
	s.srv.log.Debug("acp ask", "as", "chat", "session", s.id, "request", req.RequestID, "kind", req.Kind, "options", len(req.Options), "endsTurn", t != nil)
	text := chatQuestion(req)
	if note != "" {
		text = "\n\n_" + note + "_" + text
	}
	s.say(text)
	if t != nil {
		t.done <- turnEnd{stop: acpsdk.StopReasonEndTurn}
	}
}

// chatQuestion is a request as a message: its title, its text, the
// numbered options of a choice, and how to answer.
func chatQuestion(req agent.InputRequest) string {
	var b strings.Builder
	title := firstNonEmpty(req.Title, "Question")
	if req.Subagent != nil {
		title = "Subagent “" + req.Subagent.Description + "” asks: " + title
	}
	b.WriteString("\n\n**" + title + "**\n\n" + req.Message + "\n")
	if req.Context != "" {
		b.WriteString("\n" + req.Context + "\n")
	}
	for i, o := range req.Options {
		fmt.Fprintf(&b, "\n%d. %s", i+1, o.Label)
		if o.Description != "" {
			b.WriteString(" — " + o.Description)
		}
	}
	if req.Default != "" {
		b.WriteString("\n\nSuggested answer: " + codeSpan(req.Default))
	}
	b.WriteString("\n\n_" + howToAnswer(req) + "_")
	return b.String()
}

func howToAnswer(req agent.InputRequest) string {
	switch {
	case secret(req):
		return "Send the value as your next message. It goes to the command only, never to the model; your editor keeps it in this chat."
	case len(req.Options) == 0:
		return "Your next message is the answer."
	}
	what := "the number or the name of an option"
	if req.Multiple {
		what = "the numbers or names of one or more options, separated by commas"
	}
	if ownText(req) {
		what += ", or with your own words"
	}
	how := "Answer in your next message with " + what + "."
	var with []string
	for i, o := range req.Options {
		if textWith(req, o.OptionID) {
			with = append(with, strconv.Itoa(i+1))
		}
	}
	if len(with) > 0 {
		how += fmt.Sprintf(" After %s, add %s on the same line (%s).", strings.Join(with, " or "),
			strings.ToLower(req.Input.Label), codeSpan(with[0]+": your words"))
	}
	return how
}

// chatReply makes a reply of a typed answer: a choice's option (or
// options, for a choice that takes several) when the text names them by
// number, id or label, otherwise free text.
func chatReply(q agent.InputRequest, text string) agent.ReplyParams {
	text = strings.TrimSpace(text)
	p := agent.ReplyParams{RequestID: q.RequestID}
	if len(q.Options) > 0 {
		if id, ok := optionNamed(q, text); ok {
			p.OptionID = id
			return p
		}
		if ids, ok := optionsNamed(q, text); ok && q.Multiple {
			p.Answers = ids
			return p
		}
		if id, words, ok := optionWithWords(q, text); ok {
			p.OptionID, p.Text = id, &words
			return p
		}
	}
	p.Text = &text
	return p
}

// optionWithWords reads an option that takes words, then the words:
// "2: write the tests first".
func optionWithWords(q agent.InputRequest, text string) (string, string, bool) {
	i := strings.IndexAny(text, ":.,- \n")
	if i < 0 {
		return "", "", false
	}
	id, ok := optionNamed(q, text[:i])
	if !ok || !textWith(q, id) {
		return "", "", false
	}
	return id, strings.TrimSpace(strings.TrimLeft(text[i:], ":.,- \n")), true
}

// optionNamed finds the option the text names: its number, id or label.
func optionNamed(q agent.InputRequest, text string) (string, bool) {
	text = strings.TrimSuffix(strings.TrimSpace(text), ".")
	for i, o := range q.Options {
		if text == strconv.Itoa(i+1) || strings.EqualFold(text, o.OptionID) || strings.EqualFold(text, o.Label) {
			return o.OptionID, true
		}
	}
	return "", false
}

// optionsNamed reads a list of options, separated by commas or semicolons
// (numbers may also be separated by spaces); false unless each names one.
func optionsNamed(q agent.InputRequest, text string) ([]string, bool) {
	parts := strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ';' })
	if len(parts) == 1 {
		parts = strings.Fields(text)
	}
	var ids []string
	for _, part := range parts {
		id, ok := optionNamed(q, part)
		if !ok {
			return nil, false
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids, len(ids) > 0
}

// fetchPermissionCall is a web fetch's confirmation: titled as the
// request is ("Fetch https://go.dev/doc/"), of kind fetch, its message
// (which host, and whether it is on this machine or a private network) as
// its content: no command line, there is none.
func fetchPermissionCall(req agent.InputRequest, title string) acpsdk.ToolCallUpdate {
	kind, status := acpsdk.ToolKindFetch, acpsdk.ToolCallStatusPending
	if req.Subagent != nil {
		title = subagentLabel(req.Subagent) + title
	}
	tc := acpsdk.ToolCallUpdate{ToolCallId: toolCallID(req), Title: &title, Kind: &kind, Status: &status}
	if req.Message != "" {
		tc.Content = append(tc.Content, acpsdk.ToolContent(acpsdk.TextBlock(req.Message)))
	}
	if covers := grantCovers(req); covers != "" {
		tc.Content = append(tc.Content, acpsdk.ToolContent(acpsdk.TextBlock(covers)))
	}
	if req.Rule != "" {
		tc.Meta = map[string]any{"agentd": map[string]any{"rule": req.Rule, "requestId": req.RequestID}}
	}
	return tc
}

// toolKind is the kind of a tool call of the session's run, as its
// tool_call said, or "" when the session has not seen it (a request asked
// again after a restart).
func (s *session) toolKind(runID, callID string) tools.Kind {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	s.mu.Lock()
	tr := s.runs[runID]
	s.mu.Unlock()
	if tr == nil {
		return ""
	}
	return tr.kinds[callID]
}

// cancelRun ends a run whose request the client cancelled: in ACP that is
// the user stopping the turn.
func (s *session) cancelRun(runID string) {
	if err := s.ws.agent.Cancel(context.Background(), runID); err != nil {
		s.srv.log.Warn("cancelling run", "run", runID, "err", err)
	}
}

// permissionCall is the tool call a confirmation is about, with the diff of
// every file it writes or the command it runs. A command's title is its
// command line (the tool call's too, see commandCall), and its cwd is in the
// raw input, not a location: locations are files to follow. callKind is the
// kind of the tool call it asks about, when the session knows it: a web
// fetch asks like a command (confirm_command) but runs none.
func permissionCall(root string, req agent.InputRequest, callKind tools.Kind) acpsdk.ToolCallUpdate {
	kind, status := acpsdk.ToolKindEdit, acpsdk.ToolCallStatusPending
	title := firstNonEmpty(req.Title, req.Message)
	if callKind == tools.KindFetch {
		return fetchPermissionCall(req, title)
	}
	if req.Kind == agent.KindConfirmCommand && !mcpRequest(req) {
		kind, title = acpsdk.ToolKindExecute, commandTitle(req.Command, req.Cwd)
	} else if req.Kind == agent.KindConfirmCommand {
		kind = acpsdk.ToolKindExecute
	}
	if req.Subagent != nil {
		title = subagentLabel(req.Subagent) + title // who asks (subagent.go)
	}
	tc := acpsdk.ToolCallUpdate{ToolCallId: toolCallID(req), Title: &title, Kind: &kind, Status: &status}
	if req.Kind == agent.KindConfirmCommand {
		tc.RawInput = map[string]any{"command": req.Command, "cwd": absPath(root, cmp.Or(req.Cwd, "."))}
		if mcpRequest(req) {
			// The message says whose tool it is and what its server claims.
			tc.Content = append(tc.Content, acpsdk.ToolContent(acpsdk.TextBlock(req.Message)))
		}
		tc.Content = append(tc.Content, acpsdk.ToolContent(acpsdk.TextBlock(codeBlock("sh", req.Command))))
	}
	for _, d := range req.Diff {
		tc.Content = append(tc.Content, diffContent(root, d))
		tc.Locations = append(tc.Locations, acpsdk.ToolCallLocation{Path: absPath(root, d.Path)})
	}
	if req.Kind == agent.KindConfirmCommand && req.Message != "" {
		tc.Content = append(tc.Content, acpsdk.ToolContent(acpsdk.TextBlock(req.Message)))
	}
	if covers := grantCovers(req); covers != "" {
		tc.Content = append(tc.Content, acpsdk.ToolContent(acpsdk.TextBlock(covers)))
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

// grantCovers says what the permission's "always" option would allow from
// then on (grantCovers: a family of commands, not only this line), beside
// the options where clients show the call; "" when it offers none. ACP has
// no "for this session" option, so only "always" is named.
func grantCovers(req agent.InputRequest) string {
	if len(req.GrantCovers) == 0 {
		return ""
	}
	for _, o := range permissionOptions(req) {
		if o.OptionId == acpsdk.PermissionOptionId(tools.AllowAlways) {
			return fmt.Sprintf("%q also allows from now on: %s", o.Name, strings.Join(req.GrantCovers, "; "))
		}
	}
	return ""
}

// mcpRequest says whether a command confirmation is about MCP: a workspace
// server to start (it belongs to no call) or an MCP tool to call. Its
// title ("Call github: create_issue") says more than its command line.
func mcpRequest(req agent.InputRequest) bool {
	return req.ToolCallID == "" || strings.HasPrefix(req.Command, mcp.Prefix)
}

// toolCallID names the tool call a request belongs to; a request outside
// any call gets one of its own, which clients create on the fly.
func toolCallID(req agent.InputRequest) acpsdk.ToolCallId {
	return acpsdk.ToolCallId(firstNonEmpty(subagentCallID(req), req.RequestID))
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
