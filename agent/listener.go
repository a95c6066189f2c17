package agent

import (
	"encoding/json"
	"fmt"
	"sync"
)

// Listener is the agent's output port: it receives a run's notifications
// as values, in seq order for each run. Each front end implements it (rpc
// sends them to the editor, ACP translates them, the terminal prints them).
// It is called with the run's lock held, so the order of calls is the order
// of seq: it must not block long nor call back into the agent; a front end
// that may wait puts a Queue in between.
type Listener interface {
	Update(UpdateParams)
	InputRequest(InputRequest)
	InputResolved(InputResolved)
	RunState(RunState)
}

// EventKind says which Listener method a logged notification went to.
type EventKind string

// Event kinds.
const (
	EventUpdate        EventKind = "update"
	EventInputRequest  EventKind = "inputRequest"
	EventInputResolved EventKind = "inputResolved"
	EventRunState      EventKind = "runState"
)

// EventKinds lists every event kind.
var EventKinds = []EventKind{EventUpdate, EventInputRequest, EventInputResolved, EventRunState}

// Event is one notification of a run as the run's log keeps it, so a front
// end can replay what a run said (Agent.Events, Agent.SessionHistory).
type Event struct {
	Seq  int64     `json:"seq"`
	Kind EventKind `json:"kind"`
	// Params is the notification's value as JSON, exactly as it was logged.
	Params json.RawMessage `json:"params"`
}

// Deliver decodes the event and hands it to l.
func (e Event) Deliver(l Listener) error {
	var err error
	switch e.Kind {
	case EventUpdate:
		var p UpdateParams
		if err = json.Unmarshal(e.Params, &p); err == nil {
			l.Update(p)
		}
	case EventInputRequest:
		var p InputRequest
		if err = json.Unmarshal(e.Params, &p); err == nil {
			l.InputRequest(p)
		}
	case EventInputResolved:
		var p InputResolved
		if err = json.Unmarshal(e.Params, &p); err == nil {
			l.InputResolved(p)
		}
	case EventRunState:
		var p RunState
		if err = json.Unmarshal(e.Params, &p); err == nil {
			l.RunState(p)
		}
	default:
		err = fmt.Errorf("event %d: unknown kind %q", e.Seq, e.Kind)
	}
	return err
}

// Queue is a Listener that never makes a run wait: notifications are queued
// without bound and delivered in order, on one goroutine (Run), to a
// Listener that may block on a person or a client.
type Queue struct {
	l     Listener
	mu    sync.Mutex // guards items
	items []func(Listener)
	ready chan struct{}
}

// NewQueue returns a queue delivering to l once Run is called.
func NewQueue(l Listener) *Queue { return &Queue{l: l, ready: make(chan struct{}, 1)} }

// Update implements Listener.
func (q *Queue) Update(p UpdateParams) { q.push(func(l Listener) { l.Update(p) }) }

// InputRequest implements Listener.
func (q *Queue) InputRequest(p InputRequest) { q.push(func(l Listener) { l.InputRequest(p) }) }

// InputResolved implements Listener.
func (q *Queue) InputResolved(p InputResolved) { q.push(func(l Listener) { l.InputResolved(p) }) }

// RunState implements Listener.
func (q *Queue) RunState(p RunState) { q.push(func(l Listener) { l.RunState(p) }) }

func (q *Queue) push(deliver func(Listener)) {
	q.mu.Lock()
	q.items = append(q.items, deliver)
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
		for _, deliver := range items {
			deliver(q.l)
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

// nobody is the Listener of an agent no one listens to.
type nobody struct{}

func (nobody) Update(UpdateParams)         {}
func (nobody) InputRequest(InputRequest)   {}
func (nobody) InputResolved(InputResolved) {}
func (nobody) RunState(RunState)           {}
