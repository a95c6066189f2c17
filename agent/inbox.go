package agent

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"time"
)

// The inbox is every input request of every run, by id: what was asked,
// where it comes from (its origin), whether it is open, and how it was
// closed. Answers (Reply, Confirm), expiries, cancels and agent/pending
// all find requests here, and every request opens and closes through the
// same few functions below, whatever its kind or origin.
//
// A request's durable home is its run's record (runRecord.Requests): it is
// saved with the run's state in one journal line, so a question and the
// step that asked it are never saved apart. The inbox indexes those and
// the live questions, which are never saved. What a kind accepts and what
// the model reads of its answer is in requestkinds.go; a new kind changes
// nothing here.
//
// Locks: a request's Resolved is guarded by its run's mu (the run's journal
// line encodes it); the inbox's own fields by inbox.mu, which is taken
// after a run's mu and never before one.

// origin says where a request comes from, which decides how long it lives.
type origin string

const (
	// originCall: the confirmation or the ask_user question of one of the
	// step's calls, which waits on it. Saved with the run.
	originCall origin = "call"
	// originHeld: a run's durable request that no call of the step waits
	// on by itself: a workspace MCP server's approval, an MCP server's
	// question during a call. Saved with the run; whoever asks again with
	// the same key (and call) after a restart finds it (held.go).
	originHeld origin = "held"
	// originLive: a running tool's question (an interactive command's
	// prompt). It lasts as long as the tool, and a restart cancels it; it
	// is never saved.
	originLive origin = "live"
)

// request is one input request of a run: what was asked, its origin, and,
// once closed, how. A secret's answer is never kept here.
type request struct {
	Req      *InputRequest `json:"request"`
	Origin   origin        `json:"origin"`
	CallID   string        `json:"callId,omitempty"` // the step's call it belongs to
	Key      string        `json:"key,omitempty"`    // a held request's key
	Resolved *resolution   `json:"resolved,omitempty"`

	// In memory only, set before the request is registered.
	run    *run
	call   *pendingCall     // originCall: the call that waits on it
	done   chan struct{}    // closed once it is resolved
	answer chan *resolution // originLive: the whole answer, for the tool
	timer  *time.Timer      // its expiry
	shown  *InputRequest    // as sent (seq stamped); guarded by inbox.mu
	closed *resolution      // how it was closed, as the inbox tells; guarded by inbox.mu
}

// newRequestOf wraps an input request of r.
func (r *run) newRequestOf(o origin, req *InputRequest) *request {
	formOf(req)
	q := &request{Req: req, Origin: o, run: r, done: make(chan struct{})}
	if o == originLive {
		q.answer = make(chan *resolution, 1)
	}
	return q
}

// open reports whether q waits for an answer. r.mu is held.
func (q *request) open() bool { return q.Resolved == nil }

// closedErr refuses an answer to a request that is already closed. r.mu is
// held.
func (q *request) closedErr() error {
	switch res := q.Resolved; {
	case res == nil:
		return nil
	case res.Outcome == OutcomeTimeout:
		return fmt.Errorf("%w: request %s expired at %s", ErrExpired, q.Req.RequestID, q.Req.ExpiresAt.Format(time.RFC3339))
	default:
		return fmt.Errorf("%w: request %s was already resolved (%s by %s)", ErrAlreadyResolved, q.Req.RequestID, res.Outcome, res.By)
	}
}

// inbox indexes every request by id, open and closed.
type inbox struct {
	mu   sync.Mutex
	byID map[string]*request
	// shownOpen counts the open requests that were sent: a request's
	// pendingCount is it, with the request itself.
	shownOpen int
}

func newInbox() *inbox { return &inbox{byID: map[string]*request{}} }

// add registers requests before they are sent, so that an answer racing
// the notification finds them.
func (ib *inbox) add(qs ...*request) {
	ib.mu.Lock()
	defer ib.mu.Unlock()
	for _, q := range qs {
		if _, dup := ib.byID[q.Req.RequestID]; dup {
			continue
		}
		ib.byID[q.Req.RequestID] = q
		if q.Resolved != nil {
			q.closed = q.Resolved // restored closed: a late answer is told so
		}
	}
}

