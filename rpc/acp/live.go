package acp

import (
	"maps"
	"slices"
	"time"
	"unicode/utf8"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/agent"
)

const (
	// liveMax bounds the running output shown on a tool call: the tail is
	// kept. ACP replaces a tool call's content on every update, so each
	// update carries all of it.
	liveMax = 64 << 10
	// liveEvery bounds how often one tool call's running output is sent.
	liveEvery = 100 * time.Millisecond
)

// liveOutput is the output of a running command so far.
type liveOutput struct {
	text  string
	cut   bool      // the head was dropped to stay within liveMax
	sent  time.Time // when text was last sent
	dirty bool      // text grew since it was last sent
	timer *time.Timer
}

// laterFunc runs flush after d and sends what it returns, in order with
// the session's other updates. nil when replaying: nothing is sent then
// until pending is asked for.
type laterFunc func(d time.Duration, flush func() []acpsdk.SessionUpdate) *time.Timer

// outputDelta takes the next piece of a running command's output. The
// accumulated text goes out at once when the last send is liveEvery old,
// otherwise later, when it is.
func (t *translator) outputDelta(u agent.Update) []acpsdk.SessionUpdate {
	if t.live == nil {
		t.live = map[string]*liveOutput{}
	}
	l := t.live[u.ToolCallID]
	if l == nil {
		l = &liveOutput{}
		t.live[u.ToolCallID] = l
	}
	l.append(u.OutputDelta)
	l.dirty = true
	if t.later == nil {
		return nil
	}
	if wait := liveEvery - time.Since(l.sent); wait > 0 {
		if l.timer == nil {
			id := u.ToolCallID
			l.timer = t.later(wait, func() []acpsdk.SessionUpdate { return t.flushLive(id) })
		}
		return nil
	}
	return one(t.sendLive(u.ToolCallID, l))
}

// flushLive sends the tool call's output if it grew since the last send
// and the call is still running.
func (t *translator) flushLive(id string) []acpsdk.SessionUpdate {
	l := t.live[id]
	if l == nil {
		return nil // the final update came
	}
	l.timer = nil
	if !l.dirty {
		return nil
	}
	return one(t.sendLive(id, l))
}

func (t *translator) sendLive(id string, l *liveOutput) acpsdk.SessionUpdate {
	l.sent, l.dirty = time.Now(), false
	text := l.text
	if l.cut {
		text = "[… earlier output not shown]\n" + text
	}
	return acpsdk.UpdateToolCall(acpsdk.ToolCallId(id),
		acpsdk.WithUpdateStatus(acpsdk.ToolCallStatusInProgress),
		acpsdk.WithUpdateContent([]acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(fenced(text)))}))
}

// endLive forgets a tool call's running output: its final update came.
func (t *translator) endLive(id string) {
	if l := t.live[id]; l != nil {
		if l.timer != nil {
			l.timer.Stop()
		}
		delete(t.live, id)
	}
}

// pending returns the running output not sent yet: after a replay, what
// the commands still running have printed so far.
func (t *translator) pending() []acpsdk.SessionUpdate {
	var out []acpsdk.SessionUpdate
	for _, id := range slices.Sorted(maps.Keys(t.live)) {
		if l := t.live[id]; l.dirty {
			out = append(out, t.sendLive(id, l))
		}
	}
	return out
}

// stop drops the running output of a run that ended.
func (t *translator) stop() {
	for id := range t.live {
		t.endLive(id)
	}
}

// append adds a piece, keeping at most the last liveMax bytes, cut at a
// line start when one is near, else at a character boundary.
func (l *liveOutput) append(s string) {
	l.text += s
	if len(l.text) <= liveMax {
		return
	}
	l.cut = true
	start := len(l.text) - liveMax
	for start < len(l.text) && !utf8.RuneStart(l.text[start]) {
		start++
	}
	const near = 1 << 10
	for i := start; i < len(l.text) && i < start+near; i++ {
		if l.text[i] == '\n' {
			start = i + 1
			break
		}
	}
	l.text = l.text[start:]
}
