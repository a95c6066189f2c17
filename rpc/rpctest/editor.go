package rpctest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/internal/await"
	"github.com/agentd/agentd/rpc"
	"github.com/agentd/agentd/rpc/wire"
)

// DefaultTimeout bounds every wait on an idle machine; the waits scale it
// with the machine's load (internal/await: AGENTD_TEST_TIMEOUT_SCALE, else
// the load per CPU). A scenario that hangs fails with the transcript
// instead of timing out the whole test binary.
var DefaultTimeout = 15 * time.Second

// Message is one message the daemon sent.
type Message struct {
	Method string
	Params json.RawMessage
}

// Responder answers an input request of one kind: it returns the method
// (agent/reply or agent/confirm) and its params. Returning "" leaves the
// request open.
type Responder func(req agent.InputRequest) (method string, params any)

// Editor is a fake editor: it speaks the wire protocol to a daemon, records
// every message, answers input requests through per-kind responders, and
// waits for expected notifications with a deadline instead of sleeping.
type Editor struct {
	t      testing.TB
	client *rpc.Client
	daemon daemon

	mu         sync.Mutex // guards msgs, transcript, responders, closed
	cond       *sync.Cond
	msgs       []Message
	closed     bool // the daemon closed the connection: nothing more comes
	transcript []string
	responders map[agent.RequestKind]Responder
}

// daemon is the process (or goroutine) on the other end.
type daemon interface {
	// stop ends the daemon and returns its exit code.
	stop(kill bool) int
	stderr() string
	// pid is the daemon's process: the test's own in process.
	pid() int
}

// DaemonPID is the daemon's process id (the test process in process), for
// scenarios that try to reach it from a command.
func (e *Editor) DaemonPID() int { return e.daemon.pid() }

func newEditor(t testing.TB, conn rwc, d daemon) *Editor {
	e := &Editor{t: t, daemon: d, responders: map[agent.RequestKind]Responder{}}
	e.cond = sync.NewCond(&e.mu)
	e.client = rpc.NewClient(context.Background(), conn, e.receive)
	go func() {
		<-e.client.Done() // after the last message was received
		e.mu.Lock()
		e.closed = true
		e.mu.Unlock()
		e.cond.Broadcast()
	}()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("wire transcript (%d lines):\n%s\n--- daemon stderr ---\n%s", len(e.transcript), e.Transcript(), d.stderr())
		}
	})
	return e
}

func (e *Editor) receive(method string, params json.RawMessage) {
	m := Message{Method: method, Params: append(json.RawMessage(nil), params...)}
	e.mu.Lock()
	e.msgs = append(e.msgs, m)
	e.transcript = append(e.transcript, "<- "+method+" "+string(params))
	resp := e.responders[kindOf(m)]
	e.mu.Unlock()
	e.cond.Broadcast()
	if resp != nil {
		var req agent.InputRequest
		_ = json.Unmarshal(params, &req)
		go e.answer(resp, req)
	}
}

func kindOf(m Message) agent.RequestKind {
	if m.Method != wire.MethodInputRequest {
		return ""
	}
	var req agent.InputRequest
	_ = json.Unmarshal(m.Params, &req)
	return req.Kind
}

func (e *Editor) answer(resp Responder, req agent.InputRequest) {
	method, params := resp(req)
	if method == "" {
		return
	}
	if err := e.Call(method, params, nil); err != nil {
		e.t.Errorf("responder %s for %s: %v", method, req.RequestID, err)
	}
}

// Respond installs a responder for a kind of input request.
func (e *Editor) Respond(kind agent.RequestKind, r Responder) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.responders[kind] = r
}

// Transcript is every frame in both directions, in order.
func (e *Editor) Transcript() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return strings.Join(e.transcript, "\n")
}

func (e *Editor) log(line string) {
	e.mu.Lock()
	e.transcript = append(e.transcript, line)
	e.mu.Unlock()
}

// errDaemonGone ends a call whose daemon closed the connection: its answer
// will never come.
var errDaemonGone = errors.New("the daemon closed the connection before answering")

// Call sends a request and waits for its answer, at most DefaultTimeout
// (scaled), and no longer than the daemon is there to answer.
func (e *Editor) Call(method string, params, result any) error {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	timeout := time.AfterFunc(await.Timeout(DefaultTimeout), func() {
		cancel(fmt.Errorf("no answer within %s", await.NewDeadline(DefaultTimeout)))
	})
	defer timeout.Stop()
	go func() {
		select {
		case <-e.client.Done():
			// The answer, if it came, is already on its way to the call:
			// give it a moment to get there first.
			select {
			case <-time.After(time.Second):
				cancel(errDaemonGone)
			case <-ctx.Done():
			}
		case <-ctx.Done():
		}
	}()
	p, _ := json.Marshal(params)
	e.log("-> " + method + " " + string(p))
	var raw json.RawMessage
	err := e.client.Call(ctx, method, params, &raw)
	if cause := context.Cause(ctx); err != nil && cause != nil && errors.Is(err, ctx.Err()) {
		err = fmt.Errorf("%s: %w", method, cause)
	}
	if err != nil {
		e.log("<- error " + err.Error())
		return err
	}
	e.log("<- result " + string(raw))
	if result != nil && len(raw) > 0 {
		return json.Unmarshal(raw, result)
	}
	return nil
}

