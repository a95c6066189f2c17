package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/agentd/agentd/tools"
)

// sessionRecord is a conversation: its turns across runs.
type sessionRecord struct {
	ID        string     `json:"id"`
	Title     string     `json:"title"`
	CreatedAt time.Time  `json:"createdAt"`
	UpdatedAt time.Time  `json:"updatedAt"`
	Policy    tools.Mode `json:"policy,omitempty"`
	LastRunID string     `json:"lastRunId,omitempty"`
	RunIDs    []string   `json:"runIds,omitempty"`
	State     State      `json:"state"`
	Messages  []Message  `json:"messages"`
}

// Run starts a run and returns at once; the run goes on in the background.
func (a *Agent) Run(ctx context.Context, p RunParams) (RunResult, error) {
	if strings.TrimSpace(p.Prompt) == "" {
		return RunResult{}, fmt.Errorf("%w: prompt is required", ErrInvalid)
	}
	if p.ApprovalPolicy != "" && !slices.Contains(tools.Modes, p.ApprovalPolicy) {
		return RunResult{}, fmt.Errorf("%w: approvalPolicy %q is not one of %s", ErrInvalid, p.ApprovalPolicy, tools.ModeList())
	}
	if err := a.checkModel(); err != nil {
		return RunResult{}, err
	}
	now := time.Now().UTC()
	a.mu.Lock()
	sess, err := a.sessionFor(p, now)
	if err != nil {
		a.mu.Unlock()
		return RunResult{}, err
	}
	policy := firstNonEmpty(p.ApprovalPolicy, sess.Policy, a.cfg.Policy)
	rec := &runRecord{ID: newID("r"), SessionID: sess.ID, State: StateRunning, Policy: policy,
		Class: classify(p.Prompt), Prompt: p.Prompt, Context: p.Context, CreatedAt: now, UpdatedAt: now}
	rec.Messages = append(slices.Clone(sess.Messages), Message{Role: RoleUser, Content: userMessage(a.cfg.Root, p)})
	r := a.newRun(rec)
	a.runs[rec.ID] = r
	sess.LastRunID, sess.State, sess.UpdatedAt = rec.ID, StateRunning, now
	sess.RunIDs = append(sess.RunIDs, rec.ID)
	a.mu.Unlock()

	if err := r.openLog(); err != nil {
		return RunResult{}, fmt.Errorf("opening run log: %w", err)
	}
	if err := a.saveSession(sess, false); err != nil {
		a.log.Error("persisting session", "err", err)
	}
	r.mu.Lock()
	r.setStateLocked(StateRunning, "", "")
	r.checkpointLocked()
	r.mu.Unlock()
	a.maintainCheckpoints() // undo.go: the store is current before the first command
	r.start()
	return RunResult{RunID: rec.ID, SessionID: sess.ID}, nil
}

// checkModel says what is missing for the model to be called.
func (a *Agent) checkModel() error {
	c := a.cfg
	c.Model = a.ModelConfig()
	return c.CheckModel()
}

// sessionFor returns the session to run in, new or continued. a.mu is held.
func (a *Agent) sessionFor(p RunParams, now time.Time) (*sessionRecord, error) {
	if p.SessionID == "" {
		s := &sessionRecord{ID: newID("s"), Title: titleOf(p.Prompt), CreatedAt: now, UpdatedAt: now, Policy: p.ApprovalPolicy}
		a.sessions[s.ID] = s
		return s, nil
	}
	s, ok := a.sessions[p.SessionID]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownSession, p.SessionID)
	}
	if r, ok := a.runs[s.LastRunID]; ok && !r.state().Finished() {
		return nil, fmt.Errorf("%w: session %s has run %s in state %s; cancel it or wait for it to finish", ErrSessionBusy, s.ID, r.rec.ID, r.state())
	}
	if p.ApprovalPolicy != "" {
		s.Policy = p.ApprovalPolicy
	}
	return s, nil
}

