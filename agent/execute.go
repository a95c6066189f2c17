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

// maxModelOutput caps what one tool result feeds back to the model; the
// editor gets the full output.
const maxModelOutput = 16 * 1024

// baselineCap is the largest file whose original content is kept for the
// run's final diff.
const baselineCap = 512 * 1024

// finalReadTimeout bounds the editor's answers for the run's final diff,
// which is made when the run's own context may already be over.
const finalReadTimeout = 10 * time.Second

// execute runs an approved call and returns what the model reads.
func (r *run) execute(ctx context.Context, pc *pendingCall) *callResult {
	call, edited, res := r.callToRun(ctx, pc)
	if res != nil {
		r.reportSimple(pc.Call.ID, res)
		return res
	}
	r.keepBaseline(ctx, call.Writes)
	confine := r.confineToRun(pc, call)
	r.update(Update{Kind: UpdateToolCallUpdate, ToolCallID: pc.Call.ID, Status: StatusInProgress})
	live := r.newLiveOutput(pc.Call.ID)
	r.mu.Lock()
	r.env.Secrets = maps.Clone(r.secrets)
	r.env.Output = live.write
	r.env.Started = func(id tools.ProcID) { r.procStarted(pc, id) }
	r.mu.Unlock()

	timeout := 10 * time.Minute
	if t, ok := r.a.tools[pc.Call.Name]; ok && t.Info().Timeout > 0 {
		timeout = t.Info().Timeout
	}
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
	r.noteChanges(out.Files)
	r.a.audit(auditEntry{Run: r.rec, Call: call, Decision: auditExecuted, Outcome: outcomeOf(out), Duration: dur, Confine: confine})
	r.a.trace(traceTool(r.rec, pc.Call, out, dur))

	content := r.redact(out.Output)
	if len(content) > maxModelOutput {
		content = content[:maxModelOutput/2] + "\n[… output cut for length …]\n" + content[len(content)-maxModelOutput/2:]
	}
	if edited {
		content = "The user edited your proposed content before it was written; the file now holds the user's version.\n" + content
	}
	return &callResult{Content: content, IsError: out.IsError}
}

// callToRun returns the prepared call, preparing it again after a restart
// (and refusing if the files changed since the user saw the diff), or a
// write of the user's edited content.
func (r *run) callToRun(ctx context.Context, pc *pendingCall) (*tools.Call, bool, *callResult) {
	r.mu.Lock()
	call := r.prepared[pc.Call.ID]
	var edited *string
	if pc.Resolved != nil {
		edited = pc.Resolved.Edited
	}
	r.mu.Unlock()
	t := r.a.tools[pc.Call.Name]
	if call == nil {
		var refusal *tools.Result
		call, refusal = tools.Prepare(ctx, t, r.env, pc.Call.Args)
		if refusal != nil {
			return nil, false, &callResult{IsError: true, Content: refusal.Output}
		}
		if pc.Request != nil && !sameDiffs(pc.Request.Diff, call.Writes) {
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
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rec.Baseline == nil {
		r.rec.Baseline = map[string]*string{}
	}
	for p, img := range got {
		if _, seen := r.rec.Baseline[p]; !seen {
			r.rec.Baseline[p] = img
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
