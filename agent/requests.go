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
	return r.confirm(p)
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

// findLocked returns the open request with that id: a step's call or a live
// question from a running tool.
func (r *run) findLocked(id string) (*pendingCall, *liveRequest, *InputRequest) {
	for _, pc := range r.rec.Pending {
		if pc.Request != nil && pc.Request.RequestID == id {
			return pc, nil, pc.Request
		}
	}
	if lr, ok := r.live[id]; ok {
		return nil, lr, &lr.req
	}
	return nil, nil, nil
}

func (r *run) reply(p ReplyParams) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	pc, lr, req := r.findLocked(p.RequestID)
	if req == nil {
		return fmt.Errorf("%w: %s", ErrUnknownRequest, p.RequestID)
	}
	if err := openCheck(pc, req); err != nil {
		return err
	}
	res, secret, err := answerOf(req, p)
	if err != nil {
		return err
	}
	if req.Kind == KindSecret && pc != nil {
		r.secrets[secretName(pc.Call)] = secret
	}
	if lr != nil {
		res.Text = secret // a live secret goes straight to the tool, never stored
	}
	r.resolveLocked(pc, lr, req, res)
	return nil
}

func (r *run) confirm(p ConfirmParams) error {
	r.mu.Lock()
	pc, _, req := r.findLocked(p.RequestID)
	if req == nil {
		r.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrUnknownRequest, p.RequestID)
	}
	if err := openCheck(pc, req); err != nil {
		r.mu.Unlock()
		return err
	}
	if req.Kind != KindConfirmWrite && req.Kind != KindConfirmCommand {
		r.mu.Unlock()
		return fmt.Errorf("%w: request %s is a %s; answer it with agent/reply", ErrWrongKind, req.RequestID, req.Kind)
	}
	if !slices.Contains(tools.Decisions, p.Decision) {
		r.mu.Unlock()
		return fmt.Errorf("%w: decision %q is not one of allow_once, allow_session, allow_always, reject_once, reject_always", ErrWrongKind, p.Decision)
	}
	if p.EditedContent != nil && len(req.Diff) != 1 {
		r.mu.Unlock()
		return fmt.Errorf("%w: editedContent needs a confirm_write of exactly one file", ErrWrongKind)
	}
	res := &resolution{Outcome: decided(p.Decision), By: ByUser, Decision: p.Decision, Reason: p.Reason, Edited: p.EditedContent}
	call := r.prepared[pc.Call.ID]
	r.resolveLocked(pc, nil, req, res)
	r.mu.Unlock()
	r.a.audit(auditEntry{Run: r.rec, Call: call, Decision: string(p.Decision), By: ByUser, Rule: req.Rule, Reason: p.Reason})
	if call != nil && p.Decision.Lasts() {
		if rule, err := r.a.policy.Grant(r.rec.SessionID, call, p.Decision); err != nil {
			r.logger().Warn("storing rule", "err", err)
		} else {
			r.logger().Info("rule stored", "rule", rule, "decision", p.Decision)
			r.a.reviewOpenConfirms(r.rec.SessionID)
		}
	}
	return nil
}

// openCheck refuses a reply to a request that is already closed.
func openCheck(pc *pendingCall, req *InputRequest) error {
	if pc == nil || pc.Resolved == nil {
		return nil
	}
	if pc.Resolved.Outcome == OutcomeTimeout {
		return fmt.Errorf("%w: request %s expired at %s", ErrExpired, req.RequestID, req.ExpiresAt.Format(time.RFC3339))
	}
	return fmt.Errorf("%w: request %s was already resolved (%s by %s)", ErrAlreadyResolved, req.RequestID, pc.Resolved.Outcome, pc.Resolved.By)
}

