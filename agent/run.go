package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/agentd/agentd/tools"
)

// runRecord is a run's durable state: everything needed to go on after a
// restart. Secrets are never in it.
type runRecord struct {
	ID         string     `json:"id"`
	SessionID  string     `json:"sessionId"`
	State      State      `json:"state"`
	StopReason StopReason `json:"stopReason,omitempty"`
	Error      string     `json:"error,omitempty"`
	// PauseReason says why a paused run is paused.
	PauseReason PauseReason `json:"pauseReason,omitempty"`
	Policy      tools.Mode  `json:"policy,omitempty"`
	Model       string      `json:"model,omitempty"`           // the session's model now
	Effort      string      `json:"reasoningEffort,omitempty"` // and its reasoning effort
	Class       string      `json:"class"`
	Prompt      string      `json:"prompt"`
	Context     *RunContext `json:"context,omitempty"`
	// Asked are the settings a queued run asked for, which become the
	// session's when it starts.
	Asked *SessionSettings `json:"asked,omitempty"`
	// Steered counts the user's steers (steer.go) the model has been given.
	Steered int        `json:"steered,omitempty"`
	Images  []ImageRef `json:"images,omitempty"`
	// Parent is set on a subagent's run (subagent.go): the run and the
	// task call that started it. Tools are the tools it was given, Read
	// the files it read, for its parent.
	Parent *parentRef `json:"parent,omitempty"`
	Tools  []string   `json:"tools,omitempty"`
	Read   []string   `json:"read,omitempty"`
	// Subagents lists the subagents the run started; SubUsage is each
	// one's tokens as last reported, which Usage counts too.
	Subagents []string         `json:"subagents,omitempty"`
	SubUsage  map[string]Usage `json:"subUsage,omitempty"`
	// Messages and Baseline go to the run's journal as they grow;
	// MessageCount says how many messages a checkpoint stands for.
	Messages     []Message      `json:"-"`
	MessageCount int            `json:"messageCount"`
	Plan         []PlanEntry    `json:"plan,omitempty"`
	Explanation  string         `json:"explanation,omitempty"`
	Step         int            `json:"step"`
	Pending      []*pendingCall `json:"pending,omitempty"`
	// Requests are the run's input requests that are saved (inbox.go):
	// its step's and its held ones, open and answered, in the order they
	// were opened.
	Requests []*request `json:"requests,omitempty"`
	// OldHeld is how runs saved their held requests before Requests; a
	// restore moves them there (migrateRequests).
	OldHeld []*oldHeld `json:"held,omitempty"`
	// mcp is the MCP tools the run took at its start (not persisted: taken
	// again after a restart).
	mcp        *toolSet
	Seq        int64              `json:"seq"`
	Usage      Usage              `json:"usage"`
	Baseline   map[string]*string `json:"-"`
	Changed    []string           `json:"changed,omitempty"`
	LastCalls  []string           `json:"lastCalls,omitempty"`
	Repeats    int                `json:"repeats,omitempty"`
	ToolErrors int                `json:"toolErrors,omitempty"`
	FinalText  string             `json:"finalText,omitempty"`
	CreatedAt  time.Time          `json:"createdAt"`
	UpdatedAt  time.Time          `json:"updatedAt"`
}

// pendingCall is one tool call of the current step, from the model's request
// to its result.
type pendingCall struct {
	Call ToolCall `json:"call"`
	// RequestID names the input request the call waits on, if it needed
	// one (runRecord.Requests); req is that request.
	RequestID string `json:"requestId,omitempty"`
	req       *request
	// OldRequest and OldResolved are how runs saved a call's request
	// before Requests; a restore moves them there (migrateRequests).
	OldRequest  *InputRequest `json:"request,omitempty"`
	OldResolved *resolution   `json:"resolved,omitempty"`
	// Approved means the call may run: the policy allowed it or a user did.
	Approved bool `json:"approved,omitempty"`
	// Child is the subagent a task call runs (its run id), given when the
	// call is routed; Started marks it launched (task.go).
	Child string `json:"child,omitempty"`
	// Started is when a call that must not run twice (a command) was
	// about to start: it is persisted, synced, before the call runs, so
	// a restart that finds it without a Result knows the call was cut
	// off and does not run it again. Proc is the process it started, to
	// be reaped then.
	Started *time.Time    `json:"started,omitempty"`
	Proc    *tools.ProcID `json:"proc,omitempty"`
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
	Option   string         `json:"option,omitempty"` // the first option's id (replyForm)
	Reason   string         `json:"reason,omitempty"`
	Edited   *string        `json:"edited,omitempty"`
	Decision tools.Decision `json:"decision,omitempty"`
}

// callResult is what the model reads back for a call.
type callResult struct {
	Content string `json:"content"`
	IsError bool   `json:"isError,omitempty"`
	// Image is a picture the tool handed the model (stored): it follows
	// the step's results in a user message.
	Image *ImageRef `json:"image,omitempty"`
	// Rejected marks a user's refusal, which is not a tool error.
	Rejected bool `json:"rejected,omitempty"`
	// Shown is what the editors show under the call when it differs from
	// Content (the model's words): sent once, as the call ends.
	Shown string `json:"-"`
}

