package agent

import (
	"context"
	"errors"
	"strings"
)

// step asks the model for the next move and either finishes the run (a
// reply without tool calls) or opens the step's tool calls. done reports
// that the run is over.
func (r *run) step(ctx context.Context) (done bool, err error) {
	if err := r.startTools(ctx); err != nil {
		return false, err
	}
	r.a.probeWindow(ctx)
	pfx := r.prefix(ctx)
	r.mu.Lock()
	r.steerLocked()         // the user's words given since the last request (steer.go)
	r.noteProcessesLocked() // background processes that ended (processes.go)
	limit := r.rec.Step >= r.a.cfg.MaxSteps
	if limit && r.rec.Messages[len(r.rec.Messages)-1].Content != limitNote {
		r.rec.Messages = append(r.rec.Messages, Message{Role: RoleUser, Content: limitNote})
	}
	req := r.buildRequestLocked(pfx)
	req.ReasoningEffort = r.rec.Effort // the session's, which may change mid-run
	if limit {
		req.ToolChoice = "none"
	}
	r.mu.Unlock()

	reply, err := r.callModel(ctx, req)
	if err != nil {
		return false, err
	}
	calls := reply.ToolCalls
	text := reply.Text
	if r.a.textMode() {
		var call *ToolCall
		text, call = parseTextToolCall(reply.Text, r.rec.Step)
		if call != nil {
			calls = []ToolCall{*call}
		}
	}
	if limit {
		calls = nil // the tools were withdrawn (limitNote); whatever the model says is its answer
		if strings.TrimSpace(text) == "" {
			text = "(agentd: the step limit was reached and the model gave no answer.)"
		}
	}
	r.mu.Lock()
	calls, renamed := uniqueCallIDs(r.rec.Messages, calls)
	r.rec.Messages = append(r.rec.Messages, Message{Role: RoleAssistant, Content: reply.Text, ToolCalls: calls})
	r.mu.Unlock()
	for _, rn := range renamed {
		r.logger().Warn("the model gave a call an id another call has: agentd gave it its own", "id", rn.was, "now", rn.now)
	}
	if r.sub == nil {
		r.reportContext() // the session's context window, not a subagent's
	}
	if len(calls) == 0 {
		if r.a.textMode() && text != "" {
			r.update(Update{Kind: UpdateMessageChunk, Text: text})
		}
		r.mu.Lock()
		steered := !limit && r.unsteeredLocked()
		r.over = !steered // from here a steer would come too late
		r.mu.Unlock()
		if steered {
			return false, nil // the user spoke while the model answered: it reads that first
		}
		stop := StopEndTurn
		if limit {
			stop = StopMaxSteps
		}
		r.complete(text, stop)
		return true, nil
	}
	if r.a.textMode() && text != "" {
		r.update(Update{Kind: UpdateMessageChunk, Text: text})
	}
	return false, r.openStep(ctx, calls)
}

// stopFor names the stop reason of a failure.
func stopFor(err error) StopReason {
	var s stopError
	if errors.As(err, &s) {
		return s.reason
	}
	return StopError
}

// stopError ends a run with a specific stop reason.
type stopError struct {
	reason StopReason
	msg    string
}

func (e stopError) Error() string { return e.msg }

// prefix returns the session's prefix. At a run's first step it tells the
// editor which instruction files the model was given and, once per agent,
// warns when the model's context window leaves little room.
func (r *run) prefix(ctx context.Context) *sessionPrefix {
	if r.sub != nil {
		return r.subagentPrefix(ctx) // subagent.go
	}
	pfx := r.a.sessionPrefix(ctx, r.rec.SessionID, r.mcpToolNames())
	r.mu.Lock()
	first := r.rec.Step == 0
	r.mu.Unlock()
	if !first {
		return pfx
	}
	if len(pfx.Instructions) > 0 {
		r.update(Update{Kind: UpdateInstructions, Instructions: pfx.Instructions})
	}
	r.mu.Lock()
	specs := r.specsLocked(pfx.Tools)
	r.mu.Unlock()
	if text := r.a.windowNotice(len(pfx.System) + specsSize(specs)); text != "" {
		r.update(Update{Kind: UpdateNotice, Text: text})
	}
	return pfx
}
