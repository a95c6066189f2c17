package acp

import (
	"context"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/agent"
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
	err := s.ws.agent.SessionHistory(agentID, func(run agent.SessionRun) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		tr := s.replayRun(run)
		if run.Rewound {
			s.say("_(This turn was rewound: the agent no longer sees it.)_")
		}
		if !run.State.Finished() {
			// What its running commands printed so far, then live.
			for _, u := range tr.pending() {
				s.send(u)
			}
			tr.later = s.later
			s.mu.Lock()
			s.runs[run.RunID] = tr // the live run goes on from here
			s.mu.Unlock()
		}
		return nil
	})
	if err != nil && ctx.Err() == nil {
		return agentErr(err)
	}
	return err
}

func (s *session) replayRun(run agent.SessionRun) *translator {
	if run.Prompt != "" {
		s.send(acpsdk.UpdateUserMessageText(run.Prompt))
	}
	for _, im := range run.Images {
		if data, err := s.ws.agent.Image(context.Background(), im.ID); err == nil {
			s.send(acpsdk.UpdateUserMessage(acpsdk.ImageBlock(data.Data, data.MimeType)))
		}
	}
	rp := replayer{s: s, tr: newTranslator(s.ws.root, s.ws.contextWindow(), nil)} // no deferred sends: the final update supersedes running output
	for _, ev := range run.Events {
		if err := ev.Deliver(rp); err != nil {
			s.srv.log.Warn("replaying an event", "run", run.RunID, "seq", ev.Seq, "err", err)
		}
	}
	return rp.tr
}

// replayer shows a run's logged notifications again: its updates, and why
// it stopped if it failed. Requests are asked again apart (askPending), once
// the history is shown.
type replayer struct {
	s  *session
	tr *translator
}

func (rp replayer) Update(p agent.UpdateParams) {
	for _, u := range rp.tr.translate(p.Update) {
		rp.s.send(u)
	}
}

func (rp replayer) RunState(p agent.RunState) {
	if p.State == agent.StateFailed && p.Error != "" {
		rp.s.say("\n\nagentd stopped: " + p.Error)
	}
}

func (replayer) InputRequest(agent.InputRequest)   {}
func (replayer) InputResolved(agent.InputResolved) {}
