package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/agentd/agentd/tools"
)

// Start-up reads nothing that grows with history. Two small structures make
// that possible:
//
//	runs/open/<id>          an empty marker per unfinished run, created when
//	                        the run starts and removed when it finishes:
//	                        start-up lists this directory, not every run
//	sessions/index.jsonl    one summary line per session change (title, times,
//	                        state, run count, settings); the last line of a
//	                        session wins. Read on the first listing, never at
//	                        start-up; compacted when superseded lines pile up
//
// Both are derived from the records, so a state directory written before
// they existed is indexed once, on first use.

// sessionSummary is a session's line in the index.
type sessionSummary struct {
	ID        string     `json:"id"`
	Title     string     `json:"title"`
	CreatedAt time.Time  `json:"createdAt"`
	UpdatedAt time.Time  `json:"updatedAt"`
	State     State      `json:"state,omitempty"`
	LastRunID string     `json:"lastRunId,omitempty"`
	Runs      int        `json:"runs"`
	Model     string     `json:"model,omitempty"`
	Effort    string     `json:"reasoningEffort,omitempty"`
	Policy    tools.Mode `json:"policy,omitempty"`
	// Deleted marks a session deleted: the lines before it no longer count.
	Deleted bool `json:"deleted,omitempty"`
}

func summaryOf(s *sessionRecord) sessionSummary {
	return sessionSummary{ID: s.ID, Title: s.Title, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt, State: s.State,
		LastRunID: s.LastRunID, Runs: len(s.RunIDs), Model: s.Model, Effort: s.Effort, Policy: s.Policy}
}

// same reports whether two summaries say the same, times compared as
// instants.
func (s sessionSummary) same(o sessionSummary) bool {
	if !s.CreatedAt.Equal(o.CreatedAt) || !s.UpdatedAt.Equal(o.UpdatedAt) {
		return false
	}
	s.CreatedAt, s.UpdatedAt, o.CreatedAt, o.UpdatedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	return s == o
}

// sessionIndex keeps the summaries of a workspace's sessions.
type sessionIndex struct {
	path string
	st   *store // to rebuild from the session records
	log  *slog.Logger

	mu     sync.Mutex // guards the fields below
	loaded bool
	byID   map[string]sessionSummary
	lines  int
	f      *os.File
}

func newSessionIndex(st *store, log *slog.Logger) *sessionIndex {
	return &sessionIndex{path: filepath.Join(st.dir, "sessions", "index.jsonl"), st: st, log: log}
}

// put records a session's new summary.
func (x *sessionIndex) put(s sessionSummary) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.loadLocked()
	x.byID[s.ID] = s
	if x.f == nil {
		return
	}
	if err := appendLine(x.f, s); err != nil {
		x.log.Warn("appending to the session index", "err", err)
		return
	}
	x.lines++
}

// remove forgets a deleted session: a line says so, so the lines before it
// no longer count.
func (x *sessionIndex) remove(id string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.loadLocked()
	delete(x.byID, id)
	if x.f == nil {
		return
	}
	if err := appendLine(x.f, sessionSummary{ID: id, Deleted: true}); err != nil {
		x.log.Warn("appending to the session index", "err", err)
		return
	}
	x.lines++
}

// get returns one session's summary.
func (x *sessionIndex) get(id string) (sessionSummary, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.loadLocked()
	s, ok := x.byID[id]
	return s, ok
}

// all returns every summary, in no order.
func (x *sessionIndex) all() []sessionSummary {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.loadLocked()
	out := make([]sessionSummary, 0, len(x.byID))
	for _, s := range x.byID {
		out = append(out, s)
	}
	return out
}

func (x *sessionIndex) close() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.f != nil {
		x.f.Close()
		x.f = nil
	}
}

// loadLocked reads the index on first use, building it from the session
// records when there is none, and compacting it when most of its lines are
// superseded.
func (x *sessionIndex) loadLocked() {
	if x.loaded {
		return
	}
	x.loaded = true
	x.byID = map[string]sessionSummary{}
	data, err := os.ReadFile(x.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		x.rebuildLocked()
	case err != nil:
		x.log.Warn("reading the session index; rebuilding it", "err", err)
		x.rebuildLocked()
	default:
		x.parseLocked(data)
		if x.lines > 2*len(x.byID)+64 {
			x.rewriteLocked()
		}
	}
	f, err := os.OpenFile(x.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		x.log.Warn("opening the session index", "err", err)
		return
	}
	x.f = f
}

