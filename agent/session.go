package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/agentd/agentd/tools"
)

// sessionRecord is a conversation: its turns across runs, and the settings
// its runs use.
type sessionRecord struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	// The session's own choices; "" follows the daemon's configuration.
	Policy    tools.Mode `json:"policy,omitempty"`
	Model     string     `json:"model,omitempty"`
	Effort    string     `json:"reasoningEffort,omitempty"`
	LastRunID string     `json:"lastRunId,omitempty"`
	RunIDs    []string   `json:"runIds,omitempty"`
	State     State      `json:"state"`
	Messages  []Message  `json:"messages"`
}

// Run starts a run and returns at once; the run goes on in the background.
func (a *Agent) Run(ctx context.Context, p RunParams) (RunResult, error) {
	if strings.TrimSpace(p.Prompt) == "" && len(p.Images) == 0 {
		return RunResult{}, fmt.Errorf("%w: prompt is required", ErrInvalid)
	}
	if strings.TrimSpace(p.Prompt) == "" {
		p.Prompt = imageOnlyPrompt
	}
	if err := checkSettings(p.Model, p.ReasoningEffort, p.ApprovalPolicy); err != nil {
		return RunResult{}, err
	}
	if err := a.checkModel(); err != nil {
		return RunResult{}, err
	}
	if p.SessionID != "" {
		if _, err := a.sessionRec(p.SessionID); err != nil {
			return RunResult{}, err
		}
	}
	// The run keeps what the user typed; the model reads the expansion.
	toModel := p
	var err error
	if toModel.Prompt, err = a.expandPrompt(p.Prompt); err != nil {
		return RunResult{}, err
	}
	imgs, err := a.promptImages(ctx, a.Effective(SessionSettings{Model: p.Model}).Model, p.Images)
	if err != nil {
		return RunResult{}, err
	}
	now := time.Now().UTC()
	a.mu.Lock()
	sess, busy, err := a.sessionFor(p, now)
	if err != nil {
		a.mu.Unlock()
		return RunResult{}, err
	}
	rec := &runRecord{ID: newID("r"), SessionID: sess.ID, State: StateQueued,
		Class: classify(toModel.Prompt), Prompt: p.Prompt, Context: p.Context, Images: imgs, CreatedAt: now, UpdatedAt: now}
	if busy {
		// Its settings become the session's when it starts, not while the
		// run before it still works with the session's.
		rec.Asked = &SessionSettings{Model: strings.TrimSpace(p.Model), ReasoningEffort: p.ReasoningEffort, ApprovalPolicy: p.ApprovalPolicy}
	}
	if p.MCPServers != nil {
		a.mcp.SetSession(sess.ID, p.MCPServers) // before the run takes its tools
	}
	r := a.newRun(rec)
	a.runs[rec.ID] = r
	sess.RunIDs = append(sess.RunIDs, rec.ID)
	if !busy {
		a.takeTurnLocked(r, sess, toModel.Prompt, now)
	}
	a.mu.Unlock()

	if err := r.openLog(); err != nil {
		a.abandon(r)
		return RunResult{}, err
	}
	if err := a.store.markOpen(rec.ID); err != nil {
		a.log.Error("persisting run", "err", err)
	}
	if err := a.saveSession(sess, false); err != nil {
		a.log.Error("persisting session", "err", err)
	}
	if err := r.begin(); err != nil {
		a.abandon(r)
		return RunResult{}, err
	}
	if busy {
		// The run before it may have ended meanwhile.
		a.startQueued(sess.ID)
		return RunResult{RunID: rec.ID, SessionID: sess.ID, Images: imgs, Queued: true}, nil
	}
	a.maintainCheckpoints() // undo.go: the store is current before the first command
	r.start()
	return RunResult{RunID: rec.ID, SessionID: sess.ID, Images: imgs}, nil
}

// takeTurnLocked makes r the session's run: the conversation so far and
// the prompt, and the session's settings (with those the run asked for).
// a.mu is held; r is not started yet.
func (a *Agent) takeTurnLocked(r *run, s *sessionRecord, toModel string, now time.Time) {
	rec := r.rec
	if rec.Asked != nil {
		s.apply(*rec.Asked)
	}
	set := a.Effective(s.settings())
	user := a.userMessageLocked(RunParams{Prompt: toModel, Context: rec.Context})
	if set.ApprovalPolicy == tools.ModePlan {
		user += "\n\n" + planModeNote
	}
	r.mu.Lock()
	rec.State, rec.Asked = StateRunning, nil
	rec.Policy, rec.Model, rec.Effort = set.ApprovalPolicy, set.Model, set.ReasoningEffort
	rec.Messages = append(slices.Clone(s.Messages), Message{Role: RoleUser, Content: user, Images: rec.Images})
	r.mu.Unlock()
	s.LastRunID, s.State, s.UpdatedAt = rec.ID, StateRunning, now
}

// checkModel says what is missing for the model to be called.
func (a *Agent) checkModel() error {
	c := a.cfg
	c.Model = a.ModelConfig()
	return c.CheckModel()
}

// sessionFor returns the session to run in, new or continued (already
// read by sessionRec); busy reports that a run of it has not finished (or
// waits its turn), so that the new one queues. a.mu is held.
func (a *Agent) sessionFor(p RunParams, now time.Time) (*sessionRecord, bool, error) {
	if p.SessionID == "" {
		s := &sessionRecord{ID: newID("s"), Title: titleOf(p.Prompt), CreatedAt: now, UpdatedAt: now,
			Policy: p.ApprovalPolicy, Model: strings.TrimSpace(p.Model), Effort: p.ReasoningEffort}
		a.sessions[s.ID] = s
		return s, false, nil
	}
	s, ok := a.sessions[p.SessionID]
	if !ok {
		return nil, false, fmt.Errorf("%w: %s", ErrUnknownSession, p.SessionID)
	}
	return s, a.sessionBusyLocked(s.ID), nil
}

