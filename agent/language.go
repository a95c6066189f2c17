package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/agentd/agentd/tools"
)

// The language servers after edits: once per model reply, after the
// reply's last edit, the model reads the problems the servers see in the
// files the reply changed, new ones first, in the last edit's result; the
// editor gets the same as a tool_call_update of that edit. Intermediate
// states (several edits of one file in one reply) are never checked.

// defaultDiagnosticsTimeout is the diagnosticsTimeout setting's default.
const defaultDiagnosticsTimeout = 3 * time.Second

// baselineTimeout bounds asking what the servers know of a file before
// the reply's first edit of it (they answer from what they have).
const baselineTimeout = 500 * time.Millisecond

// languageTools are the tools offered only when a language server can
// answer them.
var languageTools = []string{tools.GoToDefinitionToolName, tools.FindReferencesToolName, tools.HoverToolName}

// navigates says whether the session's tools include the navigation ones:
// decided when the session's prefix is made, from what answers then.
func (a *Agent) navigates() bool { return a.lang != nil && a.lang.Navigates() }

// stepDiagnostics is what one reply's edits left to check.
type stepDiagnostics struct {
	files []string        // absolute, in the order first changed
	calls map[string]bool // the edit calls that changed them
}

// beforeEdit remembers, before a reply's edit runs, what the servers
// know of the files it will change, so that the problems the reply brings
// can be told apart. A file created has none; a file a previous reply
// changed has those the model was told of then.
func (r *run) beforeEdit(ctx context.Context, call *tools.Call) {
	if r.a.lang == nil || call.Effect != tools.EffectEdit || len(call.Writes) == 0 {
		return
	}
	var ask []string
	r.mu.Lock()
	if r.diagBefore == nil {
		r.diagBefore = map[string][]tools.Diagnostic{}
	}
	for _, w := range call.Writes {
		abs := filepath.Join(r.a.cfg.Root, filepath.FromSlash(w.Path))
		if _, known := r.diagBefore[abs]; known {
			continue
		}
		if w.Status == "added" {
			r.diagBefore[abs] = nil
			continue
		}
		ask = append(ask, abs)
	}
	r.mu.Unlock()
	if len(ask) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, baselineTimeout)
	defer cancel()
	known, err := r.a.lang.Diagnostics(ctx, ask, false)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range known {
		if f.Err == nil && !f.Pending {
			r.diagBefore[f.Path] = f.Diagnostics
		}
	}
}

// edited notes that an edit call of the current reply changed files.
func (r *run) edited(callID string, call *tools.Call, res tools.Result) {
	if r.a.lang == nil || call.Effect != tools.EffectEdit || res.IsError || len(res.Files) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.edits.calls == nil {
		r.edits.calls = map[string]bool{}
	}
	r.edits.calls[callID] = true
	for _, f := range res.Files {
		abs := filepath.Join(r.a.cfg.Root, filepath.FromSlash(f.Path))
		if !slices.Contains(r.edits.files, abs) {
			r.edits.files = append(r.edits.files, abs)
		}
	}
}

// diagnoseStep tells the model, in the result of the reply's last edit,
// what the language servers see in the files the reply changed, waiting
// for them at most the configured time. It runs once all the reply's calls
// have their results, before they are committed.
func (r *run) diagnoseStep(ctx context.Context) {
	r.mu.Lock()
	step := r.edits
	r.edits = stepDiagnostics{}
	var last *pendingCall
	for _, pc := range r.rec.Pending {
		if step.calls[pc.Call.ID] && pc.Result != nil {
			last = pc
		}
	}
	r.mu.Unlock()
	files := slices.DeleteFunc(step.files, func(f string) bool { _, err := os.Stat(f); return err != nil })
	if last == nil || len(files) == 0 {
		return
	}
	wait := r.a.cfg.DiagnosticsTimeout
	if wait <= 0 {
		return // the user turned the check off
	}
	dctx, cancel := context.WithTimeout(ctx, wait)
	after, err := r.a.lang.Diagnostics(dctx, files, true)
	cancel()
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		if errors.Is(err, tools.ErrNoLanguageServer) {
			return
		}
		r.logger().Warn("diagnostics after edits", "err", err)
		after = nil
		for _, f := range files {
			after = append(after, tools.FileDiagnostics{Path: f, Err: err})
		}
	}
	after = slices.DeleteFunc(after, func(f tools.FileDiagnostics) bool { return errors.Is(f.Err, tools.ErrNoLanguageServer) })
	if len(after) == 0 {
		return
	}
	r.mu.Lock()
	if r.diagBefore == nil {
		r.diagBefore = map[string][]tools.Diagnostic{}
	}
	rep := tools.NewDiagnosticsReport(r.a.cfg.Root, after, r.diagBefore)
	for _, f := range after {
		if f.Err == nil && !f.Pending && !f.Related {
			r.diagBefore[f.Path] = f.Diagnostics // the next reply's "before"
		}
	}
	last.Result.Content += "\n\n" + rep.Text
	r.mu.Unlock()
	r.update(Update{Kind: UpdateToolCallUpdate, ToolCallID: last.Call.ID, Diagnostics: &rep})
}
