package agent

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// callModel calls the model, retrying the failures worth it after a backoff
// or the wait the server asked for, and streams the answer to the editor as
// it comes. Every failure ends as an error that says how many attempts were
// made and what went wrong with the last.
func (r *run) callModel(ctx context.Context, req ModelRequest) (ModelReply, error) {
	maxWait := r.a.ModelConfig().maxRetryWait()
	var lastErr error
	attempts, streamed := 0, false
	for attempt := 0; attempt < r.a.cfg.ModelAttempts; attempt++ {
		if attempt > 0 {
			wait := retryDelay(r.a.cfg.RetryBase, attempt, retryWait(lastErr), maxWait)
			r.logger().Warn("model call failed; retrying", "attempt", attempt, "err", lastErr, "wait", wait)
			if err := sleep(ctx, wait); err != nil {
				return ModelReply{}, err
			}
		}
		attempts++
		out := ModelStream{OnText: func(s string) {
			if r.a.textMode() {
				return // the text may be a tool call; it is shown after parsing
			}
			streamed = true
			r.update(Update{Kind: UpdateMessageChunk, Text: s})
		}, OnReasoning: func(s string) {
			// Thinking is shown, never sent back; a retry may repeat it,
			// which is harmless, so it does not count as streamed.
			r.update(Update{Kind: UpdateThoughtChunk, Text: s})
		}}
		start := time.Now()
		reply, err := r.model().Complete(ctx, req, out) // the session's model, which may change mid-run
		r.a.trace(traceModel(r.rec, req, reply, err, attempt, time.Since(start)))
		if err == nil {
			r.addUsage(reply.Usage)
			return reply, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			return ModelReply{}, err
		}
		if !isRetryable(err) || streamed {
			// Text already shown cannot be taken back; a retry would repeat it.
			break
		}
	}
	return ModelReply{}, modelFailure(attempts, streamed, lastErr)
}

// modelFailure words the end of a model call that never succeeded.
func modelFailure(attempts int, streamed bool, err error) error {
	switch {
	case streamed && isRetryable(err):
		return fmt.Errorf("model: %w (after part of the answer was shown, so it was not retried)", err)
	case attempts > 1:
		return fmt.Errorf("model: %d attempts failed: %w", attempts, err)
	}
	return fmt.Errorf("model: %w", err)
}

// retryDelay is the wait before the given attempt (1 for the first retry):
// what the server asked for, else an exponential backoff with jitter; at
// most maxWait either way.
func retryDelay(base time.Duration, attempt int, asked, maxWait time.Duration) time.Duration {
	d := asked
	if d <= 0 {
		d = backoff(base, attempt)
	}
	return min(d, maxWait)
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
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// addUsage adds a call's tokens to the run's and reports the total.
func (r *run) addUsage(u ModelUsage) {
	if u.TotalTokens == 0 && u.PromptTokens == 0 {
		return
	}
	r.mu.Lock()
	r.rec.Usage.PromptTokens += u.PromptTokens
	r.rec.Usage.CompletionTokens += u.CompletionTokens
	r.rec.Usage.TotalTokens += u.TotalTokens
	r.rec.Usage.CachedTokens += u.CachedTokens
	r.rec.Usage.ReasoningTokens += u.ReasoningTokens
	total := r.rec.Usage
	r.mu.Unlock()
	r.update(Update{Kind: UpdateUsage, Usage: &total})
	if r.sub != nil {
		r.sub.parent.addSubagentUsage(r.rec.ID, total) // subagent.go: summed in its parent's
	}
}