// MustCall is Call that fails the test on an error.
func (e *Editor) MustCall(method string, params, result any) {
	e.t.Helper()
	if err := e.Call(method, params, result); err != nil {
		e.t.Fatalf("%s: %v", method, err)
	}
}

// CallErr makes a call that must fail with code, and returns the message.
func (e *Editor) CallErr(method string, params any, code int) string {
	e.t.Helper()
	err := e.Call(method, params, nil)
	ce, ok := err.(*rpc.CallError)
	if !ok {
		e.t.Fatalf("%s: want error %d, got %v", method, code, err)
	}
	if ce.Code != code {
		e.t.Fatalf("%s: want error code %d, got %d (%s)", method, code, ce.Code, ce.Message)
	}
	return ce.Message
}

// Notify sends a notification.
func (e *Editor) Notify(method string, params any) {
	e.t.Helper()
	p, _ := json.Marshal(params)
	e.log("-> " + method + " " + string(p))
	if err := e.client.Notify(context.Background(), method, params); err != nil {
		e.t.Fatalf("notify %s: %v", method, err)
	}
}

// SendRaw writes bytes to the daemon as they are.
func (e *Editor) SendRaw(b []byte) {
	e.t.Helper()
	e.log("-> raw " + string(b))
	if err := e.client.SendRaw(b); err != nil {
		e.t.Fatalf("send raw: %v", err)
	}
}

// Await waits until a message satisfying pred has arrived (at any time
// since the start) and returns the first such message. It fails when none
// has within DefaultTimeout (scaled), or at once when the daemon closed the
// connection without sending one.
func (e *Editor) Await(desc string, pred func(Message) bool) Message {
	e.t.Helper()
	return e.AwaitUnless(desc, pred, nil)
}

// AwaitUnless is Await that also fails at once when a message makes what
// it waits for impossible: impossible returns why (a run that ended cannot
// pause any more), or "".
func (e *Editor) AwaitUnless(desc string, pred func(Message) bool, impossible func(Message) string) Message {
	e.t.Helper()
	dl := await.NewDeadline(DefaultTimeout)
	wake := time.AfterFunc(dl.Left(), e.cond.Broadcast)
	defer wake.Stop()
	e.mu.Lock()
	for {
		for _, m := range e.msgs {
			if pred(m) {
				e.mu.Unlock()
				return m
			}
		}
		why := ""
		for _, m := range e.msgs {
			if impossible != nil {
				if why = impossible(m); why != "" {
					break
				}
			}
		}
		if why == "" && e.closed {
			why = "the daemon closed the connection"
		}
		if why != "" {
			e.mu.Unlock()
			e.t.Fatalf("waiting for %s: it can no longer happen: %s", desc, why)
			return Message{}
		}
		left := dl.Left()
		if left <= 0 {
			e.mu.Unlock()
			e.t.Fatalf("timed out after %s waiting for %s", dl, desc)
			return Message{}
		}
		wake.Reset(left) // the scale may have grown since
		e.cond.Wait()
	}
}

// Messages returns what arrived so far.
func (e *Editor) Messages() []Message {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Message(nil), e.msgs...)
}

// Close ends the connection and the daemon (kill: without shutdown). A
// killed daemon is killed before its connection closes: the end of its
// input would start an orderly shutdown that a busy machine lets run
// before the kill arrives, and the scenario would test that instead.
func (e *Editor) Close(kill bool) int {
	if kill {
		code := e.daemon.stop(true)
		_ = e.client.Close()
		return code
	}
	_ = e.client.Close()
	return e.daemon.stop(false)
}

// Done is closed when the daemon closes the connection.
func (e *Editor) Done() <-chan struct{} { return e.client.Done() }

func (e *Editor) String() string { return fmt.Sprintf("editor(%d messages)", len(e.Messages())) }

// Handle answers the daemon's requests of method (editor/definition, …)
// with h, as an editor with language servers would; without it the fake
// editor answers every request with null. Each answer is in the transcript.
func (e *Editor) Handle(method string, h rpc.RequestHandler) {
	e.client.Handle(method, func(ctx context.Context, params json.RawMessage) (any, error) {
		res, err := h(ctx, params)
		out, _ := json.Marshal(res)
		if err != nil {
			out = []byte("error: " + err.Error())
		}
		e.log("-> answer to " + method + " " + string(out))
		return res, err
	})
}
