package agent

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/agentd/agentd/tools"
)

// runRecord is a run's durable state: everything needed to go on after a
// restart. Secrets are never in it.
type runRecord struct {
	ID         string      `json:"id"`
	SessionID  string      `json:"sessionId"`
	State      State       `json:"state"`
	StopReason StopReason  `json:"stopReason,omitempty"`
	Error      string      `json:"error,omitempty"`
	Policy     tools.Mode  `json:"policy,omitempty"`
	Class      string      `json:"class"`
	Prompt     string      `json:"prompt"`
	Context    *RunContext `json:"context,omitempty"`
	// Messages live in the run's journal; MessageCount says how many of
	// its lines this checkpoint stands for.
	Messages     []Message          `json:"-"`
	MessageCount int                `json:"messageCount"`
	Plan         []PlanEntry        `json:"plan,omitempty"`
	Explanation  string             `json:"explanation,omitempty"`
	Step         int                `json:"step"`
	Pending      []*pendingCall     `json:"pending,omitempty"`
	Seq          int64              `json:"seq"`
	Usage        Usage              `json:"usage"`
	Baseline     map[string]*string `json:"baseline,omitempty"`
	Changed      []string           `json:"changed,omitempty"`
	LastCalls    []string           `json:"lastCalls,omitempty"`
	Repeats      int                `json:"repeats,omitempty"`
	ToolErrors   int                `json:"toolErrors,omitempty"`
	FinalText    string             `json:"finalText,omitempty"`
	CreatedAt    time.Time          `json:"createdAt"`
	UpdatedAt    time.Time          `json:"updatedAt"`
}

// pendingCall is one tool call of the current step, from the model's request
// to its result.
type pendingCall struct {
	Call ToolCall `json:"call"`
	// Request is the input request the call waits on, if it needed one.
	Request  *InputRequest `json:"request,omitempty"`
	Resolved *resolution   `json:"resolved,omitempty"`
	// Approved means the call may run: the policy allowed it or a user did.
	Approved bool `json:"approved,omitempty"`
	// Confine is how a command runs (its sandbox profile and network), as
	// the policy decided it and the user approved it.
	Confine *tools.Confine `json:"confine,omitempty"`
	Result  *callResult    `json:"result,omitempty"`
}

// resolution is how an input request was closed. A secret's value is never
// stored here.
type resolution struct {
	Outcome  Outcome        `json:"outcome"`
	By       ResolvedBy     `json:"by"`
	Text     string         `json:"text,omitempty"`
	Options  []string       `json:"options,omitempty"`
	Reason   string         `json:"reason,omitempty"`
	Edited   *string        `json:"edited,omitempty"`
	Decision tools.Decision `json:"decision,omitempty"`
}

// callResult is what the model reads back for a call.
type callResult struct {
	Content string `json:"content"`
	IsError bool   `json:"isError,omitempty"`
	// Rejected marks a user's refusal, which is not a tool error.
	Rejected bool `json:"rejected,omitempty"`
}

// run is a live run. One goroutine drives it (drive); RPC handlers resolve
// its requests and wake it.
type run struct {
	a *Agent

	mu       sync.Mutex // guards rec, log, msgLog, saved, prepared, live, cancel, cause
	rec      *runRecord
	log      *os.File
	msgLog   *os.File
	saved    int                    // messages already in the journal
	prepared map[string]*tools.Call // by tool call id; lost on restart, prepared again
	live     map[string]openRequest // a running tool's questions, by request id
	cancel   context.CancelCauseFunc
	driving  bool
	secrets  map[string]string
	// red hides the secrets the user gave the run in everything that is
	// shown, sent or persisted: live output, results, messages.
	red *tools.Redactor

	env  *tools.Env
	wake chan struct{}
	done chan struct{} // closed when the drive goroutine returns
}

var (
	errCancelled = errors.New("cancelled by the user")
	errShutdown  = errors.New("daemon shutting down")
)

func (r *run) logger() *slog.Logger {
	return r.a.log.With("run_id", r.rec.ID, "session_id", r.rec.SessionID)
}

// The run's notifications. Each takes the next seq, is appended to the
// run's event log and goes to the listener, all under the run's lock, so
// that the order the front ends see is the order of seq.

func (r *run) update(u Update) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.updateLocked(u)
}

func (r *run) updateLocked(u Update) {
	p := UpdateParams{RunID: r.rec.ID, SessionID: r.rec.SessionID, Seq: r.nextSeqLocked(), Update: u}
	r.logEventLocked(EventUpdate, p.Seq, p)
	r.a.listener.Update(p)
}

func (r *run) setState(state State, stop StopReason, errText string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.setStateLocked(state, stop, errText)
}

func (r *run) setStateLocked(state State, stop StopReason, errText string) {
	r.rec.State, r.rec.StopReason, r.rec.Error = state, stop, errText
	r.sendStateLocked()
}

