package acp

import (
	"context"
	"encoding/json"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/rpc/wire"
)

// replay streams the session's history as session/update: each run's
// prompt as the user's message, then what the run reported.
func (s *session) replay(ctx context.Context) error {
	s.mu.Lock()
	agentID := s.agentID
	s.mu.Unlock()
	if agentID == "" {
		return nil // created, never prompted
	}
	history, err := s.ws.agent.SessionHistory(agentID)
	if err != nil {
		return agentErr(err)
	}
	for _, run := range history {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		tr := s.replayRun(run)
		if !finished(run.State) {
			// What its running commands printed so far, then live.
			for _, u := range tr.pending() {
				s.send(u)
			}
			tr.later = s.later
			s.mu.Lock()
			s.runs[run.RunID] = tr // the live run goes on from here
			s.mu.Unlock()
		}
	}
	return nil
}

func (s *session) replayRun(run agent.SessionRun) *translator {
	if run.Prompt != "" {
		s.send(acpsdk.UpdateUserMessageText(run.Prompt))
	}
	tr := newTranslator(s.ws.root, s.ws.contextWindow(), nil) // no deferred sends: the final update supersedes running output
	for _, ev := range run.Events {
		switch ev.Method {
		case wire.MethodUpdate:
			var p wire.UpdateParams
			if json.Unmarshal(ev.Params, &p) == nil {
				for _, u := range tr.translate(p.Update) {
					s.send(u)
				}
			}
		case wire.MethodRunState:
			var p wire.RunState
			if json.Unmarshal(ev.Params, &p) == nil && p.State == wire.StateFailed && p.Error != "" {
				s.say("\n\nagentd stopped: " + p.Error)
			}
		}
	}
	return tr
}
