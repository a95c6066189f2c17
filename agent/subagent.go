package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentd/agentd/tools"
)

// A subagent is a run a task call starts (task.go): a conversation of its
// own on the prompt the model wrote, with the tools its parent named, under
// its parent's approval mode. It is a run like any other, saved and
// restored the same way, with its own record and journal. What it reports
// goes out in its parent's run, under the task call: its updates and state
// changes as subagent updates, its input requests as requests of the
// parent run labelled with the subagent. So one stream (one seq, one event
// log) holds the whole turn, a reconnecting editor replays it with the
// parent's events, and an editor that knows nothing of subagents still
// shows and answers their questions under the task call.
//
// Locks: a subagent takes its parent's lock after its own to report
// (outLocked); a parent never takes a subagent's lock while holding its
// own, and stops its subagents without holding it.

// parentRef is what a subagent's record keeps of its parent: the run, the
// task call that started it and the task's description (its label).
type parentRef struct {
	RunID       string `json:"runId"`
	ToolCallID  string `json:"toolCallId"`
	Description string `json:"description"`
}

// subLink is a live subagent's tie to its parent run.
type subLink struct {
	parent *run
	child  string // the subagent's run id
	ref    parentRef
	pfx    *sessionPrefix // its system message and tools, made at its first step
}

// wrap is a subagent update of the parent carrying s.
func (l *subLink) wrap(s Subagent) Update {
	s.RunID, s.Description = l.child, l.ref.Description
	return Update{Kind: UpdateSubagent, ToolCallID: l.ref.ToolCallID, Subagent: &s}
}

// outLocked calls fn with the run whose stream carries r's notifications,
// locked: r itself (r.mu is held), or a subagent's parent, whose lock is
// taken after r's. A parent that has ended (or whose daemon is stopping)
// takes no more: what a subagent says then is dropped, and the daemon's
// log says so.
func (r *run) outLocked(fn func(out *run)) {
	if r.sub == nil {
		fn(r)
		return
	}
	p := r.sub.parent
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rec.State.Finished() || p.log == nil {
		r.logger().Debug("a subagent's notification is dropped: its parent run is over", "parent_run_id", p.rec.ID)
		return
	}
	fn(p)
}

// subagentStateLocked reports a subagent's new state in its parent's run.
// The parent waits on the user while any of its subagents does.
func (r *run) subagentStateLocked() {
	id, st := r.rec.ID, r.rec.State
	s := Subagent{State: st, StopReason: r.rec.StopReason, Error: r.rec.Error}
	r.outLocked(func(p *run) {
		p.updateLocked(r.sub.wrap(s))
		if st == StateRequiresAction {
			if p.waiting == nil {
				p.waiting = map[string]bool{}
			}
			p.waiting[id] = true
		} else {
			delete(p.waiting, id)
		}
		p.stateForSubagentsLocked()
	})
}

// stateForSubagentsLocked moves the run between running and requires_action
// as its subagents wait on the user or stop waiting (its own requests
// count too).
func (r *run) stateForSubagentsLocked() {
	waits := len(r.waiting) > 0 || len(r.openRequestsLocked()) > 0
	switch {
	case waits && r.rec.State == StateRunning:
		r.setStateLocked(StateRequiresAction, "", "")
	case !waits && r.rec.State == StateRequiresAction && len(r.rec.Pending) > 0:
		r.setStateLocked(StateRunning, "", "")
	}
}

// labelRequest makes a subagent's request its parent's, under the task
// call, labelled with the subagent: what a front end needs to show and
// place it, whether or not it knows subagents.
func (l *subLink) labelRequest(req *InputRequest) {
	req.Subagent = &Subagent{RunID: l.child, Description: l.ref.Description, ToolCallID: req.ToolCallID}
	req.RunID, req.ToolCallID = l.ref.RunID, l.ref.ToolCallID
}

// subagentTools names the tools a subagent is given by default: the
// session's reading and searching tools (readTools: not the process tool,
// which stops processes too), and ask_user where the session has it.
func (a *Agent) subagentTools(session []string) []string {
	var out []string
	for _, n := range session {
		if containsName(readTools, n) {
			out = append(out, n)
		}
	}
	if containsName(session, askToolName) {
		out = append(out, askToolName)
	}
	return out
}

// notForSubagents are the session's tools a subagent is never given: it
// does one task, so it neither starts subagents nor keeps or proposes the
// session's plan.
var notForSubagents = []string{taskToolName, planToolName, proposeToolName}

func containsName(names []string, n string) bool {
	for _, x := range names {
		if x == n {
			return true
		}
	}
	return false
}

// subagentRules begin a subagent's system message; the workspace, the
// instruction files and the repository map follow, as its session has
// them.
const subagentRules = `You are a subagent of agentd, a coding agent working inside the user's editor. The main agent gave you one task: do it with the tools you have, then answer.

Rules:
- You do not see the main agent's conversation, and it sees only your final answer: make that answer complete on its own. Say what you found with file paths and line numbers, quote the few lines that matter, and say what you looked for and did not find.
- Look before you conclude: list, search and read the relevant code. Do not guess, and do not invent results you did not see.
- Stay on your task; do not do more than it asks.
`

