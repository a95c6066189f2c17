package rpctest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/internal/await"
	"github.com/agentd/agentd/tools"
)

// Model faults over the real wire and the real binary (issue 12): each ends
// as retries and then a run that completes, or fails with a message that
// says how many attempts were made and what went wrong, and the daemon goes
// on serving.

const shortIdle = 300 * time.Millisecond

// scaled is a timeout given to the daemon: d on an idle machine, longer on
// a busy one (internal/await), so that a model server slow to answer for
// want of the CPU does not read as one that stalled. The run's error
// names it: expected messages are written with it.
func scaled(d time.Duration) time.Duration { return await.Timeout(d).Round(time.Millisecond) }

func faultConfig(turns ...modeltest.Turn) func(t *testing.T) Config {
	return func(t *testing.T) Config {
		return Config{Script: &modeltest.Script{Turns: turns}, StreamIdleTimeout: scaled(shortIdle), ModelTimeout: scaled(20 * time.Second),
			RetryMaxWait: 5 * time.Second, Policy: tools.ModeFullAuto}
	}
}

func on(prompt string, r modeltest.Reply) modeltest.Turn {
	return modeltest.Turn{Name: prompt, Match: modeltest.Match{LastUser: prompt}, Reply: r}
}

// failsWith runs prompt and checks it fails with want after attempts
// requests, within a bound that shows nothing hung.
func failsWith(t *testing.T, env *Env, e *Editor, prompt, want string, attempts int) {
	t.Helper()
	before := len(env.Model.Requests())
	start := time.Now()
	run := e.Run(agent.RunParams{Prompt: prompt})
	st := e.RunState(run.RunID, agent.StateFailed)
	assert.Equal(t, agent.StopError, st.StopReason)
	assert.Equal(t, want, st.Error)
	assert.Len(t, env.Model.Requests()[before:], attempts)
	assert.Less(t, time.Since(start), await.Timeout(12*time.Second), "the fault ended the run promptly")
}

// completes runs prompt and checks it completes with text.
func completes(t *testing.T, e *Editor, prompt, text string) {
	t.Helper()
	run := e.Run(agent.RunParams{Prompt: prompt})
	e.RunState(run.RunID, agent.StateCompleted)
	assert.Equal(t, text, e.Text(run.RunID))
}

func TestFaultHugeToolCallIndex(t *testing.T) {
	hostile := modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "read_file", Index: index(1_000_000_000), RawArguments: `{"path":"a"}`}}, Times: 3}
	negative := modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "read_file", Index: index(-1)}}}
	both(t, faultConfig(on("hostile", hostile), on("negative", negative), on("negative", modeltest.Reply{Text: "Recovered."}),
		on("after", modeltest.Reply{Text: "Still here."})), func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		failsWith(t, env, e, "hostile", "model: 3 attempts failed: the model sent a tool call with index 1000000000 (a reply holds at most 64 calls)", 3)
		completes(t, e, "negative", "Recovered.")
		completes(t, e, "after", "Still here.")
	})
}

// stallIdle is the idle timeout of the scenarios where it must expire, three
// times: not scaled (each expiry would cost the scaled figure, and the
// package's own load alone makes the scale 4 or 5), but long enough for the
// headers, sent at once, to come before it under -race at load 250.
const stallIdle = time.Second

// TestFaultStallAfterHeaders: the idle timeout is longer here than the
// others' so that the headers, sent at once, are in before it on a loaded
// machine under -race (else the failure reads as no answer at all).
func TestFaultStallAfterHeaders(t *testing.T) {
	both(t, func(t *testing.T) Config {
		c := faultConfig(on("stall", modeltest.Reply{Stall: true, Times: 3}), on("once", modeltest.Reply{Stall: true}),
			on("once", modeltest.Reply{Text: "Back."}))(t)
		c.StreamIdleTimeout = stallIdle
		return c
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		failsWith(t, env, e, "stall", "model: 3 attempts failed: the model stopped sending for 1s", 3)
		completes(t, e, "once", "Back.")
	})
}

func TestFaultTrickle(t *testing.T) {
	both(t, func(t *testing.T) Config {
		c := faultConfig(on("trickle", modeltest.Reply{TrickleMs: 25, Times: 3}))(t)
		c.StreamIdleTimeout = stallIdle
		return c
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		failsWith(t, env, e, "trickle", "model: 3 attempts failed: the model stopped sending for 1s", 3)
	})
}

// TestFaultModelTimeout: with a long idle timeout, a stream that keeps the
// connection busy is ended by the bound on the whole call.
func TestFaultModelTimeout(t *testing.T) {
	both(t, func(t *testing.T) Config {
		c := faultConfig(on("slow", modeltest.Reply{Text: "", TrickleMs: 10, Times: 3}))(t)
		c.StreamIdleTimeout, c.ModelTimeout = time.Minute, 400*time.Millisecond
		return c
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		failsWith(t, env, e, "slow", "model: 3 attempts failed: the model's answer took longer than 400ms", 3)
	})
}

