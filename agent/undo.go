package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentd/agentd/tools"
	"github.com/agentd/agentd/tools/checkpoint"
)

// Undo by the user: every change of a session (file tools, commands,
// restores) is a checkpoint (tools/checkpoint); the user lists them, undoes
// one change or a whole run (a turn) with everything after it, and rewinds
// the conversation (rewind.go). A restore never overwrites a file changed
// after the checkpoint unless asked to, and is itself a checkpoint.

// CheckpointInfo is one checkpoint as the editor lists it.
type CheckpointInfo struct {
	ID    string    `json:"id"`
	RunID string    `json:"runId,omitempty"`
	Tool  string    `json:"tool"`
	Title string    `json:"title,omitempty"`
	Time  time.Time `json:"time"`
	// Files are the paths it changed (directories left out).
	Files []CheckpointFile `json:"files"`
	// Undoes lists what a restore undid; UndoneBy the restore that undid
	// this one.
	Undoes   []string `json:"undoes,omitempty"`
	UndoneBy string   `json:"undoneBy,omitempty"`
	Notes    []string `json:"notes,omitempty"`
}

// CheckpointFile is one path a checkpoint changed: status added, deleted,
// modified, renamed (from OldPath), mode or type.
type CheckpointFile struct {
	Path    string `json:"path"`
	Status  string `json:"status"`
	OldPath string `json:"oldPath,omitempty"`
}

// UndoParams asks for an undo (agent/undo): Checkpoint and every later
// checkpoint of the session, or RunID's first checkpoint and every later
// one (a whole turn), or, with neither, the last change.
type UndoParams struct {
	SessionID  string   `json:"sessionId"`
	Checkpoint string   `json:"checkpoint,omitempty"`
	RunID      string   `json:"runId,omitempty"`
	Paths      []string `json:"paths,omitempty"`
	// Only undoes that checkpoint (or that run's checkpoints) alone, not the
	// later ones; a path a later change touched again is then a conflict.
	Only bool `json:"only,omitempty"`
	// OnConflict is stop (default: nothing is written when a file changed
	// after the checkpoint or its earlier content is not kept), skip
	// (restore the rest) or overwrite (restore changed files too; their
	// current content goes into the undo's own checkpoint).
	OnConflict string `json:"onConflict,omitempty"`
	// DryRun says what would happen, writing nothing.
	DryRun bool `json:"dryRun,omitempty"`
}

// UndoStatus says how an undo or a rewind went.
type UndoStatus string

// Undo statuses.
const (
	UndoRestored  UndoStatus = "restored"  // done
	UndoConflicts UndoStatus = "conflicts" // nothing written: see conflicts
	UndoNothing   UndoStatus = "nothing"   // no checkpoint to undo
	UndoPreview   UndoStatus = "preview"   // dryRun: what it would do
)

// UndoStatuses lists every status.
var UndoStatuses = []UndoStatus{UndoRestored, UndoConflicts, UndoNothing, UndoPreview}

// UndoResult is what an undo or a rewind did (or would do).
type UndoResult struct {
	Status UndoStatus `json:"status"`
	// Undone lists the checkpoints the restore covers.
	Undone []string `json:"undone"`
	// Checkpoint is the restore's own checkpoint: undo it to redo.
	Checkpoint string `json:"checkpoint,omitempty"`
	// Files are the changes written (or that would be), as diffs from what
	// each file holds now to what it held before.
	Files     []tools.FileDiff `json:"files"`
	Conflicts []UndoConflict   `json:"conflicts,omitempty"`
	Notes     []string         `json:"notes,omitempty"`
	// Rewind: the runs cut from the conversation, and how many messages
	// the conversation keeps.
	Rewound  []string `json:"rewound,omitempty"`
	Messages *int     `json:"messages,omitempty"`
}

// UndoConflict is a path an undo does not restore by itself: Kind changed
// (someone changed it after the checkpoint; Diff is what the undo would do
// to it) or missing (its earlier content was not kept: never guessed).
type UndoConflict struct {
	Path   string          `json:"path"`
	Kind   string          `json:"kind"`
	Reason string          `json:"reason"`
	Diff   *tools.FileDiff `json:"diff,omitempty"`
}

// ConflictKinds are the kinds of UndoConflict.
var ConflictKinds = []string{"changed", "missing"}