const subagentAsk = `- Ask the user with ask_user only when you cannot go on without their decision: they see your question as your own, labelled with your task.
`

const subagentApprove = `- Writes and commands may need the user's approval. A rejection is the user's decision: read the reason and adapt; never retry the same call unchanged.
`

const subagentRest = `- Paths are relative to the workspace root. Never touch anything outside the workspace.
- A result that was cut says which lines are missing and how to get them: follow that instead of guessing what they said.`

// workspaceSection marks where a session's system message stops giving
// rules: what follows describes the workspace, which a subagent shares.
const workspaceSection = "\n\n## Workspace\n"

// subagentSystem is a subagent's system message: its own rules, then the
// workspace as its session's system message describes it (so it is the
// same for every subagent of the session, and after a restart).
func subagentSystem(session string, names []string, confirms bool) string {
	var b strings.Builder
	b.WriteString(subagentRules)
	if containsName(names, askToolName) {
		b.WriteString(subagentAsk)
	}
	for _, n := range names {
		if n != askToolName && !containsName(readTools, n) && confirms {
			b.WriteString(subagentApprove)
			break
		}
	}
	b.WriteString(subagentRest)
	if i := strings.Index(session, workspaceSection); i >= 0 {
		b.WriteString(session[i:])
	}
	return b.String()
}

// readTools are agentd's tools that only read and search, a subagent's by
// default: one given only these needs no word on approvals.
var readTools = []string{tools.ListDirToolName, tools.ReadFileToolName, tools.GlobFileSearchToolName, tools.GrepToolName,
	tools.SearchSemanticToolName, tools.GoToDefinitionToolName, tools.FindReferencesToolName, tools.HoverToolName}

// subagentPrefix is a subagent's system message and tools, made at its
// first step from its session's stored prefix (never making or storing
// one: that is the session's own run's to do).
func (r *run) subagentPrefix(ctx context.Context) *sessionPrefix {
	r.mu.Lock()
	pfx, names := r.sub.pfx, r.rec.Tools
	r.mu.Unlock()
	if pfx != nil {
		return pfx
	}
	session := r.a.storedPrefix(r.rec.SessionID)
	if session == nil {
		session = r.a.makePrefix(ctx, nil)
	}
	pfx = &sessionPrefix{System: subagentSystem(session.System, names, r.a.canConfirm()), Tools: names, CreatedAt: session.CreatedAt}
	r.mu.Lock()
	r.sub.pfx = pfx
	r.mu.Unlock()
	return pfx
}

// newSubagent makes, saves and starts the subagent of a task call whose id
// (pc.Child) is already saved with the step. An error means it was not
// started: the call's result says so.
func (r *run) newSubagent(pc *pendingCall, p taskParams, names []string) (*run, error) {
	r.mu.Lock()
	now := time.Now().UTC()
	rec := &runRecord{ID: pc.Child, SessionID: r.rec.SessionID, State: StateRunning, Class: classTask,
		Prompt: p.Prompt, Policy: r.rec.Policy, Model: r.rec.Model, Effort: r.rec.Effort,
		Parent: &parentRef{RunID: r.rec.ID, ToolCallID: pc.Call.ID, Description: p.Description}, Tools: names,
		Messages: []Message{{Role: RoleUser, Content: p.Prompt}}, CreatedAt: now, UpdatedAt: now}
	r.mu.Unlock()
	a := r.a
	child := a.newRun(rec)
	child.sub = &subLink{parent: r, child: rec.ID, ref: *rec.Parent}
	if err := child.openLog(); err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.runs[rec.ID] = child
	a.mu.Unlock()
	if err := a.store.markOpen(rec.ID); err != nil {
		a.log.Error("persisting run", "err", err)
	}
	if err := child.begin(); err != nil {
		a.abandon(child)
		return nil, err
	}
	child.start()
	return child, nil
}

// subagentOf is the subagent a task call started before a restart: live
// (restored), or its record (ended, or one the restart could not bring
// back); neither, with fs.ErrNotExist, when it never was saved (the daemon
// stopped between the call's mark and its start).
func (r *run) subagentOf(pc *pendingCall) (*run, *runRecord, error) {
	r.a.mu.Lock()
	child := r.a.runs[pc.Child]
	r.a.mu.Unlock()
	if child != nil {
		return child, nil, nil
	}
	rec, err := r.a.store.loadRun(pc.Child)
	return nil, rec, err
}

// children are the run's live subagents whose task calls have no result.
func (r *run) children() []*run {
	r.mu.Lock()
	var ids []string
	for _, pc := range r.rec.Pending {
		if pc.Child != "" && pc.Result == nil {
			ids = append(ids, pc.Child)
		}
	}
	r.mu.Unlock()
	r.a.mu.Lock()
	defer r.a.mu.Unlock()
	var out []*run
	for _, id := range ids {
		if c := r.a.runs[id]; c != nil {
			out = append(out, c)
		}
	}
	return out
}

