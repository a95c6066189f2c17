package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// journal is a run's checkpoint log (runs/<id>.journal.jsonl), open for
// appending. Each checkpoint is one line written with one write call, so a
// process that dies leaves whole lines and at most one torn last line. A
// write that fails is cut back off the file, so the next line starts on a
// line of its own and a failed checkpoint is never half read back.
type journal struct {
	f    *os.File
	good int64 // the length of the file up to its last whole line
	torn bool  // a failed write could not be cut back off
}

// journalEntry is one line of a run's journal: what the run added since
// the line before, and the rest of its state as it is now.
type journalEntry struct {
	Run      *runRecord         `json:"run"`
	Messages []Message          `json:"messages,omitempty"`
	Baseline map[string]*string `json:"baseline,omitempty"`
}

// openJournal opens a run's journal for appending, creating it if need be.
func (s *store) openJournal(id string) (*journal, error) {
	f, err := os.OpenFile(s.journalPath(id), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &journal{f: f, good: fi.Size()}, nil
}

// append writes one line (ending in a newline) with one write; durable
// syncs it before returning. On failure nothing of the line is left.
func (j *journal) append(line []byte, durable bool) error {
	if j.torn {
		if err := j.f.Truncate(j.good); err != nil {
			return err
		}
		j.torn = false
	}
	_, err := j.f.Write(line)
	if err == nil && durable {
		err = j.f.Sync()
	}
	if err != nil {
		j.torn = j.f.Truncate(j.good) != nil
		return err
	}
	j.good += int64(len(line))
	return nil
}

func (j *journal) close() error { return j.f.Close() }

// encodeEntry is a journal line.
func encodeEntry(e *journalEntry) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(e); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// restoreRun brings a run's header up to its last checkpoint: the state of
// the journal's last whole line, the messages and baseline files of every
// line. A torn last line (a crash in the middle of a write) is cut off. A
// run checkpointed before the journal existed is read from its record and
// message journal instead; fresh reports that its journal holds nothing
// yet, so the first checkpoint must write everything.
func (s *store) restoreRun(rec *runRecord) (fresh bool, err error) {
	data, err := os.ReadFile(s.journalPath(rec.ID))
	if errors.Is(err, os.ErrNotExist) || err == nil && len(data) == 0 {
		return true, s.restoreLegacy(rec)
	}
	if err != nil {
		return false, fmt.Errorf("reading the journal of run %s: %w", rec.ID, err)
	}
	var (
		last     json.RawMessage
		msgs     []Message
		baseline = map[string]*string{}
		off      int
	)
	for off < len(data) {
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			break // torn
		}
		var e struct {
			Run      json.RawMessage    `json:"run"`
			Messages []Message          `json:"messages"`
			Baseline map[string]*string `json:"baseline"`
		}
		if json.Unmarshal(data[off:off+end], &e) != nil || len(e.Run) == 0 {
			break // a line no whole write made: what follows cannot be trusted
		}
		last, msgs = e.Run, append(msgs, e.Messages...)
		for p, img := range e.Baseline {
			baseline[p] = img
		}
		off += end + 1
	}
	if last == nil {
		return true, s.restoreLegacy(rec)
	}
	id := rec.ID
	*rec = runRecord{}
	if err := json.Unmarshal(last, rec); err != nil {
		return false, fmt.Errorf("the journal of run %s: %w", id, err)
	}
	if rec.ID != id || rec.MessageCount != len(msgs) {
		return false, fmt.Errorf("the journal of run %s holds %d messages for run %q, whose state counts %d", id, len(msgs), rec.ID, rec.MessageCount)
	}
	rec.Messages, rec.Baseline = msgs, baseline
	if off < len(data) {
		if err := os.Truncate(s.journalPath(id), int64(off)); err != nil {
			return false, fmt.Errorf("cutting the torn end off the journal of run %s: %w", id, err)
		}
	}
	return false, nil
}

// restoreLegacy reads a run checkpointed before the journal: its record
// (the header, then) held the state and the baseline, its message journal
// the messages it counts.
func (s *store) restoreLegacy(rec *runRecord) error {
	msgs, err := s.loadMessages(rec.ID, rec.MessageCount)
	if err != nil {
		return err
	}
	rec.Messages = msgs
	data, err := os.ReadFile(s.runPath(rec.ID))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("reading run %s: %w", rec.ID, err)
	}
	var old struct {
		Baseline map[string]*string `json:"baseline"`
	}
	if len(data) > 0 && json.Unmarshal(data, &old) == nil {
		rec.Baseline = old.Baseline
	}
	return nil
}