// What an undo does with conflicts (UndoParams.OnConflict).
const (
	OnConflictStop      = string(checkpoint.Stop)
	OnConflictSkip      = string(checkpoint.Skip)
	OnConflictOverwrite = string(checkpoint.Overwrite)
)

// OnConflicts are the answers to a conflict an undo accepts.
var OnConflicts = []string{OnConflictStop, OnConflictSkip, OnConflictOverwrite}

// checkpoints opens the workspace's checkpoints with the configured bounds.
func (a *Agent) checkpoints() (*checkpoint.Workspace, error) {
	ws, err := checkpoint.Open(a.cfg.Root, a.cfg.StateDir)
	if err != nil {
		return nil, err
	}
	a.undoOnce.Do(func() {
		ws.SetLimits(checkpoint.Limits{SessionBytes: int64(a.cfg.UndoSessionMB) << 20, MaxFileSize: int64(a.cfg.UndoMaxFileMB) << 20})
	})
	return ws, nil
}

// Checkpoints lists a session's checkpoints, oldest first.
func (a *Agent) Checkpoints(sessionID string) ([]CheckpointInfo, error) {
	if _, err := a.session(sessionID); err != nil {
		return nil, err
	}
	ws, err := a.checkpoints()
	if err != nil {
		return nil, err
	}
	list, err := ws.List(sessionID)
	if err != nil {
		return nil, err
	}
	out := make([]CheckpointInfo, 0, len(list))
	for _, cp := range list {
		ci := CheckpointInfo{ID: cp.ID, RunID: cp.Run, Tool: cp.Tool, Title: cp.Title, Time: cp.Time,
			Files: []CheckpointFile{}, Undoes: cp.Undoes, UndoneBy: cp.UndoneBy, Notes: cp.Notes}
		for _, c := range cp.Changes {
			if c.Before != nil && c.Before.Kind == checkpoint.KindDir || c.After != nil && c.After.Kind == checkpoint.KindDir {
				continue
			}
			ci.Files = append(ci.Files, CheckpointFile{Path: c.Path, Status: c.Status(), OldPath: c.From})
		}
		out = append(out, ci)
	}
	return out, nil
}

// session returns a session known to the agent.
func (a *Agent) session(id string) (*sessionRecord, error) {
	if id == "" {
		return nil, fmt.Errorf("%w: sessionId is required", ErrInvalid)
	}
	// Sessions are read from disk when first used (session.go).
	return a.sessionRec(id)
}

// idleSession refuses while the session has a run that has not finished:
// its model may be changing the same files.
func (a *Agent) idleSession(id string) (*sessionRecord, error) {
	s, err := a.session(id)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	r, ok := a.runs[s.LastRunID]
	a.mu.Unlock()
	if ok && !r.state().Finished() {
		return nil, fmt.Errorf("%w: session %s has run %s in state %s; cancel it or wait for it to finish before undoing", ErrSessionBusy, id, r.rec.ID, r.state())
	}
	return s, nil
}

// Undo restores the files of a session's checkpoint (or of a whole run)
// and every later one.
func (a *Agent) Undo(ctx context.Context, p UndoParams) (UndoResult, error) {
	on, err := onConflict(p.OnConflict)
	if err != nil {
		return UndoResult{}, err
	}
	s, err := a.idleSession(p.SessionID)
	if err != nil {
		return UndoResult{}, err
	}
	if p.Checkpoint != "" && p.RunID != "" {
		return UndoResult{}, fmt.Errorf("%w: give checkpoint or runId, not both", ErrInvalid)
	}
	ws, err := a.checkpoints()
	if err != nil {
		return UndoResult{}, err
	}
	from := p.Checkpoint
	if p.RunID != "" {
		if !slices.Contains(a.sessionRuns(s), p.RunID) {
			return UndoResult{}, fmt.Errorf("%w: run %s is not a run of session %s", ErrUnknownRun, p.RunID, s.ID)
		}
		if from, err = firstCheckpointOf(ws, s.ID, []string{p.RunID}); err != nil || from == "" {
			return UndoResult{Status: UndoNothing, Undone: []string{}, Files: []tools.FileDiff{}}, err
		}
	}
	title := "undo"
	if p.RunID != "" {
		title = "undo run " + p.RunID
	}
	meta := checkpoint.Checkpoint{Tool: checkpoint.ToolUndo, Title: title}
	sel := checkpoint.Select{Session: s.ID, From: from, Paths: p.Paths}
	if p.Only && p.RunID == "" {
		sel.Until = from
	}
	if p.Only && p.RunID != "" {
		if sel.Until, err = lastCheckpointOf(ws, s.ID, p.RunID); err != nil {
			return UndoResult{}, err
		}
	}
	return a.restoreFiles(ws, sel, on, meta, p.DryRun)
}