// sent records q as it went out: what agent/pending returns.
func (ib *inbox) sent(q *request) {
	shown := *q.Req
	ib.mu.Lock()
	defer ib.mu.Unlock()
	if q.shown == nil && q.closed == nil {
		ib.shownOpen++
	}
	q.shown = &shown
}

// markClosed records how q was closed.
func (ib *inbox) markClosed(q *request, res *resolution) {
	ib.mu.Lock()
	defer ib.mu.Unlock()
	if q.closed == nil {
		q.closed = res
		if q.shown != nil {
			ib.shownOpen--
		}
	}
}

// find is the request an answer names, or why it cannot take one.
func (ib *inbox) find(id string) (*request, error) {
	if id == "" {
		return nil, fmt.Errorf("%w: requestId is required", ErrInvalid)
	}
	ib.mu.Lock()
	defer ib.mu.Unlock()
	q, ok := ib.byID[id]
	switch {
	case !ok:
		return nil, fmt.Errorf("%w: %s", ErrUnknownRequest, id)
	case q.closed == nil:
		return q, nil
	case q.closed.Outcome == OutcomeTimeout:
		return nil, fmt.Errorf("%w: request %s expired before the reply came", ErrExpired, id)
	default:
		return nil, fmt.Errorf("%w: request %s was already resolved (%s)", ErrAlreadyResolved, id, q.closed.Outcome)
	}
}

// count is how many requests that were sent are open, across all runs.
func (ib *inbox) count() int {
	ib.mu.Lock()
	defer ib.mu.Unlock()
	return ib.shownOpen
}

// pending lists the open requests, as they were sent, oldest first, those
// of run runID only unless it is "". A run registers its requests before it
// says it waits on them, and sends them under its lock: waiting for that
// lock of each run with open requests makes the list hold every request
// a notification already announced.
func (ib *inbox) pending(runID string) []InputRequest {
	ib.mu.Lock()
	runs := map[*run]bool{}
	for _, q := range ib.byID {
		if q.closed == nil && q.shown == nil && q.run != nil {
			runs[q.run] = true
		}
	}
	ib.mu.Unlock()
	for r := range runs { // a barrier: the run's sends in progress end
		r.mu.Lock()
		r.mu.Unlock()
	}
	ib.mu.Lock()
	out := []InputRequest{}
	for _, q := range ib.byID {
		if q.closed == nil && q.shown != nil && (runID == "" || q.shown.RunID == runID) {
			out = append(out, *q.shown)
		}
	}
	ib.mu.Unlock()
	slices.SortFunc(out, func(x, y InputRequest) int {
		return cmp.Or(x.CreatedAt.Compare(y.CreatedAt), cmp.Compare(x.Seq, y.Seq), cmp.Compare(x.RequestID, y.RequestID))
	})
	for i := range out {
		out[i].PendingCount = len(out)
	}
	return out
}

// liveOf lists r's open live requests, oldest first.
func (ib *inbox) liveOf(r *run) []*request {
	ib.mu.Lock()
	var out []*request
	for _, q := range ib.byID {
		if q.run == r && q.Origin == originLive && q.closed == nil {
			out = append(out, q)
		}
	}
	ib.mu.Unlock()
	slices.SortFunc(out, func(x, y *request) int {
		return cmp.Or(x.Req.CreatedAt.Compare(y.Req.CreatedAt), cmp.Compare(x.Req.RequestID, y.Req.RequestID))
	})
	return out
}

// forget keeps only how the closed requests qs were closed: their run no
// longer holds them, and a late answer needs no more (a diff can be large).
func (ib *inbox) forget(qs []*request) {
	ib.mu.Lock()
	defer ib.mu.Unlock()
	for _, q := range qs {
		if cur, ok := ib.byID[q.Req.RequestID]; ok && cur == q && q.closed != nil {
			ib.byID[q.Req.RequestID] = &request{Req: &InputRequest{RequestID: q.Req.RequestID, Kind: q.Req.Kind}, Origin: q.Origin, closed: q.closed}
		}
	}
}

// The run's side: opening, resolving and closing its requests. Each is
// called with r.mu held.

// openRequestsLocked lists the run's open requests: the saved ones in the
// order they were opened, then the live ones.
func (r *run) openRequestsLocked() []*request {
	var out []*request
	for _, q := range r.rec.Requests {
		if q.open() {
			out = append(out, q)
		}
	}
	return append(out, r.a.inbox.liveOf(r)...)
}

