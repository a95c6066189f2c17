package agent

import (
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// outputEvery bounds how often a running command's output is sent.
const outputEvery = 50 * time.Millisecond

// Bounds on what a command's live output sends: `yes | head -c 3G`, which
// runs unasked, sent gigabytes to the editor in updates of hundreds of
// megabytes, held whole in the daemon meanwhile. An update carries at most
// the last liveWindow bytes of its interval, and a call sends at most
// liveTotal in all; the rest is counted and said. The result the model
// reads keeps the output's end either way.
const (
	liveWindow = 16 << 10
	liveTotal  = 1 << 20
)

// liveOutput forwards a running command's output to the editor as it
// comes, coalesced to one update per outputEvery so a chatty command does
// not flood the editor. Pieces are sent under mu, and close marks the output
// done, so no piece arrives after the call's final update.
type liveOutput struct {
	r  *run
	id string

	mu      sync.Mutex // guards the fields below; held while sending
	buf     strings.Builder
	timer   *time.Timer
	closed  bool
	skipped int  // bytes left out since the last update
	sent    int  // bytes sent in all
	quiet   bool // liveTotal reached: nothing more is sent
}

func (r *run) newLiveOutput(toolCallID string) *liveOutput {
	return &liveOutput{r: r, id: toolCallID}
}

// write takes a piece of output (tools.Env.Output).
func (o *liveOutput) write(s string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed || o.quiet {
		return
	}
	o.buf.WriteString(s)
	if o.buf.Len() > 2*liveWindow {
		o.keepTail()
	}
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

// keepTail keeps the last liveWindow bytes of the buffer, from a line's
// start where there is one, and counts the rest as skipped.
func (o *liveOutput) keepTail() {
	s := o.buf.String()
	cut := len(s) - liveWindow
	if i := strings.IndexByte(s[cut:], '\n'); i >= 0 && i < liveWindow/2 {
		cut += i + 1
	}
	for cut < len(s) && !utf8.RuneStart(s[cut]) {
		cut++
	}
	o.skipped += cut
	o.buf.Reset()
	o.buf.WriteString(s[cut:])
}

func (o *liveOutput) sendLocked() {
	if o.buf.Len() == 0 || o.quiet {
		return
	}
	if o.buf.Len() > liveWindow {
		o.keepTail()
	}
	piece := o.r.redact(o.buf.String())
	o.buf.Reset()
	if o.skipped > 0 {
		piece = notShown(o.skipped) + piece
		o.skipped = 0
	}
	o.sent += len(piece)
	if o.sent >= liveTotal {
		o.quiet = true
		piece += "\n[… live output stops here; the command goes on, and its result keeps the end …]\n"
	}
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

// maxFullOutput bounds the output a final tool_call_update carries (to
// the editor, and to the run's event log, which keeps it): the same bound
// as the live output's, so a command printing gigabytes makes neither a
// notification nor a file of that size.
const maxFullOutput = liveTotal

// boundFull keeps the start and, mostly, the end of a very long output
// (where a command's verdict is), at line boundaries, saying how much of
// the middle is left out.
func boundFull(s string) string {
	if len(s) <= maxFullOutput {
		return s
	}
	head, tail := s[:maxFullOutput/4], s[len(s)-maxFullOutput*3/4:]
	if i := strings.LastIndexByte(head, '\n'); i > 0 {
		head = head[:i+1]
	}
	if i := strings.IndexByte(tail, '\n'); i >= 0 && i < len(tail)-1 {
		tail = tail[i+1:]
	}
	return head + notShown(len(s)-len(head)-len(tail)) + tail
}

// notShown is the line that stands for n bytes of output left out.
func notShown(n int) string { return fmt.Sprintf("[… %d bytes of output not shown …]\n", n) }
