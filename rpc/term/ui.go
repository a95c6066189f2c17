package term

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"

	"github.com/agentd/agentd/agent"
)

// termUI is the terminal's agent.Listener, behind an agent.Queue so the run
// never waits on the terminal: the printer shows each notification, the
// prompter (on its own goroutine) asks the questions, and the run's end goes
// to final.
type termUI struct {
	p     *printer
	sc    *screen
	pr    *prompter // nil: no one can be asked
	final chan agent.RunState
	runID string // the run shown; other runs' notifications are not its
}

func newTermUI(sc *screen, p *printer) *termUI {
	return &termUI{p: p, sc: sc, final: make(chan agent.RunState, 1)}
}

// show names the run to show.
func (u *termUI) show(runID string) { u.runID = runID }

// Update implements agent.Listener.
func (u *termUI) Update(p agent.UpdateParams) {
	if p.RunID == u.runID {
		u.p.Update(p)
	}
}

// InputRequest implements agent.Listener: what was said before is printed
// whole, then the prompter asks.
func (u *termUI) InputRequest(req agent.InputRequest) {
	if req.RunID != u.runID {
		return
	}
	if u.pr == nil {
		u.p.InputRequest(req)
		return
	}
	req = visibleRequest(req)
	u.p.flush()
	u.p.prompted[req.ToolCallID] = true
	u.sc.setStatus("waiting for you")
	u.pr.add(req)
}

// InputResolved implements agent.Listener.
func (u *termUI) InputResolved(r agent.InputResolved) {
	if r.RunID != u.runID {
		return
	}
	if u.pr != nil {
		u.pr.resolved(r.RequestID)
	}
	u.p.InputResolved(r)
	if u.pr == nil || u.pr.pending() == 0 {
		u.p.setStatus()
	}
}

// RunState implements agent.Listener.
func (u *termUI) RunState(st agent.RunState) {
	if st.RunID != u.runID {
		return
	}
	u.p.RunState(st)
	if runEnded(st) {
		u.final <- st
	}
}

// jsonUI prints each notification of the run as one line of JSON, as the
// run's event log keeps it: {"seq":…,"kind":"update","params":{…}} with the
// params of the native protocol's agent/update, agent/inputRequest,
// agent/inputResolved and agent/runState (docs/protocol.md).
type jsonUI struct {
	mu    sync.Mutex
	out   io.Writer
	final chan agent.RunState
	runID string // the run printed; other runs' notifications are not its
}

func newJSONUI(out io.Writer) *jsonUI {
	return &jsonUI{out: out, final: make(chan agent.RunState, 1)}
}

func (u *jsonUI) write(kind agent.EventKind, seq int64, params any) {
	b, err := marshalPlain(params)
	if err != nil {
		return
	}
	line, err := marshalPlain(agent.Event{Seq: seq, Kind: kind, Params: b})
	if err != nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	_, _ = u.out.Write(append(line, '\n'))
}

// marshalPlain is json.Marshal without the HTML escapes (\u0026 for &).
func marshalPlain(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// show names the run to print.
func (u *jsonUI) show(runID string) { u.runID = runID }

// Update implements agent.Listener.
func (u *jsonUI) Update(p agent.UpdateParams) {
	if p.RunID == u.runID {
		u.write(agent.EventUpdate, p.Seq, p)
	}
}

// InputRequest implements agent.Listener.
func (u *jsonUI) InputRequest(p agent.InputRequest) {
	if p.RunID == u.runID {
		u.write(agent.EventInputRequest, p.Seq, p)
	}
}

// InputResolved implements agent.Listener.
func (u *jsonUI) InputResolved(p agent.InputResolved) {
	if p.RunID == u.runID {
		u.write(agent.EventInputResolved, p.Seq, p)
	}
}

// RunState implements agent.Listener.
func (u *jsonUI) RunState(p agent.RunState) {
	if p.RunID != u.runID {
		return
	}
	u.write(agent.EventRunState, p.Seq, p)
	if runEnded(p) {
		u.final <- p
	}
}

// runEnded says the command ends on st: the run finished, or it is paused
// while live, which is a run whose state could not be saved (a run paused
// by a restart is found at start-up, and is not this command's): nothing in
// a one-shot run can resume it.
func runEnded(st agent.RunState) bool {
	return st.State.Finished() || st.State == agent.StatePaused
}
