package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// The context meter and "compact now" (issue 31): how much of the model's
// window a session's next request takes, counted as compaction counts it
// (four characters a token), and a way to summarize the older turns before
// agentd has to.

// ContextUse is how full the model's context window is.
type ContextUse struct {
	// Used is about the tokens the next request sends: the system message,
	// the tools and the conversation (as compacted).
	Used int `json:"used"`
	// Window is the model's context window in tokens.
	Window int `json:"window"`
	// CompactAt is where agentd drops older turns by itself: past it, the
	// next request summarizes them.
	CompactAt int `json:"compactAt"`
	// Messages counts the conversation's messages the next request sends.
	Messages int `json:"messages"`
	// Compacted says older turns are already summarized (by agentd or by
	// agent/compact).
	Compacted bool `json:"compacted,omitempty"`
}

// CompactResult says what agent/compact did, in tokens as the meter counts.
type CompactResult struct {
	Before  int `json:"before"`
	After   int `json:"after"`
	Dropped int `json:"dropped"`
	// Summary is what the model reads in place of the dropped messages.
	Summary string `json:"summary,omitempty"`
}

// summaryHead opens the user message that carries a compaction's summary.
const summaryHead = "[agentd: earlier turns of this conversation were dropped to fit the model's context window. What they did:\n"

// compactHead opens the summary of a compaction the user asked for.
const compactHead = "[agentd: earlier turns of this conversation were compacted at the user's request. What they did:\n"

func withSummary(m Message, head, summary string) Message {
	m.Content = head + summary + "]\n\n" + m.Content
	return m
}

// isSummarized says a conversation starts with a compaction's summary.
func isSummarized(msgs []Message) bool {
	return len(msgs) > 0 && (strings.HasPrefix(msgs[0].Content, summaryHead) || strings.HasPrefix(msgs[0].Content, compactHead))
}

// meter counts a conversation against the window; fixed is what the
// system message and tools take, in bytes.
func meter(msgs []Message, window, fixed int, compacted bool) ContextUse {
	if window <= 0 {
		window = defaultWindow
	}
	return ContextUse{Used: fixed/4 + sumTokens(msgs), Window: window, CompactAt: window*3/4 - summaryCap/4,
		Messages: len(msgs), Compacted: compacted || isSummarized(msgs)}
}

// contextLocked is the run's meter now: the conversation its next request
// would send, with the cut in force. r.mu is held.
func (r *run) contextLocked() ContextUse {
	msgs, cut := r.rec.Messages, false
	if c := r.cut; c != nil && c.from <= len(msgs) {
		kept := slices.Clone(c.kept(msgs))
		if c.summary != "" && len(kept) > 0 {
			kept[0] = withSummary(kept[0], summaryHead, c.summary)
		}
		msgs, cut = kept, true
	}
	return meter(msgs, r.a.ContextWindow(), r.fixed, cut)
}

// reportContext sends the meter after a model call.
func (r *run) reportContext() {
	r.mu.Lock()
	use := r.contextLocked()
	r.mu.Unlock()
	r.update(Update{Kind: UpdateContext, Context: &use})
}

// Context is a session's meter: its unfinished run's now, else what the
// session's next request would take, less the next prompt. A session that
// never called the model has no system message yet: Used counts its
// conversation only.
func (a *Agent) Context(sessionID string) (ContextUse, error) {
	s, err := a.session(sessionID)
	if err != nil {
		return ContextUse{}, err
	}
	a.mu.Lock()
	r, live := a.runs[s.LastRunID]
	a.mu.Unlock()
	if live && !r.state().Finished() {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.contextLocked(), nil
	}
	a.mu.Lock()
	msgs := slices.Clone(s.Messages)
	a.mu.Unlock()
	return meter(msgs, a.ContextWindow(), a.fixedSize(sessionID), false), nil
}

// fixedSize is what a session's system message and tools take, in bytes,
// from its stored prefix (its MCP tools left out: they are known to runs
// only); 0 before its first step.
func (a *Agent) fixedSize(sessionID string) int {
	a.pfx.mu.Lock()
	pfx := a.pfx.bySession[sessionID]
	a.pfx.mu.Unlock()
	if pfx == nil && a.hasPrefix(sessionID) {
		pfx = a.sessionPrefix(context.Background(), sessionID, nil)
	}
	if pfx == nil {
		return 0
	}
	specs := a.specsFor(pfx.Tools)
	system := pfx.System
	if a.textMode() {
		system += textToolInstructions(specs)
	}
	return len(system) + specsSize(specs)
}

// Compact replaces a session's older turns by their summary now, keeping
// its last turn (or, for a session of one turn, that turn's prompt and its
// last step). Turns shorter than their summary are left as they are
// (Dropped 0): compacting them would take more of the window, not less. The model reads the summary at the head of what is kept, as
// after agentd's own compaction; the runs' history is unchanged.
func (a *Agent) Compact(ctx context.Context, sessionID string) (CompactResult, error) {
	s, err := a.session(sessionID)
	if err != nil {
		return CompactResult{}, err
	}
	a.mu.Lock()
	r, live := a.runs[s.LastRunID]
	a.mu.Unlock()
	if live && !r.state().Finished() {
		return CompactResult{}, fmt.Errorf("%w: session %s has run %s in state %s; compact once it is over", ErrSessionBusy, s.ID, r.rec.ID, r.state())
	}
	before, err := a.Context(sessionID)
	if err != nil {
		return CompactResult{}, err
	}
	a.mu.Lock()
	msgs := slices.Clone(s.Messages)
	a.mu.Unlock()
	c, ok := planCompact(msgs)
	if !ok {
		return CompactResult{Before: before.Used, After: before.Used}, nil
	}
	kept := slices.Clone(c.kept(msgs))
	kept[0] = withSummary(kept[0], compactHead, c.summary)
	if sumTokens(kept) >= sumTokens(msgs) {
		// Turns shorter than their summary: compacting would make the conversation bigger.
		return CompactResult{Before: before.Used, After: before.Used}, nil
	}
	a.mu.Lock()
	s.Messages = kept
	a.mu.Unlock()
	if err := a.saveSession(s, true); err != nil {
		a.mu.Lock()
		s.Messages = msgs
		a.mu.Unlock()
		return CompactResult{}, fmt.Errorf("%w: %w", ErrNotSaved, err)
	}
	after, err := a.Context(sessionID)
	if err != nil {
		return CompactResult{}, err
	}
	a.log.Info("session compacted", "session_id", s.ID, "dropped", len(msgs)-len(kept), "before", before.Used, "after", after.Used)
	return CompactResult{Before: before.Used, After: after.Used, Dropped: len(msgs) - len(kept), Summary: c.summary}, nil
}

// planCompact cuts before the last turn; a conversation of one turn keeps
// its prompt and its last step. ok is false when there is nothing to drop.
func planCompact(msgs []Message) (cut, bool) {
	p := lastUser(msgs)
	switch {
	case p > 0:
		return cut{user: -1, from: p, summary: summarize(msgs[:p])}, true
	case p == 0:
		k := lastAssistant(msgs, 0)
		if k <= 1 || k >= len(msgs) {
			return cut{}, false
		}
		return cut{user: 0, from: k, summary: summarize(msgs[1:k])}, true
	}
	return cut{}, false
}
