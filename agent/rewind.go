package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/agentd/agentd/tools"
	"github.com/agentd/agentd/tools/checkpoint"
)

// A rewind goes back to before a run: the files every later checkpoint of
// the session changed are restored (as an undo, with its conflict rules),
// and the conversation is cut so that the next prompt continues from the
// end of the run before it, as if the cut runs had not happened. The cut
// runs stay on disk and in the session's history, marked rewound; their
// events replay as before. The restore is a checkpoint of its own, so the
// files can be brought back; the conversation cut is journaled in
// <state>/rewinds/<session>.json.

// RewindParams asks for a rewind (agent/rewind).
type RewindParams struct {
	SessionID string `json:"sessionId"`
	// RunID is the first run cut: the conversation continues from before
	// it.
	RunID string `json:"runId"`
	// KeepFiles cuts the conversation only.
	KeepFiles  bool   `json:"keepFiles,omitempty"`
	OnConflict string `json:"onConflict,omitempty"`
	DryRun     bool   `json:"dryRun,omitempty"`
}

// rewindRecord is one rewind of a session.
type rewindRecord struct {
	At         string    `json:"at"`
	Runs       []string  `json:"runs"`
	Time       time.Time `json:"time"`
	Checkpoint string    `json:"checkpoint,omitempty"`
}

func (a *Agent) rewindsPath(sessionID string) string {
	return filepath.Join(a.cfg.StateDir, "rewinds", sessionID+".json")
}

func (a *Agent) loadRewinds(sessionID string) []rewindRecord {
	var out []rewindRecord
	if b, err := os.ReadFile(a.rewindsPath(sessionID)); err == nil {
		_ = json.Unmarshal(b, &out)
	}
	return out
}

// RewoundRuns returns the runs of a session that a rewind cut.
func (a *Agent) RewoundRuns(sessionID string) map[string]bool {
	out := map[string]bool{}
	if !validID(sessionID) {
		return out
	}
	for _, r := range a.loadRewinds(sessionID) {
		for _, id := range r.Runs {
			out[id] = true
		}
	}
	return out
}

// Rewind restores the files to before a run and cuts the conversation
// there. With conflicts (and OnConflict stop) nothing happens: neither the
// files nor the conversation change.
func (a *Agent) Rewind(ctx context.Context, p RewindParams) (UndoResult, error) {
	on, err := onConflict(p.OnConflict)
	if err != nil {
		return UndoResult{}, err
	}
	if p.RunID == "" {
		return UndoResult{}, fmt.Errorf("%w: runId is required", ErrInvalid)
	}
	s, err := a.idleSession(p.SessionID)
	if err != nil {
		return UndoResult{}, err
	}
	runs := a.sessionRuns(s)
	k := slices.Index(runs, p.RunID)
	if k < 0 {
		return UndoResult{}, fmt.Errorf("%w: run %s is not a run of session %s", ErrUnknownRun, p.RunID, s.ID)
	}
	rewound := a.RewoundRuns(s.ID)
	if rewound[p.RunID] {
		return UndoResult{}, fmt.Errorf("%w: run %s was already rewound", ErrInvalid, p.RunID)
	}
	var cut []string
	for _, id := range runs[k:] {
		if !rewound[id] {
			cut = append(cut, id)
		}
	}
	prev := ""
	for i := k - 1; i >= 0; i-- {
		if !rewound[runs[i]] {
			prev = runs[i]
			break
		}
	}
	msgs, err := a.endOfRun(prev)
	if err != nil {
		return UndoResult{}, fmt.Errorf("rewind: the conversation before run %s: %w", p.RunID, err)
	}

	res := UndoResult{Status: UndoRestored, Undone: []string{}, Files: []tools.FileDiff{}}
	if !p.KeepFiles {
		ws, err := a.checkpoints()
		if err != nil {
			return UndoResult{}, err
		}
		from, err := firstCheckpointOf(ws, s.ID, cut)
		if err != nil {
			return UndoResult{}, err
		}
		if from != "" {
			meta := checkpoint.Checkpoint{Tool: checkpoint.ToolRewind, Title: "rewind to before run " + p.RunID}
			if res, err = a.restoreFiles(ws, checkpoint.Select{Session: s.ID, From: from}, on, meta, p.DryRun); err != nil {
				return UndoResult{}, err
			}
			if res.Status == UndoConflicts {
				return res, nil
			}
		}
	}
	n := len(msgs)
	res.Rewound, res.Messages = cut, &n
	if p.DryRun {
		res.Status = UndoPreview
		return res, nil
	}
	if err := a.cutConversation(s, msgs, rewindRecord{At: p.RunID, Runs: cut, Time: time.Now().UTC(), Checkpoint: res.Checkpoint}); err != nil {
		return UndoResult{}, err
	}
	res.Status = UndoRestored
	return res, nil
}

// endOfRun is the conversation as a finished run handed it back to its
// session; empty before the first run.
func (a *Agent) endOfRun(runID string) ([]Message, error) {
	if runID == "" {
		return []Message{}, nil
	}
	data, err := os.ReadFile(a.store.runPath(runID))
	if err != nil {
		return nil, err
	}
	var rec runRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, err
	}
	// The header says how the run ended; its journal (or, for a run from
	// before the journal, its message log) holds the conversation.
	if _, err := a.store.restoreRun(&rec); err != nil {
		return nil, err
	}
	if !rec.State.Finished() {
		return nil, errors.New("run " + runID + " has not finished")
	}
	return closeDanglingCalls(rec.Messages, rec.State), nil
}

// cutConversation journals the rewind, then gives the session its shorter
// conversation.
func (a *Agent) cutConversation(s *sessionRecord, msgs []Message, rec rewindRecord) error {
	all := append(a.loadRewinds(s.ID), rec)
	if err := os.MkdirAll(filepath.Dir(a.rewindsPath(s.ID)), 0o700); err != nil {
		return fmt.Errorf("rewind: %w", err)
	}
	if err := writeJSONAtomic(a.rewindsPath(s.ID), all, true); err != nil {
		return fmt.Errorf("rewind: %w", err)
	}
	a.mu.Lock()
	s.Messages, s.UpdatedAt = msgs, time.Now().UTC()
	a.mu.Unlock()
	if err := a.saveSession(s, true); err != nil {
		return fmt.Errorf("rewind: %w", err)
	}
	return nil
}
