package agent

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/agentd/agentd/tools"
	"github.com/agentd/agentd/tools/policy"
)

const (
	// repeatLimit identical calls in a row are refused; the model is told.
	repeatLimit = 3
	// repeatStop refusals in a row end the run: the model is stuck.
	repeatStop = 3
	// toolErrorStop consecutive failing calls end the run.
	toolErrorStop = 5
)

// openStep routes each of the model's calls: answered at once (the plan, a
// refusal), approved to run, or waiting on a person. Every request is
// persisted with the run before any is sent.
func (r *run) openStep(ctx context.Context, calls []ToolCall) error {
	var requests []*request
	for _, c := range calls {
		pc := &pendingCall{Call: c}
		// The loop's own tools are announced first (the plan shows under its
		// call); workspace tools once prepared, with their real title and
		// the places they touch.
		loopTool := c.Name == planToolName || c.Name == askToolName || c.Name == proposeToolName
		if loopTool {
			r.announce(c, nil)
		}
		req, err := r.route(ctx, pc)
		if err != nil {
			return err
		}
		switch {
		case c.Name == taskToolName && r.sub == nil:
			r.announceTask(pc) // task.go
		case !loopTool:
			r.mu.Lock()
			call := r.prepared[pc]
			r.mu.Unlock()
			r.announce(c, call)
		}
		if pc.Result != nil {
			r.reportSimple(pc.Call.ID, pc.Result)
		}
		r.mu.Lock()
		if req != nil {
			q := r.newRequestOf(originCall, req)
			q.CallID, q.call = c.ID, pc
			pc.RequestID, pc.req = req.RequestID, q
			r.rec.Requests = append(r.rec.Requests, q)
			requests = append(requests, q)
		}
		r.rec.Pending = append(r.rec.Pending, pc)
		r.mu.Unlock()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rec.Step++
	if len(requests) > 0 {
		return r.askLocked(requests)
	}
	// Not saved: a restart before the step commits asks the model again,
	// and a call that must not run twice is saved as it starts.
	return nil
}

// announce sends the tool_call update; call is the prepared call, if any.
func (r *run) announce(c ToolCall, call *tools.Call) {
	title, kind := c.Name, tools.KindOther
	var locations []tools.Location
	if t, ok := r.toolNamed(c.Name); ok {
		kind = t.Info().Kind
	}
	if call != nil {
		title, locations = call.Title, call.Locations
	}
	switch c.Name {
	case askToolName:
		kind = tools.KindOther
		title = "Ask the user"
	case planToolName:
		kind = tools.KindThink
		title = "Update the plan"
	case proposeToolName:
		kind = tools.KindThink
		title = "Propose the plan"
	}
	r.update(Update{Kind: UpdateToolCall, ToolCallID: c.ID, Title: title, ToolKind: kind,
		Status: StatusPending, Input: c.input(), Locations: locations})
}

// route decides what happens to one call: its result, or the request it
// waits on.
func (r *run) route(ctx context.Context, pc *pendingCall) (req *InputRequest, err error) {
	c := pc.Call
	if r.sub != nil && !slices.Contains(r.rec.Tools, c.Name) {
		// A subagent has the tools its parent gave it, nothing else.
		pc.Result = &callResult{IsError: true, Content: fmt.Sprintf("Not run: %s is not one of your tools. You have: %s.", c.Name, strings.Join(r.rec.Tools, ", "))}
		return nil, nil
	}
	if res, stop := r.repetition(c); res != nil {
		if stop {
			return nil, stopError{reason: StopRepetition, msg: fmt.Sprintf("the model repeated the call %s %d times and would not stop", c.Name, repeatLimit+repeatStop-1)}
		}
		pc.Result = res
		return nil, nil
	}
	switch c.Name {
	case planToolName:
		pc.Result = r.applyPlan(c.Args)
	case askToolName:
		pc.Result, req = r.askRequest(c)
	case proposeToolName:
		pc.Result, req = r.proposeRequest(c) // plan.go
	case taskToolName:
		pc.Result = r.routeTask(ctx, pc) // task.go
	default:
		pc.Result, req, pc.Approved = r.judge(ctx, pc)
	}
	return req, nil
}

// repetition refuses the third identical call in a row and stops the run
// when the model keeps going.
func (r *run) repetition(c ToolCall) (*callResult, bool) {
	sig := callSignature(c)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rec.LastCalls = append(r.rec.LastCalls, sig)
	if len(r.rec.LastCalls) > repeatLimit {
		r.rec.LastCalls = r.rec.LastCalls[len(r.rec.LastCalls)-repeatLimit:]
	}
	if len(r.rec.LastCalls) < repeatLimit {
		return nil, false
	}
	for _, s := range r.rec.LastCalls {
		if s != sig {
			r.rec.Repeats = 0
			return nil, false
		}
	}
	r.rec.Repeats++
	if r.rec.Repeats >= repeatStop {
		return nil, true
	}
	hint := "Use what you already have, try something different, or ask the user with ask_user."
	if !r.a.canAsk() {
		hint = "Use what you already have, or try something different."
	}
	return &callResult{IsError: true, Content: fmt.Sprintf(
		"Not run: this is the same %s call %d times in a row and its result will not change. %s", c.Name, repeatLimit, hint)}, false
}

// offered names the tools this session offers the model, as its tool list
// does: the loop's own and the MCP tools included, unavailable ones left out.
func (r *run) offered(ctx context.Context) []string {
	if r.sub != nil {
		return r.rec.Tools // a subagent's own
	}
	return r.a.sessionPrefix(ctx, r.rec.SessionID, r.mcpToolNames()).Tools
}

// judge prepares a workspace tool call and asks the policy about it. A
// command carries how it will run (pc.Confine), decided here.
func (r *run) judge(ctx context.Context, pc *pendingCall) (*callResult, *InputRequest, bool) {
	c := pc.Call
	t, ok := r.toolNamed(c.Name)
	if !ok {
		return &callResult{IsError: true, Content: fmt.Sprintf("Unknown tool %q. Available tools: %s.", c.Name, strings.Join(r.offered(ctx), ", "))}, nil, false
	}
	r.mu.Lock()
	r.env.Secrets = maps.Clone(r.secrets) // what a command may use is known when it is judged
	r.mu.Unlock()
	call, refusal := tools.Prepare(ctx, t, r.env, c.Args)
	if refusal != nil {
		return &callResult{IsError: true, Content: refusal.Output}, nil, false
	}
	r.mu.Lock()
	r.prepared[pc] = call
	mode := r.rec.Policy
	r.mu.Unlock()
	if res := r.beforeTool(ctx, c, call); res != nil {
		return res, nil, false
	}
	d := r.a.policy.Decide(r.rec.SessionID, policyMode(mode), call)
	if call.Command != nil {
		r.warnUnconfined()
		if d.Action != policy.Deny {
			conf := d.Confine
			pc.Confine = &conf
		}
	}
	e := auditEntry{Run: r.rec, Call: call, CallID: c.ID, Decision: string(d.Action), By: ByPolicy, Rule: d.Rule, Confine: pc.Confine}
	switch d.Action {
	case policy.Allow:
		r.a.audit(e)
		return nil, nil, true
	case policy.Deny:
		e.Reason = d.Reason
		r.a.audit(e)
		if mode == tools.ModePlan && strings.HasPrefix(d.Rule, "mode ") && r.sub == nil {
			return &callResult{IsError: true, Rejected: true, Content: planDeniedText, Shown: planDeniedShown}, nil, false // plan.go
		}
		return &callResult{IsError: true, Rejected: true, Content: deniedText(d)}, nil, false
	}
	req := r.confirmRequest(c, call, d)
	if !r.a.renders(req.Kind) {
		e.Decision, e.Reason = auditRejected, "the editor cannot show this confirmation"
		r.a.audit(e)
		what := "this " + requestRules[req.Kind].what
		if call.Host != nil {
			what = hostRequest(call)
		}
		return &callResult{IsError: true, Rejected: true, Content: fmt.Sprintf("Not run: %s needs the user's approval, and no one can give it in this session. Do not retry it; do what you can without it, and tell the user what to run or change themselves.", what)}, nil, false
	}
	return nil, req, false
}

// deniedText is what the model reads of a call the policy denies: why, and
// that retrying will not help.
func deniedText(d policy.Verdict) string {
	why := d.Reason
	if !strings.Contains(d.Reason, strings.TrimPrefix(d.Rule, "built-in: ")) {
		why = d.Rule + ": " + d.Reason
	}
	return fmt.Sprintf("Not run: the policy denies it (%s). Do not retry it; find another way, or tell the user what you need.", why)
}

func (r *run) confirmRequest(c ToolCall, call *tools.Call, d policy.Verdict) *InputRequest {
	req := r.newRequest(c.ID)
	req.Options = confirmOptions
	req.Rule = d.Rule
	switch {
	case call.Command != nil:
		req.Kind = KindConfirmCommand
		req.Title = "Run " + call.Command.Line
		req.Command, req.Cwd = call.Command.Line, call.Command.Cwd
		r.describeConfinement(req, d)
	case len(call.Writes) == 0:
		confirmTool(req, c, call)
	default:
		req.Kind = KindConfirmWrite
		req.Title = call.Title
		req.Message = fmt.Sprintf("The agent wants to change %d file(s).", len(call.Writes))
		req.Diff = call.Writes
	}
	r.describeGrant(req, call)
	expireAfter(req, r.a.cfg.ConfirmTimeout)
	return req
}

// describeGrant says on a confirmation what "allow for this session" and
// "always allow" would allow from then on (policy.Covers): in GrantCovers,
// and in those answers' descriptions. A confirmation that offers neither
// (a command the sandbox cannot confine) says nothing.
func (r *run) describeGrant(req *InputRequest, call *tools.Call) {
	if !slices.ContainsFunc(req.Options, func(o tools.Option) bool { return o.OptionID == string(tools.AllowSession) }) {
		return
	}
	covers := r.a.policy.Covers(r.rec.SessionID, call)
	if len(covers) == 0 {
		return
	}
	req.GrantCovers = covers
	req.Options = slices.Clone(req.Options)
	for i, o := range req.Options {
		var when string
		switch tools.Decision(o.OptionID) {
		case tools.AllowSession:
			when = "for the rest of this session"
		case tools.AllowAlways:
			when = "from now on, in this workspace"
		default:
			continue
		}
		d := when + ", also allows: " + strings.Join(covers, "; ")
		if o.Description != "" {
			d = o.Description + "; " + d
		}
		req.Options[i].Description = d
	}
}

// confirmOptions are the answers a confirmation offers: each decision, in
// the order editors show them.
var confirmOptions = []tools.Option{
	{OptionID: string(tools.AllowOnce), Label: "Allow"},
	{OptionID: string(tools.AllowSession), Label: "Allow for this session"},
	{OptionID: string(tools.AllowAlways), Label: "Always allow"},
	{OptionID: string(tools.RejectOnce), Label: "Reject"},
	{OptionID: string(tools.RejectAlways), Label: "Always reject"},
}

func (r *run) newRequest(toolCallID string) *InputRequest {
	req := &InputRequest{RunID: r.rec.ID, SessionID: r.rec.SessionID, RequestID: newID("q"),
		ToolCallID: toolCallID, CreatedAt: time.Now().UTC().Truncate(time.Millisecond)}
	if r.sub != nil {
		r.sub.labelRequest(req) // subagent.go
	}
	return req
}

// settle runs the step's approved calls and turns resolutions into results,
// waiting for people as long as some call is still open; then it commits the
// step's results in the order the model asked.
func (r *run) settle(ctx context.Context) error {
	if err := r.startTools(ctx); err != nil {
		return err
	}
	for {
		pc, approved := r.nextActionable()
		if pc == nil {
			if r.stepComplete() {
				r.diagnoseStep(ctx)
				return r.commitStep()
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-r.wake:
			}
			continue
		}
		if approved && pc.Child != "" {
			// A task call: its subagent runs beside the step's other
			// calls and its siblings, and gives it a result when it ends.
			if err := r.startTask(ctx, pc); err != nil {
				return err
			}
			continue
		}
		var res *callResult
		var err error
		if approved {
			res, err = r.execute(ctx, pc)
		} else {
			res = r.resultOfResolution(ctx, pc)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return err
		}
		if res != nil {
			if err := r.finishCall(pc, res); err != nil {
				return err
			}
		}
	}
}

// nextActionable finds the first call that can move: approved to run, or
// resolved and waiting to be turned into a result.
func (r *run) nextActionable() (*pendingCall, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, pc := range r.rec.Pending {
		if pc.Result != nil {
			continue
		}
		if pc.Approved {
			if pc.Child != "" && (r.tasks[pc] != nil || len(r.tasks) >= maxSubagents) {
				continue // its subagent runs, or waits for one of its siblings to end (task.go)
			}
			return pc, true
		}
		if pc.req != nil && !pc.req.open() {
			return pc, false
		}
	}
	return nil, false
}

func (r *run) stepComplete() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stepCompleteLocked()
}