func (a *Agent) saveSession(s *sessionRecord, durable bool) error {
	a.mu.Lock()
	cp := *s
	cp.Messages = slices.Clone(s.Messages)
	cp.RunIDs = slices.Clone(s.RunIDs)
	a.mu.Unlock()
	return a.store.saveSession(&cp, durable)
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
	if err != nil {
		return err
	}
	if r == nil || r.state().Finished() {
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

// Pending lists the open input requests, oldest first.
func (a *Agent) Pending(runID string) []InputRequest {
	a.mu.Lock()
	runs := map[*run]bool{}
	for _, r := range a.requests {
		runs[r] = true
	}
	a.mu.Unlock()
	out := []InputRequest{}
	for r := range runs {
		if runID == "" || r.rec.ID == runID {
			out = append(out, r.openRequests()...)
		}
	}
	slices.SortFunc(out, func(x, y InputRequest) int { return x.CreatedAt.Compare(y.CreatedAt) })
	for i := range out {
		out[i].PendingCount = len(out)
	}
	return out
}

func (r *run) openRequests() []InputRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []InputRequest
	for _, o := range r.openLocked() {
		out = append(out, *o.req)
	}
	return out
}

// Events returns a run's notifications after a sequence number, in order,
// and the run's state.
func (a *Agent) Events(runID string, after int64) ([]Event, State, error) {
	r, err := a.liveRun(runID)
	if err != nil {
		return nil, "", err
	}
	var state State
	if r != nil {
		state = r.state()
	} else {
		state = a.diskState(runID)
	}
	evs, err := a.store.readEvents(runID, after)
	if err != nil {
		return nil, "", err
	}
	return evs, state, nil
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

// SessionRun is one run of a session as the editor saw it.
type SessionRun struct {
	RunID  string
	Prompt string
	State  State
	Events []Event
	// Rewound: a rewind cut this run from the conversation (rewind.go).
	Rewound bool
}

// SessionHistory returns a session's runs, oldest first, each with every
// notification it sent, so a front end can replay the conversation.
func (a *Agent) SessionHistory(sessionID string) ([]SessionRun, error) {
	a.mu.Lock()
	s, ok := a.sessions[sessionID]
	var ids []string
	if ok {
		ids = slices.Clone(s.RunIDs)
	}
	a.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownSession, sessionID)
	}
	out := make([]SessionRun, 0, len(ids))
	rewound := a.RewoundRuns(sessionID)
	for _, id := range ids {
		evs, err := a.store.readEvents(id, 0)
		if err != nil {
			return nil, err
		}
		run := SessionRun{RunID: id, Events: evs, Rewound: rewound[id]}
		if data, err := os.ReadFile(a.store.runPath(id)); err == nil {
			var rec struct {
				Prompt string `json:"prompt"`
				State  State  `json:"state"`
			}
			_ = json.Unmarshal(data, &rec)
			run.Prompt, run.State = rec.Prompt, rec.State
		}
		if r, err := a.liveRun(id); err == nil && r != nil {
			run.State = r.state()
		}
		out = append(out, run)
	}
	return out, nil
}

// Sessions lists the workspace's sessions, newest first.
func (a *Agent) Sessions() []SessionInfo {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]SessionInfo, 0, len(a.sessions))
	for _, s := range a.sessions {
		state := s.State
		if r, ok := a.runs[s.LastRunID]; ok {
			state = r.state()
		}
		if state == "" {
			state = StateIdle
		}
		out = append(out, SessionInfo{SessionID: s.ID, Title: s.Title, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt, State: state, LastRunID: s.LastRunID})
	}
	slices.SortFunc(out, func(x, y SessionInfo) int { return y.UpdatedAt.Compare(x.UpdatedAt) })
	return out
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

func titleOf(prompt string) string {
	t := strings.Join(strings.Fields(prompt), " ")
	return truncate(t, 80)
}

func firstNonEmpty[T ~string](s ...T) T {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