// askLocked saves the step, synced, and only then registers and sends its
// requests. If the step cannot be saved nobody is asked: the requests wait
// in unsent for the run to be resumed.
func (r *run) askLocked(qs []*request) error {
	state := r.rec.State
	r.rec.State = StateRequiresAction
	if err := r.persistLocked(true); err != nil {
		r.rec.State, r.unsent = state, qs
		return err
	}
	r.unsent = nil
	r.a.inbox.add(qs...)
	r.sendStateLocked()
	for _, q := range qs {
		r.sendRequestLocked(q)
	}
	return nil
}

// openHeldLocked saves a new held request with the run, synced, then
// registers and sends it.
func (r *run) openHeldLocked(key, callID string, req *InputRequest) (*request, error) {
	q := r.newRequestOf(originHeld, req)
	q.Key, q.CallID = key, callID
	state := r.rec.State
	r.rec.Requests = append(r.rec.Requests, q)
	if state == StateRunning {
		r.rec.State = StateRequiresAction
	}
	if err := r.persistLocked(true); err != nil {
		r.rec.Requests, r.rec.State = r.rec.Requests[:len(r.rec.Requests)-1], state
		return nil, err
	}
	r.a.inbox.add(q)
	if r.rec.State != state {
		r.sendStateLocked()
	}
	r.sendRequestLocked(q)
	return q, nil
}

// openLiveLocked registers and sends a running tool's question, which is
// not saved.
func (r *run) openLiveLocked(req *InputRequest, callID string) *request {
	q := r.newRequestOf(originLive, req)
	q.CallID = callID
	r.a.inbox.add(q)
	r.sendRequestLocked(q)
	return q
}

// sendRequestLocked sends an open request, stamping its seq and the number
// of requests open, and starts its expiry.
func (r *run) sendRequestLocked(q *request) {
	req := q.Req
	req.PendingCount = r.a.inbox.count() + 1
	sent := false
	r.outLocked(func(out *run) { // a subagent's requests go out in its parent's run
		if sent = out.sendLocked(EventInputRequest, req, &req.Seq); sent {
			r.a.listener.InputRequest(*req)
		}
	})
	if sent {
		r.inputRequestedLocked(*req)
	}
	r.a.inbox.sent(q)
	r.armExpiryLocked(q)
}

// armExpiryLocked starts the timer that expires q at its ExpiresAt.
func (r *run) armExpiryLocked(q *request) {
	if q.Req.ExpiresAt != nil && q.timer == nil {
		q.timer = time.AfterFunc(time.Until(*q.Req.ExpiresAt), func() { r.expire(q) })
	}
}

