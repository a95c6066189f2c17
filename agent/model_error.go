package agent

import (
	"errors"
	"fmt"
	"time"
)

// modelError is a failed attempt at a model call, worded for the person who
// reads the run's error ("the model stopped sending for 5m0s"). retry says
// another attempt may do better; wait is how long the server asked to wait
// first (its Retry-After), 0 when it did not say.
type modelError struct {
	msg   string
	retry bool
	wait  time.Duration
	err   error
}

func (e *modelError) Error() string { return e.msg }
func (e *modelError) Unwrap() error { return e.err }

// retryable is a failure worth another attempt: a timeout, a 5xx or 429, a
// broken or malformed stream.
func retryable(format string, args ...any) *modelError {
	return &modelError{msg: fmt.Sprintf(format, args...), retry: true}
}

// final is a failure another attempt would repeat: a refused key, an
// unknown model, a request the server rejects.
func final(format string, args ...any) *modelError {
	return &modelError{msg: fmt.Sprintf(format, args...)}
}

func (e *modelError) because(err error) *modelError {
	e.err = err
	return e
}

func isRetryable(err error) bool {
	var m *modelError
	return errors.As(err, &m) && m.retry
}

// retryWait is how long the server asked to wait before the next attempt.
func retryWait(err error) time.Duration {
	var m *modelError
	if errors.As(err, &m) {
		return m.wait
	}
	return 0
}