// run is a live run. One goroutine drives it (drive); RPC handlers resolve
// its requests and wake it.
type run struct {
	a *Agent

	mu       sync.Mutex // guards every field below but env, wake and done
	rec      *runRecord
	log      *os.File
	backlog  []byte // event lines the log could not take yet, in order
	journal  *journal
	saved    int      // messages already in the journal
	newBase  []string // baseline files not yet in the journal
	headed   bool     // the run's header is written
	unsaved  bool     // a checkpoint failed: memory is ahead of the disk
	unsent   []*request
	ending   *ending                      // the end a failed checkpoint kept from being final
	prepared map[*pendingCall]*tools.Call // lost on restart, prepared again
	cancel   context.CancelCauseFunc
	driving  bool
	// steers are the user's words for the run (steer.go), the first
	// rec.Steered of them given to the model; over: the run is ending,
	// and takes no more.
	steers  []steer
	over    bool
	secrets map[string]string
	cut     *cut // how the conversation is compacted, kept while it fits
	fixed   int  // what the last request's system message and tools took, in bytes
	// red hides the secrets the user gave the run in everything that is
	// shown, sent or persisted: live output, results, messages.
	red *tools.Redactor
	// edits is what the current reply's edits left for the language
	// servers to check; diagBefore the problems known in each file before
	// (language.go).
	edits      stepDiagnostics
	diagBefore map[string][]tools.Diagnostic
	// sub links a subagent to its parent run (subagent.go); nil for a
	// session's own runs. tasks are the step's task calls this drive
	// awaits (task.go); waiting the subagents waiting on the user.
	sub   *subLink
	tasks map[*pendingCall]*taskWait
	// cancelOnStart are subagents cancelled while their task call was
	// being started (task.go cancelWaiting): cancelled once they are.
	cancelOnStart map[string]bool
	waiting       map[string]bool
	// ended is closed once the run's end is saved (finish).
	ended     chan struct{}
	endClosed bool

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
	if r.sub != nil { // a subagent's updates go out in its parent's run
		r.outLocked(func(out *run) { out.updateLocked(r.sub.wrap(Subagent{Update: &u})) })
		return
	}
	p := UpdateParams{RunID: r.rec.ID, SessionID: r.rec.SessionID, Update: u}
	if r.sendLocked(EventUpdate, &p, &p.Seq) {
		r.a.listener.Update(p)
	}
}

func (r *run) setState(state State, stop StopReason, errText string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.setStateLocked(state, stop, errText)
}

func (r *run) setStateLocked(state State, stop StopReason, errText string) {
	r.rec.State, r.rec.StopReason, r.rec.Error = state, stop, errText
	if state != StatePaused {
		r.rec.PauseReason = ""
	}
	r.sendStateLocked()
}

// pauseLocked pauses the run, saying why.
func (r *run) pauseLocked(why PauseReason, errText string) {
	r.rec.PauseReason = why
	r.setStateLocked(StatePaused, "", errText)
}

// sendStateLocked reports the run's state as its record holds it.
func (r *run) sendStateLocked() {
	if r.sub != nil {
		r.subagentStateLocked()
		return
	}
	p := RunState{RunID: r.rec.ID, SessionID: r.rec.SessionID, State: r.rec.State,
		StopReason: r.rec.StopReason, Error: r.rec.Error, PauseReason: r.rec.PauseReason}
	if r.sendLocked(EventRunState, &p, &p.Seq) {
		r.a.listener.RunState(p)
	}
}

// sendLocked stamps the next seq on a notification (p, whose seq field is
// seq) and logs it; the caller then hands it to the listener. The seq is
// taken only once the notification is encoded, so one that cannot be is
// dropped whole (and the daemon's log says so) instead of leaving a gap.
// A line the event log cannot take waits in the backlog, in order, and
// goes in with the next one that can: the notification is sent all the
// same, and the run's next checkpoint fails until the log has it.
func (r *run) sendLocked(kind EventKind, p any, seq *int64) bool {
	*seq = r.rec.Seq + 1
	data, err := json.Marshal(p)
	if err != nil {
		*seq = 0
		r.logger().Error("dropping a notification that does not encode", "kind", kind, "err", err)
		return false
	}
	r.rec.Seq = *seq
	r.backlog = appendEventLine(r.backlog, *seq, kind, data)
	if err := r.flushEventsLocked(); err != nil {
		r.logger().Warn("appending to the event log", "kind", kind, "seq", *seq, "err", err)
	}
	return true
}

// appendEventLine appends an event log line (an Event) to buf.
func appendEventLine(buf []byte, seq int64, kind EventKind, params []byte) []byte {
	buf = append(buf, `{"seq":`...)
	buf = strconv.AppendInt(buf, seq, 10)
	buf = append(buf, `,"kind":`...)
	buf = strconv.AppendQuote(buf, string(kind))
	buf = append(buf, `,"params":`...)
	buf = append(buf, params...)
	return append(buf, "}\n"...)
}