// cancelChildren ends the run's subagents as cancelled: its cancel reaches
// them. Called without r.mu (a subagent that ends reports through it).
func (r *run) cancelChildren() {
	for _, c := range r.children() {
		if err := r.a.Cancel(context.Background(), c.rec.ID); err != nil {
			r.logger().Warn("cancelling a subagent", "subagent_run_id", c.rec.ID, "err", err)
		}
	}
}

// addSubagentUsage counts a subagent's tokens (its total so far) in its
// parent's usage, and tells every view the parent's new total.
func (r *run) addSubagentUsage(id string, total Usage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rec.State.Finished() {
		return
	}
	if r.rec.SubUsage == nil {
		r.rec.SubUsage = map[string]Usage{}
	}
	was := r.rec.SubUsage[id]
	if was == total {
		return
	}
	r.rec.SubUsage[id] = total
	u := &r.rec.Usage
	u.PromptTokens += total.PromptTokens - was.PromptTokens
	u.CompletionTokens += total.CompletionTokens - was.CompletionTokens
	u.TotalTokens += total.TotalTokens - was.TotalTokens
	u.CachedTokens += total.CachedTokens - was.CachedTokens
	u.ReasoningTokens += total.ReasoningTokens - was.ReasoningTokens
	sum := *u
	r.updateLocked(Update{Kind: UpdateUsage, Usage: &sum})
}

// noteRead records a file a subagent read, for its parent.
func (r *run) noteRead(call *tools.Call, out tools.Result) {
	if r.sub == nil || out.IsError || call.Tool != tools.ReadFileToolName {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range call.Reads {
		if !containsName(r.rec.Read, p) {
			r.rec.Read = append(r.rec.Read, p)
		}
	}
}

// closeEndedLocked says the run's end is saved.
func (r *run) closeEndedLocked() {
	if !r.endClosed {
		r.endClosed = true
		close(r.ended)
	}
}

// linkSubagent ties a restored subagent to its parent, restored before it;
// false when the parent is gone or no longer waits on it (it ended, or
// the step that started it was never saved), and then the subagent is
// ended without running again.
func (a *Agent) linkSubagent(r *run) bool {
	ref := r.rec.Parent
	a.mu.Lock()
	p := a.runs[ref.RunID]
	a.mu.Unlock()
	if p != nil && !p.state().Finished() {
		p.mu.Lock()
		awaited := false
		for _, pc := range p.rec.Pending {
			awaited = awaited || pc.Child == r.rec.ID && pc.Result == nil
		}
		p.mu.Unlock()
		if awaited {
			r.sub = &subLink{parent: p, ref: *ref, child: r.rec.ID}
			return true
		}
	}
	r.mu.Lock()
	r.rec.State, r.rec.StopReason = StateCancelled, StopCancelled
	r.rec.Error = fmt.Sprintf("its parent run %s no longer waits for it", ref.RunID)
	for _, q := range r.rec.Requests {
		if q.open() {
			q.Resolved = &resolution{Outcome: OutcomeCancelled, By: ByCancel}
		}
	}
	if err := r.persistLocked(true); err != nil {
		r.logger().Warn("ending a subagent whose parent is gone", "err", err)
	}
	if err := a.store.saveRun(r.rec, false); err == nil {
		_ = a.store.markClosed(r.rec.ID)
	}
	r.closeLogLocked()
	r.closeEndedLocked()
	r.mu.Unlock()
	return false
}

// awaitsSubagents reports whether some task call of the run's step waits
// on a subagent it launched. r.mu is held or r is not started.
func (r *run) awaitsSubagents() bool {
	for _, pc := range r.rec.Pending {
		if pc.Child != "" && pc.Started != nil && pc.Result == nil {
			return true
		}
	}
	return false
}

// restoreAwaiting decides, once its subagents are restored, what a run
// whose task calls await them does after a restart: it waits again when
// it or one of them waits on the user (its drive awaits them), goes on
// when they all ended (it takes their results), and is paused otherwise,
// like any run cut off mid-step; resumed, it resumes the subagents that
// were cut off with it.
func (r *run) restoreAwaiting() {
	waiting, working := false, false
	for _, c := range r.children() {
		working = working || !c.state().Finished()
		if c.state() == StateRequiresAction {
			waiting = true
			r.mu.Lock()
			if r.waiting == nil {
				r.waiting = map[string]bool{}
			}
			r.waiting[c.rec.ID] = true
			r.mu.Unlock()
		}
	}
	r.mu.Lock()
	waiting = waiting || len(r.openRequestsLocked()) > 0
	if waiting {
		r.stateForSubagentsLocked()
	}
	r.mu.Unlock()
	if waiting || !working {
		r.start() // it waits, or its subagents all ended: it takes their results
		return
	}
	r.pauseRestored()
}

// subagentsOf lists the subagents the runs started, from their records.
func (a *Agent) subagentsOf(runs []string) []string {
	var out []string
	for _, id := range runs {
		if !validID(id) {
			continue
		}
		if rec, err := a.store.loadRun(id); err == nil {
			for _, c := range rec.Subagents {
				if validID(c) {
					out = append(out, c)
				}
			}
		}
	}
	return out
}
