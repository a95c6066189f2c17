package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// The session's prefix: what every request of a session begins with, the
// system message and the tools offered. It is made at the session's first
// step (the repository map built by then or left out) and stored, so every
// later request of the session, after a restart too, sends the same bytes
// and a provider's prompt cache serves them. What changes from step to
// step (the editor's open files, hints, the step limit, a compaction
// summary) goes into the conversation instead.

// sessionPrefix is stored as prefixes/<session id>.json in the state
// directory.
type sessionPrefix struct {
	System string   `json:"system"`
	Tools  []string `json:"tools"`
	// Instructions are the instruction files the system message holds.
	Instructions []InstructionFile `json:"instructions,omitempty"`
	CreatedAt    time.Time         `json:"createdAt"`
}

// prefixes caches the sessions' prefixes.
type prefixes struct {
	mu        sync.Mutex // guards bySession, warned
	bySession map[string]*sessionPrefix
	warned    bool // the user was told the context window is small
	probed    ContextWindowInfo
}

// noteProbe keeps what the endpoint said of the context window, for the
// notice.
func (p *prefixes) noteProbe(info ContextWindowInfo) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.probed = info
}

func (a *Agent) prefixPath(sessionID string) string {
	return filepath.Join(a.cfg.StateDir, "prefixes", sessionID+".json")
}

// sessionPrefix returns the session's prefix, making it at the session's
// first step. One made while the run was being stopped is not kept: the
// next step makes it again.
func (a *Agent) sessionPrefix(ctx context.Context, sessionID string, mcpTools []string) *sessionPrefix {
	if pfx := a.storedPrefix(sessionID); pfx != nil {
		return pfx
	}
	pfx := a.makePrefix(ctx, mcpTools)
	if ctx.Err() != nil {
		return pfx
	}
	if err := os.MkdirAll(filepath.Dir(a.prefixPath(sessionID)), 0o700); err == nil {
		err = writeJSONAtomic(a.prefixPath(sessionID), pfx, false)
		if err != nil {
			a.log.Warn("saving session prefix", "session_id", sessionID, "err", err)
		}
	}
	a.rememberPrefix(sessionID, pfx)
	return pfx
}

// storedPrefix is the session's prefix if it was made: in memory, or read
// from the state directory; nil when it was not.
func (a *Agent) storedPrefix(sessionID string) *sessionPrefix {
	a.pfx.mu.Lock()
	pfx := a.pfx.bySession[sessionID]
	a.pfx.mu.Unlock()
	if pfx != nil {
		return pfx
	}
	if data, err := os.ReadFile(a.prefixPath(sessionID)); err == nil {
		p := &sessionPrefix{}
		if err := json.Unmarshal(data, p); err == nil && p.System != "" {
			now := time.Now()
			_ = os.Chtimes(a.prefixPath(sessionID), now, now) // used: prunePrefixes keeps it
			a.rememberPrefix(sessionID, p)
			return p
		}
		a.log.Warn("unreadable session prefix; making a new one", "session_id", sessionID)
	} else if !errors.Is(err, fs.ErrNotExist) {
		a.log.Warn("reading session prefix", "session_id", sessionID, "err", err)
	}
	return nil
}

func (a *Agent) rememberPrefix(sessionID string, p *sessionPrefix) {
	a.pfx.mu.Lock()
	defer a.pfx.mu.Unlock()
	if a.pfx.bySession == nil {
		a.pfx.bySession = map[string]*sessionPrefix{}
	}
	a.pfx.bySession[sessionID] = p
}

// makePrefix makes a new session's system message and tool list: agentd's
// own tools, then the MCP tools the session's first run took.
func (a *Agent) makePrefix(ctx context.Context, mcpTools []string) *sessionPrefix {
	now := time.Now()
	names := append(a.offeredTools(), mcpTools...)
	ins := a.sessionInstructions()
	repoMap := a.repoMapFor(ctx, repoMapBudget(a.ContextWindow()))
	files := make([]InstructionFile, len(ins))
	for i, in := range ins {
		files[i] = in.InstructionFile
	}
	return &sessionPrefix{System: a.systemPrompt(names, ins, repoMap, now), Tools: names, Instructions: files, CreatedAt: now.UTC()}
}

// windowNotice is the warning a user gets, once, when the model's context
// window leaves little room: "" when it does not. Its tokens are estimated
// from the prefix's bytes.
func (a *Agent) windowNotice(prefixBytes int) string {
	window := a.ContextWindow()
	a.pfx.mu.Lock()
	defer a.pfx.mu.Unlock()
	if a.pfx.warned {
		return ""
	}
	var text string
	switch {
	case window > 0 && window < smallWindow:
		text = fmt.Sprintf("The model's context window is %d tokens; agentd's instructions and tools alone take about %d of them, which leaves little room for the code and the conversation. "+
			"Raise the window on the model's server (Ollama: OLLAMA_CONTEXT_LENGTH or num_ctx; llama.cpp: --ctx-size) or use a model with a larger one.", window, prefixBytes/4)
	case window == 0 && a.pfx.probed.Max > 0:
		text = fmt.Sprintf("The model's server does not say the context window it runs the model with (the model allows %d tokens). "+
			"Ollama then uses its default, as small as 4096 tokens, which agentd's instructions and tools alone nearly fill. "+
			"Set it on the server (OLLAMA_CONTEXT_LENGTH, or num_ctx in the Modelfile) and in agentd's model.contextWindow.", a.pfx.probed.Max)
	default:
		return ""
	}
	a.pfx.warned = true
	a.log.Warn("context window: " + text)
	return text
}

// prefixKeep is how many sessions' prefixes stay stored: those used last
// (a file's time is when a daemon last made or read it). Sessions are never
// deleted, so without a bound the prefixes would pile up for ever; a
// session whose prefix was dropped makes a new one at its next step, as a
// new session does (a provider's prompt cache has long forgotten it).
const prefixKeep = 200

// prunePrefixes drops the stored prefixes past prefixKeep, the ones used
// longest ago first, never one a session of this daemon holds.
func (a *Agent) prunePrefixes() {
	dir := filepath.Join(a.cfg.StateDir, "prefixes")
	des, err := os.ReadDir(dir)
	if err != nil || len(des) <= prefixKeep {
		return
	}
	type file struct {
		session string
		used    time.Time
	}
	files := make([]file, 0, len(des))
	for _, de := range des {
		id, ok := strings.CutSuffix(de.Name(), ".json")
		if fi, err := de.Info(); ok && err == nil && fi.Mode().IsRegular() {
			files = append(files, file{id, fi.ModTime()})
		}
	}
	slices.SortFunc(files, func(x, y file) int { return y.used.Compare(x.used) })
	a.pfx.mu.Lock()
	held := maps.Clone(a.pfx.bySession)
	a.pfx.mu.Unlock()
	for _, f := range files[min(prefixKeep, len(files)):] {
		if _, ok := held[f.session]; ok {
			continue
		}
		if err := os.Remove(filepath.Join(dir, f.session+".json")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			a.log.Warn("dropping an old session prefix", "session_id", f.session, "err", err)
		}
	}
}
