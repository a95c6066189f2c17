package agent

import (
	"context"
	"errors"

	"github.com/agentd/agentd/rpc/wire"
)

// step asks the model for the next move and either finishes the run (a
// reply without tool calls) or opens the step's tool calls. done reports
// that the run is over.
func (r *run) step(ctx context.Context) (done bool, err error) {
	r.a.probeWindow(ctx)
	r.mu.Lock()
	limit := r.rec.Step >= r.a.cfg.MaxSteps
	req := r.a.buildRequest(r.rec, r.secrets, limit)
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
			r.update(wire.Update{Kind: wire.UpdateMessageChunk, Text: text})
		}
		stop := wire.StopEndTurn
		if limit {
			stop = wire.StopMaxSteps
		}
		r.complete(text, stop)
		return true, nil
	}
	if r.a.textMode() && text != "" {
		r.update(wire.Update{Kind: wire.UpdateMessageChunk, Text: text})
	}
	return false, r.openStep(ctx, calls)
}

// stopFor names the stop reason of a failure.
func stopFor(err error) string {
	var s stopError
	if errors.As(err, &s) {
		return s.reason
	}
	return wire.StopError
}

// stopError ends a run with a specific stop reason.
type stopError struct {
	reason string
	msg    string
}

func (e stopError) Error() string { return e.msg }
