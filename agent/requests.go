package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentd/agentd/tools"
)

// Reply answers a question, a choice or a secret.
func (a *Agent) Reply(ctx context.Context, p ReplyParams) error {
	q, err := a.inbox.find(p.RequestID)
	if err != nil {
		return err
	}
	return q.run.reply(q, p)
}

// Confirm answers a write or command confirmation.
func (a *Agent) Confirm(ctx context.Context, p ConfirmParams) error {
	q, err := a.inbox.find(p.RequestID)
	if err != nil {
		return err
	}
	return q.run.confirm(ctx, q, p)
}

func (r *run) reply(q *request, p ReplyParams) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := q.closedErr(); err != nil {
		return err
	}
	rule := requestRules[q.Req.Kind]
	if rule.decision {
		return fmt.Errorf("%w: request %s is a %s; answer it with agent/confirm", ErrWrongKind, q.Req.RequestID, q.Req.Kind)
	}
	res, err := rule.reply(q.Req, p)
	if err != nil {
		return err
	}
	if err := r.resolveLocked(q, res); err != nil {
		return err
	}
	if rule.secret && q.call != nil {
		name := secretName(q.call.Call)
		r.secrets[name] = res.Text
		r.red.AddNamed(name, res.Text)
	}
	return nil
}

func (r *run) confirm(ctx context.Context, q *request, p ConfirmParams) error {
	// The call the decision is about, prepared again first if a restart lost
	// it: without the lock, since preparing may read files.
	call, exact := r.callOfConfirm(ctx, q, p)
	r.mu.Lock()
	if err := confirmable(q, p); err != nil {
		r.mu.Unlock()
		return err
	}
	res := &resolution{Outcome: decided(p.Decision), By: ByUser, Decision: p.Decision, Reason: p.Reason, Edited: p.EditedContent}
	var prev *tools.Confine
	pc := q.call
	if pc == nil { // a held or a running tool's request has no call of the step
		call = nil
	} else {
		prev = pc.Confine
		if p.Decision.Allows() && q.Req.Kind == KindConfirmCommand {
			pc.Confine = confineOnApproval(pc, p.Decision) // saved with the resolution
		}
	}
	err := r.resolveLocked(q, res)
	var confine *tools.Confine
	if pc != nil {
		if err != nil {
			pc.Confine = prev
		}
		confine = pc.Confine
	}
	r.mu.Unlock()
	if err != nil {
		return err
	}
	r.a.audit(auditEntry{Run: r.rec, Call: call, CallID: q.CallID, RequestID: q.Req.RequestID,
		Decision: string(p.Decision), By: ByUser, Rule: q.Req.Rule, Reason: p.Reason, Confine: confine})
	if call != nil && p.Decision.Lasts() {
		r.grant(ctx, call, p.Decision, q.Req.Network, exact)
	}
	return nil
}

// confirmable checks that p is an answer q takes: q is open and the
// decision one it offers. q's run's mu is held.
func confirmable(q *request, p ConfirmParams) error {
	if err := q.closedErr(); err != nil {
		return err
	}
	return checkDecision(q.Req, p)
}

// callOfConfirm is the call a valid answer to a step's confirmation is
// about (decisionCall), or nil for any other answer, which confirm then
// refuses or applies to a held or running tool's request.
func (r *run) callOfConfirm(ctx context.Context, q *request, p ConfirmParams) (*tools.Call, bool) {
	r.mu.Lock()
	err := confirmable(q, p)
	r.mu.Unlock()
	if err != nil || q.call == nil {
		return nil, false
	}
	return r.decisionCall(ctx, q)
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
func (r *run) decisionCall(ctx context.Context, q *request) (*tools.Call, bool) {
	r.mu.Lock()
	call := r.prepared[q.call]
	env := *r.env // the fields a running call sets are written under r.mu
	r.mu.Unlock()
	if call != nil {
		return call, true
	}
	ctx, cancel := context.WithTimeout(ctx, prepareToJudgeTimeout)
	defer cancel()
	if call := r.prepareToJudge(ctx, q.call, q.Req, &env); call != nil {
		return call, true
	}
	return requestCall(q.call, q.Req), false
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

// auditUndecidedLocked records a confirmation closed without a decision
// (cancelled, timed out), as every decision is recorded. After a restart
// the call is not prepared yet: the request says what it was.
func (r *run) auditUndecidedLocked(q *request, res *resolution) {
	if q.call == nil || !requestRules[q.Req.Kind].decision {
		return
	}
	call := r.prepared[q.call]
	if call == nil {
		call = requestCall(q.call, q.Req)
	}
	r.a.audit(auditEntry{Run: r.rec, Call: call, CallID: q.CallID, RequestID: q.Req.RequestID,
		Decision: string(res.Outcome), By: res.By, Rule: q.Req.Rule})
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
	callID := r.currentCallLocked()
	req := r.newRequest(callID)
	req.Kind, req.Title, req.Message, req.Options, req.Command = kind, q.Title, q.Message, q.Options, q.Command
	req.AllowOther = kind == KindChoice
	expireAfter(req, r.a.cfg.QuestionTimeout)
	live := r.openLiveLocked(req, callID)
	r.mu.Unlock()
	select {
	case <-ctx.Done():
		r.mu.Lock()
		if live.open() {
			_ = r.resolveLocked(live, &resolution{Outcome: OutcomeCancelled, By: ByCancel}) // a live request is not saved
		}
		r.mu.Unlock()
		return tools.Answer{Cancelled: true}, ctx.Err()
	case res := <-live.answer:
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
