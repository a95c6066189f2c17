package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/agentd/agentd/tools"
)

// fitSlack is how far over the run's output limit a tool's own result may
// go (its notes and checks) before the loop cuts it.
const fitSlack = 4 << 10

// baselineCap is the largest file whose original content is kept for the
// run's final diff.
const baselineCap = 512 * 1024

// finalReadTimeout bounds the editor's answers for the run's final diff,
// which is made when the run's own context may already be over.
const finalReadTimeout = 10 * time.Second

// execute runs an approved call and returns what the model reads. A call
// that must not run twice is first recorded as started, synced: an error
// (ErrNotSaved) means it could not be, and the call did not run.
func (r *run) execute(ctx context.Context, pc *pendingCall) (*callResult, error) {
	call, edited, res := r.callToRun(ctx, pc)
	if res != nil {
		r.reportSimple(pc.Call.ID, res)
		return res, nil
	}
	r.keepBaseline(ctx, call.Writes)
	confine := r.confineToRun(pc, call)
	if runsOnce(call) {
		if err := r.markStarted(pc); err != nil {
			return nil, err
		}
	}
	r.update(Update{Kind: UpdateToolCallUpdate, ToolCallID: pc.Call.ID, Status: StatusInProgress})
	live := r.newLiveOutput(pc.Call.ID)
	limit := tools.OutputLimitFor(r.a.ContextWindow())
	r.mu.Lock()
	r.env.Secrets = maps.Clone(r.secrets)
	r.env.Output = live.write
	r.env.Started = nil // reads and edits start only their checks, which need no record
	if runsOnce(call) {
		r.env.Started = func(id tools.ProcID) { r.noteProc(pc, id) }
	}
	r.env.OutputLimit = limit
	r.env.ToolCallID = pc.Call.ID
	r.mu.Unlock()

	timeout := 10 * time.Minute
	if t, ok := r.toolNamed(pc.Call.Name); ok && t.Info().Timeout > 0 {
		timeout = t.Info().Timeout
	}
	r.beforeEdit(ctx, call)
	tctx, cancel := context.WithTimeout(ctx, timeout)
	start := time.Now()
	out, err := call.Run(tctx)
	cancel()
	live.close()
	dur := time.Since(start)
	if err != nil && ctx.Err() == nil {
		// The tool's infrastructure broke (not a failure the model caused).
		r.logger().Error("tool failed", "tool", pc.Call.Name, "err", err)
		out = tools.Result{IsError: true, Output: fmt.Sprintf("Internal error running %s: %v", pc.Call.Name, err)}
	}
	status := StatusCompleted
	if out.IsError {
		status = StatusFailed
	}
	r.reportResult(pc.Call.ID, out, status, dur)
	r.keepCheckpointBaseline(out) // undo.go
	r.noteChanges(out.Files)
	r.noteRead(call, out)           // subagent.go
	r.edited(pc.Call.ID, call, out) // language.go
	r.a.audit(auditEntry{Run: r.rec, Call: call, CallID: pc.Call.ID, RequestID: pc.RequestID,
		Decision: auditExecuted, Outcome: outcomeOf(out), Duration: dur, Confine: confine})
	r.a.trace(traceTool(r.rec, pc.Call, out, dur))

	content := r.redact(out.Output)
	if len(content) > limit+fitSlack {
		content, _ = tools.Fit(content, limit)
	}
	if !out.IsError {
		content += r.nestedInstructions(call)
	}
	if edited {
		content = "The user edited your proposed content before it was written; the file now holds the user's version.\n" + content
	}
	res = &callResult{Content: content, IsError: out.IsError}
	if out.Image != nil {
		r.attachImage(res, out, call.Title)
	}
	r.afterTool(ctx, pc, call, out, res, status, dur.Milliseconds())
	return res, nil
}

// runsOnce says whether running a call a second time could repeat what it
// did: a command, or a tool that may do anything. Reads and edits are
// prepared again after a restart, and an edit whose files changed since is
// refused, so they need no record.
func runsOnce(call *tools.Call) bool {
	return call.Command != nil || call.Effect != tools.EffectRead && call.Effect != tools.EffectEdit
}

// markStarted records that a call is about to run, synced before it does.
func (r *run) markStarted(pc *pendingCall) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now().UTC()
	pc.Started = &now
	if err := r.persistLocked(true); err != nil {
		pc.Started = nil
		return err
	}
	return nil
}

// noteProc records the process a call started, for a restart to reap. The
// write is not synced: a process outlives only a daemon's crash, not the
// machine's.
func (r *run) noteProc(pc *pendingCall, id tools.ProcID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	pc.Proc = &id
	if err := r.persistLocked(false); err != nil {
		r.logger().Warn("the process a command started is not saved: a crash now would leave it running", "pid", id.Pid, "err", err)
	}
}

// interruptedText is what the model reads of a call a restart cut off.
const interruptedText = "Interrupted: the daemon restarted while this call was running, and its output is lost. " +
	"It was not run again: it may have done some or all of its work, so check what it did before running it again."

// interruptedLocked ends each call of the step that a restart cut off while
// it ran: whatever it left running is killed, and the model reads that it
// was interrupted, instead of its running a second time.
func (r *run) interruptedLocked() {
	for _, pc := range r.rec.Pending {
		if pc.Started == nil || pc.Result != nil || pc.Child != "" {
			continue // a task call's subagent is awaited again (task.go)
		}
		if r.heldByLocked(pc.Call.ID) {
			// It was waiting on its MCP server's question: it is made again,
			// and the server's same question gets the user's answer (held.go).
			pc.Started = nil
			continue
		}
		if pc.Proc != nil {
			killed, err := tools.Reap(*pc.Proc)
			switch {
			case err != nil:
				r.logger().Warn("reaping what an interrupted command left", "pid", pc.Proc.Pid, "err", err)
			case killed:
				r.logger().Info("reaped what an interrupted command left", "pid", pc.Proc.Pid)
			}
		}
		pc.Result = &callResult{IsError: true, Content: interruptedText}
		r.updateLocked(Update{Kind: UpdateToolCallUpdate, ToolCallID: pc.Call.ID, Status: StatusFailed,
			Output: interruptedText, IsError: true})
	}
}

