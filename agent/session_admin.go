package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// A user's housekeeping of their conversations (issue 31): find one by
// what was asked in it, give it a name, delete it.

// SessionsParams filters the session list: Query keeps the sessions whose
// title or one of whose prompts holds every word of it (case-insensitive);
// Limit bounds the answer (0: all).
type SessionsParams struct {
	Query string `json:"query,omitempty"`
	Limit int    `json:"limit,omitempty"`
}

// RenameParams gives a session a title.
type RenameParams struct {
	SessionID string `json:"sessionId"`
	Title     string `json:"title"`
}

// maxTitle bounds a title the user gives, in bytes.
const maxTitle = 200

// matchLength bounds the line SearchSessions quotes of what matched.
const matchLength = 200

// SearchSessions lists the sessions, newest first, that match the query
// (all of them for an empty one). A session found by one of its prompts
// says which (Match); one found by its title has no Match.
func (a *Agent) SearchSessions(p SessionsParams) ([]SessionInfo, error) {
	if p.Limit < 0 {
		return nil, fmt.Errorf("%w: limit must not be negative", ErrInvalid)
	}
	all := a.Sessions()
	words := strings.Fields(strings.ToLower(p.Query))
	if len(words) == 0 {
		if p.Limit > 0 && len(all) > p.Limit {
			all = all[:p.Limit]
		}
		return all, nil
	}
	prompts := a.promptsBySession()
	out := []SessionInfo{}
	for _, s := range all {
		if p.Limit > 0 && len(out) == p.Limit {
			break
		}
		if hasWords(s.Title, words) {
			out = append(out, s)
			continue
		}
		for _, pr := range prompts[s.SessionID] {
			if hasWords(pr, words) {
				s.Match = quoteLine(pr, words[0])
				out = append(out, s)
				break
			}
		}
	}
	return out, nil
}

func hasWords(s string, words []string) bool {
	low := strings.ToLower(s)
	for _, w := range words {
		if !strings.Contains(low, w) {
			return false
		}
	}
	return true
}

// quoteLine is the line of s that holds word, on one line and at most
// matchLength bytes, cut around the word.
func quoteLine(s, word string) string {
	line := s
	for l := range strings.Lines(s) {
		if strings.Contains(strings.ToLower(l), word) {
			line = l
			break
		}
	}
	line = strings.Join(strings.Fields(line), " ")
	if len(line) <= matchLength {
		return line
	}
	at := max(0, strings.Index(strings.ToLower(line), word)-matchLength/4)
	for at > 0 && !utf8.RuneStart(line[at]) {
		at--
	}
	out := line[at:]
	if len(out) > matchLength {
		out = preview(out, matchLength)
	}
	if at > 0 {
		out = "…" + out
	}
	return out
}

// promptsBySession reads the prompts of every run, from the runs' headers
// (small: a run's messages are in its journal), newest run last.
func (a *Agent) promptsBySession() map[string][]string {
	type head struct {
		SessionID string    `json:"sessionId"`
		Prompt    string    `json:"prompt"`
		CreatedAt time.Time `json:"createdAt"`
	}
	var heads []head
	_ = loadAll(filepath.Join(a.store.dir, "runs"), func(data []byte) error {
		var h head
		if err := json.Unmarshal(data, &h); err != nil {
			return err
		}
		heads = append(heads, h)
		return nil
	})
	slices.SortFunc(heads, func(x, y head) int { return x.CreatedAt.Compare(y.CreatedAt) })
	out := map[string][]string{}
	for _, h := range heads {
		out[h.SessionID] = append(out[h.SessionID], h.Prompt)
	}
	return out
}

// RenameSession gives a session the title the user chose.
func (a *Agent) RenameSession(p RenameParams) (SessionInfo, error) {
	title := strings.Join(strings.Fields(p.Title), " ")
	switch {
	case title == "":
		return SessionInfo{}, fmt.Errorf("%w: title is required", ErrInvalid)
	case len(title) > maxTitle:
		return SessionInfo{}, fmt.Errorf("%w: a title is at most %d bytes", ErrInvalid, maxTitle)
	}
	s, err := a.session(p.SessionID)
	if err != nil {
		return SessionInfo{}, err
	}
	a.mu.Lock()
	s.Title = title
	a.mu.Unlock()
	if err := a.saveSession(s, true); err != nil {
		return SessionInfo{}, fmt.Errorf("%w: %w", ErrNotSaved, err)
	}
	info, _ := a.SessionInfo(s.ID)
	return info, nil
}

// DeleteSession deletes a session whose runs are all finished: its record,
// its runs with their journals and events, its rewinds, its prefix, its
// rules for the session and (later, by the upkeep) its checkpoints. The
// workspace's files are left as they are.
func (a *Agent) DeleteSession(sessionID string) error {
	s, err := a.session(sessionID)
	if err != nil {
		return err
	}
	a.saveMu.Lock()
	defer a.saveMu.Unlock()
	a.mu.Lock()
	r, live := a.runs[s.LastRunID]
	a.mu.Unlock()
	if live && !r.state().Finished() {
		return fmt.Errorf("%w: session %s has run %s in state %s; cancel it before deleting the session", ErrSessionBusy, s.ID, r.rec.ID, r.state())
	}
	a.background.EndSession(s.ID)
	a.mu.Lock()
	runs := slices.Clone(s.RunIDs)
	a.mu.Unlock()
	runs = append(runs, a.subagentsOf(runs)...)
	a.mu.Lock()
	delete(a.sessions, s.ID)
	for _, id := range runs {
		delete(a.runs, id)
	}
	a.mu.Unlock()

	// The record first: once it is gone the session is, even if a crash
	// leaves some of its runs' files behind.
	var errs []error
	errs = append(errs, removeIfThere(a.store.sessionPath(s.ID)))
	a.index.remove(s.ID)
	for _, id := range runs {
		if !validID(id) {
			continue
		}
		for _, p := range []string{a.store.runPath(id), a.store.journalPath(id), a.store.eventsPath(id), a.store.messagesPath(id),
			a.store.steersPath(id), filepath.Join(a.store.openDir(), id)} {
			errs = append(errs, removeIfThere(p))
		}
	}
	errs = append(errs, removeIfThere(a.rewindsPath(s.ID)), removeIfThere(a.prefixPath(s.ID)))
	a.pfx.mu.Lock()
	delete(a.pfx.bySession, s.ID)
	a.pfx.mu.Unlock()
	a.policy.ForgetSession(s.ID)
	if a.cfg.StateDir != "" {
		if err := a.ForgetCheckpoints(s.ID); err != nil {
			a.log.Warn("dropping a deleted session's checkpoints", "session_id", s.ID, "err", err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: deleting session %s: %w", ErrNotSaved, s.ID, err)
	}
	a.log.Info("session deleted", "session_id", s.ID, "runs", len(runs))
	return nil
}

func removeIfThere(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