func onConflict(s string) (checkpoint.OnConflict, error) {
	switch s {
	case "":
		return checkpoint.Stop, nil
	case string(checkpoint.Stop), string(checkpoint.Skip), string(checkpoint.Overwrite):
		return checkpoint.OnConflict(s), nil
	}
	return "", fmt.Errorf("%w: onConflict %q is not one of %s", ErrInvalid, s, strings.Join(OnConflicts, ", "))
}

// restoreFiles previews or makes a restore and says what it did.
func (a *Agent) restoreFiles(ws *checkpoint.Workspace, sel checkpoint.Select, on checkpoint.OnConflict, meta checkpoint.Checkpoint, dry bool) (UndoResult, error) {
	var plan *checkpoint.Plan
	var done *checkpoint.Restored
	var err error
	if dry {
		plan, err = ws.Preview(sel)
	} else {
		done, err = ws.Restore(sel, on, meta, nil)
		if done != nil {
			plan = done.Plan
		}
	}
	switch {
	case errors.Is(err, checkpoint.ErrUnknownCheckpoint) && sel.From == "":
		return UndoResult{Status: UndoNothing, Undone: []string{}, Files: []tools.FileDiff{}}, nil
	case errors.Is(err, checkpoint.ErrUnknownCheckpoint), errors.Is(err, checkpoint.ErrExpired):
		return UndoResult{}, fmt.Errorf("%w: %v", ErrUnknownCheckpoint, err)
	case err != nil:
		return UndoResult{}, fmt.Errorf("undo: %w", err)
	}
	res := UndoResult{Undone: plan.Undoes, Files: []tools.FileDiff{}}
	var restored, blocked []checkpoint.Step
	for _, st := range plan.Steps {
		switch {
		case st.Action == checkpoint.ActionRestore,
			st.Action == checkpoint.ActionConflict && on == checkpoint.Overwrite && st.Overwritable():
			restored = append(restored, st)
		case st.Action == checkpoint.ActionConflict, st.Action == checkpoint.ActionMissing:
			blocked = append(blocked, st)
		}
	}
	res.Files = append(res.Files, tools.RestoreDiffs(ws, restored)...)
	diffs := tools.RestoreDiffs(ws, blocked)
	for _, st := range blocked {
		c := UndoConflict{Path: st.Path, Kind: "changed", Reason: st.Reason}
		if st.Action == checkpoint.ActionMissing {
			c.Kind = "missing"
		}
		for i := range diffs {
			if diffs[i].Path == st.Path && c.Kind == "changed" {
				c.Diff = &diffs[i]
			}
		}
		res.Conflicts = append(res.Conflicts, c)
	}
	switch {
	case dry:
		res.Status = UndoPreview
	case done.Stopped:
		res.Status, res.Files = UndoConflicts, []tools.FileDiff{}
	default:
		res.Status, res.Checkpoint, res.Notes = UndoRestored, done.Checkpoint.ID, append(done.Checkpoint.Notes, done.Notes...)
	}
	return res, nil
}

// firstCheckpointOf finds the first checkpoint made by one of the runs, ""
// when they made none.
func firstCheckpointOf(ws *checkpoint.Workspace, session string, runs []string) (string, error) {
	list, err := ws.List(session)
	if err != nil {
		return "", err
	}
	for _, cp := range list {
		if slices.Contains(runs, cp.Run) {
			return cp.ID, nil
		}
	}
	return "", nil
}

// lastCheckpointOf finds the last checkpoint a run made.
func lastCheckpointOf(ws *checkpoint.Workspace, session, run string) (string, error) {
	list, err := ws.List(session)
	if err != nil {
		return "", err
	}
	last := ""
	for _, cp := range list {
		if cp.Run == run {
			last = cp.ID
		}
	}
	return last, nil
}

