package agent

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/agentd/agentd/tools"
)

// The task tool starts a subagent (subagent.go) on a prompt the model
// writes, and its result is the subagent's final answer with the files it
// read. The task calls of one reply run at the same time: settle launches
// each and goes on (startTask), a goroutine per call waits for its
// subagent to end (awaitTask) and gives the call its result, and the step
// commits once every call has one, as for any other call.
//
// Restarts: a task call's subagent id is given when the call is routed and
// saved, synced, before the subagent exists (markStarted), and the
// subagent is saved before it runs. So a restart finds, for each task call
// without a result, either its subagent (restored, which the parent awaits
// again: resumed with it if it was cut off mid-step, still waiting if it
// waited on the user; or ended, and its end is the result), or no subagent
// at all, and then the model reads that it never started. A subagent never
// runs twice, and none is lost.

const taskToolName = "task"

//go:embed task.md
var taskDescription string

var taskSchema = tools.SchemaOf(taskParams{})

type taskParams struct {
	Description string   `json:"description" min:"1" max:"100" jsonschema:"A short label for the user, 3 to 7 words: what the subagent does."`
	Prompt      string   `json:"prompt" min:"1" jsonschema:"The task, complete in itself: the subagent sees none of this conversation."`
	Tools       []string `json:"tools,omitempty" jsonschema:"The tools it may use, named from your own (not task, update_plan or propose_plan). Default: the reading and searching tools and ask_user."`
}

// taskWait is one task call a drive awaits.
type taskWait struct{}

// maxSubagents bounds the subagents a run has at work at once: a reply
// may start more, and each of the others starts when one ends. Each is a
// conversation with the model of its own, and an endpoint serves a few
// at once, not dozens.
const maxSubagents = 8

// routeTask checks a task call and makes it ready to launch: its subagent's
// id, given now, goes into the step; a result the model reads when the call
// cannot run.
func (r *run) routeTask(ctx context.Context, pc *pendingCall) *callResult {
	var p taskParams
	if res := loopArgs(taskSchema, pc.Call.Args, &p); res != nil {
		return res
	}
	if strings.TrimSpace(p.Prompt) == "" || strings.TrimSpace(p.Description) == "" {
		return &callResult{IsError: true, Content: "task needs a description (a few words) and a prompt (the whole task): both are blank."}
	}
	if _, refusal := r.taskTools(ctx, p.Tools); refusal != "" {
		return &callResult{IsError: true, Content: refusal}
	}
	pc.Child, pc.Approved = newID("r"), true
	r.mu.Lock()
	r.rec.Subagents = append(r.rec.Subagents, pc.Child)
	r.mu.Unlock()
	return nil
}

// taskTools is the tool list of a subagent the model asks for: the tools it
// named, in its session's order, or by default the reading and searching
// tools; a refusal the model reads when it named one it cannot give.
func (r *run) taskTools(ctx context.Context, asked []string) ([]string, string) {
	session := r.offered(ctx)
	var allowed []string
	for _, n := range session {
		if !slices.Contains(notForSubagents, n) {
			allowed = append(allowed, n)
		}
	}
	if len(asked) == 0 {
		return r.a.subagentTools(allowed), ""
	}
	var bad []string
	for _, n := range asked {
		if !slices.Contains(allowed, n) {
			bad = append(bad, n)
		}
	}
	if len(bad) > 0 {
		return nil, fmt.Sprintf("Not run: a subagent cannot be given %s. Name tools from: %s (or leave tools out for the reading and searching tools).",
			strings.Join(bad, ", "), strings.Join(allowed, ", "))
	}
	var names []string
	for _, n := range allowed {
		if slices.Contains(asked, n) {
			names = append(names, n)
		}
	}
	return names, ""
}

// announceTask sends the tool_call of a task call: the subagent it starts,
// labelled with its description.
func (r *run) announceTask(pc *pendingCall) {
	var p taskParams
	_ = json.Unmarshal(pc.Call.Args, &p)
	title := "Subagent"
	if d := strings.TrimSpace(p.Description); d != "" {
		title += ": " + d
	}
	var sub *Subagent
	if pc.Child != "" {
		sub = &Subagent{RunID: pc.Child, Description: p.Description}
	}
	r.update(Update{Kind: UpdateToolCall, ToolCallID: pc.Call.ID, Title: title, ToolKind: tools.KindOther,
		Status: StatusPending, Input: pc.Call.input(), Subagent: sub})
}