func (x *sessionIndex) parseLocked(data []byte) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		var s sessionSummary
		if json.Unmarshal(sc.Bytes(), &s) != nil || !validID(s.ID) {
			continue // a torn last line after a crash
		}
		x.lines++
		if s.Deleted {
			delete(x.byID, s.ID)
			continue
		}
		x.byID[s.ID] = s
	}
}

// rebuildLocked indexes the session records of a state directory written
// before the index existed (or whose index is unreadable).
func (x *sessionIndex) rebuildLocked() {
	recs, err := x.st.loadSessions()
	if err != nil {
		x.log.Warn("indexing sessions", "err", err)
	}
	for _, rec := range recs {
		if validID(rec.ID) {
			x.byID[rec.ID] = summaryOf(rec)
		}
	}
	x.rewriteLocked()
}

// rewriteLocked writes one line per session, atomically.
func (x *sessionIndex) rewriteLocked() {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, s := range x.byID {
		_ = enc.Encode(s)
	}
	if err := writeFileAtomic(x.path, buf.Bytes(), true); err != nil {
		x.log.Warn("writing the session index", "err", err)
		return
	}
	x.lines = len(x.byID)
}

// The open-run markers.

func (s *store) openDir() string { return filepath.Join(s.dir, "runs", "open") }

// markOpen records that a run is unfinished, so the next start restores it.
func (s *store) markOpen(id string) error {
	if err := os.WriteFile(filepath.Join(s.openDir(), id), nil, 0o600); err != nil {
		return fmt.Errorf("marking run %s open: %w", id, err)
	}
	return nil
}

// markClosed forgets a finished run's marker.
func (s *store) markClosed(id string) error {
	if err := os.Remove(filepath.Join(s.openDir(), id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("closing run %s: %w", id, err)
	}
	return nil
}

// loadOpenRuns reads the records of the runs marked open. A marker whose
// record is missing (a crash before its first checkpoint) or finished (a
// crash after its last) is removed.
func (s *store) loadOpenRuns() ([]*runRecord, error) {
	entries, err := os.ReadDir(s.openDir())
	if errors.Is(err, fs.ErrNotExist) {
		return s.markOpenRuns()
	}
	if err != nil {
		return nil, fmt.Errorf("listing open runs: %w", err)
	}
	var out []*runRecord
	var errs []error
	for _, e := range entries {
		id := e.Name()
		if !validID(id) {
			continue
		}
		rec, err := s.loadRun(id)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			errs = append(errs, s.markClosed(id))
		case err != nil:
			errs = append(errs, err)
		case rec.State.Finished():
			errs = append(errs, s.markClosed(id))
		default:
			out = append(out, rec)
		}
	}
	return out, errors.Join(errs...)
}

func (s *store) loadRun(id string) (*runRecord, error) {
	data, err := os.ReadFile(s.runPath(id))
	if err != nil {
		return nil, err
	}
	rec := &runRecord{}
	if err := json.Unmarshal(data, rec); err != nil {
		return nil, fmt.Errorf("run %s: %w", id, err)
	}
	return rec, nil
}

// markOpenRuns finds the unfinished runs of a state directory written
// before the markers existed, reading every run once, and marks them. The
// markers are made aside and renamed into place, so an interrupted
// migration is simply done again.
func (s *store) markOpenRuns() ([]*runRecord, error) {
	recs, lerr := s.loadRuns()
	tmp := s.openDir() + ".new"
	if err := os.RemoveAll(tmp); err != nil {
		return nil, fmt.Errorf("marking open runs: %w", err)
	}
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return nil, fmt.Errorf("marking open runs: %w", err)
	}
	var open []*runRecord
	for _, rec := range recs {
		if rec.State.Finished() || !validID(rec.ID) {
			continue
		}
		if err := os.WriteFile(filepath.Join(tmp, rec.ID), nil, 0o600); err != nil {
			return nil, fmt.Errorf("marking open runs: %w", err)
		}
		open = append(open, rec)
	}
	if err := os.Rename(tmp, s.openDir()); err != nil {
		return nil, fmt.Errorf("marking open runs: %w", err)
	}
	return open, lerr
}

// loadSession reads one session's record.
func (s *store) loadSession(id string) (*sessionRecord, error) {
	if !validID(id) {
		return nil, fmt.Errorf("%w: %q", ErrUnknownSession, id)
	}
	data, err := os.ReadFile(s.sessionPath(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrUnknownSession, id)
	}
	if err != nil {
		return nil, fmt.Errorf("reading session %s: %w", id, err)
	}
	rec := &sessionRecord{}
	if err := json.Unmarshal(data, rec); err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	return rec, nil
}