// answerOf checks a reply against the request's kind and options.
func answerOf(req *InputRequest, p ReplyParams) (*resolution, string, error) {
	res := &resolution{Outcome: OutcomeAnswered, By: ByUser}
	switch req.Kind {
	case KindConfirmWrite, KindConfirmCommand:
		return nil, "", fmt.Errorf("%w: request %s is a %s; answer it with agent/confirm", ErrWrongKind, req.RequestID, req.Kind)
	case KindQuestion:
		if p.Text == nil {
			return nil, "", fmt.Errorf("%w: text is required for a question", ErrInvalid)
		}
		res.Text = *p.Text
	case KindSecret:
		if p.Text == nil {
			return nil, "", fmt.Errorf("%w: text is required for a secret", ErrInvalid)
		}
		return res, *p.Text, nil
	case KindChoice:
		return choiceAnswer(req, p, res)
	}
	return res, "", nil
}

func choiceAnswer(req *InputRequest, p ReplyParams, res *resolution) (*resolution, string, error) {
	ids := p.Answers
	if p.OptionID != "" {
		ids = append([]string{p.OptionID}, ids...)
	}
	switch {
	case len(ids) > 1 && !req.Multiple:
		return nil, "", fmt.Errorf("%w: request %s takes one option", ErrWrongKind, req.RequestID)
	case len(ids) == 0 && p.Text != nil:
		if !req.AllowOther {
			return nil, "", fmt.Errorf("%w: request %s is a closed choice; give an optionId", ErrWrongKind, req.RequestID)
		}
		res.Text = *p.Text
		return res, "", nil
	case len(ids) == 0:
		return nil, "", fmt.Errorf("%w: optionId, answers or text is required for a choice", ErrInvalid)
	}
	for _, id := range ids {
		i := slices.IndexFunc(req.Options, func(o tools.Option) bool { return o.OptionID == id })
		if i < 0 {
			return nil, "", fmt.Errorf("%w: option %q is not among the options of %s", ErrWrongKind, id, req.RequestID)
		}
		res.Options = append(res.Options, req.Options[i].Label)
	}
	return res, "", nil
}

// resolveLocked closes a request: persists the resolution before anything
// else, tells every view, and wakes whoever waits on it.
func (r *run) resolveLocked(pc *pendingCall, lr *liveRequest, req *InputRequest, res *resolution) {
	if pc != nil {
		stored := *res
		if req.Kind == KindSecret {
			stored.Text = ""
		}
		pc.Resolved = &stored
		r.durableLocked()
	}
	r.a.closed(req.RequestID, res.Outcome)
	r.sendResolvedLocked(req.RequestID, res)
	if lr != nil {
		delete(r.live, req.RequestID)
		lr.answer <- res
	}
	r.signal()
}

// expire resolves a request whose time ran out.
func (r *run) expire(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	pc, lr, req := r.findLocked(id)
	if req == nil || (pc != nil && pc.Resolved != nil) {
		return
	}
	r.resolveLocked(pc, lr, req, &resolution{Outcome: OutcomeTimeout, By: ByTimeout})
}

// cancelOpenLocked resolves every open request of the run as cancelled and
// closes every call of the step that has no result, so no view keeps a
// pending tool call.
func (r *run) cancelOpenLocked() {
	defer r.closeOpenCallsLocked()
	for _, pc := range r.rec.Pending {
		if pc.Request != nil && pc.Resolved == nil {
			r.resolveLocked(pc, nil, pc.Request, &resolution{Outcome: OutcomeCancelled, By: ByCancel})
		}
	}
	for _, lr := range r.live {
		r.resolveLocked(nil, lr, &lr.req, &resolution{Outcome: OutcomeCancelled, By: ByCancel})
	}
}

func (r *run) closeOpenCallsLocked() {
	for _, pc := range r.rec.Pending {
		if pc.Result != nil {
			continue
		}
		id := pc.Call.ID
		r.updateLocked(Update{Kind: UpdateToolCallUpdate, ToolCallID: id, Status: StatusFailed,
			Output: "Stopped: the run ended before this call finished.", IsError: true})
	}
}

