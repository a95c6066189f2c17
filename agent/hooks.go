package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentd/agentd/tools"
	"github.com/agentd/agentd/tools/policy"
)

// Hooks run the user's commands on a run's events (Config.Hooks), each in
// the kernel sandbox with the event as JSON on its standard input. A hook
// that fails, or runs past its timeout, is reported (a log line and a
// notice) and changes nothing: the run goes on as if it had no such
// hook. A before_tool hook may deny a call, never approve one: the policy
// still decides what it does not deny.

// HookOutcome says how a hook failed.
type HookOutcome string

// Hook failures.
const (
	// HookFailed: the hook could not start, exited with a status that
	// means nothing for its event, or answered what cannot be read.
	HookFailed HookOutcome = "failed"
	// HookTimedOut: it ran past its timeout and was killed.
	HookTimedOut HookOutcome = "timeout"
)

// HookReport is a hook that failed, in the notice that reports it.
// Nothing was decided by it; the run went on.
type HookReport struct {
	Event   HookEvent   `json:"event"`
	Command string      `json:"command"`
	Outcome HookOutcome `json:"outcome"`
	Error   string      `json:"error"`
}

// Message says it in a line for people: the notice's text.
func (h HookReport) Message() string {
	return fmt.Sprintf("The %s hook `%s` %s: %s; the run went on without it.", h.Event, h.Command,
		map[HookOutcome]string{HookFailed: "failed", HookTimedOut: "timed out"}[h.Outcome], h.Error)
}

// hookRunner runs the hooks of one agent.
type hookRunner struct {
	hooks   Hooks
	root    string
	userDir string // ~/.config/agentd: its hooks/ directory is readable by every hook
	sandbox *tools.Sandbox
	log     *slog.Logger
	// ctx ends at Shutdown, killing the hooks that still run; wg counts
	// those run in the background, started only while !closed.
	ctx      context.Context
	stop     context.CancelFunc
	mu       sync.Mutex // guards closed and wg.Add
	closed   bool
	wg       sync.WaitGroup
	finished sync.Map // run id → true once its run_finished hooks ran
}

func newHookRunner(cfg Config, sb *tools.Sandbox) *hookRunner {
	ctx, stop := context.WithCancel(context.Background())
	return &hookRunner{hooks: cfg.Hooks, root: cfg.Root, userDir: cfg.UserConfigDir, sandbox: sb, log: cfg.Logger, ctx: ctx, stop: stop}
}

// close kills the hooks still running and waits for them.
func (h *hookRunner) close() {
	if h == nil {
		return
	}
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.stop()
	h.wg.Wait()
}

// background runs fn on its own goroutine unless the runner is closed.
func (h *hookRunner) background(fn func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		fn()
	}()
}

// on lists the hooks of an event; for a tool event, those that match the
// tool. An agent made without New has none.
func (h *hookRunner) on(e HookEvent, tool string) []Hook {
	if h == nil {
		return nil
	}
	var out []Hook
	for _, hook := range h.hooks[e] {
		if !e.toolEvent() || hook.matches(tool) {
			out = append(out, hook)
		}
	}
	return out
}

