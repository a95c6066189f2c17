package agent

import (
	"context"
	"slices"

	"github.com/agentd/agentd/tools"
)

// A held request is a durable input request that is not the confirmation
// of one of the step's calls: the approval of a workspace's MCP server when
// a run starts, or an MCP server's question during a call. It is saved with
// the run like a confirmation (origin held, inbox.go), so it survives a
// restart; whoever asks again with the same key (and call) after the
// restart finds it: open, it waits again; answered, it takes the answer.

// hold asks the user through a held request, opening it unless one with
// the same key and call exists, and waits for its resolution. build makes
// the request to open; it is saved, synced, before anyone is asked (an
// error wrapping ErrNotSaved when it cannot be: nobody was asked). When ctx
// ends first, the request stays open if the daemon is shutting down (it is
// asked again after the restart) and is cancelled otherwise.
func (r *run) hold(ctx context.Context, key, callID string, build func() *InputRequest) (*InputRequest, *resolution, error) {
	r.mu.Lock()
	i := slices.IndexFunc(r.rec.Requests, func(q *request) bool {
		return q.Origin == originHeld && q.Key == key && q.CallID == callID
	})
	var q *request
	if i >= 0 {
		q = r.rec.Requests[i]
	} else {
		var err error
		if q, err = r.openHeldLocked(key, callID, build()); err != nil {
			r.mu.Unlock()
			return nil, nil, err
		}
	}
	if !q.open() {
		res := q.Resolved
		r.mu.Unlock()
		return q.Req, res, nil
	}
	r.mu.Unlock()
	select {
	case <-q.done:
	case <-ctx.Done():
		r.mu.Lock()
		if q.open() && !r.a.closing.Load() {
			res := &resolution{Outcome: OutcomeCancelled, By: ByCancel}
			if err := r.resolveLocked(q, res); err != nil {
				r.logger().Warn("the cancelled request stays open: it could not be saved", "request_id", q.Req.RequestID, "err", err)
			}
		}
		r.mu.Unlock()
		return q.Req, nil, ctx.Err()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rec.State == StateRequiresAction && len(r.openRequestsLocked()) == 0 {
		r.setStateLocked(StateRunning, "", "")
	}
	return q.Req, q.Resolved, nil
}

// heldByLocked reports whether a call asked the user through held requests:
// a restart that cut it off makes it again rather than calling it
// interrupted (see interruptedLocked).
func (r *run) heldByLocked(callID string) bool {
	return slices.ContainsFunc(r.rec.Requests, func(q *request) bool { return q.Origin == originHeld && q.CallID == callID })
}

// askHeld puts a running tool's keyed question to the user as a held
// request of the call being executed (tools.Question.Key).
func (r *run) askHeld(ctx context.Context, q tools.Question) (tools.Answer, error) {
	kind := KindQuestion
	if len(q.Options) > 0 {
		kind = KindChoice
	}
	if !r.a.renders(kind) {
		return tools.Answer{Cancelled: true}, nil
	}
	r.mu.Lock()
	callID := r.currentCallLocked()
	r.mu.Unlock()
	req, res, err := r.hold(ctx, q.Key, callID, func() *InputRequest {
		req := r.newRequest(callID)
		req.Kind, req.Title, req.Message, req.Options = kind, q.Title, q.Message, q.Options
		req.AllowOther = kind == KindChoice && !q.Closed
		req.Multiple = q.Multiple
		expireAfter(req, r.a.cfg.QuestionTimeout)
		return req
	})
	if err != nil {
		return tools.Answer{Cancelled: true}, err
	}
	ans := answerOf(req, res)
	for _, label := range res.Options {
		if i := slices.IndexFunc(req.Options, func(o tools.Option) bool { return o.Label == label }); i >= 0 {
			ans.OptionIDs = append(ans.OptionIDs, req.Options[i].OptionID)
		}
	}
	return ans, nil
}