func (r *run) stepCompleteLocked() bool {
	for _, pc := range r.rec.Pending {
		if pc.Result == nil {
			return false
		}
	}
	return true
}

// finishCall records a call's result. The result of a call someone decided
// on, or of one that must not run twice, is saved at once unless the step
// commits now anyway: a restart then reads it back instead of running the
// call again, or telling the model a finished command was interrupted. The
// others are saved when the step commits.
func (r *run) finishCall(pc *pendingCall, res *callResult) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	pc.Result = res
	if (pc.req != nil || pc.Started != nil) && !r.stepCompleteLocked() {
		return r.persistLocked(false)
	}
	return nil
}

// commitStep appends the step's results to the conversation, in the order the
// model asked, saves the step, and checks the error guard.
func (r *run) commitStep() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var pictures []Message
	for _, pc := range r.rec.Pending {
		r.rec.Messages = append(r.rec.Messages, Message{Role: RoleTool, ToolCallID: pc.Call.ID, Content: pc.Result.Content})
		if im := pc.Result.Image; im != nil {
			pictures = append(pictures, pictureMessage(*im))
		}
		switch {
		case pc.Result.IsError && !pc.Result.Rejected:
			r.rec.ToolErrors++
		case !pc.Result.IsError:
			r.rec.ToolErrors = 0
		}
	}
	// Tool results carry text only: the pictures follow them, in the order
	// of their calls, once every result is in (a request may put nothing
	// between an assistant's tool calls and their results).
	r.rec.Messages = append(r.rec.Messages, pictures...)
	r.rec.Pending = nil
	r.dropStepRequestsLocked() // all resolved: the step's calls are done
	clear(r.prepared)          // the step's calls are done; they hold file contents
	if r.rec.State != StateRunning {
		r.setStateLocked(StateRunning, "", "")
	}
	if err := r.persistLocked(false); err != nil {
		return err
	}
	if r.rec.ToolErrors >= toolErrorStop {
		return stopError{reason: StopToolErrors, msg: fmt.Sprintf("%d tool calls in a row failed; the last: %s", r.rec.ToolErrors, lastToolError(r.rec.Messages))}
	}
	return nil
}

