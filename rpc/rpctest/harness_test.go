package rpctest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/agent/modeltest"
)

// recorder is a testing.TB whose Fatalf ends only the wait under test.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	panic(r)
}

// failure runs wait with e failing into a recorder and returns what it
// failed with and how long it took.
func failure(e *Editor, wait func()) (string, time.Duration) {
	rec := &recorder{TB: e.t}
	saved := e.t
	e.t = rec
	defer func() { e.t = saved }()
	start := time.Now()
	func() {
		defer func() {
			if r := recover(); r != nil && r != rec {
				panic(r)
			}
		}()
		wait()
	}()
	return rec.failed, time.Since(start)
}

// A wait for what can no longer happen fails at once, saying why, instead
// of after the deadline: a run that ended cannot pause, ask or reach
// another state; a daemon that exited cannot answer or send anything.
func TestHarnessGivesUpOnTheImpossible(t *testing.T) {
	t.Parallel()
	env := NewEnv(t, InProcess, Config{Script: &modeltest.Script{Turns: []modeltest.Turn{{Reply: modeltest.Reply{Text: "Done."}}}}})
	e := env.StartInitialized()
	run := e.Run(agent.RunParams{Prompt: "hi"})
	e.Finished(run.RunID)
	for name, wait := range map[string]func(){
		"paused":   func() { e.RunState(run.RunID, agent.StatePaused) },
		"requests": func() { e.Requests(run.RunID, 1) },
	} {
		msg, took := failure(e, wait)
		assert.Contains(t, msg, "can no longer happen", name)
		assert.Contains(t, msg, "ended completed", name)
		assert.Less(t, took, DefaultTimeout/3, name)
	}
	e.Close(false)
	msg, took := failure(e, func() { e.Await("anything more", func(Message) bool { return false }) })
	assert.Contains(t, msg, "the daemon closed the connection")
	assert.Less(t, took, DefaultTimeout/3)
	start := time.Now()
	err := e.Call("agent/sessions", struct{}{}, nil)
	require.Error(t, err)
	assert.Less(t, time.Since(start), DefaultTimeout/3, "a call to a daemon that is gone: %v", err)
}