// resultOfResolution turns a closed request into what the model reads. An
// allowed confirmation marks the call approved instead: settle runs it next.
func (r *run) resultOfResolution(ctx context.Context, pc *pendingCall) *callResult {
	res, req := pc.Resolved, pc.Request
	var out *callResult
	switch req.Kind {
	case KindConfirmWrite, KindConfirmCommand:
		out = r.confirmResult(pc, res)
		if out == nil {
			return nil
		}
	default:
		out = questionResult(req, res, pc.Call, r.a.cfg.QuestionTimeout)
	}
	r.reportSimple(pc.Call.ID, out)
	return out
}

func (r *run) confirmResult(pc *pendingCall, res *resolution) *callResult {
	what := "write"
	if pc.Request.Kind == KindConfirmCommand {
		what = "command"
	}
	switch {
	case res.Decision.Allows():
		r.mu.Lock()
		pc.Approved = true
		r.checkpointLocked()
		r.mu.Unlock()
		return nil
	case res.Outcome == OutcomeTimeout:
		return &callResult{IsError: true, Rejected: true, Content: fmt.Sprintf("Not run: no one approved this %s in time (timeout). It is not a refusal; you may ask again later or continue without it.", what)}
	case res.Outcome == OutcomeCancelled:
		return &callResult{IsError: true, Rejected: true, Content: "Not run: the request was cancelled."}
	}
	reason := res.Reason
	if reason == "" {
		reason = "no reason given"
	}
	return &callResult{IsError: true, Rejected: true, Content: fmt.Sprintf(
		"The user rejected this %s (%s). Reason: %s. Do not retry it unchanged; adjust your approach to the reason, or ask the user.", what, res.Outcome, reason)}
}

func questionResult(req *InputRequest, res *resolution, c ToolCall, timeout time.Duration) *callResult {
	switch res.Outcome {
	case OutcomeTimeout:
		return &callResult{Content: fmt.Sprintf("The user did not answer within %s. Decide with what you have, say which assumption you made, or give your answer with what you know.", timeout)}
	case OutcomeCancelled:
		return &callResult{IsError: true, Content: "The question was cancelled."}
	}
	switch {
	case req.Kind == KindSecret:
		name := secretName(c)
		return &callResult{Content: fmt.Sprintf("The user provided the secret. It is available to run_cmd commands as the environment variable %s; its value is not shown to you. Refer to it as $%s.", name, name)}
	case len(res.Options) > 0:
		return &callResult{Content: "The user chose: " + strings.Join(res.Options, ", ")}
	}
	return &callResult{Content: "The user answered: " + res.Text}
}

// Ask implements tools.Prompter: a running tool (an interactive command)
// puts a question to the user and waits for the answer.
func (r *run) Ask(ctx context.Context, q tools.Question) (tools.Answer, error) {
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
	lr := &liveRequest{answer: make(chan *resolution, 1)}
	r.mu.Lock()
	req := r.newRequest(r.currentCallLocked())
	req.Kind, req.Title, req.Message, req.Options, req.Command = kind, q.Title, q.Message, q.Options, q.Command
	req.AllowOther = kind == KindChoice
	if d := r.a.cfg.QuestionTimeout; d > 0 {
		exp := req.CreatedAt.Add(d)
		req.ExpiresAt = &exp
	}
	lr.req = *req
	r.live[req.RequestID] = lr
	r.a.opened(&lr.req, r)
	r.sendRequestLocked(&lr.req)
	r.mu.Unlock()
	select {
	case <-ctx.Done():
		r.mu.Lock()
		if _, open := r.live[req.RequestID]; open {
			r.resolveLocked(nil, lr, &lr.req, &resolution{Outcome: OutcomeCancelled, By: ByCancel})
		}
		r.mu.Unlock()
		return tools.Answer{Cancelled: true}, ctx.Err()
	case res := <-lr.answer:
		ans := tools.Answer{Text: res.Text, TimedOut: res.Outcome == OutcomeTimeout, Cancelled: res.Outcome == OutcomeCancelled}
		if len(res.Options) > 0 {
			ans.Text = res.Options[0]
			i := slices.IndexFunc(req.Options, func(o tools.Option) bool { return o.Label == res.Options[0] })
			if i >= 0 {
				ans.OptionID = req.Options[i].OptionID
			}
		}
		return ans, nil
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
