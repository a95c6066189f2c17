package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentd/agentd/tools"
)

// openRequest is an input request of a run: the request of one of the
// step's calls (persisted with the run; call is set), a held request
// (persisted; held is set: see heldRequest), or a question a running tool
// asks (live; answer is set: it lasts as long as the tool, and a restart
// cancels it). What each kind accepts and what the model reads once it is
// closed is in requestRules.
type openRequest struct {
	req    *InputRequest
	call   *pendingCall
	held   *heldRequest
	answer chan *resolution
}

// resolution says how the request was closed, nil while it is open. A
// live request is forgotten when it closes, so it is always open.
func (o openRequest) resolution() *resolution {
	switch {
	case o.call != nil:
		return o.call.Resolved
	case o.held != nil:
		return o.held.Resolved
	}
	return nil
}

// closedErr refuses an answer to a request that is already closed.
func (o openRequest) closedErr() error {
	res := o.resolution()
	switch {
	case res == nil:
		return nil
	case res.Outcome == OutcomeTimeout:
		return fmt.Errorf("%w: request %s expired at %s", ErrExpired, o.req.RequestID, o.req.ExpiresAt.Format(time.RFC3339))
	}
	return fmt.Errorf("%w: request %s was already resolved (%s by %s)", ErrAlreadyResolved, o.req.RequestID, res.Outcome, res.By)
}

// Reply answers a question, a choice or a secret.
func (a *Agent) Reply(ctx context.Context, p ReplyParams) error {
	r, err := a.runOfRequest(p.RequestID)
	if err != nil {
		return err
	}
	return r.reply(p)
}

// Confirm answers a write or command confirmation.
func (a *Agent) Confirm(ctx context.Context, p ConfirmParams) error {
	r, err := a.runOfRequest(p.RequestID)
	if err != nil {
		return err
	}
	return r.confirm(ctx, p)
}

func (a *Agent) runOfRequest(id string) (*run, error) {
	if id == "" {
		return nil, fmt.Errorf("%w: requestId is required", ErrInvalid)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if r, ok := a.requests[id]; ok {
		return r, nil
	}
	if outcome, ok := a.resolvedIDs[id]; ok {
		if outcome == OutcomeTimeout {
			return nil, fmt.Errorf("%w: request %s expired before the reply came", ErrExpired, id)
		}
		return nil, fmt.Errorf("%w: request %s was already resolved (%s)", ErrAlreadyResolved, id, outcome)
	}
	return nil, fmt.Errorf("%w: %s", ErrUnknownRequest, id)
}

// findLocked returns the request with that id, open or closed.
func (r *run) findLocked(id string) (openRequest, error) {
	for _, pc := range r.rec.Pending {
		if pc.Request != nil && pc.Request.RequestID == id {
			return openRequest{req: pc.Request, call: pc}, nil
		}
	}
	for _, h := range r.rec.Held {
		if h.Request.RequestID == id {
			return openRequest{req: h.Request, held: h}, nil
		}
	}
	if o, ok := r.live[id]; ok {
		return o, nil
	}
	return openRequest{}, fmt.Errorf("%w: %s", ErrUnknownRequest, id)
}

// openLocked lists the run's open requests: the step's, then the live ones.
func (r *run) openLocked() []openRequest {
	var out []openRequest
	for _, pc := range r.rec.Pending {
		if pc.Request != nil && pc.Resolved == nil {
			out = append(out, openRequest{req: pc.Request, call: pc})
		}
	}
	for _, h := range r.rec.Held {
		if h.Resolved == nil {
			out = append(out, openRequest{req: h.Request, held: h})
		}
	}
	for _, o := range r.live {
		out = append(out, o)
	}
	return out
}

func (r *run) reply(p ReplyParams) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	o, err := r.findLocked(p.RequestID)
	if err == nil {
		err = o.closedErr()
	}
	if err != nil {
		return err
	}
	rule := requestRules[o.req.Kind]
	if rule.decision {
		return fmt.Errorf("%w: request %s is a %s; answer it with agent/confirm", ErrWrongKind, o.req.RequestID, o.req.Kind)
	}
	res, err := rule.reply(o.req, p)
	if err != nil {
		return err
	}
	if err := r.resolveLocked(o, res); err != nil {
		return err
	}
	if rule.secret && o.call != nil {
		name := secretName(o.call.Call)
		r.secrets[name] = res.Text
		r.red.AddNamed(name, res.Text)
	}
	return nil
}

