package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentd/agentd/tools"
)

// Background processes (tools.Background) belong to their session. The
// agent keeps their record (processes.json in the state directory) so
// that after a crash the next daemon reaps what is left, lists them as
// lost, and tells each session's model at its next step; it tells the
// model too when one ends on its own; and it tells the editors of every
// change (ProcessListener).

// ProcessListener is a Listener that also hears of background processes
// changing state (the native protocol's agent/processChanged).
type ProcessListener interface {
	ProcessChanged(tools.ProcessInfo)
}

// ProcessesParams names a session (agent/processes).
type ProcessesParams struct {
	SessionID string `json:"sessionId"`
}

// StopProcessParams names a session's background process
// (agent/stopProcess).
type StopProcessParams struct {
	SessionID string `json:"sessionId"`
	ID        string `json:"id"`
}

// procNotes remembers, per session, which ends of background processes the
// model has been told of.
type procNotes struct {
	mu   sync.Mutex
	told map[string]bool // session/id → told of its end
}

func (a *Agent) processesPath() string { return filepath.Join(a.cfg.StateDir, "processes.json") }

// startBackground makes the table, and restores the record an earlier
// daemon left.
func (a *Agent) startBackground() {
	a.background = tools.NewBackground(a.processChanged)
	data, err := os.ReadFile(a.processesPath())
	if err != nil {
		return
	}
	var rec []processRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		a.log.Warn("unreadable record of background processes; starting without it", "err", err)
		return
	}
	infos := make([]tools.ProcessInfo, len(rec))
	for i, r := range rec {
		infos[i] = r.ProcessInfo
		infos[i].Proc = r.Proc
	}
	a.background.Restore(infos)
	a.saveProcesses()
}

// processRecord is a process as the record keeps it: its ProcID too.
type processRecord struct {
	tools.ProcessInfo
	Proc *tools.ProcID `json:"proc,omitempty"`
}

// processChanged keeps the record and tells the editor.
func (a *Agent) processChanged(info tools.ProcessInfo) {
	a.saveProcesses()
	if l, ok := a.listener.(ProcessListener); ok {
		l.ProcessChanged(info)
	}
}

func (a *Agent) saveProcesses() {
	a.procMu.Lock()
	defer a.procMu.Unlock()
	all := a.background.All()
	rec := make([]processRecord, len(all))
	for i, in := range all {
		rec[i] = processRecord{ProcessInfo: in, Proc: in.Proc}
	}
	data, err := json.Marshal(rec)
	if err == nil {
		err = tools.WriteAtomic(a.processesPath(), data, 0o600)
	}
	if err != nil {
		a.log.Error("saving the record of background processes", "err", err)
	}
}

// Processes lists a session's background processes.
func (a *Agent) Processes(p ProcessesParams) ([]tools.ProcessInfo, error) {
	if _, err := a.sessionRec(p.SessionID); err != nil {
		return nil, err
	}
	out := a.background.List(p.SessionID)
	if out == nil {
		out = []tools.ProcessInfo{}
	}
	return out, nil
}

// StopProcess stops a session's background process (the editor's stop
// button).
func (a *Agent) StopProcess(_ context.Context, p StopProcessParams) (tools.ProcessInfo, error) {
	if _, err := a.sessionRec(p.SessionID); err != nil {
		return tools.ProcessInfo{}, err
	}
	info, err := a.background.Stop(p.SessionID, p.ID, tools.ByUser)
	if errors.Is(err, tools.ErrNoProcess) {
		return info, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return info, err
}

// noteProcessesLocked tells the model, before its next request, of the
// session's background processes that ended since it was last told: on
// their own, stopped by the user, or with an earlier daemon. r.mu is held.
func (r *run) noteProcessesLocked() {
	n := &r.a.procNotes
	n.mu.Lock()
	defer n.mu.Unlock()
	var lines []string
	for _, in := range r.a.background.List(r.rec.SessionID) {
		k := in.SessionID + "/" + in.ID
		if in.State == tools.ProcRunning || n.told[k] {
			continue
		}
		if n.told == nil {
			n.told = map[string]bool{}
		}
		n.told[k] = true
		if in.StoppedBy == tools.ByModel {
			continue // it stopped it itself
		}
		lines = append(lines, fmt.Sprintf("background process %s (`%s`) %s", in.ID, in.Command, endedHow(in)))
	}
	if len(lines) > 0 {
		r.rec.Messages = append(r.rec.Messages, Message{Role: RoleUser,
			Content: "[agentd: " + strings.Join(lines, "; ") + ". Its output stays readable with the process tool.]"})
	}
}

func endedHow(in tools.ProcessInfo) string {
	switch {
	case in.State == tools.ProcExited:
		return fmt.Sprintf("exited with code %d", *in.ExitCode)
	case in.State == tools.ProcStopped && in.StoppedBy == tools.ByUser:
		return "was stopped by the user"
	case in.State == tools.ProcStopped:
		return "was stopped when agentd stopped"
	}
	return "ended when agentd restarted"
}