// callToRun returns the prepared call, preparing it again after a restart
// (and refusing if the files changed since the user saw the diff), or a
// write of the user's edited content.
func (r *run) callToRun(ctx context.Context, pc *pendingCall) (*tools.Call, bool, *callResult) {
	r.mu.Lock()
	call := r.prepared[pc]
	var edited *string
	if pc.req != nil && pc.req.Resolved != nil {
		edited = pc.req.Resolved.Edited
	}
	r.mu.Unlock()
	t, ok := r.toolNamed(pc.Call.Name)
	if call == nil && !ok {
		return nil, false, &callResult{IsError: true, Content: fmt.Sprintf("Not run: the tool %s is no longer available (its MCP server is not connected).", pc.Call.Name)}
	}
	if call == nil {
		var refusal *tools.Result
		call, refusal = tools.Prepare(ctx, t, r.env, pc.Call.Args)
		if refusal != nil {
			return nil, false, &callResult{IsError: true, Content: refusal.Output}
		}
		if call.Command != nil { // how the line must run, as deciding would have set it
			call.Command.Exec = r.a.policy.Classify(call.Command).Exec
		}
		if pc.req != nil && !sameDiffs(pc.req.Req.Diff, call.Writes) {
			return nil, false, &callResult{IsError: true, Content: "Not run: the files changed since the user approved this change. Read them again and propose the change anew."}
		}
	}
	if edited == nil {
		return call, false, nil
	}
	w, ok := r.a.tools["write_file"]
	if !ok || len(call.Writes) != 1 {
		return call, false, nil
	}
	args, _ := json.Marshal(map[string]string{"path": call.Writes[0].Path, "content": *edited})
	wcall, refusal := tools.Prepare(ctx, w, r.env, args)
	if refusal != nil {
		return nil, false, &callResult{IsError: true, Content: refusal.Output}
	}
	return wcall, true, nil
}

func sameDiffs(a, b []tools.FileDiff) bool {
	return slices.EqualFunc(a, b, func(x, y tools.FileDiff) bool { return x.Path == y.Path && x.Diff == y.Diff })
}

// keepBaseline remembers the content files had before the run first changed
// them, for the run's final files_changed diff. The files are read without
// holding r.mu: an editor's answer can wait on a cancel that needs it.
func (r *run) keepBaseline(ctx context.Context, writes []tools.FileDiff) {
	var need []string
	r.mu.Lock()
	for _, w := range writes {
		for _, p := range []string{w.Path, w.OldPath} {
			if _, seen := r.rec.Baseline[p]; p != "" && !seen && !slices.Contains(need, p) {
				need = append(need, p)
			}
		}
	}
	r.mu.Unlock()
	got := make(map[string]*string, len(need))
	for _, p := range need {
		got[p] = r.readSmall(ctx, p)
	}
	r.addBaseline(got)
}

// addBaseline records the earlier contents of files the run had not
// changed before (a file's first baseline wins), to be journaled with the
// next step.
func (r *run) addBaseline(got map[string]*string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rec.Baseline == nil {
		r.rec.Baseline = map[string]*string{}
	}
	for p, img := range got {
		if _, seen := r.rec.Baseline[p]; !seen {
			r.rec.Baseline[p] = img
			r.newBase = append(r.newBase, p)
		}
	}
}

func (r *run) noteChanges(files []tools.FileDiff) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range files {
		for _, p := range []string{f.Path, f.OldPath} {
			if p != "" && !slices.Contains(r.rec.Changed, p) {
				r.rec.Changed = append(r.rec.Changed, p)
			}
		}
	}
}

// changedFiles diffs each changed file against its baseline. Like
// keepBaseline it reads without holding r.mu.
func (r *run) changedFiles() []tools.FileDiff {
	r.mu.Lock()
	changed := slices.Clone(r.rec.Changed)
	baseline := maps.Clone(r.rec.Baseline)
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), finalReadTimeout)
	defer cancel()
	var out []tools.FileDiff
	for _, p := range changed {
		before := baseline[p]
		after := r.readSmall(ctx, p)
		if before == nil && after == nil {
			continue
		}
		if before != nil && after != nil && *before == *after {
			continue
		}
		out = append(out, tools.DiffFiles(p, before, after))
	}
	return out
}

// readSmall returns the content of the workspace file rel, nil when it does
// not exist (or is too large to diff, which the diff then says). The content
// comes through the editor when it serves the run's files, so the diff shows
// what the editor has; the disk answers when the editor does not.
func (r *run) readSmall(ctx context.Context, rel string) *string {
	data, fi, err := tools.ReadWorkspaceFile(r.env.Root, rel, baselineCap)
	if err != nil {
		return nil
	}
	if fi.Size() > baselineCap {
		s := fmt.Sprintf("(file too large to diff: %d bytes)\n", fi.Size())
		return &s
	}
	if r.env.Files != nil {
		path := filepath.Join(r.env.Root, filepath.FromSlash(rel))
		if b, err := r.env.Files.ReadFile(ctx, path); err == nil {
			data = b
		}
	}
	s := string(data)
	return &s
}

func outcomeOf(res tools.Result) string {
	switch {
	case res.ExitCode != nil:
		return fmt.Sprintf("exit %d", *res.ExitCode)
	case res.IsError:
		return "error"
	}
	return "ok"
}