func (r *run) confirm(ctx context.Context, p ConfirmParams) error {
	// The call the decision is about, prepared again first if a restart lost
	// it: without the lock, since preparing may read files.
	call, exact := r.callOfConfirm(ctx, p)
	r.mu.Lock()
	o, err := r.confirmableLocked(p)
	if err != nil {
		r.mu.Unlock()
		return err
	}
	res := &resolution{Outcome: decided(p.Decision), By: ByUser, Decision: p.Decision, Reason: p.Reason, Edited: p.EditedContent}
	var prev *tools.Confine
	if o.call == nil { // a running tool's question has no call
		call = nil
	} else {
		prev = o.call.Confine
		if p.Decision.Allows() && o.req.Kind == KindConfirmCommand {
			o.call.Confine = confineOnApproval(o.call, p.Decision) // saved with the resolution
		}
	}
	err = r.resolveLocked(o, res)
	var confine *tools.Confine
	if o.call != nil {
		if err != nil {
			o.call.Confine = prev
		}
		confine = o.call.Confine
	}
	r.mu.Unlock()
	if err != nil {
		return err
	}
	r.a.audit(auditEntry{Run: r.rec, Call: call, Decision: string(p.Decision), By: ByUser, Rule: o.req.Rule, Reason: p.Reason, Confine: confine})
	if call != nil && p.Decision.Lasts() {
		r.grant(ctx, call, p.Decision, o.req.Network, exact)
	}
	return nil
}

// confirmableLocked is the open request p answers, if p is an answer it
// takes: the request is open and the decision one it offers.
func (r *run) confirmableLocked(p ConfirmParams) (openRequest, error) {
	o, err := r.findLocked(p.RequestID)
	if err == nil {
		err = o.closedErr()
	}
	if err == nil {
		err = checkDecision(o.req, p)
	}
	return o, err
}

// callOfConfirm is the call a valid answer to a step's confirmation is
// about (decisionCall), or nil for any other answer, which confirm then
// refuses or applies to a running tool's question.
func (r *run) callOfConfirm(ctx context.Context, p ConfirmParams) (*tools.Call, bool) {
	r.mu.Lock()
	o, err := r.confirmableLocked(p)
	r.mu.Unlock()
	if err != nil || o.call == nil {
		return nil, false
	}
	return r.decisionCall(ctx, o)
}

// prepareToJudgeTimeout bounds preparing a call again to judge it: an
// editor that serves the files may be slow to answer.
const prepareToJudgeTimeout = 10 * time.Second

// decisionCall is the call the confirmation o (a step's call) asks about,
// to audit a decision on it, store the rule a lasting one makes, and judge
// it again when a rule is granted. It is the prepared call; after a restart,
// before which nothing is prepared again, the call prepared again from the
// stored one; and when that fails (its files changed since the user saw the
// diff, its MCP server is gone), the call as the request describes it, which
// exact reports (its network need is not known exactly). A call prepared
// here is only described: the run prepares it again to run it (callToRun),
// with its own environment.
func (r *run) decisionCall(ctx context.Context, o openRequest) (*tools.Call, bool) {
	r.mu.Lock()
	call := r.prepared[o.call.Call.ID]
	env := *r.env // the fields a running call sets are written under r.mu
	r.mu.Unlock()
	if call != nil {
		return call, true
	}
	ctx, cancel := context.WithTimeout(ctx, prepareToJudgeTimeout)
	defer cancel()
	if call := r.prepareToJudge(ctx, o.call, o.req, &env); call != nil {
		return call, true
	}
	return requestCall(o.call, o.req), false
}

// prepareToJudge prepares a call again on a copy of the run's environment,
// as judging it did: nil if it cannot be prepared or does not do what the
// user was shown. The secrets the request named stay named (a restart
// forgets their values), so the policy still asks for them.
func (r *run) prepareToJudge(ctx context.Context, pc *pendingCall, req *InputRequest, env *tools.Env) *tools.Call {
	t, ok := r.toolNamed(pc.Call.Name)
	if !ok {
		return nil
	}
	call, refusal := tools.Prepare(ctx, t, env, pc.Call.Args)
	if refusal != nil || call == nil || !sameDiffs(req.Diff, call.Writes) {
		return nil
	}
	if call.Command != nil {
		for _, name := range req.Secrets {
			if !slices.Contains(call.Command.Secrets, name) {
				call.Command.Secrets = append(call.Command.Secrets, name)
			}
		}
	}
	return call
}