// run runs one hook with the payload on its standard input.
func (h *hookRunner) run(ctx context.Context, hook Hook, e HookEvent, payload any) tools.HookResult {
	data, err := json.Marshal(payload)
	if err != nil {
		return tools.HookResult{ExitCode: -1, Err: fmt.Errorf("encoding the event: %w", err)}
	}
	read := append([]string(nil), hook.Read...)
	if p := hook.program(); p != "" {
		read = append(read, p)
	}
	if h.userDir != "" {
		if dir := filepath.Join(h.userDir, "hooks"); isDir(dir) {
			read = append(read, dir)
		}
	}
	env := []string{"AGENTD_HOOK_EVENT=" + string(e), "AGENTD_WORKSPACE=" + h.root}
	for _, k := range sortedKeys(hook.Env) {
		env = append(env, k+"="+hook.Env[k])
	}
	return h.sandbox.RunHook(ctx, tools.HookSpec{Args: hook.argv(), Workspace: h.root, Profile: hook.Sandbox,
		Network: hook.Network, Read: read, Write: hook.Write, Env: env, Stdin: data, Timeout: hook.Timeout})
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// failure says why a hook's end is a failure, "" when it is not: it ran
// and exited with one of the statuses its event gives a meaning (0, and 2
// for before_tool).
func failure(res tools.HookResult, meaningful ...int) (HookOutcome, string) {
	switch {
	case res.TimedOut:
		return HookTimedOut, "killed after " + res.Duration.Round(time.Millisecond).String()
	case res.Err != nil:
		return HookFailed, res.Err.Error()
	}
	for _, code := range meaningful {
		if res.ExitCode == code {
			return "", ""
		}
	}
	why := fmt.Sprintf("exit status %d", res.ExitCode)
	if s := lastLine(res.Stderr); s != "" {
		why += ": " + s
	}
	if hint := tools.RefusalHint(res.Refused, `this hook's entry under "hooks" in your config.json`); hint != "" {
		why += " — " + hint
	}
	return HookFailed, why
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return truncate(s, 300)
}

// hookFailed reports a failed hook: a log line, and a notice while
// the run has not ended (a run that ended says no more). A hook the
// daemon's shutdown killed is not a failure of the hook.
func (r *run) hookFailed(hook Hook, e HookEvent, callID string, outcome HookOutcome, why string) {
	if r.a.hooks.ctx.Err() != nil {
		return
	}
	r.logger().Warn("hook failed", "event", e, "command", hook.label(), "outcome", outcome, "err", why)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rec.State.Finished() {
		return
	}
	report := HookReport{Event: e, Command: hook.label(), Outcome: outcome, Error: why}
	r.updateLocked(Update{Kind: UpdateNotice, Text: report.Message(), ToolCallID: callID, Hook: &report})
}

// The payloads: what each hook reads on its standard input.

// hookHeader is what every payload says.
type hookHeader struct {
	Event     HookEvent `json:"event"`
	Workspace string    `json:"workspace"`
	SessionID string    `json:"sessionId"`
	RunID     string    `json:"runId"`
}

func (r *run) hookHeader(e HookEvent) hookHeader {
	return hookHeader{Event: e, Workspace: r.a.cfg.Root, SessionID: r.rec.SessionID, RunID: r.rec.ID}
}

// toolPayload is before_tool's payload, and the start of after_tool's.
type toolPayload struct {
	hookHeader
	Tool       string          `json:"tool"`
	ToolCallID string          `json:"toolCallId"`
	Title      string          `json:"title,omitempty"`
	Effect     tools.Effect    `json:"effect,omitempty"`
	Input      json.RawMessage `json:"input"`
	Command    string          `json:"command,omitempty"`
	Cwd        string          `json:"cwd,omitempty"`
	// Files are the files the call would write (before_tool) or changed
	// (after_tool), workspace-relative.
	Files []string `json:"files,omitempty"`
}

func (r *run) toolPayload(e HookEvent, c ToolCall, call *tools.Call) toolPayload {
	p := toolPayload{hookHeader: r.hookHeader(e), Tool: c.Name, ToolCallID: c.ID, Input: c.input()}
	if len(p.Input) == 0 {
		p.Input = json.RawMessage("{}")
	}
	if call != nil {
		p.Title, p.Effect = call.Title, call.Effect
		if call.Command != nil {
			p.Command, p.Cwd = call.Command.Line, call.Command.Cwd
		}
		p.Files = diffPaths(call.Writes)
	}
	return p
}

func diffPaths(diffs []tools.FileDiff) []string {
	var out []string
	for _, d := range diffs {
		out = append(out, d.Path)
	}
	return out
}

// afterToolPayload is after_tool's payload.
type afterToolPayload struct {
	toolPayload
	Status  Status `json:"status"`
	IsError bool   `json:"isError"`
	// Output is what the model reads of the result.
	Output     string `json:"output"`
	ExitCode   *int   `json:"exitCode,omitempty"`
	DurationMs int64  `json:"durationMs"`
}

// inputPayload is input_requested's payload: the request as the editor
// got it (agent/inputRequest).
type inputPayload struct {
	hookHeader
	Request InputRequest `json:"request"`
}

// finishedPayload is run_finished's payload.
type finishedPayload struct {
	hookHeader
	State      State      `json:"state"`
	StopReason StopReason `json:"stopReason,omitempty"`
	Error      string     `json:"error,omitempty"`
	// Prompt is what the user typed; Text the final answer.
	Prompt string   `json:"prompt"`
	Text   string   `json:"text,omitempty"`
	Files  []string `json:"files,omitempty"`
	Usage  Usage    `json:"usage"`
}

// The events.

// beforeTool runs the before_tool hooks on a prepared call, before the
// policy judges it. A denial is the call's result, which the model reads;
// nil means no hook denied it.
func (r *run) beforeTool(ctx context.Context, c ToolCall, call *tools.Call) *callResult {
	hooks := r.a.hooks.on(HookBeforeTool, c.Name)
	if len(hooks) == 0 {
		return nil
	}
	r.mu.Lock()
	payload := r.toolPayload(HookBeforeTool, c, call)
	r.mu.Unlock()
	for _, hook := range hooks {
		res := r.a.hooks.run(ctx, hook, HookBeforeTool, payload)
		if ctx.Err() != nil {
			return nil // the run is stopping, and says so itself
		}
		deny, reason, outcome, why := beforeToolAnswer(res)
		if outcome != "" {
			r.hookFailed(hook, HookBeforeTool, c.ID, outcome, why)
			continue
		}
		if deny {
			r.a.audit(auditEntry{Run: r.rec, Call: call, CallID: c.ID, Decision: string(policy.Deny), By: ByPolicy,
				Rule: "before_tool hook: " + hook.label(), Reason: reason})
			return &callResult{IsError: true, Rejected: true, Content: "Not run: the user's before_tool hook denies it: " + reason +
				"\nDo not retry it unchanged; find another way, or tell the user what you need."}
		}
	}
	return nil
}

// hookAnswer is what a before_tool hook may print on its standard output.
type hookAnswer struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
}