// resolveLocked closes a request: saves the resolution with the run,
// synced, before anything else (a live request is not saved), tells every
// view, and wakes whoever waits on it. A secret's value is never saved. A
// resolution that cannot be saved is an error wrapping ErrNotSaved, and the
// request stays open.
func (r *run) resolveLocked(q *request, res *resolution) error {
	q.Resolved = storedResolution(q.Req, res)
	if q.Origin != originLive {
		if err := r.persistLocked(true); err != nil {
			q.Resolved = nil
			return err
		}
	}
	r.closeLocked(q, res)
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

// closeLocked tells every view that q, whose Resolved is set, is closed,
// and wakes whoever waits on it: the tool that asked, a held request's
// asker, the run's drive.
func (r *run) closeLocked(q *request, res *resolution) {
	if q.timer != nil {
		q.timer.Stop()
	}
	r.a.inbox.markClosed(q, res)
	r.sendResolvedLocked(q.Req.RequestID, res)
	if q.answer != nil {
		q.answer <- res
	}
	close(q.done)
	r.signal()
}

func (r *run) sendResolvedLocked(requestID string, res *resolution) {
	p := InputResolved{SessionID: r.rec.SessionID, RequestID: requestID, Outcome: res.Outcome, By: res.By}
	r.outLocked(func(out *run) {
		p.RunID = out.rec.ID
		if out.sendLocked(EventInputResolved, &p, &p.Seq) {
			r.a.listener.InputResolved(p)
		}
	})
}

// expireRetry is how soon an expiry that could not be saved is tried again.
const expireRetry = 5 * time.Second

// expire resolves a request whose time ran out.
func (r *run) expire(q *request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !q.open() || r.journal == nil {
		return // closed, or the daemon is shutting down: a restart expires it
	}
	res := &resolution{Outcome: OutcomeTimeout, By: ByTimeout}
	if err := r.resolveLocked(q, res); err != nil {
		r.logger().Error("the request stays open: its expiry could not be saved", "request_id", q.Req.RequestID, "err", err)
		q.timer = time.AfterFunc(expireRetry, func() { r.expire(q) })
		return
	}
	r.auditUndecidedLocked(q, res)
}

// cancelOpenLocked resolves every open request of the run as cancelled and
// closes every call of the step that has no result, so no view keeps a
// pending tool call. The run's end, which follows, saves it all.
func (r *run) cancelOpenLocked() {
	for _, q := range r.openRequestsLocked() {
		res := &resolution{Outcome: OutcomeCancelled, By: ByCancel}
		q.Resolved = storedResolution(q.Req, res)
		r.closeLocked(q, res)
		r.auditUndecidedLocked(q, res)
	}
	for _, pc := range r.rec.Pending {
		if pc.Result == nil {
			r.updateLocked(Update{Kind: UpdateToolCallUpdate, ToolCallID: pc.Call.ID, Status: StatusFailed,
				Output: "Stopped: the run ended before this call finished.", IsError: true})
		}
	}
}

// dropStepRequestsLocked forgets the step's requests once its calls are
// done: all of them are closed by then.
func (r *run) dropStepRequestsLocked() {
	r.a.inbox.forget(r.rec.Requests)
	r.rec.Requests = nil
}

// restoreRequestsLocked brings back a restored run's requests: each is
// linked to the call that waits on it and registered in the inbox, the
// open ones with the seq they were sent with (a request waiting since is
// saved without it: the event log has it). One the run saved but never
// sent (the daemon stopped in between) goes to the event log now, so that
// its history shows it; the editor gets it from agent/pending.
func (r *run) restoreRequestsLocked(sent map[string]int64) {
	calls := map[string]*pendingCall{}
	for _, pc := range r.rec.Pending {
		if pc.RequestID != "" {
			calls[pc.RequestID] = pc
		}
	}
	for _, q := range r.rec.Requests {
		q.run, q.done = r, make(chan struct{})
		if q.Req.AnswerWith == "" {
			formOf(q.Req) // saved before requests had their generic form
		}
		if pc := calls[q.Req.RequestID]; pc != nil && q.Origin == originCall {
			q.call, pc.req = pc, q
		}
		if !q.open() {
			close(q.done)
		}
	}
	r.a.inbox.add(r.rec.Requests...)
	for _, q := range r.rec.Requests {
		if !q.open() {
			continue
		}
		if seq, ok := sent[q.Req.RequestID]; ok && q.Req.Seq == 0 {
			q.Req.Seq = seq
		}
		if q.Req.Seq == 0 {
			q.Req.PendingCount = r.a.inbox.count() + 1
			r.outLocked(func(out *run) { out.sendLocked(EventInputRequest, q.Req, &q.Req.Seq) })
		}
		r.a.inbox.sent(q)
		r.armExpiryLocked(q)
	}
}

// oldHeld is a held request as runs saved it before runRecord.Requests.
type oldHeld struct {
	Key      string        `json:"key"`
	CallID   string        `json:"callId,omitempty"`
	Request  *InputRequest `json:"request"`
	Resolved *resolution   `json:"resolved,omitempty"`
}

// migrateRequests moves the requests a run saved before
// runRecord.Requests, on its calls and in its held list, to Requests: the
// calls' first, as the run listed its open requests then.
func (rec *runRecord) migrateRequests() {
	for _, pc := range rec.Pending {
		if pc.OldRequest != nil {
			rec.Requests = append(rec.Requests, &request{Req: pc.OldRequest, Origin: originCall, CallID: pc.Call.ID, Resolved: pc.OldResolved})
			pc.RequestID = pc.OldRequest.RequestID
			pc.OldRequest, pc.OldResolved = nil, nil
		}
	}
	for _, h := range rec.OldHeld {
		if h.Request != nil {
			rec.Requests = append(rec.Requests, &request{Req: h.Request, Origin: originHeld, Key: h.Key, CallID: h.CallID, Resolved: h.Resolved})
		}
	}
	rec.OldHeld = nil
}
