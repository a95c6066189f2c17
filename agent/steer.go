package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The user steers a run by adding words to it while it works (agent/steer):
// the model reads them before its next request, never in the middle of a
// tool, as a user message after what the run did so far. A steer sent while
// the run waits on an answer goes with the answer; one sent while the model
// writes its final answer keeps the run going, so that the model reads it.
//
// Each steer is appended, synced, to the run's own steers file before it is
// acknowledged (the run's journal is written only where its state is whole,
// between steps, and a steer comes at any moment); the journal counts how
// many the model has been given (runRecord.Steered), in the same line as
// the messages that gave them, so after a crash each steer reaches the model
// once.

// SteerParams adds the user's words to a run that is not over.
type SteerParams struct {
	RunID string `json:"runId"`
	Text  string `json:"text"`
	// Images go with the words, as a prompt's do (agent/run).
	Images []ImageInput `json:"images,omitempty"`
}

// steer is one steer as the run's steers file keeps it.
type steer struct {
	Text   string     `json:"text"`
	Images []ImageRef `json:"images,omitempty"`
	At     time.Time  `json:"at"`
}

// maxSteer bounds a steer's text, as a prompt is bounded by what a model
// can read: a megabyte is a paste gone wrong.
const maxSteer = 1 << 20

// Steer adds the user's words to a run: working, waiting on the user,
// paused or queued. A run that is over (or ending) refuses them with
// ErrRunFinished: they go in a new run (Run) instead.
func (a *Agent) Steer(ctx context.Context, p SteerParams) error {
	switch {
	case strings.TrimSpace(p.Text) == "" && len(p.Images) == 0:
		return fmt.Errorf("%w: text is required", ErrInvalid)
	case len(p.Text) > maxSteer:
		return fmt.Errorf("%w: text is over %d bytes", ErrInvalid, maxSteer)
	}
	r, err := a.liveRun(p.RunID)
	if err != nil {
		return err
	}
	if r == nil {
		return fmt.Errorf("%w: run %s is over; send the words as a new prompt (agent/run)", ErrRunFinished, p.RunID)
	}
	imgs, err := a.promptImages(ctx, r.runSettings().Model, p.Images)
	if err != nil {
		return err
	}
	if strings.TrimSpace(p.Text) == "" {
		p.Text = imageOnlyPrompt
	}
	return r.steer(p.Text, imgs)
}

func (r *run) steer(text string, imgs []ImageRef) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.over || r.rec.State.Finished() {
		return fmt.Errorf("%w: run %s is %s; send the words as a new prompt (agent/run)", ErrRunFinished, r.rec.ID, cmpState(r.rec.State))
	}
	s := steer{Text: text, Images: imgs, At: time.Now().UTC()}
	if err := r.a.store.appendSteer(r.rec.ID, s); err != nil {
		return fmt.Errorf("%w: %w", ErrNotSaved, err)
	}
	r.steers = append(r.steers, s)
	r.updateLocked(Update{Kind: UpdateSteer, Text: text, Images: imgs})
	return nil
}

// cmpState names a run's state for a refusal: a run ending is not finished
// yet, but over all the same.
func cmpState(s State) State {
	if s.Finished() {
		return s
	}
	return "ending"
}

// steerLocked gives the model the steers it has not read, as one user
// message at the end of the conversation. r.mu is held.
func (r *run) steerLocked() {
	if len(r.steers) <= r.rec.Steered {
		return
	}
	var texts []string
	var imgs []ImageRef
	for _, s := range r.steers[r.rec.Steered:] {
		texts = append(texts, s.Text)
		imgs = append(imgs, s.Images...)
	}
	r.rec.Messages = append(r.rec.Messages, Message{Role: RoleUser, Content: strings.Join(texts, "\n\n"), Images: imgs})
	r.rec.Steered = len(r.steers)
}

// unsteeredLocked reports whether steers wait for the model. r.mu is held.
func (r *run) unsteeredLocked() bool { return len(r.steers) > r.rec.Steered }

func (s *store) steersPath(id string) string { return filepath.Join(s.dir, "runs", id+".steers.jsonl") }

// appendSteer appends a steer to the run's steers file with one write,
// synced.
func (s *store) appendSteer(id string, st steer) error {
	f, err := os.OpenFile(s.steersPath(id), os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("saving the steer: %w", err)
	}
	if err := endTornLine(f); err != nil {
		f.Close()
		return fmt.Errorf("saving the steer: %w", err)
	}
	if err := appendLine(f, st); err != nil {
		f.Close()
		return fmt.Errorf("saving the steer: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("saving the steer: %w", err)
	}
	return f.Close()
}

// loadSteers reads a run's steers; a torn line is skipped.
func (s *store) loadSteers(id string) []steer {
	data, err := os.ReadFile(s.steersPath(id))
	if err != nil {
		return nil
	}
	var out []steer
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 2*maxSteer)
	for sc.Scan() {
		var st steer
		if json.Unmarshal(sc.Bytes(), &st) == nil && st.Text != "" {
			out = append(out, st)
		}
	}
	return out
}
