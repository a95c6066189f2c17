package agent

import (
	"context"
	"slices"

	"github.com/agentd/agentd/tools"
)

// heldRequest is a durable input request that is not the confirmation of
// one of the step's calls: the approval of a workspace's MCP server when a
// run starts, or an MCP server's question during a call. It is persisted
// with the run like a confirmation, so it survives a restart; whoever asks
// again with the same Key (and call) after the restart finds it: open, it
// waits again; answered, it takes the answer.
type heldRequest struct {
	Key      string        `json:"key"`
	CallID   string        `json:"callId,omitempty"`
	Request  *InputRequest `json:"request"`
	Resolved *resolution   `json:"resolved,omitempty"`
}

// hold asks the user through a held request, opening it unless one with
// the same key and call exists, and waits for its resolution. build makes
// the request to open; it is saved, synced, before anyone is asked (an
// error wrapping ErrNotSaved when it cannot be: nobody was asked). When ctx
// ends first, the request stays open if the daemon is shutting down (it is
// asked again after the restart) and is cancelled otherwise.
func (r *run) hold(ctx context.Context, key, callID string, build func() *InputRequest) (*InputRequest, *resolution, error) {
	r.mu.Lock()
	i := slices.IndexFunc(r.rec.Held, func(h *heldRequest) bool { return h.Key == key && h.CallID == callID })
	var h *heldRequest
	if i >= 0 {
		h = r.rec.Held[i]
	} else {
		var err error
		if h, err = r.openHeldLocked(key, callID, build()); err != nil {
			r.mu.Unlock()
			return nil, nil, err
		}
	}
	if h.Resolved != nil {
		res := h.Resolved
		r.mu.Unlock()
		return h.Request, res, nil
	}
	ch := r.waiterLocked(h.Request.RequestID)
	r.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
		r.mu.Lock()
		if h.Resolved == nil && !r.a.closing.Load() {
			res := &resolution{Outcome: OutcomeCancelled, By: ByCancel}
			if err := r.resolveLocked(openRequest{req: h.Request, held: h}, res); err != nil {
				r.logger().Warn("the cancelled request stays open: it could not be saved", "request_id", h.Request.RequestID, "err", err)
			}
		}
		r.mu.Unlock()
		return h.Request, nil, ctx.Err()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rec.State == StateRequiresAction && len(r.openLocked()) == 0 {
		r.setStateLocked(StateRunning, "", "")
	}
	return h.Request, h.Resolved, nil
}

// openHeldLocked saves a new held request with the run, synced, then
// registers and sends it.
func (r *run) openHeldLocked(key, callID string, req *InputRequest) (*heldRequest, error) {
	h := &heldRequest{Key: key, CallID: callID, Request: req}
	state := r.rec.State
	r.rec.Held = append(r.rec.Held, h)
	if state == StateRunning {
		r.rec.State = StateRequiresAction
	}
	if err := r.persistLocked(true); err != nil {
		r.rec.Held, r.rec.State = r.rec.Held[:len(r.rec.Held)-1], state
		return nil, err
	}
	r.a.opened(req, r)
	if r.rec.State != state {
		r.sendStateLocked()
	}
	r.sendRequestLocked(req)
	return h, nil
}

// heldByLocked reports whether a call asked the user through held requests:
// a restart that cut it off makes it again rather than calling it
// interrupted (see interruptedLocked).
func (r *run) heldByLocked(callID string) bool {
	return slices.ContainsFunc(r.rec.Held, func(h *heldRequest) bool { return h.CallID == callID })
}

// waiterLocked returns a channel closed when the request is resolved.
func (r *run) waiterLocked(requestID string) chan struct{} {
	if r.waiters == nil {
		r.waiters = map[string]chan struct{}{}
	}
	ch, ok := r.waiters[requestID]
	if !ok {
		ch = make(chan struct{})
		r.waiters[requestID] = ch
	}
	return ch
}

// wakeLocked wakes whoever waits on a held request.
func (r *run) wakeLocked(requestID string) {
	if ch, ok := r.waiters[requestID]; ok {
		close(ch)
		delete(r.waiters, requestID)
	}
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