// flushEventsLocked writes the backlog to the event log. What a failed
// write did take is not written again.
func (r *run) flushEventsLocked() error {
	if len(r.backlog) == 0 {
		return nil
	}
	if r.log == nil {
		return fmt.Errorf("%w: the event log of run %s is not open", ErrNotSaved, r.rec.ID)
	}
	n, err := r.log.Write(r.backlog)
	r.backlog = r.backlog[n:]
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotSaved, err)
	}
	r.backlog = nil
	return nil
}

// persistLocked checkpoints the run: one line appended to its journal with
// one write, holding the messages and baseline files added since the last
// checkpoint and the rest of the run's state; durable syncs it, before a
// person is asked, after they answer, before a command starts and when the
// run ends. A failed checkpoint leaves the journal as it was and is an
// error wrapping ErrNotSaved that names the file and the cause; the next
// checkpoint writes everything this one would have.
func (r *run) persistLocked(durable bool) error {
	if err := r.flushEventsLocked(); err != nil {
		r.unsaved = true
		return err
	}
	if r.journal == nil {
		r.unsaved = true
		return fmt.Errorf("%w: the journal of run %s is not open", ErrNotSaved, r.rec.ID)
	}
	r.rec.UpdatedAt = time.Now().UTC()
	r.rec.MessageCount = len(r.rec.Messages)
	e := journalEntry{Run: r.rec, Messages: r.rec.Messages[r.saved:]}
	if len(r.newBase) > 0 {
		e.Baseline = make(map[string]*string, len(r.newBase))
		for _, p := range r.newBase {
			e.Baseline[p] = r.rec.Baseline[p]
		}
	}
	line, err := encodeEntry(&e)
	if err != nil {
		r.unsaved = true
		return fmt.Errorf("%w: encoding run %s: %w", ErrNotSaved, r.rec.ID, err)
	}
	if err := r.journal.append(line, durable); err != nil {
		r.unsaved = true
		return fmt.Errorf("%w: %w", ErrNotSaved, err)
	}
	r.saved, r.newBase = len(r.rec.Messages), nil
	if !r.headed {
		// A new run: its header makes it found again after a restart.
		if err := r.a.store.saveRun(r.rec, false); err != nil {
			r.unsaved = true
			return fmt.Errorf("%w: %w", ErrNotSaved, err)
		}
		r.headed = true
	}
	r.unsaved = false
	return nil
}

// checkpointLocked persists the run after a step. A failure is logged and
// left for the next checkpoint, or for whoever must know (drive pauses).
func (r *run) checkpointLocked() {
	if err := r.persistLocked(false); err != nil {
		r.logger().Error("persisting run", "err", err)
	}
}

func (r *run) checkpoint() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.checkpointLocked()
}

// begin persists a new run before anyone hears of it: a run that cannot be
// saved is not started.
func (r *run) begin() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.persistLocked(false); err != nil {
		return err
	}
	r.sendStateLocked()
	return nil
}

// abandon forgets a run that could not begin.
func (a *Agent) abandon(r *run) {
	a.mu.Lock()
	delete(a.runs, r.rec.ID)
	a.mu.Unlock()
	r.mu.Lock()
	r.closeLogLocked()
	r.mu.Unlock()
}

// pauseUnsaved stops a run whose state could not be saved: it is paused,
// in memory, where it stands, and the editor is told which file could not
// be written and why. Nothing is lost: agent/resume saves it and goes on,
// and a restart before that finds it at its last checkpoint.
func (r *run) pauseUnsaved(err error) {
	r.logger().Error("run paused: its state could not be saved", "err", err)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pauseLocked(PauseNotSaved, err.Error()+" (agent/resume goes on once the state directory can be written)")
}

// catchUpLocked is what a resumed run does first: save what a failed
// checkpoint left unsaved, then send the requests it kept from being
// asked. An error means the run pauses again.
func (r *run) catchUpLocked() error {
	if r.unsaved {
		if err := r.persistLocked(false); err != nil {
			return err
		}
	}
	if len(r.unsent) > 0 {
		return r.askLocked(r.unsent)
	}
	return nil
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
// for the next step. A checkpoint that cannot be written pauses the run.
func (r *run) drive(ctx context.Context) {
	r.mu.Lock()
	err := r.catchUpLocked()
	end := r.ending
	r.mu.Unlock()
	if err != nil {
		r.pauseUnsaved(err)
		return
	}
	if end != nil {
		r.finish(end.state, end.stop, end.err)
		return
	}
	for {
		if ctx.Err() != nil {
			r.stopped(ctx)
			return
		}
		if r.hasPending() {
			err = r.settle(ctx)
		} else {
			var done bool
			done, err = r.step(ctx)
			if done {
				return
			}
		}
		switch {
		case err == nil:
			continue
		case ctx.Err() != nil:
			r.stopped(ctx)
		case errors.Is(err, ErrNotSaved):
			r.pauseUnsaved(err)
		default:
			r.fail(stopFor(err), err.Error())
		}
		return
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
