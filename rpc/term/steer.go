package term

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/rpc/term/termmd"
)

// While the agent works and no question is open, what the user types goes
// into a line under the status line, and Enter adds it to the run
// (agent/steer): the model reads it before its next request. It is never an
// answer: when a question comes, the line is put away (what was typed stays
// for later) and the question, once on the screen, discards every key
// typed before it.

// steerHint is what the empty steer line says.
const steerHint = "type to steer the agent · Enter sends"

// setRun names the run the steer line steers.
func (pr *prompter) setRun(runID string) {
	pr.mu.Lock()
	pr.runID = runID
	pr.mu.Unlock()
	select {
	case pr.ready <- struct{}{}:
	default:
	}
}

// steer edits the steer line until a question comes or quit closes.
func (pr *prompter) steer(quit <-chan struct{}) {
	stop := make(chan struct{})
	closeStop := sync.OnceFunc(func() { close(stop) })
	pr.mu.Lock()
	if len(pr.queue) > 0 {
		pr.mu.Unlock()
		return
	}
	pr.stopSteer = closeStop
	runID := pr.runID
	pr.mu.Unlock()
	defer func() {
		pr.mu.Lock()
		pr.stopSteer = nil
		pr.mu.Unlock()
		pr.sc.setInput(nil, 0)
	}()
	go func() {
		select {
		case <-quit:
			closeStop()
		case <-stop:
		}
	}()
	for {
		pr.drawSteer()
		k, err := pr.kb.next(stop)
		if errors.Is(err, errKeyboardClosed) {
			pr.mu.Lock()
			pr.noSteer = true
			pr.mu.Unlock()
		}
		if err != nil {
			return
		}
		if pr.steerLine.apply(k) {
			continue
		}
		switch k.kind {
		case keyEsc:
			pr.steerLine = lineEdit{}
		case keyEnter:
			pr.sendSteer(runID)
		}
	}
}

// drawSteer shows the steer line: what was typed, or a hint.
func (pr *prompter) drawSteer() {
	mark := pr.sc.style("1;36", "› ")
	if len(pr.steerLine.text) == 0 {
		pr.sc.setInput([]string{mark + pr.sc.style("2", steerHint)}, termmd.Width(steerHint))
		return
	}
	shown, back := pr.steerLine.view(pr.sc.width()-3, false)
	pr.sc.setInput([]string{mark + shown}, back)
}

// sendSteer adds the line to the run; the run's steer update prints it. A
// steer that could not be saved keeps its text, to send again.
func (pr *prompter) sendSteer(runID string) {
	text := strings.TrimSpace(string(pr.steerLine.text))
	if text == "" {
		return
	}
	err := pr.a.Steer(context.Background(), agent.SteerParams{RunID: runID, Text: text})
	switch {
	case err == nil, errors.Is(err, agent.ErrRunFinished):
		pr.steerLine = lineEdit{}
	}
	if err != nil {
		pr.sc.println(pr.sc.style("31", "agentd: not sent: "+err.Error()))
	}
}
