package agent

import (
	"context"
	"errors"
)

// step asks the model for the next move and either finishes the run (a
// reply without tool calls) or opens the step's tool calls. done reports
// that the run is over.
func (r *run) step(ctx context.Context) (done bool, err error) {
	r.a.probeWindow(ctx)
	r.mu.Lock()
	limit := r.rec.Step >= r.a.cfg.MaxSteps
	req := r.a.buildRequest(r.rec, r.secrets, limit)
	req.ReasoningEffort = r.rec.Effort // the session's, which may change mid-run
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
		calls = nil // the tools were withdrawn; whatever the model says is its answer
	}
	r.mu.Lock()
	r.rec.Messages = append(r.rec.Messages, Message{Role: RoleAssistant, Content: reply.Text, ToolCalls: calls})
	r.mu.Unlock()
	if len(calls) == 0 {
		if r.a.textMode() && text != "" {
			r.update(Update{Kind: UpdateMessageChunk, Text: text})
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