// maxDenyReason caps the reason the model reads.
const maxDenyReason = 2000

// beforeToolAnswer reads a before_tool hook's end: exit status 2 denies
// (the reason is its standard error, or its answer's reason); status 0
// allows unless its standard output is a JSON object whose decision is
// "deny"; anything else is a failure (outcome set), which denies nothing.
func beforeToolAnswer(res tools.HookResult) (deny bool, reason string, outcome HookOutcome, why string) {
	if outcome, why = failure(res, 0, 2); outcome != "" {
		return false, "", outcome, why
	}
	var ans hookAnswer
	if out := strings.TrimSpace(res.Stdout); strings.HasPrefix(out, "{") {
		if err := json.Unmarshal([]byte(out), &ans); err != nil {
			return false, "", HookFailed, "its answer is not JSON: " + err.Error()
		}
	}
	switch strings.ToLower(ans.Decision) {
	case "", "allow":
		deny = res.ExitCode == 2
	case "deny":
		deny = true
	default:
		return false, "", HookFailed, fmt.Sprintf("its decision %q is neither \"allow\" nor \"deny\"", ans.Decision)
	}
	if !deny {
		return false, "", "", ""
	}
	reason = strings.TrimSpace(ans.Reason)
	if reason == "" {
		reason = strings.TrimSpace(res.Stderr)
	}
	if reason == "" {
		reason = "(the hook gave no reason)"
	}
	return true, truncate(reason, maxDenyReason), "", ""
}

// afterTool runs the after_tool hooks on a call that ran.
func (r *run) afterTool(ctx context.Context, pc *pendingCall, call *tools.Call, out tools.Result, res *callResult, status Status, dur int64) {
	hooks := r.a.hooks.on(HookAfterTool, pc.Call.Name)
	if len(hooks) == 0 || ctx.Err() != nil {
		return
	}
	r.mu.Lock()
	p := afterToolPayload{toolPayload: r.toolPayload(HookAfterTool, pc.Call, call), Status: status, IsError: res.IsError,
		Output: res.Content, ExitCode: out.ExitCode, DurationMs: dur}
	r.mu.Unlock()
	p.Files = diffPaths(out.Files)
	for _, hook := range hooks {
		hr := r.a.hooks.run(ctx, hook, HookAfterTool, p)
		if ctx.Err() != nil {
			return
		}
		if outcome, why := failure(hr, 0); outcome != "" {
			r.hookFailed(hook, HookAfterTool, pc.Call.ID, outcome, why)
		}
	}
}

// inputRequestedLocked starts the input_requested hooks of a request that
// was just sent, in the background: the run, and the editor, do not wait
// for them. r.mu is held.
func (r *run) inputRequestedLocked(req InputRequest) {
	hooks := r.a.hooks.on(HookInputRequested, "")
	if len(hooks) == 0 {
		return
	}
	p := inputPayload{hookHeader: r.hookHeader(HookInputRequested), Request: req}
	h := r.a.hooks
	h.background(func() {
		for _, hook := range hooks {
			res := h.run(h.ctx, hook, HookInputRequested, p)
			if outcome, why := failure(res, 0); outcome != "" {
				r.hookFailed(hook, HookInputRequested, req.ToolCallID, outcome, why)
			}
		}
	})
}

// runFinished runs the run_finished hooks as the run ends, before the
// editor hears it has: a failure can still be reported in the run, and the
// end is announced at most the hooks' timeouts later. A run whose end is
// tried again (it could not be saved) does not run them twice.
func (r *run) runFinished(state State, stop StopReason, errText string) {
	hooks := r.a.hooks.on(HookRunFinished, "")
	if len(hooks) == 0 {
		return
	}
	if _, done := r.a.hooks.finished.LoadOrStore(r.rec.ID, true); done {
		return
	}
	r.mu.Lock()
	p := finishedPayload{hookHeader: r.hookHeader(HookRunFinished), State: state, StopReason: stop, Error: errText,
		Prompt: r.rec.Prompt, Text: r.rec.FinalText, Files: append([]string(nil), r.rec.Changed...), Usage: r.rec.Usage}
	r.mu.Unlock()
	for _, hook := range hooks {
		res := r.a.hooks.run(r.a.hooks.ctx, hook, HookRunFinished, p)
		if outcome, why := failure(res, 0); outcome != "" {
			r.hookFailed(hook, HookRunFinished, "", outcome, why)
		}
	}
}
