package acp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/agent"
)

// cancelGrace bounds how long a cancelled turn waits for its run to stop.
const cancelGrace = 10 * time.Second

// Prompt is one turn: a run held open until it ends. When the session waits
// on a free-text question, the prompt is its answer instead.
func (s *server) Prompt(ctx context.Context, p acpsdk.PromptRequest) (acpsdk.PromptResponse, error) {
	sess, err := s.session(p.SessionId)
	if err != nil {
		return acpsdk.PromptResponse{}, err
	}
	text, rc, imgs := promptOf(sess.ws.root, p.Prompt)
	if strings.TrimSpace(text) == "" && len(imgs) == 0 {
		return acpsdk.PromptResponse{}, invalidParams("the prompt has no text")
	}
	if name, arg, ok := slashCommand(text); ok {
		return sess.command(ctx, name, arg)
	}
	t, err := sess.begin(ctx, text, rc, imgs)
	if err != nil {
		return acpsdk.PromptResponse{}, err
	}
	return sess.wait(ctx, t)
}

// begin answers a waiting question or starts a run.
func (s *session) begin(ctx context.Context, text string, rc *agent.RunContext, imgs []agent.ImageInput) (*turn, error) {
	if len(imgs) == 0 {
		if t, ok := s.answer(ctx, text); ok {
			return t, nil
		}
	}
	if err := s.settleLastRun(ctx); err != nil {
		return nil, err
	}
	ws := s.ws
	ws.routeMu.Lock()
	defer ws.routeMu.Unlock()
	s.mu.Lock()
	agentID, first, servers := s.agentID, s.first, s.mcp
	s.mu.Unlock()
	// A prompt during a turn queues (agent.Run): it is answered when its
	// own run, started once the turn before it ends, ends.
	p := agent.RunParams{Prompt: text, SessionID: agentID, Context: rc, Images: imgs, MCPServers: servers}
	if agentID == "" {
		// The first run creates the agent session with what was chosen
		// before it; from then on the agent session keeps the settings.
		p.ApprovalPolicy, p.Model, p.ReasoningEffort = first.Mode, first.Model, first.Effort
	}
	res, err := ws.agent.Run(ctx, p)
	if err != nil {
		return nil, agentErr(err)
	}
	t := newTurn(res.RunID)
	t.queued = res.Queued
	s.mu.Lock()
	s.turns[res.RunID], s.agentID = t, res.SessionID
	s.mu.Unlock()
	if agentID == "" {
		ws.byAgent[res.SessionID] = s // under routeMu: the run's events wait for it
		first.AgentID = res.SessionID
		ws.meta.set(s.id, first)
	}
	return t, nil
}

// settleLastRun clears the way for a new run: a run a restart paused is
// given up (the user has moved on); behind one at work, or waiting on an
// answer, the new run queues.
func (s *session) settleLastRun(ctx context.Context) error {
	s.mu.Lock()
	agentID := s.agentID
	s.mu.Unlock()
	if agentID == "" {
		return nil
	}
	si, ok := s.ws.sessionState(agentID)
	if !ok {
		return nil
	}
	if si.State == agent.StatePaused {
		return agentErr(s.ws.agent.Cancel(ctx, si.LastRunID))
	}
	return nil
}

// answer takes the prompt as the answer to the oldest free-text question,
// and continues the question's run as this turn.
func (s *session) answer(ctx context.Context, text string) (*turn, bool) {
	s.mu.Lock()
	if len(s.asking) == 0 || s.activeTurnLocked() != nil {
		s.mu.Unlock()
		return nil, false
	}
	q := s.asking[0]
	s.asking = s.asking[1:]
	t := newTurn(q.RunID)
	s.turns[q.RunID] = t
	more := len(s.asking) > 0
	s.mu.Unlock()
	if err := s.ws.agent.Reply(ctx, chatReply(q, text)); err != nil {
		s.mu.Lock()
		delete(s.turns, q.RunID)
		s.mu.Unlock()
		s.srv.log.Info("prompt not taken as an answer", "request", q.RequestID, "err", err)
		if errors.Is(err, agent.ErrWrongKind) || errors.Is(err, agent.ErrInvalid) {
			s.reask(q, text) // the answer did not fit
			return s.endedTurn(q.RunID), true
		}
		return nil, false
	}
	if more {
		// Another question of the run waits: this turn ends on it too.
		s.mu.Lock()
		next := s.asking[0]
		s.asking = s.asking[1:]
		delete(s.turns, q.RunID)
		s.mu.Unlock()
		s.askInChat(next)
		return s.endedTurn(q.RunID), true
	}
	return t, true
}