// sendStateLocked reports the run's state as its record holds it.
func (r *run) sendStateLocked() {
	p := RunState{RunID: r.rec.ID, SessionID: r.rec.SessionID, Seq: r.nextSeqLocked(), State: r.rec.State,
		StopReason: r.rec.StopReason, Error: r.rec.Error}
	r.logEventLocked(EventRunState, p.Seq, p)
	r.a.listener.RunState(p)
}

// sendRequestLocked sends an open request, stamping its seq and the number
// of requests open.
func (r *run) sendRequestLocked(req *InputRequest) {
	req.Seq = r.nextSeqLocked()
	req.PendingCount = r.a.openCount()
	r.logEventLocked(EventInputRequest, req.Seq, req)
	r.a.listener.InputRequest(*req)
}

func (r *run) sendResolvedLocked(requestID string, res *resolution) {
	p := InputResolved{RunID: r.rec.ID, SessionID: r.rec.SessionID, Seq: r.nextSeqLocked(), RequestID: requestID,
		Outcome: res.Outcome, By: res.By}
	r.logEventLocked(EventInputResolved, p.Seq, p)
	r.a.listener.InputResolved(p)
}

func (r *run) nextSeqLocked() int64 {
	r.rec.Seq++
	return r.rec.Seq
}

// logEventLocked appends a notification to the run's event log. A failure
// is logged: the front ends still hear of it, but a replay will lack it.
func (r *run) logEventLocked(kind EventKind, seq int64, v any) {
	if r.log == nil {
		return
	}
	data, err := json.Marshal(v)
	if err == nil {
		err = appendLine(r.log, Event{Seq: seq, Kind: kind, Params: data})
	}
	if err != nil {
		r.logger().Warn("appending event", "kind", kind, "err", err)
	}
}

// checkpointLocked persists the record after a step. A failure is logged:
// the run goes on in memory, and the log says its durability is lost.
func (r *run) checkpointLocked() { r.persistLocked(false) }

// durableLocked persists the record and syncs it: before a person is asked,
// after they answer, and when the run ends.
func (r *run) durableLocked() { r.persistLocked(true) }

func (r *run) persistLocked(durable bool) {
	r.rec.UpdatedAt = time.Now().UTC()
	if err := r.journalLocked(durable); err != nil {
		r.logger().Error("persisting run messages", "err", err)
		return // the record must not claim messages the journal lacks
	}
	if err := r.a.store.saveRun(r.rec, durable); err != nil {
		r.logger().Error("persisting run", "err", err)
	}
}

// journalLocked appends the messages added since the last checkpoint.
func (r *run) journalLocked(durable bool) error {
	if r.msgLog == nil || len(r.rec.Messages) == r.saved {
		r.rec.MessageCount = r.saved
		return nil
	}
	if err := appendMessages(r.msgLog, r.rec.Messages[r.saved:]); err != nil {
		return err
	}
	if durable {
		if err := r.msgLog.Sync(); err != nil {
			return err
		}
	}
	r.saved = len(r.rec.Messages)
	r.rec.MessageCount = r.saved
	return nil
}

func (r *run) checkpoint() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.checkpointLocked()
}

func (r *run) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// start launches the drive goroutine unless one is already running.
func (r *run) start() {
	r.mu.Lock()
	if r.driving {
		r.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	r.cancel, r.driving = cancel, true
	r.done = make(chan struct{})
	done := r.done
	r.mu.Unlock()
	r.a.wg.Add(1)
	go func() {
		defer r.a.wg.Done()
		defer close(done)
		r.drive(ctx)
		r.mu.Lock()
		r.driving = false
		r.mu.Unlock()
		cancel(nil)
	}()
}

// stop cancels the drive goroutine with cause and waits for it.
func (r *run) stop(cause error) {
	r.mu.Lock()
	cancel, done, driving := r.cancel, r.done, r.driving
	r.mu.Unlock()
	if !driving {
		return
	}
	cancel(cause)
	<-done
}

// drive runs the loop until the run finishes or is stopped: settle the
// current step's calls (waiting on people if need be), then ask the model
// for the next step.
func (r *run) drive(ctx context.Context) {
	for {
		if ctx.Err() != nil {
			r.stopped(ctx)
			return
		}
		var err error
		if r.hasPending() {
			err = r.settle(ctx)
		} else {
			var done bool
			done, err = r.step(ctx)
			if done {
				return
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				r.stopped(ctx)
			} else {
				r.fail(stopFor(err), err.Error())
			}
			return
		}
	}
}

// stopped handles the end of a drive by cancellation: a user's cancel ends
// the run; a shutdown leaves it as persisted, to be picked up again.
func (r *run) stopped(ctx context.Context) {
	if errors.Is(context.Cause(ctx), errCancelled) {
		r.finishCancelled()
		return
	}
	r.checkpoint()
}

func (r *run) hasPending() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.rec.Pending) > 0
}