func TestFaultRetryAfter(t *testing.T) {
	both(t, func(t *testing.T) Config {
		c := faultConfig(
			on("wait", modeltest.Reply{Status: 429, Body: "rate limited", Headers: map[string]string{"Retry-After": "1"}}),
			on("wait", modeltest.Reply{Text: "Waited."}),
			on("capped", modeltest.Reply{Status: 503, Headers: map[string]string{"Retry-After": "3600"}}),
			on("capped", modeltest.Reply{Text: "Not an hour."}),
		)(t)
		c.RetryMaxWait = 1500 * time.Millisecond
		return c
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		completes(t, e, "wait", "Waited.")
		reqs := env.Model.Requests()
		require.Len(t, reqs, 2)
		assert.GreaterOrEqual(t, reqs[1].Time.Sub(reqs[0].Time), 950*time.Millisecond, "Retry-After: 1 waits a second, not the 10ms backoff")

		completes(t, e, "capped", "Not an hour.")
		reqs = env.Model.Requests()
		require.Len(t, reqs, 4)
		gap := reqs[3].Time.Sub(reqs[2].Time)
		assert.GreaterOrEqual(t, gap, 1450*time.Millisecond, "the asked wait, capped at the configured 1.5s")
		assert.Less(t, gap, await.Timeout(5*time.Second))
	})
}

func TestFaultRetryAfterExhausted(t *testing.T) {
	both(t, func(t *testing.T) Config {
		c := faultConfig(on("busy", modeltest.Reply{Status: 429, Body: "quota", Headers: map[string]string{"Retry-After": "60"}, Times: 3}))(t)
		c.RetryMaxWait = 100 * time.Millisecond
		return c
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		failsWith(t, env, e, "busy", "model: 3 attempts failed: 429 Too Many Requests: quota", 3)
	})
}

func TestFaultCutStream(t *testing.T) {
	cutCall := modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "read_file", RawArguments: `{"path": "READ`}}, Cut: true}
	both(t, faultConfig(
		on("cut call", cutCall), on("cut call", modeltest.Reply{Text: "Whole this time."}),
		on("cut text", modeltest.Reply{Text: "Half an ans", Cut: true}),
	), func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		completes(t, e, "cut call", "Whole this time.")
		failsWith(t, env, e, "cut text", "model: the model's stream ended before the answer was complete (no finish reason, no [DONE]) "+
			"(after part of the answer was shown, so it was not retried)", 1)
	})
}

// TestReasoningApartFromTheAnswer: the reasoning effort is sent, the
// model's thinking is not part of the answer, and it is never sent back.
func TestReasoningApartFromTheAnswer(t *testing.T) {
	const thought = "The plan tool fits; one step."
	plan := modeltest.Args(map[string]any{"plan": []map[string]string{{"step": "Answer", "status": "in_progress"}}})
	both(t, func(t *testing.T) Config {
		c := faultConfig(
			on("think", modeltest.Reply{Reasoning: thought, ToolCalls: []modeltest.ToolCall{{ID: "call_plan", Name: "update_plan", Arguments: plan}}}),
			modeltest.Turn{Match: modeltest.Match{AfterTool: "update_plan"}, Reply: modeltest.Reply{Reasoning: "Done thinking.", ReasoningField: "reasoning", Text: "Answered."}},
		)(t)
		c.ReasoningEffort = "high"
		return c
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		completes(t, e, "think", "Answered.")
		reqs := env.Model.Requests()
		require.Len(t, reqs, 2)
		for _, r := range reqs {
			assert.Equal(t, "high", r.ReasoningEffort)
			for _, m := range r.Messages {
				assert.NotContains(t, m.Content, "plan tool fits", "the thinking is never sent back")
			}
		}
	})
}

// TestToolArgumentsByteIdenticalAfterRestart: the arguments the model wrote
// (odd spacing, 2>&1, <T>) reach it again byte for byte, within the run and
// in a later run of the session after the daemon restarted, so a provider's
// prompt cache keeps matching.
func TestToolArgumentsByteIdenticalAfterRestart(t *testing.T) {
	const raw = `{"path":  "notes.txt",   "note": "go test ./... 2>&1 | tail -5 <T> & \"q\""}`
	both(t, func(t *testing.T) Config {
		c := faultConfig(
			on("read", modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: "call_read", Name: "read_file", RawArguments: raw}}}),
			modeltest.Turn{Match: modeltest.Match{AfterTool: "read_file"}, Reply: modeltest.Reply{Text: "Read."}},
			on("again", modeltest.Reply{Text: "Again."}),
		)(t)
		c.Files = map[string]string{"notes.txt": "milk\n"}
		return c
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "read"})
		e.RunState(run.RunID, agent.StateCompleted)
		e.Close(true)

		e2 := env.StartInitialized()
		second := e2.Run(agent.RunParams{Prompt: "again", SessionID: run.SessionID})
		e2.RunState(second.RunID, agent.StateCompleted)

		reqs := env.Model.Requests()
		require.Len(t, reqs, 3)
		for _, r := range reqs[1:] {
			var sent []string
			for _, m := range r.Messages {
				for _, c := range m.ToolCalls {
					sent = append(sent, c.Arguments)
				}
			}
			assert.Equal(t, []string{raw}, sent, "request %d", r.Seq)
		}
	})
}

func index(i int) *int { return &i }