// requestCall is the call a confirmation describes: the files of its diff,
// its command line, or the tool only its name describes (an MCP tool's),
// for the audit log and a rule when the call itself cannot be prepared.
// A command's network need is left out: the request says only that the
// line needs the network, not which of its parts.
func requestCall(pc *pendingCall, req *InputRequest) *tools.Call {
	call := &tools.Call{Tool: pc.Call.Name, Title: req.Title}
	switch {
	case req.Kind == KindConfirmWrite:
		call.Effect, call.Writes = tools.EffectEdit, req.Diff
	case pc.Call.Name == tools.RunCmdToolName && req.Command != "":
		call.Effect, call.Title = tools.EffectExecute, req.Command
		call.Command = &tools.Command{Line: req.Command, Cwd: req.Cwd, Secrets: slices.Clone(req.Secrets)}
	default:
		call.Effect, call.Detail = tools.EffectUnknown, req.Message
	}
	return call
}

// grant stores the rules a lasting decision makes: the command's or the
// write's, and, when the confirmation asked for the network, the network's
// (only for the call itself: exact; the request does not say which parts of
// the line need it).
func (r *run) grant(ctx context.Context, call *tools.Call, d tools.Decision, network, exact bool) {
	stored := false
	if rule, err := r.a.policy.Grant(r.rec.SessionID, call, d); err != nil {
		r.logger().Warn("storing rule", "err", err)
	} else {
		r.logger().Info("rule stored", "rule", rule, "decision", d)
		stored = true
	}
	switch {
	case network && !exact:
		r.logger().Warn("network rule not stored: the call could not be prepared again after the restart", "tool", call.Tool)
	case network:
		if rule, err := r.a.policy.GrantNetwork(r.rec.SessionID, call, d); err != nil {
			r.logger().Warn("storing network rule", "err", err)
		} else if rule != "" {
			r.logger().Info("network rule stored", "rule", rule, "decision", d)
			stored = true
		}
	}
	if stored {
		r.a.reviewOpenConfirms(ctx, r.rec.SessionID)
	}
}

// checkDecision checks a Confirm against the request it answers.
func checkDecision(req *InputRequest, p ConfirmParams) error {
	switch {
	case !requestRules[req.Kind].decision:
		return fmt.Errorf("%w: request %s is a %s; answer it with agent/reply", ErrWrongKind, req.RequestID, req.Kind)
	case !slices.Contains(tools.Decisions, p.Decision):
		return fmt.Errorf("%w: decision %q is not one of %s", ErrWrongKind, p.Decision, decisionList())
	case len(req.Options) > 0 && !slices.ContainsFunc(req.Options, func(o tools.Option) bool { return o.OptionID == string(p.Decision) }):
		// The answer must be one the user was shown: allow_full only on a
		// command, no lasting grant where the sandbox cannot confine it.
		return fmt.Errorf("%w: decision %q is not offered by request %s", ErrWrongKind, p.Decision, req.RequestID)
	case p.EditedContent != nil && len(req.Diff) != 1:
		return fmt.Errorf("%w: editedContent needs a confirm_write of exactly one file", ErrWrongKind)
	}
	return nil
}

func decisionList() string {
	names := make([]string, len(tools.Decisions))
	for i, d := range tools.Decisions {
		names[i] = string(d)
	}
	return strings.Join(names, ", ")
}

// resolveLocked closes a request: persists the resolution, synced, before
// anything else, tells every view, and wakes whoever waits on it. A secret's
// value is never persisted. A resolution that cannot be saved is an error
// wrapping ErrNotSaved, and the request stays open.
func (r *run) resolveLocked(o openRequest, res *resolution) error {
	switch {
	case o.call != nil:
		o.call.Resolved = storedResolution(o.req, res)
		if err := r.persistLocked(true); err != nil {
			o.call.Resolved = nil
			return err
		}
	case o.held != nil:
		o.held.Resolved = storedResolution(o.req, res)
		if err := r.persistLocked(true); err != nil {
			o.held.Resolved = nil
			return err
		}
	}
	r.closeLocked(o, res)
	return nil
}

// storedResolution is the resolution as the run keeps it: without a
// secret's value.
func storedResolution(req *InputRequest, res *resolution) *resolution {
	stored := *res
	if requestRules[req.Kind].secret {
		stored.Text = ""
	}
	return &stored
}

// closeLocked tells every view the request is closed and wakes whoever
// waits on it.
func (r *run) closeLocked(o openRequest, res *resolution) {
	r.wakeLocked(o.req.RequestID)
	r.a.closed(o.req.RequestID, res.Outcome)
	r.sendResolvedLocked(o.req.RequestID, res)
	if o.answer != nil {
		delete(r.live, o.req.RequestID)
		o.answer <- res
	}
	r.signal()
}

// expireRetry is how soon an expiry that could not be saved is tried again.
const expireRetry = 5 * time.Second