func (a *Agent) sessionRuns(s *sessionRecord) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(s.RunIDs)
}

// maintainCheckpoints brings the checkpoint store up to date in the
// background when a run starts (the first time: the one-time fill of the
// store, so the run's first command does not pay for it), drops the
// checkpoints of sessions that no longer exist and of those past the bounds
// of all sessions together, and collects what nothing references. The
// first command waits for it if it is still going. The stored prompt
// prefixes are bounded at the same time (prunePrefixes): sessions are never
// deleted.
func (a *Agent) maintainCheckpoints() {
	if a.cfg.StateDir == "" || !a.maintaining.CompareAndSwap(false, true) {
		return
	}
	ws, err := a.checkpoints()
	if err != nil {
		a.log.Warn("checkpoints", "err", err)
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		defer a.maintaining.Store(false)
		a.prunePrefixes()
		if ws == nil {
			return
		}
		start := time.Now()
		err := ws.Maintain(a.stopCtx, a.sessionExists)
		if err != nil && a.stopCtx.Err() == nil {
			a.log.Warn("checkpoint upkeep", "err", err)
		}
		a.log.Debug("checkpoint upkeep", "took", time.Since(start).Round(time.Millisecond))
	}()
}

// sessionExists says whether a session is known, in memory or by any file
// named after it under the state directory's sessions: the checkpoints of a
// session go only when nothing of it is left.
func (a *Agent) sessionExists(id string) bool {
	a.mu.Lock()
	_, ok := a.sessions[id]
	a.mu.Unlock()
	if ok || !validID(id) {
		return true
	}
	des, err := os.ReadDir(filepath.Join(a.cfg.StateDir, "sessions"))
	if err != nil {
		return true // cannot tell: keep
	}
	for _, de := range des {
		if strings.HasPrefix(de.Name(), id) {
			return true
		}
	}
	return false
}

// ForgetCheckpoints drops a session's checkpoints (the session is being
// deleted); the contents only they referenced are collected later.
func (a *Agent) ForgetCheckpoints(sessionID string) error {
	ws, err := a.checkpoints()
	if err != nil {
		return err
	}
	return ws.DropSession(sessionID)
}

// closeCheckpoints releases the checkpoint watcher and files at shutdown.
func (a *Agent) closeCheckpoints() {
	if a.cfg.StateDir != "" {
		checkpoint.Release(a.cfg.StateDir)
	}
}

// keepCheckpointBaseline gives the run's final diff (files_changed) the
// content a command's files had before it, from its checkpoint: the run
// could not read them before the command ran, as it does for the file
// tools' writes (keepBaseline).
func (r *run) keepCheckpointBaseline(res tools.Result) {
	if res.Checkpoint == "" || len(res.Files) == 0 {
		return
	}
	ws, err := r.a.checkpoints()
	if err != nil {
		return
	}
	list, err := ws.List(r.rec.SessionID)
	if err != nil {
		return
	}
	var cp *checkpoint.Checkpoint
	for _, c := range list {
		if c.ID == res.Checkpoint {
			cp = c
		}
	}
	if cp == nil {
		return
	}
	got := map[string]*string{}
	for _, c := range cp.Changes {
		if c.Before != nil && c.Before.Kind == checkpoint.KindDir || c.After != nil && c.After.Kind == checkpoint.KindDir {
			continue
		}
		if len(got) >= baselineFiles {
			t := fmt.Sprintf("(not kept for the run's diff: the command changed more than %d files)\n", baselineFiles)
			got[c.Path] = &t
			continue
		}
		got[c.Path] = baselineOf(ws, c.Before)
	}
	r.addBaseline(got)
}

// baselineFiles bounds how many of a command's files get their earlier
// content read back for the run's final diff.
const baselineFiles = 1000

// baselineOf is a state's content as the run's final diff starts from.
func baselineOf(ws *checkpoint.Workspace, s *checkpoint.State) *string {
	if s == nil {
		return nil
	}
	if s.Size > baselineCap || s.Hash.IsZero() {
		t := fmt.Sprintf("(file too large to diff: %d bytes)\n", s.Size)
		return &t
	}
	data, err := ws.Content(s)
	if err != nil {
		t := fmt.Sprintf("(content unavailable: %v)\n", err)
		return &t
	}
	t := string(data)
	return &t
}