// sessionRec returns a session's record, reading it on first use: start-up
// reads none.
func (a *Agent) sessionRec(id string) (*sessionRecord, error) {
	a.mu.Lock()
	s, ok := a.sessions[id]
	a.mu.Unlock()
	if ok {
		return s, nil
	}
	rec, err := a.store.loadSession(id)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	if s, ok := a.sessions[id]; ok {
		a.mu.Unlock()
		return s, nil
	}
	a.sessions[id] = rec
	a.mu.Unlock()
	a.healIndex(rec)
	return rec, nil
}

// healIndex brings a session's index line up to its record, which a crash
// between the two writes may have left behind. It runs as a save does, so
// it never puts back an older summary than a save's.
func (a *Agent) healIndex(s *sessionRecord) {
	a.saveMu.Lock()
	defer a.saveMu.Unlock()
	a.mu.Lock()
	sum := summaryOf(s)
	a.mu.Unlock()
	if cur, ok := a.index.get(sum.ID); !ok || !cur.same(sum) {
		a.index.put(sum)
	}
}

// saveSession writes a session's record, then its line in the index.
// Saves are serialized so the last written is the latest.
func (a *Agent) saveSession(s *sessionRecord, durable bool) error {
	a.saveMu.Lock()
	defer a.saveMu.Unlock()
	a.mu.Lock()
	cp := *s
	cp.Messages = slices.Clone(s.Messages)
	cp.RunIDs = slices.Clone(s.RunIDs)
	a.mu.Unlock()
	if err := a.store.saveSession(&cp, durable); err != nil {
		return err
	}
	a.index.put(summaryOf(&cp))
	return nil
}

func (r *run) state() State {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rec.State
}

// Cancel ends a run as cancelled: open requests resolve as cancelled, the
// model call and any running tool stop.
func (a *Agent) Cancel(ctx context.Context, runID string) error {
	r, err := a.liveRun(runID)
	if errors.Is(err, ErrUnknownRun) {
		if found, cerr := a.cancelWaitingTask(runID); found {
			return cerr // a subagent not started yet (task.go)
		}
	}
	if err != nil {
		return err
	}
	if r == nil || r.state().Finished() {
		return nil
	}
	if a.dropQueued(r) {
		return nil
	}
	r.mu.Lock()
	driving := r.driving
	r.mu.Unlock()
	if driving {
		r.stop(errCancelled)
		if !r.state().Finished() {
			r.finishCancelled() // the drive ended just before the cancel
		}
		return nil
	}
	r.finishCancelled()
	return nil
}

// Resume continues a run that a restart paused mid-step.
func (a *Agent) Resume(ctx context.Context, runID string) error {
	r, err := a.liveRun(runID)
	if err != nil {
		return err
	}
	if r == nil || r.state() != StatePaused {
		return fmt.Errorf("%w: run %s is not paused", ErrRunNotPaused, runID)
	}
	r.setState(StateRunning, "", "")
	r.start()
	return nil
}

// liveRun returns the in-memory run, nil for a finished one on disk, or
// ErrUnknownRun.
func (a *Agent) liveRun(runID string) (*run, error) {
	if runID == "" {
		return nil, fmt.Errorf("%w: runId is required", ErrInvalid)
	}
	a.mu.Lock()
	r, ok := a.runs[runID]
	a.mu.Unlock()
	if ok {
		return r, nil
	}
	if _, err := os.Stat(a.store.runPath(runID)); err == nil && validID(runID) {
		return nil, nil
	}
	return nil, fmt.Errorf("%w: %s", ErrUnknownRun, runID)
}

// Pending lists the open input requests, oldest first, as they were sent.
func (a *Agent) Pending(runID string) []InputRequest { return a.inbox.pending(runID) }

// Events returns a run's notifications after a sequence number, in order,
// at most limit of them (0: all), whether more follow, and the run's state.
func (a *Agent) Events(runID string, after int64, limit int) ([]Event, State, bool, error) {
	if limit < 0 {
		return nil, "", false, fmt.Errorf("%w: limit must not be negative", ErrInvalid)
	}
	r, err := a.liveRun(runID)
	if err != nil {
		return nil, "", false, err
	}
	var state State
	if r != nil {
		state = r.state()
	} else {
		state = a.diskState(runID)
	}
	evs := []Event{}
	more := false
	err = a.store.scanEvents(runID, after, func(ev Event) bool {
		if limit > 0 && len(evs) == limit {
			more = true
			return false
		}
		evs = append(evs, ev)
		return true
	})
	if err != nil {
		return nil, "", false, err
	}
	return evs, state, more, nil
}

func (a *Agent) diskState(runID string) State {
	data, err := os.ReadFile(a.store.runPath(runID))
	if err != nil {
		return ""
	}
	var rec struct {
		State State `json:"state"`
	}
	_ = json.Unmarshal(data, &rec)
	return rec.State
}

// newID makes a sortable, unique id with a prefix.
func newID(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s_%x%s", prefix, time.Now().UnixMilli(), hex.EncodeToString(b[:]))
}

// validID guards file lookups against ids that are paths.
func validID(id string) bool {
	return id != "" && !strings.ContainsAny(id, `/\.`) && len(id) < 100
}

func firstNonEmpty[T ~string](s ...T) T {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
