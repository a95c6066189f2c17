package agent

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/agentd/agentd/rpc/wire"
)

// Listener receives run notifications as typed values. In-process front
// ends (the terminal, ACP) implement it; the wire front end forwards the raw
// notifications instead.
type Listener interface {
	Update(wire.UpdateParams)
	InputRequest(wire.InputRequest)
	InputResolved(wire.InputResolved)
	RunState(wire.RunState)
}

// Deliver decodes one notification and hands it to l.
func Deliver(l Listener, method string, params json.RawMessage) error {
	var err error
	switch method {
	case wire.MethodUpdate:
		var p wire.UpdateParams
		if err = json.Unmarshal(params, &p); err == nil {
			l.Update(p)
		}
	case wire.MethodInputRequest:
		var p wire.InputRequest
		if err = json.Unmarshal(params, &p); err == nil {
			l.InputRequest(p)
		}
	case wire.MethodInputResolved:
		var p wire.InputResolved
		if err = json.Unmarshal(params, &p); err == nil {
			l.InputResolved(p)
		}
	case wire.MethodRunState:
		var p wire.RunState
		if err = json.Unmarshal(params, &p); err == nil {
			l.RunState(p)
		}
	default:
		err = fmt.Errorf("not a run notification: %s", method)
	}
	return err
}

// Queue is a Notifier that never makes a run wait: notifications are queued
// without bound and delivered in order, on one goroutine (Run), to a
// Listener that may block on a person or a client.
type Queue struct {
	l     Listener
	mu    sync.Mutex // guards items
	items []queued
	ready chan struct{}
}

type queued struct {
	method string
	params json.RawMessage
}

// NewQueue returns a queue delivering to l once Run is called.
func NewQueue(l Listener) *Queue { return &Queue{l: l, ready: make(chan struct{}, 1)} }

// Notify queues a notification; it is the agent's Notifier.
func (q *Queue) Notify(method string, params json.RawMessage) {
	q.mu.Lock()
	q.items = append(q.items, queued{method, append(json.RawMessage(nil), params...)})
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// Run delivers notifications until quit is closed.
func (q *Queue) Run(quit <-chan struct{}) {
	for {
		q.mu.Lock()
		items := q.items
		q.items = nil
		q.mu.Unlock()
		for _, it := range items {
			_ = Deliver(q.l, it.method, it.params)
		}
		if len(items) > 0 {
			continue
		}
		select {
		case <-q.ready:
		case <-quit:
			return
		}
	}
}
