package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentd/agentd/tools"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// HistoryParams asks for a page of a session's runs: the limit runs before
// BeforeRunID (the latest when it is empty), oldest first.
type HistoryParams struct {
	SessionID   string `json:"sessionId"`
	BeforeRunID string `json:"beforeRunId,omitempty"`
	Limit       int    `json:"limit,omitempty"`
}

// History is a page of a session's conversation: enough to restore its view
// with one request, and a cursor to the runs before it.
type History struct {
	Session SessionInfo  `json:"session"`
	Runs    []RunHistory `json:"runs"`
	// EarlierRuns counts the session's runs before this page; ask for them
	// with BeforeRunID set to the first run here.
	EarlierRuns int `json:"earlierRuns"`
	// Pending are the session's open input requests, oldest first.
	Pending []InputRequest `json:"pending"`
	// Processes are the session's background processes, running or not.
	Processes []tools.ProcessInfo `json:"processes"`
}

// RunSummary is one run of a session as its record keeps it.
type RunSummary struct {
	RunID   string      `json:"runId"`
	Prompt  string      `json:"prompt"`
	Context *RunContext `json:"context,omitempty"`
	// Images are the prompt's (agent/image returns their bytes).
	Images     []ImageRef `json:"images,omitempty"`
	State      State      `json:"state"`
	StopReason StopReason `json:"stopReason,omitempty"`
	Error      string     `json:"error,omitempty"`
	// Answer is the beginning of the run's final answer (at most
	// AnswerPreview bytes, cut with "…"), for a collapsed view: the whole
	// is in the run's result update.
	Answer    string    `json:"answer,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	// Settings are the ones the run uses (used, once finished).
	Settings SessionSettings `json:"settings"`
	Usage    *Usage          `json:"usage,omitempty"`
	// Rewound: a rewind cut this run from the conversation the model sees
	// (agent/rewind); it stays here as history.
	Rewound bool `json:"rewound,omitempty"`
}

// RunHistory is a run and what it reported.
type RunHistory struct {
	RunSummary
	// Events are the run's notifications from the first, as Agent.Events
	// returns them. A page carries a bounded amount: when MoreEvents is
	// set, the rest follow the last one here (Events with its seq).
	Events     []Event `json:"events"`
	MoreEvents bool    `json:"moreEvents,omitempty"`
}

// Paging bounds: runs per page, and about the bytes a page carries (prompts
// and events), so that restoring a long session sends a screenful, not
// megabytes.
const (
	DefaultHistoryRuns = 20
	MaxHistoryRuns     = 100
	historyBytes       = 256 << 10
	AnswerPreview      = 1000
)

// History returns a page of a session's runs with their events, within a
// budget: the runs themselves, newest first, as many as fit (a prompt may
// quote whole files: a page ends early rather than swell), then their events
// in what is left, newest run first, older runs coming with fewer of them
// (or none) and MoreEvents set.
func (a *Agent) History(ctx context.Context, p HistoryParams) (History, error) {
	if p.SessionID == "" {
		return History{}, fmt.Errorf("%w: sessionId is required", ErrInvalid)
	}
	if p.Limit < 0 {
		return History{}, fmt.Errorf("%w: limit must not be negative", ErrInvalid)
	}
	limit := min(cmp.Or(p.Limit, DefaultHistoryRuns), MaxHistoryRuns)
	s, err := a.sessionRec(p.SessionID)
	if err != nil {
		return History{}, err
	}
	a.mu.Lock()
	ids := slices.Clone(s.RunIDs)
	sum := summaryOf(s)
	a.mu.Unlock()
	end := len(ids)
	if p.BeforeRunID != "" {
		if end = slices.Index(ids, p.BeforeRunID); end < 0 {
			return History{}, fmt.Errorf("%w: %s is not a run of session %s", ErrUnknownRun, p.BeforeRunID, s.ID)
		}
	}
	start := max(0, end-limit)
	rewound := a.RewoundRuns(s.ID)
	h := History{Session: a.infoOf(sum), Pending: a.sessionPending(s.ID), Runs: []RunHistory{},
		Processes: a.background.List(s.ID)}
	if h.Processes == nil {
		h.Processes = []tools.ProcessInfo{}
	}
	// First the runs themselves, newest first, as many as fit; then their
	// events, newest run first, in what is left.
	budget := historyBytes
	first := end
	for i := end - 1; i >= start; i-- {
		if err := ctx.Err(); err != nil {
			return History{}, err
		}
		run, err := a.runSummary(ids[i])
		if err != nil {
			return History{}, err
		}
		run.Rewound = rewound[run.RunID]
		if size := run.size(); size <= budget || first == end {
			budget = max(0, budget-size)
		} else {
			break // this run starts the next page
		}
		h.Runs = append(h.Runs, RunHistory{RunSummary: run, Events: []Event{}})
		first = i
	}
	for i := range h.Runs {
		if err := a.fillEvents(&h.Runs[i], &budget); err != nil {
			return History{}, err
		}
	}
	slices.Reverse(h.Runs)
	h.EarlierRuns = first
	return h, nil
}

// fillEvents adds as many of the run's events as the budget allows.
func (a *Agent) fillEvents(h *RunHistory, budget *int) error {
	return a.store.scanEvents(h.RunID, 0, func(ev Event) bool {
		size := len(ev.Params) + 64
		if size > *budget {
			h.MoreEvents = true
			*budget = 0
			return false
		}
		*budget -= size
		h.Events = append(h.Events, ev)
		return true
	})
}

// size is about what the run takes on the wire, events aside.
func (s RunSummary) size() int {
	n := len(s.Prompt) + len(s.Answer) + len(s.Error) + 512
	if s.Context != nil {
		for _, f := range s.Context.Files {
			n += len(f) + 4
		}
		if s.Context.Selection != nil {
			n += len(s.Context.Selection.Text) + len(s.Context.Selection.Path)
		}
		for _, at := range s.Context.Attachments {
			n += len(at.Name) + len(at.Text) + 32
		}
	}
	return n
}

// runSummary reads a run as it is now: from memory while it is live, else
// from its record.
func (a *Agent) runSummary(id string) (RunSummary, error) {
	a.mu.Lock()
	r, live := a.runs[id]
	a.mu.Unlock()
	if live {
		r.mu.Lock()
		defer r.mu.Unlock()
		return summaryOfRun(r.rec), nil
	}
	if !validID(id) {
		return RunSummary{}, fmt.Errorf("%w: %s", ErrUnknownRun, id)
	}
	data, err := os.ReadFile(a.store.runPath(id))
	if errors.Is(err, fs.ErrNotExist) {
		// A run whose record was lost still has a place in its session.
		return RunSummary{RunID: id, State: StateFailed, Error: "the run's record is missing"}, nil
	}
	if err != nil {
		return RunSummary{}, fmt.Errorf("reading run %s: %w", id, err)
	}
	var rec runRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return RunSummary{}, fmt.Errorf("run %s: %w", id, err)
	}
	return summaryOfRun(&rec), nil
}

func summaryOfRun(rec *runRecord) RunSummary {
	s := RunSummary{RunID: rec.ID, Prompt: rec.Prompt, Context: rec.Context, Images: rec.Images, State: rec.State, StopReason: rec.StopReason,
		Error: rec.Error, Answer: preview(rec.FinalText, AnswerPreview), CreatedAt: rec.CreatedAt, UpdatedAt: rec.UpdatedAt,
		Settings: SessionSettings{Model: rec.Model, ReasoningEffort: rec.Effort, ApprovalPolicy: rec.Policy}}
	if rec.Usage != (Usage{}) {
		u := rec.Usage
		s.Usage = &u
	}
	return s
}

// preview cuts s to at most n bytes, at a rune boundary, marking the cut.
func preview(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// sessionPending lists the session's open requests, oldest first.
func (a *Agent) sessionPending(sessionID string) []InputRequest {
	out := []InputRequest{}
	for _, req := range a.Pending("") {
		if req.SessionID == sessionID {
			out = append(out, req)
		}
	}
	return out
}

// SessionRun is one run of a session with every notification it sent.
type SessionRun struct {
	RunSummary
	Events []Event
}

// SessionHistory calls each with the session's runs, oldest first, each
// with every notification it sent, so a front end can replay the whole
// conversation one run at a time.
func (a *Agent) SessionHistory(sessionID string, each func(SessionRun) error) error {
	s, err := a.sessionRec(sessionID)
	if err != nil {
		return err
	}
	a.mu.Lock()
	ids := slices.Clone(s.RunIDs)
	a.mu.Unlock()
	rewound := a.RewoundRuns(sessionID)
	for _, id := range ids {
		sum, err := a.runSummary(id)
		if err != nil {
			return err
		}
		sum.Rewound = rewound[id]
		run := SessionRun{RunSummary: sum}
		if err := a.store.scanEvents(id, 0, func(ev Event) bool { run.Events = append(run.Events, ev); return true }); err != nil {
			return err
		}
		if err := each(run); err != nil {
			return err
		}
	}
	return nil
}

// Sessions lists the workspace's sessions, newest first, from the session
// index: no session record is read.
func (a *Agent) Sessions() []SessionInfo {
	sums := a.index.all()
	out := make([]SessionInfo, 0, len(sums))
	for _, s := range sums {
		out = append(out, a.infoOf(s))
	}
	slices.SortFunc(out, func(x, y SessionInfo) int {
		if c := y.UpdatedAt.Compare(x.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(y.SessionID, x.SessionID)
	})
	return out
}

// SessionInfo describes one session.
func (a *Agent) SessionInfo(id string) (SessionInfo, bool) {
	s, ok := a.index.get(id)
	if !ok {
		return SessionInfo{}, false
	}
	return a.infoOf(s), true
}

// infoOf is a session as the editor sees it: the state is its last run's
// now, the settings the ones in effect.
func (a *Agent) infoOf(s sessionSummary) SessionInfo {
	a.mu.Lock()
	r, live := a.runs[s.LastRunID]
	a.mu.Unlock()
	state := s.State
	switch {
	case live:
		state = r.state()
	case s.LastRunID != "" && !state.Finished():
		// The index missed the run's end (a crash between the writes).
		state = firstNonEmpty(a.diskState(s.LastRunID), state)
	}
	if state == "" {
		state = StateIdle
	}
	return SessionInfo{SessionID: s.ID, Title: s.Title, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt, State: state,
		LastRunID: s.LastRunID, RunCount: s.Runs,
		Settings: a.Effective(SessionSettings{Model: s.Model, ReasoningEffort: s.Effort, ApprovalPolicy: s.Policy})}
}

// titleLength is the most a session's title shows of its first prompt.
const titleLength = 72

// titleOf names a session after its first prompt: the first line that says
// something, cut at a word boundary.
func titleOf(prompt string) string {
	line := ""
	for l := range strings.Lines(prompt) {
		if line = strings.Join(strings.Fields(l), " "); line != "" {
			break
		}
	}
	if utf8.RuneCountInString(line) <= titleLength {
		return line
	}
	runes := []rune(line)[:titleLength]
	cut := string(runes)
	if i := strings.LastIndexByte(cut, ' '); i > titleLength/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:.-") + "…"
}

// ReadSessions lists a workspace's sessions as Sessions does, from its state
// directory, without opening the workspace: no run is restored or started,
// and nothing is written but the session index. A run another process is
// driving shows the state it last saved.
func ReadSessions(cfg Config) ([]SessionInfo, error) {
	cfg.defaults()
	if _, err := os.Stat(cfg.StateDir); errors.Is(err, fs.ErrNotExist) {
		return []SessionInfo{}, nil
	}
	st, err := openStore(cfg.StateDir)
	if err != nil {
		return nil, err
	}
	a := &Agent{cfg: cfg, log: cfg.Logger, store: st, index: newSessionIndex(st, cfg.Logger), mcfg: cfg.Model, runs: map[string]*run{}}
	defer a.index.close()
	return a.Sessions(), nil
}