func (s *session) endedTurn(runID string) *turn {
	t := newTurn(runID)
	t.done <- turnEnd{stop: acpsdk.StopReasonEndTurn}
	return t
}

// wait holds the prompt until its run ends. The prompt's context ends when
// the client cancels the turn (session/cancel, which cancels the run: its
// end answers the prompt, within cancelGrace), when the client goes away
// (the run is left as it is: it is persisted), and when a newer prompt of
// the session arrives: the SDK ends the older prompt's context, but that
// prompt queued behind this turn, which goes on.
func (s *session) wait(ctx context.Context, t *turn) (acpsdk.PromptResponse, error) {
	gone := ctx.Done()
	var grace <-chan time.Time
	stopping := t.stopping
	for {
		select {
		case end := <-t.done:
			if grace != nil && end.err == nil {
				end.stop = acpsdk.StopReasonCancelled
			}
			return end.response()
		case <-gone:
			gone = nil
		case <-s.srv.client().Done():
			return acpsdk.PromptResponse{}, ctx.Err()
		case <-stopping:
			stopping, grace = nil, time.After(cancelGrace)
		case <-grace:
			return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonCancelled}, nil
		}
	}
}

func (e turnEnd) response() (acpsdk.PromptResponse, error) {
	if e.err != nil {
		return acpsdk.PromptResponse{}, e.err
	}
	return acpsdk.PromptResponse{StopReason: e.stop}, nil
}

// promptOf turns ACP content into our prompt: text as it is, embedded
// resources (often unsaved buffers) quoted into the prompt, links to
// workspace files as context files, images as the prompt's images.
func promptOf(root string, blocks []acpsdk.ContentBlock) (string, *agent.RunContext, []agent.ImageInput) {
	var b strings.Builder
	var imgs []agent.ImageInput
	rc := &agent.RunContext{}
	for _, c := range blocks {
		switch {
		case c.Text != nil:
			b.WriteString(c.Text.Text)
		case c.Image != nil && c.Image.Data != "":
			imgs = append(imgs, agent.ImageInput{MimeType: c.Image.MimeType, Data: c.Image.Data})
		case c.Image != nil && c.Image.Uri != nil:
			if rel, ok := workspacePath(root, *c.Image.Uri); ok {
				imgs = append(imgs, agent.ImageInput{Path: rel})
			}
		case c.Resource != nil && c.Resource.Resource.TextResourceContents != nil:
			r := c.Resource.Resource.TextResourceContents
			fmt.Fprintf(&b, "\n\n<context file=%q>\n%s\n</context>\n", displayPath(root, r.Uri), r.Text)
		case c.ResourceLink != nil:
			if rel, ok := workspacePath(root, c.ResourceLink.Uri); ok {
				rc.Files = append(rc.Files, rel)
			} else {
				fmt.Fprintf(&b, " %s", c.ResourceLink.Uri)
			}
		}
	}
	if len(rc.Files) == 0 {
		rc = nil
	}
	return b.String(), rc, imgs
}

// workspacePath returns the workspace-relative path of a file:// URI inside
// root.
func workspacePath(root, uri string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil || (u.Scheme != "file" && u.Scheme != "") {
		return "", false
	}
	rel, err := filepath.Rel(root, filepath.Clean(u.Path))
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

func displayPath(root, uri string) string {
	if rel, ok := workspacePath(root, uri); ok {
		return rel
	}
	return uri
}
