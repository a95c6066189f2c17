package agent

import (
	"strings"
	"sync"
	"time"
)

// outputEvery bounds how often a running command's output is sent.
const outputEvery = 50 * time.Millisecond

// liveOutput forwards a running command's output to the editor as it
// comes, coalesced to one update per outputEvery so a chatty command does
// not flood the editor. Pieces are sent under mu, and close marks the output
// done, so no piece arrives after the call's final update.
type liveOutput struct {
	r  *run
	id string

	mu     sync.Mutex // guards buf, timer, closed; held while sending
	buf    strings.Builder
	timer  *time.Timer
	closed bool
}

func (r *run) newLiveOutput(toolCallID string) *liveOutput {
	return &liveOutput{r: r, id: toolCallID}
}

// write takes a piece of output (tools.Env.Output).
func (o *liveOutput) write(s string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	o.buf.WriteString(s)
	if o.timer == nil {
		o.timer = time.AfterFunc(outputEvery, o.flush)
	}
}

func (o *liveOutput) flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.timer = nil
	if !o.closed {
		o.sendLocked()
	}
}

func (o *liveOutput) sendLocked() {
	if o.buf.Len() == 0 {
		return
	}
	piece := o.r.redact(o.buf.String())
	o.buf.Reset()
	o.r.update(Update{Kind: UpdateToolCallUpdate, ToolCallID: o.id, Status: StatusInProgress, OutputDelta: piece})
}

// close sends what is left; later pieces are dropped.
func (o *liveOutput) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.timer != nil {
		o.timer.Stop()
		o.timer = nil
	}
	o.sendLocked()
	o.closed = true
}