// expire resolves a request whose time ran out.
func (r *run) expire(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	o, err := r.findLocked(id)
	if err != nil || o.resolution() != nil || r.journal == nil {
		return // gone, closed, or the daemon is shutting down: a restart expires it
	}
	res := &resolution{Outcome: OutcomeTimeout, By: ByTimeout}
	if err := r.resolveLocked(o, res); err != nil {
		r.logger().Error("the request stays open: its expiry could not be saved", "request_id", id, "err", err)
		time.AfterFunc(expireRetry, func() { r.expire(id) })
		return
	}
	r.auditUndecidedLocked(o, res)
}

// auditUndecidedLocked records a confirmation closed without a decision
// (cancelled, timed out), as every decision is recorded. After a restart
// the call is not prepared yet: the request says what it was.
func (r *run) auditUndecidedLocked(o openRequest, res *resolution) {
	if o.call == nil || !requestRules[o.req.Kind].decision {
		return
	}
	call := r.prepared[o.call.Call.ID]
	if call == nil {
		call = requestCall(o.call, o.req)
	}
	r.a.audit(auditEntry{Run: r.rec, Call: call, Decision: string(res.Outcome), By: res.By, Rule: o.req.Rule})
}

// cancelOpenLocked resolves every open request of the run as cancelled and
// closes every call of the step that has no result, so no view keeps a
// pending tool call. The run's end, which follows, saves it all.
func (r *run) cancelOpenLocked() {
	for _, o := range r.openLocked() {
		res := &resolution{Outcome: OutcomeCancelled, By: ByCancel}
		switch {
		case o.call != nil:
			o.call.Resolved = storedResolution(o.req, res)
		case o.held != nil:
			o.held.Resolved = storedResolution(o.req, res)
		}
		r.closeLocked(o, res)
		r.auditUndecidedLocked(o, res)
	}
	for _, pc := range r.rec.Pending {
		if pc.Result == nil {
			r.updateLocked(Update{Kind: UpdateToolCallUpdate, ToolCallID: pc.Call.ID, Status: StatusFailed,
				Output: "Stopped: the run ended before this call finished.", IsError: true})
		}
	}
}

// Ask implements tools.Asker: a running tool (an interactive command)
// puts a question to the user and waits for the answer.
func (r *run) Ask(ctx context.Context, q tools.Question) (tools.Answer, error) {
	if q.Key != "" && !q.Secret {
		return r.askHeld(ctx, q)
	}
	kind := KindQuestion
	switch {
	case q.Secret:
		kind = KindSecret
	case len(q.Options) > 0:
		kind = KindChoice
	}
	if !r.a.renders(kind) {
		return tools.Answer{Cancelled: true}, nil
	}
	r.mu.Lock()
	req := r.newRequest(r.currentCallLocked())
	req.Kind, req.Title, req.Message, req.Options, req.Command = kind, q.Title, q.Message, q.Options, q.Command
	req.AllowOther = kind == KindChoice
	expireAfter(req, r.a.cfg.QuestionTimeout)
	o := openRequest{req: req, answer: make(chan *resolution, 1)}
	r.live[req.RequestID] = o
	r.a.opened(req, r)
	r.sendRequestLocked(req)
	r.mu.Unlock()
	select {
	case <-ctx.Done():
		r.mu.Lock()
		if _, open := r.live[req.RequestID]; open {
			r.closeLocked(o, &resolution{Outcome: OutcomeCancelled, By: ByCancel})
		}
		r.mu.Unlock()
		return tools.Answer{Cancelled: true}, ctx.Err()
	case res := <-o.answer:
		return answerOf(req, res), nil
	}
}

// answerOf is a live question's resolution as the tool reads it.
func answerOf(req *InputRequest, res *resolution) tools.Answer {
	ans := tools.Answer{Text: res.Text, TimedOut: res.Outcome == OutcomeTimeout, Cancelled: res.Outcome == OutcomeCancelled}
	if len(res.Options) > 0 {
		ans.Text = res.Options[0]
		if i := slices.IndexFunc(req.Options, func(o tools.Option) bool { return o.Label == res.Options[0] }); i >= 0 {
			ans.OptionID = req.Options[i].OptionID
		}
	}
	return ans
}

// expireAfter gives the request its expiry, d from its creation (0: none).
func expireAfter(req *InputRequest, d time.Duration) {
	if d > 0 {
		exp := req.CreatedAt.Add(d)
		req.ExpiresAt = &exp
	}
}

// currentCallLocked is the call being executed, for a live question's toolCallId.
func (r *run) currentCallLocked() string {
	for _, pc := range r.rec.Pending {
		if pc.Approved && pc.Result == nil {
			return pc.Call.ID
		}
	}
	return ""
}
