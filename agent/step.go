package agent

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// step asks the model for the next move and either finishes the run (a
// reply without tool calls) or opens the step's tool calls. done reports
// that the run is over.
func (r *run) step(ctx context.Context) (done bool, err error) {
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

// callModel calls the model with retries and backoff for failures worth
// retrying, streaming text to the editor as it comes.
func (r *run) callModel(ctx context.Context, req ModelRequest) (ModelReply, error) {
	var lastErr error
	attempts := 0
	for attempt := 0; attempt < r.a.cfg.ModelAttempts; attempt++ {
		attempts++
		if attempt > 0 {
			if err := sleep(ctx, backoff(r.a.cfg.RetryBase, attempt)); err != nil {
				return ModelReply{}, err
			}
		}
		streamed := false
		onText := func(s string) {
			if r.a.textMode() {
				return // the text may be a tool call; it is shown after parsing
			}
			streamed = true
			r.update(Update{Kind: UpdateMessageChunk, Text: s})
		}
		start := time.Now()
		reply, err := r.a.model().Complete(ctx, req, onText)
		r.a.trace(traceModel(r.rec, req, reply, err, attempt, time.Since(start)))
		if err == nil {
			r.addUsage(reply.Usage)
			return reply, nil
		}
		lastErr = err
		if ctx.Err() != nil || !isRetryable(err) || streamed {
			// Text already shown cannot be taken back; a retry would repeat it.
			break
		}
		r.logger().Warn("model call failed; retrying", "attempt", attempt+1, "err", err)
	}
	if attempts > 1 {
		return ModelReply{}, fmt.Errorf("model: %d attempts failed: %w", attempts, lastErr)
	}
	return ModelReply{}, fmt.Errorf("model: %w", lastErr)
}

func (r *run) addUsage(u Usage) {
	if u.TotalTokens == 0 && u.PromptTokens == 0 {
		return
	}
	r.mu.Lock()
	r.rec.Usage.PromptTokens += u.PromptTokens
	r.rec.Usage.CompletionTokens += u.CompletionTokens
	r.rec.Usage.TotalTokens += u.TotalTokens
	total := r.rec.Usage
	r.mu.Unlock()
	r.update(Update{Kind: UpdateUsage, Usage: &total})
}

func backoff(base time.Duration, attempt int) time.Duration {
	d := base << (attempt - 1)
	return d + time.Duration(rand.Int64N(int64(d)/4+1))
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
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