func lastToolError(msgs []Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == RoleTool {
			return truncate(msgs[i].Content, 300)
		}
	}
	return ""
}

// reportSimple sends the tool_call_update of a call that ran no tool.
func (r *run) reportSimple(id string, res *callResult) {
	status := StatusCompleted
	if res.IsError {
		status = StatusFailed
	}
	out := res.Content
	if res.Shown != "" {
		out = res.Shown
	}
	r.update(Update{Kind: UpdateToolCallUpdate, ToolCallID: id, Status: status, Output: out, IsError: res.IsError})
}

// reportResult sends the tool_call_update for a finished call.
func (r *run) reportResult(id string, res tools.Result, status Status, dur time.Duration) {
	out := res.Output
	if res.Full != "" {
		out = boundFull(res.Full)
	}
	r.update(Update{Kind: UpdateToolCallUpdate, ToolCallID: id, Status: status, Output: r.redact(out),
		IsError: res.IsError, Truncated: res.Truncated, ExitCode: res.ExitCode, DurationMs: dur.Milliseconds(), Files: res.Files,
		Checkpoint: res.Checkpoint, Fetched: res.Fetched})
}

// redact replaces every secret value the user gave, verbatim or encoded
// (tools.Redactor), with its name, so it reaches neither the model nor the
// editor nor the logs.
func (r *run) redact(s string) string { return r.red.Redact(s) }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// confirmTool fills the confirmation of a call that neither writes nor
// runs a command (an MCP tool's, effect unknown): a command confirmation
// whose command is the tool and its arguments, since that is what will
// run, with what the tool's server claims in the message.
func confirmTool(req *InputRequest, c ToolCall, call *tools.Call) {
	req.Kind = KindConfirmCommand
	if call.Host != nil {
		req.Title = strings.ToUpper(call.Title[:1]) + call.Title[1:]
		req.Message = "The agent wants to fetch a web page from " + call.Host.Name + ". " + call.Detail
		req.Command = call.Title
		return
	}
	req.Title = "Call " + call.Title
	req.Message = "The agent wants to call a tool whose effect agentd cannot check."
	if call.Detail != "" {
		req.Message += " " + call.Detail
	}
	req.Command = c.Name + " " + string(c.input())
}