// startTask launches a task call's subagent, or finds again the one a
// restart left, and goes on: a goroutine awaits its end. An error means
// the call could not be saved as started, and nothing ran.
func (r *run) startTask(ctx context.Context, pc *pendingCall) error {
	w := &taskWait{}
	r.mu.Lock()
	if r.tasks == nil {
		r.tasks = map[*pendingCall]*taskWait{}
	}
	if pc.Result != nil { // cancelled while it waited (cancelWaiting)
		r.mu.Unlock()
		return nil
	}
	r.tasks[pc] = w
	fresh := pc.Started == nil
	r.mu.Unlock()
	var child *run
	if fresh {
		if err := r.markStarted(pc); err != nil {
			r.dropTask(pc, w)
			return err
		}
		var p taskParams
		_ = json.Unmarshal(pc.Call.Args, &p)
		names, refusal := r.taskTools(ctx, p.Tools)
		if refusal != "" { // the session's tools changed since the call was routed
			return r.endTask(pc, w, &callResult{IsError: true, Content: refusal}, nil)
		}
		var err error
		if child, err = r.newSubagent(pc, p, names); err != nil {
			r.logger().Error("a subagent could not be started", "subagent_run_id", pc.Child, "err", err)
			return r.endTask(pc, w, &callResult{IsError: true, Content: "The subagent could not be started: " + err.Error()}, nil)
		}
	} else {
		var (
			rec *runRecord
			err error
		)
		switch child, rec, err = r.subagentOf(pc); {
		case child == nil && errors.Is(err, fs.ErrNotExist):
			return r.endTask(pc, w, &callResult{IsError: true, Content: notStartedText}, nil)
		case child == nil && (err != nil || !rec.State.Finished()):
			r.logger().Error("a subagent's state did not load after a restart", "subagent_run_id", pc.Child, "err", err)
			return r.endTask(pc, w, &callResult{IsError: true, Content: lostText}, nil)
		case child == nil:
			res, sub := taskResult(rec, r.outputLimit())
			r.addSubagentUsage(rec.ID, rec.Usage)
			return r.endTask(pc, w, res, sub)
		}
		if child.state() == StatePaused {
			// Cut off by a restart (or a state it could not save): its
			// parent goes on, and so does it.
			child.setState(StateRunning, "", "")
			child.start()
		}
	}
	r.update(Update{Kind: UpdateToolCallUpdate, ToolCallID: pc.Call.ID, Status: StatusInProgress,
		Subagent: &Subagent{RunID: child.rec.ID, Description: child.sub.ref.Description}})
	r.a.wg.Add(1)
	go r.awaitTask(ctx, pc, w, child)
	r.mu.Lock()
	cancel := r.cancelOnStart[pc.Child]
	delete(r.cancelOnStart, pc.Child)
	r.mu.Unlock()
	if cancel {
		if err := r.a.Cancel(ctx, pc.Child); err != nil {
			r.logger().Warn("cancelling a subagent cancelled as it started", "subagent_run_id", pc.Child, "err", err)
		}
	}
	return nil
}

// cancelWaitingTask cancels a subagent that has not started: its task
// call waits for one of its siblings to end (maxSubagents). False when no
// run has a task call for that id.
func (a *Agent) cancelWaitingTask(id string) (bool, error) {
	a.mu.Lock()
	var parents []*run
	for _, r := range a.runs {
		if r.sub == nil {
			parents = append(parents, r)
		}
	}
	a.mu.Unlock()
	for _, r := range parents {
		if found, err := r.cancelWaiting(id); found {
			return true, err
		}
	}
	return false, nil
}

// cancelledWaitingText is what the model reads of a task call whose
// subagent was cancelled before it started.
const cancelledWaitingText = "The subagent was cancelled before it started, and did nothing."

// cancelWaiting ends the task call of subagent id, not started, as
// cancelled, saved before it is acknowledged; one being started now is
// cancelled once it has (startTask).
func (r *run) cancelWaiting(id string) (bool, error) {
	r.mu.Lock()
	var pc *pendingCall
	for _, p := range r.rec.Pending {
		if p.Child == id && p.Result == nil {
			pc = p
		}
	}
	if pc == nil || r.rec.State.Finished() {
		r.mu.Unlock()
		return false, nil
	}
	if r.tasks[pc] != nil || pc.Started != nil {
		if r.cancelOnStart == nil {
			r.cancelOnStart = map[string]bool{}
		}
		r.cancelOnStart[id] = true
		r.mu.Unlock()
		return true, nil
	}
	pc.Result = &callResult{IsError: true, Rejected: true, Content: cancelledWaitingText}
	if err := r.persistLocked(true); err != nil {
		pc.Result = nil
		r.mu.Unlock()
		return true, err
	}
	var p taskParams
	_ = json.Unmarshal(pc.Call.Args, &p)
	r.updateLocked(Update{Kind: UpdateToolCallUpdate, ToolCallID: pc.Call.ID, Status: StatusFailed, Output: cancelledWaitingText,
		IsError: true, Subagent: &Subagent{RunID: id, Description: p.Description, State: StateCancelled, StopReason: StopCancelled}})
	r.mu.Unlock()
	r.signal()
	return true, nil
}

// notStartedText is what the model reads of a task call whose subagent a
// restart kept from starting.
const notStartedText = "Not run: the daemon restarted before this subagent started, so it did nothing. Start it again if you still need it."

// lostText is what the model reads of a task call whose subagent a
// restart could not bring back (its state did not load).
const lostText = "Interrupted: the daemon restarted while this subagent worked, and its state could not be loaded again, so it did not finish. Start it again if you still need it."

// awaitTask waits for a subagent to end and gives its task call the
// result. A drive that stops (the run paused, cancelled, the daemon
// stopping) stops waiting; the next one awaits the subagent again.
func (r *run) awaitTask(ctx context.Context, pc *pendingCall, w *taskWait, child *run) {
	defer r.a.wg.Done()
	select {
	case <-child.ended:
	case <-ctx.Done():
		r.dropTask(pc, w)
		return
	}
	child.mu.Lock()
	rec := *child.rec
	child.mu.Unlock()
	r.addSubagentUsage(rec.ID, rec.Usage)
	res, sub := taskResult(&rec, r.outputLimit())
	if err := r.endTask(pc, w, res, sub); err != nil {
		r.logger().Warn("a subagent's result is not saved yet: the step saves it", "subagent_run_id", rec.ID, "err", err)
	}
}

func (r *run) dropTask(pc *pendingCall, w *taskWait) {
	r.mu.Lock()
	if r.tasks[pc] == w {
		delete(r.tasks, pc)
	}
	r.mu.Unlock()
}

// endTask gives a task call its result, tells every view, and wakes the
// drive. A result that cannot be saved at once is saved with the step.
func (r *run) endTask(pc *pendingCall, w *taskWait, res *callResult, sub *Subagent) error {
	status := StatusCompleted
	if res.IsError {
		status = StatusFailed
	}
	r.update(Update{Kind: UpdateToolCallUpdate, ToolCallID: pc.Call.ID, Status: status, Output: res.Content,
		IsError: res.IsError, Subagent: sub})
	err := r.finishCall(pc, res)
	r.dropTask(pc, w)
	r.signal()
	return err
}

func (r *run) outputLimit() int { return tools.OutputLimitFor(r.a.ContextWindow()) }

// maxReadListed bounds the files a task's result lists.
const maxReadListed = 40

// taskResult is what the model reads of an ended subagent, and how its
// task call's last update describes it.
func taskResult(rec *runRecord, limit int) (*callResult, *Subagent) {
	sub := &Subagent{RunID: rec.ID, State: rec.State, StopReason: rec.StopReason, Error: rec.Error, Read: rec.Read}
	if rec.Parent != nil {
		sub.Description = rec.Parent.Description
	}
	if rec.Usage != (Usage{}) {
		u := rec.Usage
		sub.Usage = &u
	}
	var res *callResult
	switch rec.State {
	case StateCompleted:
		text := strings.TrimSpace(rec.FinalText)
		if len(text) > limit+fitSlack {
			text, _ = tools.Fit(text, limit)
		}
		if rec.StopReason == StopMaxSteps {
			text = "The subagent used all its steps, so its answer may be incomplete:\n\n" + text
		}
		res = &callResult{Content: text + readList(rec.Read)}
	case StateCancelled:
		res = &callResult{IsError: true, Rejected: true, Content: "The subagent was cancelled before it finished, and gave no answer." + readList(rec.Read)}
	default:
		res = &callResult{IsError: true, Content: fmt.Sprintf("The subagent failed: %s.", strings.TrimSuffix(rec.Error, ".")) + readList(rec.Read)}
	}
	return res, sub
}

// readList names the files a subagent read, for its parent.
func readList(read []string) string {
	if len(read) == 0 {
		return ""
	}
	shown := read[:min(len(read), maxReadListed)]
	s := fmt.Sprintf("\n\nFiles the subagent read (%d): %s", len(read), strings.Join(shown, ", "))
	if n := len(read) - len(shown); n > 0 {
		s += fmt.Sprintf(" and %d more", n)
	}
	return s + "."
}
